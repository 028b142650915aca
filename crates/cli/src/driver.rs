//! The pipeline for `run` and `check`: read, parse, check, evaluate, with
//! the exit statuses of spec §1 (0 ok, 1 runtime error, 2 static error).

use std::io::{BufWriter, Read, Write};

use twill_check::Checker;
use twill_eval::Interp;

use crate::render::{emit, SourceFile};

pub const EXIT_OK: i32 = 0;
pub const EXIT_RUNTIME: i32 = 1;
pub const EXIT_STATIC: i32 = 2;

/// Reads a program from a path, or standard input for `-`.
pub fn read_source(path: &str) -> Result<(String, String), String> {
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|_| "standard input is not valid UTF-8".to_string())?;
        return Ok(("<stdin>".into(), text));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        // `ErrorKind` is non-exhaustive; every other kind has its own text.
        #[allow(clippy::wildcard_enum_match_arm)]
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "file not found".to_string(),
            _ => e.to_string(),
        };
        format!("cannot read `{path}`: {reason}")
    })?;
    let text = String::from_utf8(bytes).map_err(|_| format!("`{path}` is not valid UTF-8"))?;
    Ok((path.to_string(), text))
}

fn plain_error(msg: &str) {
    let _ = writeln!(std::io::stderr(), "error: {msg}");
}

/// `twill run` (with `check_only == false`) and `twill check`.
pub fn run_path(path: &str, args: Vec<String>, check_only: bool) -> i32 {
    let (name, text) = match read_source(path) {
        Ok(s) => s,
        Err(msg) => {
            plain_error(&msg);
            return EXIT_STATIC;
        }
    };
    let src = SourceFile {
        name: &name,
        text: &text,
    };
    let parsed = twill_syntax::parse(&text);
    if !parsed.errors.is_empty() {
        emit(&parsed.errors, &src);
        return EXIT_STATIC;
    }
    let out = BufWriter::with_capacity(1 << 16, std::io::stdout());
    let mut interp = Interp::new(args, Box::new(out));
    let mut checker = Checker::new();
    // The golden harness sets this to assert, as the program runs, every
    // tensor dtype the checker claims to know.
    checker.crosscheck = std::env::var_os("TWILL_CROSSCHECK").is_some_and(|v| v == "1");
    if let Err(msg) = twill_eval::stdlib::load(&mut checker, &mut interp) {
        plain_error(&format!("internal error in twill (please report it): {msg}"));
        return EXIT_RUNTIME;
    }
    let checked = checker.check_program(&parsed.program);
    emit(&checked.diagnostics, &src);
    let Some(module) = checked.module else {
        return EXIT_STATIC;
    };
    if check_only {
        return EXIT_OK;
    }
    let result = interp.run(&module, &checker.global_names());
    interp.flush();
    match result {
        Ok(_) => EXIT_OK,
        Err(e) => {
            emit(&[e.to_diagnostic()], &src);
            EXIT_RUNTIME
        }
    }
}
