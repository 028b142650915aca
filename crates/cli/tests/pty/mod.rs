//! A pseudo-terminal for the tests that drive `twill` as a terminal user
//! would (`progress.rs`, `repl_pty.rs`).

use std::os::fd::{FromRawFd, OwnedFd};

/// A pseudo-terminal of `rows` × `cols`: (master, slave).
pub fn open(rows: u16, cols: u16) -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes the two descriptors it opens; the name
    // argument may be null, and the termios and winsize pointers are valid.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here only.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}
