//! The names of temporary files: `.NAME.tmp-PID-N` beside the target,
//! unique within the process, and how one is removed on an error path.
//! Both ways of writing a file (a named temporary file, and an anonymous
//! one linked under such a name) share them.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many temporary names are tried before giving up: each try takes a
/// fresh counter value, so only leftovers of an earlier process with the
/// same id can collide.
pub(super) const NAME_ATTEMPTS: u32 = 100;

/// Makes the temporary names of one process distinct from each other.
static NEXT_NAME: AtomicU64 = AtomicU64::new(0);

/// A name for a temporary file beside `name` that no other write of this
/// process uses: `.NAME.tmp-PID-N`, with `NAME` cut short enough that the
/// whole stays within a file name's 255 bytes. Only uniqueness matters, so
/// bytes of `name` that are not UTF-8 are replaced.
pub(super) fn temporary_name(name: &OsStr) -> String {
    let name = name.to_string_lossy();
    let mut cut = name.len().min(200);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
    format!(".{}.tmp-{}-{n}", &name[..cut], std::process::id())
}

/// Removes a temporary file on an error path. The error being reported is
/// the one that matters; a failure to remove (the directory vanished with
/// it) has nothing to add.
pub(super) fn remove_temporary(tmp: &Path) {
    let _ = std::fs::remove_file(tmp);
}
