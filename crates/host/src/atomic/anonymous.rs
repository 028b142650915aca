//! Anonymous temporary files (`O_TMPFILE`, Linux 3.11 and later), and how
//! a complete one becomes the target. While it is written and synced it
//! has no name, so a process killed then leaves nothing. A new target is
//! then one `linkat` (atomic: the name appears with the whole file behind
//! it). An existing target needs two steps, a link under a temporary name
//! and a rename over the target, and a `kill -9` between them would leave
//! the temporary name behind; so a child process takes both steps, and
//! killing this process no longer stops them (the child finishes and
//! exits). Only where no child can be made (a process limit, a sandbox)
//! does this process take the steps itself, with that window of two
//! system calls.
//!
//! The file is linked through its `/proc/self/fd` entry, which needs no
//! privileges (`AT_EMPTY_PATH` needs `CAP_DAC_READ_SEARCH`). Without
//! `/proc` the caller falls back to a named temporary file.

use std::ffi::{CStr, CString, OsStr};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// An unnamed file in `dir`, or `None` where the kernel or the file
/// system has no `O_TMPFILE` (old kernels read the flag as `O_DIRECTORY`
/// and answer `EISDIR`).
pub(super) fn open(dir: &Path) -> io::Result<Option<File>> {
    match OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
    {
        Ok(file) => Ok(Some(file)),
        Err(e) => match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL) => Ok(None),
            _ => Err(e),
        },
    }
}

/// Gives the complete, synced, unnamed `file` the name `target` (whose
/// directory is `dir` and last component `name`). `Ok(false)` when the
/// file cannot be linked at all: the caller then writes a named temporary
/// file, whose creation reports the real error if there is one.
pub(super) fn publish(
    file: &File,
    dir: &Path,
    name: &OsStr,
    target: &Path,
    is_new: bool,
) -> io::Result<bool> {
    let source = c_path(OsStr::new(&format!("/proc/self/fd/{}", file.as_raw_fd())))?;
    let c_target = c_path(target.as_os_str())?;
    if is_new {
        match link(&source, &c_target) {
            Ok(()) => return Ok(true),
            // Made by someone else since the path was resolved: replace it.
            Err(libc::EEXIST) => {}
            Err(_) => return Ok(false),
        }
    }
    let meta = file.metadata()?;
    let ours = (meta.dev(), meta.ino());
    for _ in 0..super::names::NAME_ATTEMPTS {
        let tmp = dir.join(super::names::temporary_name(name));
        let c_tmp = c_path(tmp.as_os_str())?;
        match link_then_rename_in_child(&source, &c_tmp, &c_target, ours, &tmp, target) {
            Step::Done => return Ok(true),
            Step::NameTaken => {}
            Step::LinkFailed => return Ok(false),
            Step::RenameFailed(errno) => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
    Ok(false)
}

fn c_path(path: &OsStr) -> io::Result<CString> {
    CString::new(path.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "file name contained an unexpected NUL byte",
        )
    })
}

/// How linking under a temporary name and renaming it over the target
/// went; a child process reports it as its exit status.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    Done,
    /// The temporary name exists already (a leftover of another process
    /// with this one's id): try the next.
    NameTaken,
    /// The file could not be linked at all (no `/proc`).
    LinkFailed,
    /// The rename failed with this `errno`; the temporary name is gone.
    RenameFailed(i32),
}

impl Step {
    const NAME_TAKEN: i32 = 254;
    const LINK_FAILED: i32 = 255;

    /// As an exit status: 0, the two codes above, or the `errno` (Linux's
    /// are all below 254).
    fn code(self) -> i32 {
        match self {
            Step::Done => 0,
            Step::NameTaken => Step::NAME_TAKEN,
            Step::LinkFailed => Step::LINK_FAILED,
            Step::RenameFailed(errno) => errno.clamp(1, Step::NAME_TAKEN - 1),
        }
    }

