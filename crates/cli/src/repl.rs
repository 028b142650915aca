//! The REPL: reads statements, prints the value of each expression
//! statement, keeps definitions, and survives every error. On a terminal it
//! uses rustyline (history, and a validator that asks for another line
//! while brackets or a block are open); otherwise it reads plain lines with
//! no prompt, so it can be driven by a pipe.

use std::io::{BufRead, IsTerminal, Write};

use rustyline::error::ReadlineError;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Completer, Helper, Highlighter, Hinter};
use twill_check::Checker;
use twill_eval::{print::display, Interp, Value};

use crate::render::{emit, SourceFile};

const HELP: &str = "\
Enter twill statements; the value of an expression statement is printed.
Open brackets or blocks continue on the next line.
  :help         this text
  :type EXPR    the static type of an expression
  :quit         leave (or end of input, Ctrl-D)";

/// The state that persists across entries.
pub struct Session {
    checker: Checker,
    interp: Interp,
}

impl Session {
    pub fn new() -> Session {
        let mut checker = Checker::new();
        let mut interp = Interp::new(Vec::new(), Box::new(std::io::stdout()));
        if let Err(msg) = twill_eval::stdlib::load(&mut checker, &mut interp) {
            let _ = writeln!(
                std::io::stderr(),
                "error: internal error in twill (please report it): {msg}"
            );
        }
        Session { checker, interp }
    }

    /// Runs one complete entry. Errors are reported and forgotten.
    pub fn entry(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        if let Some(cmd) = trimmed.strip_prefix(':') {
            self.command(cmd);
            return;
        }
        let src = SourceFile { name: "<repl>", text };
        let parsed = twill_syntax::parse(text);
        if !parsed.errors.is_empty() {
            emit(&parsed.errors, &src);
            return;
        }
        let checked = self.checker.check_program(&parsed.program);
        emit(&checked.diagnostics, &src);
        let Some(module) = checked.module else {
            return;
        };
        match self.interp.run(&module, &self.checker.global_names()) {
            Ok(Some(v)) if !matches!(v, Value::Unit) => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", display(&v));
                let _ = out.flush();
            }
            Ok(_) => {}
            Err(e) => {
                self.interp.flush();
                emit(&[e.to_diagnostic()], &src);
            }
        }
    }

    fn command(&mut self, cmd: &str) {
        let (name, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
        match name {
            "help" | "h" => println!("{HELP}"),
            "type" | "t" => {
                let src = SourceFile {
                    name: "<repl>",
                    text: rest,
                };
                let parsed = twill_syntax::parse(rest);
                if !parsed.errors.is_empty() {
                    emit(&parsed.errors, &src);
                    return;
                }
                // Type the expression as the value of a throwaway binding,
                // on a copy of the checker so nothing is defined.
                let mut probe = self.checker.clone();
                let wrapped = format!("let __type_probe__ = ({rest})");
                let parsed = twill_syntax::parse(&wrapped);
                let checked = probe.check_program(&parsed.program);
                if checked.module.is_none() {
                    let diags: Vec<_> = checked.diagnostics;
                    let src = SourceFile {
                        name: "<repl>",
                        text: &wrapped,
                    };
                    emit(&diags, &src);
                    return;
                }
                match probe.global_type("__type_probe__") {
                    Some(t) => println!("{t}"),
                    None => println!("?"),
                }
            }
            "quit" | "q" | "exit" => std::process::exit(0),
            other => {
                let _ = writeln!(std::io::stderr(), "error: unknown command `:{other}` (try :help)");
            }
        }
    }
}

#[derive(Completer, Helper, Highlighter, Hinter)]
struct TwillHelper;

impl Validator for TwillHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        let input = ctx.input();
        if input.trim_start().starts_with(':') || !twill_syntax::parse(input).incomplete {
            Ok(ValidationResult::Valid(None))
        } else {
            Ok(ValidationResult::Incomplete)
        }
    }
}

fn history_path() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("TWILL_HISTORY") {
        return Some(p.into());
    }
    std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".twill_history"))
}

pub fn run() -> i32 {
    if std::io::stdin().is_terminal() {
        interactive()
    } else {
        piped()
    }
}

/// Reads plain lines, joining them while the input is incomplete.
fn piped() -> i32 {
    let mut session = Session::new();
    let mut buf = String::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        buf.push_str(&line);
        buf.push('\n');
        if buf.trim_start().starts_with(':') || !twill_syntax::parse(&buf).incomplete {
            session.entry(&buf);
            buf.clear();
        }
    }
    if !buf.trim().is_empty() {
        session.entry(&buf);
    }
    0
}

fn interactive() -> i32 {
    let config = rustyline::Config::builder().auto_add_history(true).build();
    let Ok(mut editor) =
        rustyline::Editor::<TwillHelper, rustyline::history::DefaultHistory>::with_config(config)
    else {
        return piped();
    };
    editor.set_helper(Some(TwillHelper));
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!(
        "twill {} — :help for help, :quit or Ctrl-D to leave",
        env!("CARGO_PKG_VERSION")
    );
    let mut session = Session::new();
    loop {
        match editor.readline("twill> ") {
            Ok(line) => session.entry(&line),
            Err(ReadlineError::Interrupted) => continue,
            Err(_) => break,
        }
        if let Some(h) = &history {
            let _ = editor.save_history(h);
        }
    }
    0
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}
