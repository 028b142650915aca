//! Writing a file so that no crash leaves half of it (spec §9), for
//! [`crate::RealHost`]. A path is first resolved: symbolic links are
//! followed one by one (relative targets from the link's own directory, as
//! the kernel does), so the final target is known and the link stays a
//! link. A regular file there (or nothing, for a new file) is replaced by
//! renaming a complete, synced temporary file from the same directory over
//! it; the temporary file takes the old file's permission bits and, where
//! the process may, its owner and group. Anything else (a device, a FIFO, a
//! socket, a file in `/proc` or `/sys`) is opened and written directly,
//! never replaced; a link to one of this process's own open files
//! (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) is written through that
//! open file itself, so the bytes land where its next write would.
//!
//! On Linux the temporary file is made with `O_TMPFILE`, so it has no name
//! while it is written and a `kill -9` then leaves nothing; how it then
//! takes the target's place without a window for one is in [`anonymous`].
//! Where `O_TMPFILE` is not available (another system, a file system
//! without it, no `/proc`) the temporary file is a named one, created
//! exclusively; either way every error path removes it.
//!
//! Errors come back as `io::Error`s of the same kind whose text is what a
//! twill program shows its user (`permission denied`, not `Permission
//! denied (os error 13)`); see [`user_facing`].

// This module is RealHost's file system: the one place in the core crates,
// with RealHost itself, that may touch it (clippy.toml forbids it elsewhere).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How many links a path may pass through, as Linux allows (`ELOOP`).
const MAX_LINKS: usize = 40;

/// Where the bytes of one write go, once the path is resolved.
// One plan lives on the stack for the length of one write: its size costs
// nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Plan {
    /// Rename a temporary file from `dir` over `target`, keeping `old`'s
    /// permissions and owner when there is an old file.
    Replace {
        target: PathBuf,
        dir: PathBuf,
        name: OsString,
        old: Option<Metadata>,
    },
    /// Open the path and write to it (it is not a regular file, or lives
    /// on a file system whose files are not data, such as `/proc`).
    Direct(PathBuf),
    /// Write to this process's open file `N`, reached as `/dev/fd/N`,
    /// `/proc/self/fd/N` or `/dev/stdout`. Opening the path would make a
    /// second, independent position in the file: a `print` after the write
    /// would then overwrite it when standard output is a regular file.
    #[cfg(target_os = "linux")]
    OwnFd(i32),
}

impl Plan {
    /// Whether the bytes go straight to the path (so may land where
    /// standard output goes, and buffered output should go first).
    pub(crate) fn is_direct(&self) -> bool {
        !matches!(self, Plan::Replace { .. })
    }

    /// Writes `bytes` as the plan says.
    pub(crate) fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let written = match self {
            Plan::Replace {
                target,
                dir,
                name,
                old,
            } => replace(target, dir, name, old.as_ref(), bytes),
            Plan::Direct(path) => write_direct(path, bytes),
            #[cfg(target_os = "linux")]
            Plan::OwnFd(fd) => own_fd::write(*fd, bytes),
        };
        written.map_err(user_facing)
    }
}

/// Follows `path` through its symbolic links to the file a write should
/// change, and says how to change it.
pub(crate) fn plan(path: &str) -> io::Result<Plan> {
    resolve(Path::new(path)).map_err(user_facing)
}