    fn from_code(code: i32) -> Step {
        match code {
            0 => Step::Done,
            Step::NAME_TAKEN => Step::NameTaken,
            Step::LINK_FAILED => Step::LinkFailed,
            errno => Step::RenameFailed(errno),
        }
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

fn link(source: &CStr, dest: &CStr) -> Result<(), i32> {
    // SAFETY: both arguments are NUL-terminated strings alive for the
    // call; `linkat` only reads them.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            source.as_ptr(),
            libc::AT_FDCWD,
            dest.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Links `source` as `tmp` and renames that over `target`, removing `tmp`
/// if the rename fails. Only system calls and arithmetic, no allocation:
/// it runs in a forked child of a process that may have other threads.
fn link_then_rename(source: &CStr, tmp: &CStr, target: &CStr) -> Step {
    if let Err(errno) = link(source, tmp) {
        return if errno == libc::EEXIST {
            Step::NameTaken
        } else {
            Step::LinkFailed
        };
    }
    // SAFETY: NUL-terminated strings alive for the call, only read.
    if unsafe { libc::rename(tmp.as_ptr(), target.as_ptr()) } == 0 {
        return Step::Done;
    }
    let errno = errno();
    // SAFETY: as above.
    unsafe { libc::unlink(tmp.as_ptr()) };
    Step::RenameFailed(errno)
}

/// [`link_then_rename`] in a child process, waited for, so that a
/// `kill -9` of this process cannot stop between the two steps.
fn link_then_rename_in_child(
    source: &CStr,
    c_tmp: &CStr,
    c_target: &CStr,
    ours: (u64, u64),
    tmp: &Path,
    target: &Path,
) -> Step {
    // The child must run none of this process's signal handlers (one
    // could flush a copy of buffered output): it starts with every signal
    // blocked, and this thread's mask is restored once it exists.
    // SAFETY: `sigset_t` is plain data; `sigfillset` initialises it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `pthread_sigmask` fills it.
    let mut saved: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: both sets are valid for the calls.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut saved);
    }
    // SAFETY: the child calls only `link_then_rename` (system calls on
    // strings made before the fork, no allocation, no locks) and `_exit`,
    // which is what a child of a multi-threaded process may do.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = link_then_rename(source, c_tmp, c_target).code();
        // SAFETY: ends the child without running this process's exit
        // handlers or flushing its buffers.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: `saved` holds the mask read above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &saved, std::ptr::null_mut()) };
    if pid < 0 {
        return link_then_rename(source, c_tmp, c_target);
    }
    let mut status = 0;
    loop {
        // SAFETY: `status` is valid for the call.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        if rc < 0 && errno() == libc::EINTR {
            continue;
        }
        // The child's status is lost (SIGCHLD ignored, so the kernel
        // reaped it): the files say what it did.
        return outcome_from_files(ours, tmp, target);
    }
    if libc::WIFEXITED(status) {
        Step::from_code(libc::WEXITSTATUS(status))
    } else {
        outcome_from_files(ours, tmp, target)
    }
}

/// What a child that reported nothing did: the target is this file (done),
/// or it is not and any temporary name of it is removed.
fn outcome_from_files(ours: (u64, u64), tmp: &Path, target: &Path) -> Step {
    let is_ours = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == ours);
    if is_ours(target) {
        return Step::Done;
    }
    if is_ours(tmp) {
        super::names::remove_temporary(tmp);
    }
    Step::RenameFailed(libc::EINTR)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    use super::{outcome_from_files, Step};

    #[test]
    fn steps_survive_the_trip_through_an_exit_status() {
        for step in [
            Step::Done,
            Step::NameTaken,
            Step::LinkFailed,
            Step::RenameFailed(libc::EACCES),
            Step::RenameFailed(libc::EHWPOISON),
        ] {
            assert_eq!(Step::from_code(step.code()), step);
        }
    }

    #[test]
    fn a_child_that_reports_nothing_is_judged_by_the_files() {
        let dir = std::env::temp_dir().join(format!("twill-host-outcome-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (ours, tmp, other) = (dir.join("ours"), dir.join(".tmp"), dir.join("other"));
        fs::write(&ours, b"new").unwrap();
        fs::write(&other, b"old").unwrap();
        let meta = fs::metadata(&ours).unwrap();
        let id = (meta.dev(), meta.ino());
        // The rename happened: the target is this file.
        assert_eq!(outcome_from_files(id, &tmp, &ours), Step::Done);
        // It did not: the temporary name (a link to this file) goes.
        fs::hard_link(&ours, &tmp).unwrap();
        assert_eq!(
            outcome_from_files(id, &tmp, &other),
            Step::RenameFailed(libc::EINTR)
        );
        assert!(fs::symlink_metadata(&tmp).is_err());
        assert_eq!(fs::read(&other).unwrap(), b"old");
        fs::remove_dir_all(&dir).unwrap();
    }
}
