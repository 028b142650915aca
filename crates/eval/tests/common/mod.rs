//! Helpers shared by the evaluator's integration tests: an output buffer
//! the interpreter can print into, and `run`, the public pipeline (parse,
//! check, run) on one program.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use twill_check::Checker;
use twill_eval::Interp;

/// Shared bytes written by an interpreter's `print`.
#[derive(Clone, Default)]
pub struct Buf(pub Rc<RefCell<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs a program; `Ok(stdout)`, or `Err(first message)` for a static or
/// runtime error.
pub fn run(src: &str) -> Result<String, String> {
    let parsed = twill_syntax::parse(src);
    if let Some(d) = parsed.errors.first() {
        return Err(d.message.clone());
    }
    let mut checker = Checker::new();
    let checked = checker.check_program(&parsed.program);
    let Some(module) = checked.module else {
        return Err(checked
            .diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_default());
    };
    let buf = Buf::default();
    let mut interp = Interp::new(Vec::new(), Box::new(buf.clone()));
    let r = interp.run(&module, &checker.global_names());
    interp.flush();
    let out = String::from_utf8_lossy(&buf.0.borrow()).into_owned();
    r.map(|_| out).map_err(|e| e.message)
}