fn resolve(path: &Path) -> io::Result<Plan> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let (dir, name) = split(&current)?;
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            // A new file (a dangling link's target included).
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Plan::Replace {
                    target: current,
                    dir,
                    name,
                    old: None,
                })
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if is_pseudo_file_system(&dir) {
            // `/proc/self/fd/N` and its kin are links to open files, not
            // to paths: only the open file itself, or opening the link,
            // reaches the right file.
            #[cfg(target_os = "linux")]
            if let Some(fd) = own_fd::number(&dir, &name).filter(|_| kind.is_symlink()) {
                return Ok(Plan::OwnFd(fd));
            }
            return Ok(Plan::Direct(current));
        }
        if kind.is_symlink() {
            let link = std::fs::read_link(&current)?;
            current = if link.is_absolute() { link } else { dir.join(link) };
        } else if kind.is_dir() {
            return Err(is_a_directory());
        } else if kind.is_file() {
            return Ok(Plan::Replace {
                target: current,
                dir,
                name,
                old: Some(meta),
            });
        } else {
            return Ok(Plan::Direct(current));
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A path's directory and last component, taken from its text: `Path`'s
/// own methods drop a trailing `/` or `.`, which would turn `dir/` into
/// the file `dir`. A path whose last component names a directory by form
/// (empty, `.`, `..`) is an error, as the kernel's `open` makes it.
fn split(path: &Path) -> io::Result<(PathBuf, OsString)> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let (dir, name) = match bytes.iter().rposition(|&b| b == b'/') {
        Some(0) => (&bytes[..1], &bytes[1..]),
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (&b"."[..], bytes),
    };
    if bytes.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "no such file or directory",
        ));
    }
    if name.is_empty() || name == b"." || name == b".." {
        return Err(is_a_directory());
    }
    // SAFETY: both halves are split from an `OsStr`'s encoded bytes at an
    // ASCII `/` (or are ASCII literals), which the std documentation of
    // `from_encoded_bytes_unchecked` names as a valid split point.
    let (dir, name) = unsafe {
        (
            OsStr::from_encoded_bytes_unchecked(dir),
            OsStr::from_encoded_bytes_unchecked(name),
        )
    };
    Ok((PathBuf::from(dir), name.to_os_string()))
}

fn is_a_directory() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "is a directory")
}

