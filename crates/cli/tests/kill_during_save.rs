//! `kill -9` during `save_npy` (issue 11, acceptance 4): a program that
//! saves a 4 MiB tensor to the same path over and over is killed a hundred
//! times at spread-out moments, and after every kill the directory holds no
//! temporary file and the target is either absent (nothing was ever saved)
//! or a complete NPY file of one of the tensors the program saved.
//!
//! A save that replaces a file ends in a child process (see
//! `crates/host/src/atomic/anonymous.rs`), which a kill of the program does
//! not stop; the test is their subreaper and waits for them before it
//! looks, as it would look after a crash, once everything has stopped.

#![cfg(target_os = "linux")]
// Test code runs the binary and reads what it wrote: the core crates' IO
// rule (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KILLS: u64 = 100;
/// Elements per tensor: 4 MiB of f64, so a write takes a while.
const LEN: usize = 1 << 19;
/// Each run's tensors are filled with values from its own range
/// (`run * RUN_SPAN + 1`, `+ 2`, …), so a value says which save wrote it.
const RUN_SPAN: u64 = 1_000_000;
/// What `numpy.save` writes before the data for this shape: magic, version
/// 1.0, header length, and the header padded to 128 bytes in all.
const HEADER: &str = "{'descr': '<f8', 'fortran_order': False, 'shape': (524288,), }";

fn program(run: u64) -> String {
    format!(
        "let path = args()[0]\nvar i = {}\nwhile true {{\n    save_npy(path, full([{LEN}], i, f64))\n    i += 1\n}}\n",
        run * RUN_SPAN + 1
    )
}

/// The value every element of a complete NPY file holds, or why the file
/// is not one that `program` saved.
fn saved_value(bytes: &[u8]) -> Result<u64, String> {
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    let mut text = HEADER.to_string();
    while !(10 + text.len() + 1).is_multiple_of(64) {
        text.push(' ');
    }
    text.push('\n');
    header.extend_from_slice(&(text.len() as u16).to_le_bytes());
    header.extend_from_slice(text.as_bytes());
    if bytes.len() != header.len() + 8 * LEN {
        return Err(format!("{} bytes, not {}", bytes.len(), header.len() + 8 * LEN));
    }
    if bytes[..header.len()] != header[..] {
        return Err(format!(
            "header {:?}",
            String::from_utf8_lossy(&bytes[..header.len()])
        ));
    }
    let mut values = bytes[header.len()..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()));
    let first = values.next().unwrap();
    if let Some(other) = values.find(|&v| v.to_bits() != first.to_bits()) {
        return Err(format!("mixed values {first} and {other}"));
    }
    if first < 1.0 || first.fract() != 0.0 {
        return Err(format!("value {first} was never saved"));
    }
    Ok(first as u64)
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn inode(path: &Path) -> Option<u64> {
    fs::metadata(path).ok().map(|m| m.ino())
}

/// Fails the test with the program's own error if it stopped by itself.
fn still_running(child: &mut Child) {
    if let Some(status) = child.try_wait().unwrap() {
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        panic!("the program ended by itself ({status}): {err}");
    }
}

/// Waits for every process the killed program left behind, which the
/// kernel hands to this one as their subreaper.
fn reap_orphans() {
    loop {
        let mut status = 0;
        // SAFETY: `status` is valid for the call.
        let rc = unsafe { libc::waitpid(-1, &mut status, 0) };
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return; // ECHILD: none left
        }
    }
}

#[test]
fn kill_9_during_save_npy_leaves_no_temporary_file_and_no_half_file() {
    // SAFETY: a plain flag for this process.
    assert_eq!(
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) },
        0
    );
    let root = Scratch(std::env::temp_dir().join(format!("twill-kill-{}", std::process::id())));
    let _ = fs::remove_dir_all(&root.0);
    let data = root.0.join("data");
    fs::create_dir_all(&data).unwrap();
    let target = data.join("t.npy");
    let source = root.0.join("save.tw");
    // The value the target held after the previous kill.
    let mut last: Option<u64> = None;
    for run in 0..KILLS {
        fs::write(&source, program(run)).unwrap();
        let before = inode(&target);
        let mut child = Command::new(env!("CARGO_BIN_EXE_twill"))
            .arg("run")
            .arg(&source)
            .arg(&target)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Even runs are killed at a moment counted from the start (during
        // start-up or any save); odd runs once they have saved at least
        // once, so the kill lands in the middle of a later save. The delays
        // step through their ranges in coprime strides.
        let saved_this_run = run % 2 == 1;
        let delay = if saved_this_run {
            let give_up = Instant::now() + Duration::from_secs(60);
            while inode(&target) == before {
                still_running(&mut child);
                assert!(Instant::now() < give_up, "run {run}: no save in 60 s");
                std::thread::sleep(Duration::from_micros(200));
            }
            Duration::from_micros(run * 7919 % 30_000)
        } else {
            Duration::from_micros(run * 4057 % 50_000)
        };
        std::thread::sleep(delay);
        still_running(&mut child);
        child.kill().unwrap();
        child.wait().unwrap();
        reap_orphans();

        let names: Vec<String> = fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| n == "t.npy"),
            "run {run} ({delay:?}): left {names:?}"
        );
        let value = match fs::read(&target) {
            Ok(bytes) => saved_value(&bytes).unwrap_or_else(|e| panic!("run {run} ({delay:?}): {e}")),
            Err(e) => {
                assert!(last.is_none(), "run {run}: the target went away: {e}");
                continue;
            }
        };
        let this_run = value / RUN_SPAN == run && value % RUN_SPAN != 0;
        assert!(
            this_run || Some(value) == last,
            "run {run}: value {value} was not saved by this run and is not the previous {last:?}"
        );
        assert!(
            this_run || !saved_this_run,
            "run {run}: saved, yet the target holds {value}"
        );
        last = Some(value);
    }
    assert!(last.is_some(), "no run saved anything");
}
