//! `twill jupyter install`: writes the kernel spec (`kernels/twill/kernel.json`)
//! where Jupyter looks for kernels — the user's data directory with
//! `--user`, a prefix's `share/jupyter` with `--prefix DIR` or
//! `--sys-prefix` (the active virtual environment), the system's
//! otherwise — naming this executable, so the notebook runs the twill
//! that installed it. Interrupts are messages (`interrupt_mode`), which
//! work wherever the notebook server runs.

use std::path::{Path, PathBuf};

const USAGE: &str = "usage: twill jupyter install [--user | --prefix DIR | --sys-prefix]";

/// Where the kernel spec goes.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    User,
    Prefix(PathBuf),
    SysPrefix,
    System,
}

fn place(args: &[String]) -> Result<Place, String> {
    match args {
        [] => Ok(Place::System),
        [flag] if flag == "--user" => Ok(Place::User),
        [flag] if flag == "--sys-prefix" => Ok(Place::SysPrefix),
        [flag, dir] if flag == "--prefix" => Ok(Place::Prefix(PathBuf::from(dir))),
        [flag] if flag.starts_with("--prefix=") => {
            Ok(Place::Prefix(PathBuf::from(&flag["--prefix=".len()..])))
        }
        _ => Err(USAGE.to_string()),
    }
}

/// Jupyter's data directory for `place`, as `jupyter --paths` lists it.
fn data_dir(place: &Place, env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    match place {
        Place::Prefix(dir) => Ok(dir.join("share").join("jupyter")),
        Place::SysPrefix => env("VIRTUAL_ENV")
            .or_else(|| env("CONDA_PREFIX"))
            .map(|p| Path::new(&p).join("share").join("jupyter"))
            .ok_or_else(|| {
                "`--sys-prefix` needs an active virtual environment (VIRTUAL_ENV is not set)".to_string()
            }),
        Place::User => {
            if let Some(dir) = env("JUPYTER_DATA_DIR") {
                return Ok(PathBuf::from(dir));
            }
            let home = env("HOME").ok_or("`--user` needs HOME to be set")?;
            if cfg!(target_os = "macos") {
                Ok(Path::new(&home).join("Library").join("Jupyter"))
            } else {
                let data = env("XDG_DATA_HOME").unwrap_or_else(|| format!("{home}/.local/share"));
                Ok(Path::new(&data).join("jupyter"))
            }
        }
        Place::System => Ok(PathBuf::from("/usr/local/share/jupyter")),
    }
}

/// The kernel spec for the twill at `exe`.
fn kernel_json(exe: &str) -> String {
    let spec = serde_json::json!({
        "argv": [exe, "jupyter", "kernel", "{connection_file}"],
        "display_name": "twill",
        "language": "twill",
        "interrupt_mode": "message",
        "metadata": {},
    });
    // Serialising a JSON value built here cannot fail.
    serde_json::to_string_pretty(&spec).unwrap_or_default() + "\n"
}

/// `twill jupyter install ARGS…`; the process's exit status.
pub fn install(args: &[String]) -> i32 {
    match try_install(args) {
        Ok(dir) => {
            println!("installed the twill kernel spec in {}", dir.display());
            0
        }
        Err(msg) => {
            eprintln!("error: {msg}");
            2
        }
    }
}

fn try_install(args: &[String]) -> Result<PathBuf, String> {
    let place = place(args)?;
    let data = data_dir(&place, &|name| std::env::var(name).ok())?;
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the twill executable to name in the kernel spec: {e}"))?;
    let exe = exe
        .to_str()
        .ok_or("the twill executable's path is not UTF-8, which kernel.json cannot hold")?;
    let dir = data.join("kernels").join("twill");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file = dir.join("kernel.json");
    std::fs::write(&file, kernel_json(exe)).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn places_from_flags() {
        assert_eq!(place(&args(&[])), Ok(Place::System));
        assert_eq!(place(&args(&["--user"])), Ok(Place::User));
        assert_eq!(place(&args(&["--prefix", "/v"])), Ok(Place::Prefix("/v".into())));
        assert_eq!(place(&args(&["--prefix=/v"])), Ok(Place::Prefix("/v".into())));
        assert!(place(&args(&["--usr"])).is_err());
    }

    #[test]
    fn data_dirs_follow_jupyter() {
        let env = |name: &str| match name {
            "HOME" => Some("/h".to_string()),
            "VIRTUAL_ENV" => Some("/venv".to_string()),
            _ => None,
        };
        assert_eq!(
            data_dir(&Place::SysPrefix, &env),
            Ok(PathBuf::from("/venv/share/jupyter"))
        );
        assert_eq!(
            data_dir(&Place::Prefix("/p".into()), &env),
            Ok(PathBuf::from("/p/share/jupyter"))
        );
        if !cfg!(target_os = "macos") {
            assert_eq!(
                data_dir(&Place::User, &env),
                Ok(PathBuf::from("/h/.local/share/jupyter"))
            );
        }
        let jd = |name: &str| (name == "JUPYTER_DATA_DIR").then(|| "/j".to_string());
        assert_eq!(data_dir(&Place::User, &jd), Ok(PathBuf::from("/j")));
    }

    #[test]
    fn the_spec_names_the_executable_and_message_interrupts() {
        let spec: serde_json::Value = serde_json::from_str(&kernel_json("/bin/twill")).unwrap();
        assert_eq!(spec["argv"][0], "/bin/twill");
        assert_eq!(spec["argv"][3], "{connection_file}");
        assert_eq!(spec["interrupt_mode"], "message");
        assert_eq!(spec["language"], "twill");
    }
}
