//! Helpers shared by the evaluator's integration tests: `run`, the public
//! pipeline (parse, check, run) on one program, printing into memory.

use twill_check::Checker;
use twill_eval::Interp;
use twill_host::CaptureHost;
use twill_syntax::FileId;

/// Runs a program; `Ok(stdout)`, or `Err(first message)` for a static or
/// runtime error.
pub fn run(src: &str) -> Result<String, String> {
    let parsed = twill_syntax::parse(src, FileId(0));
    if let Some(d) = parsed.errors.first() {
        return Err(d.message.clone());
    }
    let mut checker = Checker::new();
    let checked = checker.check_program(parsed.program);
    let Some(module) = checked.module else {
        return Err(checked
            .diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_default());
    };
    let host = CaptureHost::new();
    let mut interp = Interp::new(Box::new(host.clone()));
    let r = interp.run(&module, &checker.global_names());
    interp.flush();
    let out = host.stdout.text();
    r.map(|_| out).map_err(|e| e.message)
}
