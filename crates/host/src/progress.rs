//! Progress bars on a terminal (spec §12.2), for [`crate::RealHost`]: a
//! stack of indicatif bars, one per running `progress` loop, innermost
//! last, drawn on standard error with the label, the count (of the total
//! when known), the rate and the ETA. Output the program prints while bars
//! are shown goes out with the bars hidden (`Bars::suspend`), so lines and
//! bars never overwrite each other. Nothing here runs unless standard error
//! is a terminal.

use std::io::{self, Write};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bars of the running `progress` loops, outermost first.
pub(crate) struct Bars {
    multi: MultiProgress,
    stack: Vec<ProgressBar>,
}

/// The template of a bar whose total is known, and of one whose is not.
const KNOWN: &str = "{prefix}{wide_bar} {pos}/{len} [{elapsed_precise}<{eta_precise}, {rate}] {msg}";
const UNKNOWN: &str = "{prefix}{spinner} {pos} [{elapsed_precise}, {rate}] {msg}";

/// Steps per second with three significant digits, as tqdm shows them.
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let r = state.per_sec();
    let _ = if r >= 1e6 {
        write!(w, "{:.2}M it/s", r / 1e6)
    } else if r >= 1e3 {
        write!(w, "{:.2}k it/s", r / 1e3)
    } else {
        write!(w, "{r:.2} it/s")
    };
}

impl Bars {
    pub(crate) fn new() -> Bars {
        Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10)),
            stack: Vec::new(),
        }
    }

    pub(crate) fn begin(&mut self, label: &str, total: Option<u64>) {
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::no_length(),
        };
        // A template that does not parse would be a bug here, not the
        // program's: the bar then keeps indicatif's default look.
        if let Ok(style) = ProgressStyle::with_template(if total.is_some() { KNOWN } else { UNKNOWN }) {
            bar.set_style(style.with_key("rate", rate).progress_chars("█▉▊▋▌▍▎▏ "));
        }
        if !label.is_empty() {
            bar.set_prefix(format!("{label} "));
        }
        let bar = self.multi.add(bar);
        bar.enable_steady_tick(Duration::from_millis(200));
        self.stack.push(bar);
    }

    pub(crate) fn tick(&mut self) {
        if let Some(bar) = self.stack.last() {
            bar.inc(1);
        }
    }

    pub(crate) fn note(&mut self, note: &str) {
        if let Some(bar) = self.stack.last() {
            bar.set_message(note.to_string());
        }
    }

    /// The innermost bar ends: drawn once more at its final count, then
    /// cleared, so that the terminal keeps only what the program printed.
    pub(crate) fn end(&mut self) {
        if let Some(bar) = self.stack.pop() {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }

    pub(crate) fn active(&self) -> bool {
        !self.stack.is_empty()
    }

    /// `bytes` written to `out` and flushed with the bars hidden.
    pub(crate) fn suspend(&self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        self.multi
            .suspend(|| out.write_all(bytes).and_then(|()| out.flush()))
    }
}
