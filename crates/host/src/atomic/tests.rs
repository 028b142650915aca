//! Tests of atomic writes against the real file system: each test makes its
//! own directory under the system's temporary directory and removes it,
//! and none touches `/dev`. Every test also checks that the directory holds
//! exactly the files it should, so a temporary file left behind fails it.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{symlink, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::{plan, replace_named, user_facing};
use crate::{Host, RealHost};

static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

/// A fresh directory, removed (whatever its permissions became) on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let n = NEXT_DIR.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("twill-host-{tag}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn text(&self, name: &str) -> String {
        self.path(name).to_str().unwrap().to_string()
    }

    /// The names in the directory, sorted.
    fn entries(&self) -> Vec<String> {
        entries(&self.0)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::set_permissions(&self.0, fs::Permissions::from_mode(0o755));
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn host() -> RealHost {
    RealHost::with_stdout(Vec::new(), Box::new(io::sink()))
}

fn write(path: &str, bytes: &[u8]) -> io::Result<()> {
    host().write_file(path, bytes)
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn a_new_file_gets_the_mode_file_create_gives() {
    let dir = Scratch::new("new");
    write(&dir.text("new.txt"), b"hello").unwrap();
    fs::File::create(dir.path("reference")).unwrap();
    assert_eq!(fs::read(dir.path("new.txt")).unwrap(), b"hello");
    assert_eq!(mode(&dir.path("new.txt")), mode(&dir.path("reference")));
    assert_eq!(dir.entries(), ["new.txt", "reference"]);
}

#[test]
fn a_regular_file_is_replaced_and_keeps_its_permissions() {
    for bits in [0o600, 0o755, 0o444] {
        let dir = Scratch::new("mode");
        let target = dir.path("data.bin");
        fs::write(&target, b"old content, longer than the new").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(bits)).unwrap();
        let before = fs::metadata(&target).unwrap().ino();
        write(&dir.text("data.bin"), b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(mode(&target), bits, "mode {bits:o}");
        // Replaced by a rename, not rewritten in place.
        assert_ne!(fs::metadata(&target).unwrap().ino(), before);
        assert_eq!(dir.entries(), ["data.bin"]);
    }
}

#[test]
fn the_owner_is_kept_where_the_process_may_set_it() {
    let dir = Scratch::new("owner");
    let target = dir.path("owned");
    fs::write(&target, b"old").unwrap();
    let mine = fs::metadata(&target).unwrap();
    // Giving the file away needs privileges; without them the test still
    // checks that a write succeeds and leaves the owner as it was.
    let given = std::os::unix::fs::chown(&target, Some(65534), Some(65534)).is_ok();
    write(&dir.text("owned"), b"new").unwrap();
    let after = fs::metadata(&target).unwrap();
    let expected = if given {
        (65534, 65534)
    } else {
        (mine.uid(), mine.gid())
    };
    assert_eq!((after.uid(), after.gid()), expected);
    assert_eq!(fs::read(&target).unwrap(), b"new");
    assert_eq!(dir.entries(), ["owned"]);
}

#[test]
fn a_symbolic_link_is_followed_and_stays_a_link() {
    let dir = Scratch::new("link");
    fs::write(dir.path("real.txt"), b"old").unwrap();
    fs::set_permissions(dir.path("real.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    symlink("real.txt", dir.path("link")).unwrap();
    write(&dir.text("link"), b"through the link").unwrap();
    assert_eq!(fs::read_link(dir.path("link")).unwrap(), Path::new("real.txt"));
    assert_eq!(fs::read(dir.path("real.txt")).unwrap(), b"through the link");
    assert_eq!(mode(&dir.path("real.txt")), 0o640);
    assert_eq!(dir.entries(), ["link", "real.txt"]);
}

#[test]
fn a_chain_of_relative_and_absolute_links_reaches_the_final_target() {
    let dir = Scratch::new("chain");
    fs::create_dir(dir.path("sub")).unwrap();
    fs::write(dir.path("real"), b"old").unwrap();
    // first (absolute) -> a (relative, into sub) -> sub/b (relative, back up) -> real
    symlink("sub/b", dir.path("a")).unwrap();
    symlink("../real", dir.path("sub/b")).unwrap();
    symlink(dir.path("a"), dir.path("first")).unwrap();
    write(&dir.text("first"), b"end of the chain").unwrap();
    assert_eq!(fs::read(dir.path("real")).unwrap(), b"end of the chain");
    for link in ["first", "a", "sub/b"] {
        assert!(fs::symlink_metadata(dir.path(link))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    assert_eq!(dir.entries(), ["a", "first", "real", "sub"]);
    assert_eq!(entries(&dir.path("sub")), ["b"]);
}

#[test]
fn a_dangling_link_creates_its_target() {
    let dir = Scratch::new("dangling");
    fs::create_dir(dir.path("sub")).unwrap();
    symlink("sub/made.txt", dir.path("link")).unwrap();
    write(&dir.text("link"), b"made").unwrap();
    assert_eq!(fs::read(dir.path("sub/made.txt")).unwrap(), b"made");
    assert!(fs::symlink_metadata(dir.path("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(dir.entries(), ["link", "sub"]);
    assert_eq!(entries(&dir.path("sub")), ["made.txt"]);
}

#[test]
fn a_link_loop_is_an_error() {
    let dir = Scratch::new("loop");
    symlink("b", dir.path("a")).unwrap();
    symlink("a", dir.path("b")).unwrap();
    let err = write(&dir.text("a"), b"x").unwrap_err();
    assert_eq!(err.to_string(), "too many levels of symbolic links");
    assert_eq!(dir.entries(), ["a", "b"]);
}

#[test]
fn a_fifo_is_written_directly() {
    let dir = Scratch::new("fifo");
    let fifo = dir.path("pipe");
    let c_path = std::ffi::CString::new(dir.text("pipe")).unwrap();
    // SAFETY: a NUL-terminated path alive for the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            fs::File::open(fifo).unwrap().read_to_end(&mut got).unwrap();
            got
        })
    };
    write(&dir.text("pipe"), b"down the pipe").unwrap();
    // Checked before joining: had the FIFO been replaced, the reader would
    // wait for a writer for ever.
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(reader.join().unwrap(), b"down the pipe");
    assert_eq!(dir.entries(), ["pipe"]);
}

#[test]
fn a_socket_is_not_replaced() {
    let dir = Scratch::new("socket");
    let _listener = std::os::unix::net::UnixListener::bind(dir.path("sock")).unwrap();
    // A socket cannot be opened as a file: the error is the system's.
    let err = write(&dir.text("sock"), b"x").unwrap_err();
    assert_eq!(err.to_string(), "no such device or address");
    assert!(fs::symlink_metadata(dir.path("sock"))
        .unwrap()
        .file_type()
        .is_socket());
    assert_eq!(dir.entries(), ["sock"]);
}

#[test]
fn a_link_to_an_open_file_writes_through_it_like_dev_stdout() {
    let dir = Scratch::new("proc");
    let out = dir.path("out.txt");
    // Opened as a shell opens `> out.txt` for standard output: writes go
    // at the descriptor's position, which a direct write must move too.
    let mut open = fs::File::create(&out).unwrap();
    let before = fs::metadata(&out).unwrap().ino();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&open);
    open.write_all(b"printed; ").unwrap();
    // `/dev/stdout` is a link to `/proc/self/fd/1`; this is the same shape.
    symlink(format!("/proc/self/fd/{fd}"), dir.path("stdout")).unwrap();
    write(&dir.text("stdout"), b"through a link; ").unwrap();
    write(&format!("/proc/self/fd/{fd}"), b"as self; ").unwrap();
    write(&format!("/proc/{}/fd/{fd}", std::process::id()), b"as pid; ").unwrap();
    open.write_all(b"printed again").unwrap();
    drop(open);
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        "printed; through a link; as self; as pid; printed again"
    );
    assert_eq!(fs::metadata(&out).unwrap().ino(), before);
    assert_eq!(dir.entries(), ["out.txt", "stdout"]);
}

#[test]
fn a_missing_directory_is_an_error_and_leaves_nothing() {
    let dir = Scratch::new("missing");
    let err = write(&dir.text("no/such/file.npy"), b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert_eq!(err.to_string(), "no such file or directory");
    assert!(dir.entries().is_empty());
}

#[test]
fn a_read_only_directory_is_an_error_and_leaves_nothing() {
    let dir = Scratch::new("readonly");
    fs::write(dir.path("kept"), b"old").unwrap();
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o555)).unwrap();
    // The permission check does not bind a privileged process (root in a
    // container); there the write succeeds, which is checked instead.
    let privileged = fs::write(dir.path("probe"), b"").is_ok();
    let _ = fs::remove_file(dir.path("probe"));
    for name in ["kept", "new"] {
        let result = write(&dir.text(name), b"new");
        if privileged {
            result.unwrap();
        } else {
            let err = result.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
            assert_eq!(err.to_string(), "permission denied");
        }
    }
    let expected: &[&str] = if privileged { &["kept", "new"] } else { &["kept"] };
    assert_eq!(dir.entries(), expected);
    let kept = if privileged { "new" } else { "old" };
    assert_eq!(fs::read_to_string(dir.path("kept")).unwrap(), kept);
}

#[test]
fn a_directory_is_not_a_file_to_write() {
    let dir = Scratch::new("dir");
    fs::create_dir(dir.path("sub")).unwrap();
    for path in [
        dir.text("sub"),
        dir.text("sub/"),
        dir.text("sub/."),
        dir.text("absent/"),
    ] {
        let err = write(&path, b"x").unwrap_err();
        assert_eq!(err.to_string(), "is a directory", "{path}");
    }
    assert_eq!(write("", b"x").unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(dir.entries(), ["sub"]);
    assert!(entries(&dir.path("sub")).is_empty());
}

/// A directory appearing where the new file was to go makes the rename
/// fail after the temporary file has a name: it must still go.
fn make_the_rename_fail(dir: &Scratch) {
    fs::create_dir(dir.path("target")).unwrap();
    fs::write(dir.path("target/inside"), b"").unwrap();
}

#[test]
fn a_failed_rename_removes_the_temporary_file() {
    let dir = Scratch::new("rename");
    let planned = plan(&dir.text("target")).unwrap();
    make_the_rename_fail(&dir);
    assert!(planned.write(b"lost").is_err());
    assert_eq!(dir.entries(), ["target"]);
}

#[test]
fn the_named_temporary_file_writes_and_cleans_up_too() {
    let dir = Scratch::new("named");
    fs::write(dir.path("target"), b"old").unwrap();
    fs::set_permissions(dir.path("target"), fs::Permissions::from_mode(0o600)).unwrap();
    let old = fs::metadata(dir.path("target")).unwrap();
    let name = std::ffi::OsStr::new("target");
    replace_named(&dir.path("target"), &dir.0, name, Some(&old), b"new").unwrap();
    assert_eq!(fs::read(dir.path("target")).unwrap(), b"new");
    assert_eq!(mode(&dir.path("target")), 0o600);
    assert_eq!(dir.entries(), ["target"]);
    fs::remove_file(dir.path("target")).unwrap();
    make_the_rename_fail(&dir);
    assert!(replace_named(&dir.path("target"), &dir.0, name, None, b"lost").is_err());
    assert_eq!(dir.entries(), ["target"]);
}

#[test]
fn a_long_name_still_gets_a_temporary_file() {
    let dir = Scratch::new("long");
    let name = "é".repeat(127); // 254 bytes, one short of the limit
    write(&dir.text(&name), b"long").unwrap();
    assert_eq!(fs::read(dir.path(&name)).unwrap(), b"long");
    assert_eq!(dir.entries(), [name]);
}

#[test]
fn system_errors_read_as_a_user_reads_them() {
    let err = user_facing(io::Error::from_raw_os_error(libc::EACCES));
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    assert_eq!(err.to_string(), "permission denied");
    let ours = user_facing(io::Error::other("is a directory"));
    assert_eq!(ours.to_string(), "is a directory");
    // Reads use the same wording.
    let err = host().read_file("/definitely/not/here").unwrap_err();
    assert_eq!(err.to_string(), "no such file or directory");
}