/// Whether `dir` is on `/proc` or `/sys`, where a link names an open file
/// rather than a path and a file is an interface rather than data, so
/// neither can be replaced by a rename.
#[cfg(target_os = "linux")]
fn is_pseudo_file_system(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_dir) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `statfs` is plain data, for which all zeros is a valid value.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_dir` is a NUL-terminated string and `fs` a valid `statfs`,
    // both alive for the call; the kernel writes only into `fs`.
    let rc = unsafe { libc::statfs(c_dir.as_ptr(), &mut fs) };
    // A directory that cannot be examined is left to the write itself,
    // which reports why.
    rc == 0 && (fs.f_type == libc::PROC_SUPER_MAGIC || fs.f_type == libc::SYSFS_MAGIC)
}

#[cfg(not(target_os = "linux"))]
fn is_pseudo_file_system(_dir: &Path) -> bool {
    false
}

/// Opens the path as it is, without creating or truncating it, and writes
/// `bytes`. Appending means a regular file reached this way (through
/// another process's `/proc/PID/fd/N`, or a file in `/proc` or `/sys`)
/// gains the bytes after what is there instead of having its start
/// overwritten; devices and FIFOs ignore the flag.
fn write_direct(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.append(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A terminal opened for writing must not become the process's
        // controlling terminal.
        options.custom_flags(libc::O_NOCTTY);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// This process's open files, as `/proc` shows them.
#[cfg(target_os = "linux")]
mod own_fd {
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io::{self, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::path::Path;

    /// The descriptor `name` names when `dir` is this process's own
    /// descriptor directory (by any of its usual names).
    pub(super) fn number(dir: &Path, name: &OsStr) -> Option<i32> {
        let own = format!("/proc/{}/fd", std::process::id());
        let dir = dir.to_str()?;
        if !["/dev/fd", "/proc/self/fd", "/proc/thread-self/fd", own.as_str()].contains(&dir) {
            return None;
        }
        name.to_str()?.parse().ok()
    }

    /// Writes `bytes` to a duplicate of descriptor `fd`, which shares the
    /// original's position (and so stays in order with it).
    pub(super) fn write(fd: i32, bytes: &[u8]) -> io::Result<()> {
        // SAFETY: `fcntl` with `F_DUPFD_CLOEXEC` takes plain integers; on a
        // closed descriptor it fails with `EBADF` instead of touching it.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if copy < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `copy` is a descriptor this call just made and nothing
        // else owns; the `File` closes it when dropped.
        let mut file = File::from(unsafe { OwnedFd::from_raw_fd(copy) });
        file.write_all(bytes)?;
        file.flush()
    }
}

/// Replaces (or creates) `target` with a complete temporary file from
/// `dir`, named after `name`.
fn replace(target: &Path, dir: &Path, name: &OsStr, old: Option<&Metadata>, bytes: &[u8]) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if let Some(file) = anonymous::open(dir)? {
        fill(&file, old, bytes)?;
        if anonymous::publish(&file, dir, name, target, old.is_none())? {
            return Ok(());
        }
        // No way to give it a name (no `/proc`): write a named one instead.
    }
    replace_named(target, dir, name, old, bytes)
}

/// [`replace`] with a named temporary file, created exclusively and
/// removed on every error path.
fn replace_named(
    target: &Path,
    dir: &Path,
    name: &OsStr,
    old: Option<&Metadata>,
    bytes: &[u8],
) -> io::Result<()> {
    let (file, tmp) = create_named(dir, name)?;
    let filled = fill(&file, old, bytes);
    drop(file);
    match filled {
        Ok(()) => rename_or_remove(&tmp, target),
        Err(e) => {
            remove_temporary(&tmp);
            Err(e)
        }
    }
}

/// Gives the temporary file the old file's owner and permission bits,
/// then its content, and syncs it, so the rename publishes a whole file.
fn fill(mut file: &File, old: Option<&Metadata>, bytes: &[u8]) -> io::Result<()> {
    if let Some(old) = old {
        keep_owner_and_mode(file, old)?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(unix)]
fn keep_owner_and_mode(file: &File, old: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::{fchown, MetadataExt, PermissionsExt};
    let new = file.metadata()?;
    // The owner first: changing it clears set-id bits, which the mode then
    // restores. Giving a file away (or to a group the process is not in)
    // needs privileges; without them the file keeps the writer's, which
    // is what any other way of writing it would give, so it is no error.
    if new.gid() != old.gid() {
        let _ = fchown(file, None, Some(old.gid()));
    }
    if new.uid() != old.uid() {
        let _ = fchown(file, Some(old.uid()), None);
    }
    file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &File, old: &Metadata) -> io::Result<()> {
    file.set_permissions(old.permissions())
}

/// Creates a fresh temporary file in `dir` under a name nothing else has.
fn create_named(dir: &Path, name: &OsStr) -> io::Result<(File, PathBuf)> {
    for _ in 0..NAME_ATTEMPTS {
        let tmp = dir.join(temporary_name(name));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((file, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a temporary file",
    ))
}

fn rename_or_remove(tmp: &Path, target: &Path) -> io::Result<()> {
    std::fs::rename(tmp, target).inspect_err(|_| remove_temporary(tmp))
}

#[cfg(target_os = "linux")]
mod anonymous;
mod names;

use names::{remove_temporary, temporary_name, NAME_ATTEMPTS};

/// The same error with the text a user reads: the system's description in
/// lower case, without the ` (os error N)` that Rust adds for developers.
/// Errors that are not the system's keep their text.
pub(crate) fn user_facing(e: io::Error) -> io::Error {
    if e.raw_os_error().is_none() {
        return e;
    }
    let text = e.to_string();
    let text = text.rfind(" (os error ").map_or(text.as_str(), |i| &text[..i]);
    let mut chars = text.chars();
    let lowered: String = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    io::Error::new(e.kind(), lowered)
}

// The tests make FIFOs and read `/proc`, so they run where those exist.
#[cfg(all(test, target_os = "linux"))]
mod tests;
