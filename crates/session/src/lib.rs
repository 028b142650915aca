//! One twill session: the source map, the pipeline parse → check → run with
//! the standard library loaded once, the state a REPL keeps between
//! entries, diagnostics as data, and the exit statuses of spec §1. `twill
//! run`, `twill check`, the REPL and the golden harness (through the
//! binary) all drive a [`Session`]; an editor or a notebook kernel would
//! too. Everything outside (files, streams, arguments, clock) goes through
//! the [`Host`] it is given; diagnostics go to a [`Reporter`], so only the
//! caller decides where text is written.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
// IO only through twill_host::Host; see clippy.toml for the rule and why.
#![cfg_attr(
    not(test),
    deny(
        clippy::disallowed_methods,
        clippy::disallowed_types,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]
// Unit tests may use real files and the clock.
#![cfg_attr(test, allow(clippy::disallowed_methods, clippy::disallowed_types))]

mod complete;
pub use complete::name_at;
pub mod render;
pub mod sources;

use twill_check::{hir, Checker, Ty};
pub use twill_eval::Engine;
pub use twill_eval::{interrupt, reserve, ErrorKind};
use twill_eval::{print::display, Interp, Value};
use twill_syntax::{Diagnostic, FileId, Span};

pub use render::render;
pub use sources::{Source, SourceMap};
pub use twill_host::{CaptureHost, Display, Host, RealHost, SharedBuf};

/// How a `run` or `check` ended (spec §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Success.
    Ok,
    /// The program failed while running.
    Runtime,
    /// The program was rejected before running (or could not be read).
    Static,
    /// The program called `exit(code)` (spec §10.7).
    Exit(i32),
}

impl Status {
    /// The process exit status.
    pub fn code(self) -> i32 {
        match self {
            Status::Ok => 0,
            Status::Runtime => 1,
            Status::Static => 2,
            Status::Exit(code) => code,
        }
    }
}

/// Whether a program is run after it is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Run,
    Check,
}

/// What the REPL does after an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
    /// The entry called `exit(code)`: the session ends with this status.
    Exit(i32),
}

/// Where a session's diagnostics go, as they arise (so a checker warning
/// is shown before the program's output, as a terminal user expects).
pub trait Reporter {
    /// Diagnostics of one phase; their spans name files in `sources`.
    fn diagnostics(&mut self, sources: &SourceMap, diagnostics: &[Diagnostic]);
    /// A problem with no place in a source (a file that cannot be read).
    fn error(&mut self, message: &str);
}

/// A reporter that keeps everything, rendered without colour: for tests
/// and for hosts with no terminal.
#[derive(Clone, Debug, Default)]
pub struct CollectReporter {
    pub diagnostics: Vec<Diagnostic>,
    /// Every report as the terminal would show it.
    pub text: String,
}

impl Reporter for CollectReporter {
    fn diagnostics(&mut self, sources: &SourceMap, diagnostics: &[Diagnostic]) {
        for d in diagnostics {
            self.text.push_str(&render(sources, d, false));
        }
        self.diagnostics.extend_from_slice(diagnostics);
    }

    fn error(&mut self, message: &str) {
        self.text.push_str(&format!("error: {message}\n"));
    }
}

/// How a session is set up.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Assert at run time every tensor dtype the checker claims (the golden
    /// harness turns this on; see `Checker::crosscheck`).
    pub crosscheck: bool,
    /// Fill `Checked::types` with every expression's type (editors,
    /// notebooks, tests); `twill run` and `twill check` leave it off.
    pub types: bool,
    /// Which engine runs the code (the compiled one unless asked).
    pub engine: Engine,
    /// Run every tensor operation through the self-hosted `reference`
    /// module instead of the native kernels (`twill run --reference`,
    /// spec §16). It is switched for the thread the session is made on.
    pub reference: bool,
}

/// A checked source: its diagnostics (parse errors, or the checker's
/// errors and warnings), the module to run when there were no errors, and
/// the static type of every expression the checker saw.
pub struct Checked {
    pub file: FileId,
    pub diagnostics: Vec<Diagnostic>,
    pub module: Option<hir::Module>,
    pub types: Vec<(Span, Ty)>,
    /// How dtypes arose, by expression span (see `CheckOutput::notes`).
    pub notes: Vec<(Span, String)>,
}

const HELP: &str = "\
Enter twill statements; the value of an expression statement is printed.
Open brackets or blocks continue on the next line.
  :help         this text
  :help NAME    the signature and description of a builtin, operation or function
  :type EXPR    the static type of an expression
  :time ENTRY   run it, then show its wall time (and a tensor's shape and dtype)
  :load FILE    run a file into the session, keeping its definitions
  :vars         the names defined so far, their static types, tensors' shapes
  :reset        forget every definition and import
  :quit         leave (or end of input, Ctrl-D)";

/// The source map, the checker's definitions and the interpreter's globals
/// (which persist from one source to the next), and the host.
pub struct Session {
    sources: SourceMap,
    checker: Checker,
    interp: Interp,
    /// The modules imported so far (spec §10.8), by path, with the key
    /// their names have in the checker (the dotted name of their first
    /// import): each is loaded, checked and run once per session, however
    /// it is imported.
    modules: std::collections::HashMap<String, String>,
    /// Modules checked but not yet run, in the order they run (before the
    /// next module `run` is given).
    pending: Vec<hir::Module>,
    /// The kind of the last run's runtime error, if it ended in one.
    last_error: Option<ErrorKind>,
    /// REPL entries of `#` comment lines only, kept for the entry after
    /// them, so that a comment typed above a `fn` is its doc (`:help`).
    comments: String,
    /// How the session was set up, for `:reset`.
    options: Options,
}

impl Session {
    /// A session with nothing defined yet; the standard library's files
    /// are loaded as sources name them (`Session::check`).
    pub fn new(host: Box<dyn Host>, options: Options) -> Session {
        let sources = SourceMap::new();
        let (checker, interp) = Session::fresh(host, options);
        Session {
            sources,
            checker,
            interp,
            modules: Default::default(),
            pending: Vec::new(),
            last_error: None,
            comments: String::new(),
            options,
        }
    }

    fn fresh(host: Box<dyn Host>, options: Options) -> (Checker, Interp) {
        let mut checker = Checker::new();
        checker.crosscheck = options.crosscheck;
        checker.record_types = options.types;
        let mut interp = Interp::new(host);
        interp.set_engine(options.engine);
        twill_eval::reference::set_enabled(options.reference);
        (checker, interp)
    }

    /// `:reset`: every definition and imported module forgotten, the
    /// program's random generator restarted; the host (and the sources
    /// read so far, which old diagnostics may name) stay.
    pub fn reset(&mut self) {
        let old = std::mem::replace(
            &mut self.interp,
            Interp::new(Box::new(twill_host::CaptureHost::new())),
        );
        let (checker, interp) = Session::fresh(old.into_host(), self.options);
        self.checker = checker;
        self.interp = interp;
        self.modules.clear();
        self.pending.clear();
        self.last_error = None;
        self.comments.clear();
    }

    /// The kind of runtime error the last run ended in (`None` when it
    /// succeeded or nothing ran).
    pub fn last_error_kind(&self) -> Option<ErrorKind> {
        self.last_error
    }

    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    pub fn host(&mut self) -> &mut dyn Host {
        self.interp.host()
    }

    /// Adds a source the caller already has (a REPL entry, an editor
    /// buffer).
    pub fn add_source(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.sources.add(name, text)
    }

    /// Reads a program through the host, from a path or standard input for
    /// `-`, and adds it to the source map.
    pub fn read_source(&mut self, path: &str) -> Result<FileId, String> {
        let host = self.interp.host();
        if path == "-" {
            let bytes = host
                .read_stdin()
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            let text = utf8_source("<stdin>", bytes)?;
            return Ok(self.sources.add("<stdin>", text));
        }
        let bytes = host.read_file(path).map_err(|e| {
            // `io::ErrorKind` is non-exhaustive; every other kind has its own text.
            #[allow(clippy::wildcard_enum_match_arm)]
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "file not found".to_string(),
                _ => e.to_string(),
            };
            format!("cannot read `{path}`: {reason}")
        })?;
        let text = utf8_source(path, bytes)?;
        Ok(self.sources.add(path, text))
    }

    /// Parses and checks a source against everything defined so far. With
    /// no errors its definitions are kept (they are in force once the
    /// module runs); with errors nothing is. An id this session did not
    /// hand out names an empty source.
    pub fn check(&mut self, file: FileId) -> Checked {
        let text = self.sources.get(file).map_or("", |s| s.text.as_str());
        let parsed = twill_syntax::parse(text, file);
        if !parsed.errors.is_empty() {
            return Checked {
                file,
                diagnostics: parsed.errors,
                module: None,
                types: Vec::new(),
                notes: Vec::new(),
            };
        }
        // The modules it imports are loaded, checked and queued to run
        // first (spec §10.8).
        let name = self.sources.get(file).map_or(String::new(), |s| s.name.clone());
        let mut stack = vec![name];
        let (diagnostics, imports) = self.load_imports(&parsed.program, &mut stack);
        if diagnostics.iter().any(Diagnostic::is_error) {
            self.pending.clear();
            return Checked {
                file,
                diagnostics,
                module: None,
                types: Vec::new(),
                notes: Vec::new(),
            };
        }
        let out = self.checker.check_program_with(parsed.program, imports);
        Checked {
            file,
            diagnostics: out.diagnostics,
            module: out.module,
            types: out.types,
            notes: out.notes,
        }
    }

    /// Loads the modules `program` imports, and theirs first (spec §10.8):
    /// each is found next to the importing file, then in each directory of
    /// `TWILL_PATH`, then in the bundled standard library; parsed, checked
    /// as a module and queued to run, once per session. `stack` holds the
    /// files being loaded (an import of one of them is a cycle). Returns
    /// the diagnostics: errors stop the program.
    fn load_imports(
        &mut self,
        program: &twill_syntax::ast::Program,
        stack: &mut Vec<String>,
    ) -> (Vec<Diagnostic>, Vec<(String, String)>) {
        use twill_syntax::ast::StmtKind;
        let mut diagnostics = Vec::new();
        let mut imports = Vec::new();
        for s in &program.stmts {
            let StmtKind::Import(imp) = &s.kind else {
                // Only the imports at the top are loaded; the checker
                // reports any other.
                break;
            };
            let key = imp.dotted();
            let span = match (imp.path.first(), imp.path.last()) {
                (Some(a), Some(b)) => Span::new(a.span.file, a.span.start as usize, b.span.end as usize),
                _ => s.span,
            };
            let importer = stack.last().cloned().unwrap_or_default();
            let found = match self.find_module(&key, &importer) {
                Ok(found) => found,
                Err(d) => {
                    diagnostics.push(d.relocate(span));
                    continue;
                }
            };
            if let Some(at) = stack.iter().position(|path| *path == found.0) {
                let mut files: Vec<&str> = stack[at..].iter().map(String::as_str).collect();
                files.push(found.0.as_str());
                diagnostics.push(
                    Diagnostic::error(span, format!("import cycle: {}", files.join(" → ")))
                        .with_label("imported again here")
                        .with_note(
                            "modules may not import each other in a cycle; move what they share into a third",
                        ),
                );
                continue;
            }
            if let Some(k) = self.modules.get(&found.0) {
                imports.push((imp.binding(), k.clone()));
                continue;
            }
            // Two files imported under one dotted name get two keys.
            let mut key = key;
            let taken = |k: &String, modules: &std::collections::HashMap<String, String>| {
                modules.values().any(|v| v == k)
            };
            if taken(&key, &self.modules) {
                let base = key.clone();
                let mut n = 2;
                while taken(&key, &self.modules) {
                    key = format!("{base}#{n}");
                    n += 1;
                }
            }
            let (path, text) = found;
            let id = self.sources.add(path.clone(), text);
            let source = self.sources.get(id).map_or("", |s| s.text.as_str());
            let parsed = twill_syntax::parse(source, id);
            if !parsed.errors.is_empty() {
                diagnostics.extend(parsed.errors);
                continue;
            }
            stack.push(path.clone());
            let (inner, inner_imports) = self.load_imports(&parsed.program, stack);
            stack.pop();
            let failed = inner.iter().any(Diagnostic::is_error);
            diagnostics.extend(inner);
            if failed {
                continue;
            }
            let out = self.checker.check_module(parsed.program, &key, inner_imports);
            diagnostics.extend(out.diagnostics);
            if let Some(module) = out.module {
                self.pending.push(module);
                self.modules.insert(path, key.clone());
                imports.push((imp.binding(), key));
            }
        }
        (diagnostics, imports)
    }

    /// The path and text of the module `key` imported by the file at
    /// `importer`: `a.b` is `a/b.tw` next to it, else in a `TWILL_PATH`
    /// directory, else the bundled library's file of that name.
    fn find_module(&mut self, key: &str, importer: &str) -> Result<(String, String), Diagnostic> {
        let rel = format!("{}.tw", key.replace('.', "/"));
        let dir = std::path::Path::new(importer)
            .parent()
            .filter(|_| !importer.starts_with('<'))
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        let mut dirs = vec![dir];
        if let Some(path) = self.interp.host().env_var("TWILL_PATH") {
            dirs.extend(
                path.split(':')
                    .filter(|d| !d.is_empty())
                    .map(std::path::PathBuf::from),
            );
        }
        let mut looked = Vec::new();
        for d in &dirs {
            let candidate = d.join(&rel).to_string_lossy().into_owned();
            match self.interp.host().read_file(&candidate) {
                Ok(bytes) => {
                    let text =
                        utf8_source(&candidate, bytes).map_err(|m| Diagnostic::error(Span::default(), m))?;
                    return Ok((candidate, text));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => looked.push(candidate),
                Err(e) => {
                    return Err(Diagnostic::error(
                        Span::default(),
                        format!("cannot read the module `{key}` from `{candidate}`: {e}"),
                    ))
                }
            }
        }
        if let Some((name, text)) = twill_eval::stdlib::FILES.iter().find(|(n, _)| *n == rel) {
            return Ok((format!("<stdlib>/{name}"), (*text).to_string()));
        }
        let names: Vec<&str> = twill_eval::stdlib::FILES
            .iter()
            .map(|(n, _)| n.trim_end_matches(".tw"))
            .collect();
        // Spec §10.9: a module name within two edits of one that exists,
        // among the modules beside the one asked for (`a.b.x` for each
        // `x.tw` in `a/b`) and the standard library's; the directories
        // are listed only now, for a module that is not found.
        let (package, _) = key.rsplit_once('.').unwrap_or(("", key));
        let mut near = Vec::new();
        for d in &dirs {
            let sub = d.join(package.replace('.', "/"));
            near.extend(
                self.interp
                    .host()
                    .file_names(&sub.to_string_lossy())
                    .into_iter()
                    .filter_map(|f| {
                        let stem = f.strip_suffix(".tw")?;
                        Some(if package.is_empty() {
                            stem.to_string()
                        } else {
                            format!("{package}.{stem}")
                        })
                    }),
            );
        }
        let help = twill_check::suggest::did_you_mean(
            key,
            names.iter().copied().chain(near.iter().map(|n| n.as_str())),
        );
        Err(Diagnostic::error(Span::default(), format!("no module `{key}`"))
            .with_label("not found")
            .with_help(help)
            .with_note(format!(
                "looked for {} (and TWILL_PATH's directories), then in the standard library: {}",
                looked.join(", "),
                names.join(", ")
            )))
    }

    /// Runs a checked module; its value when it ends with an expression.
    /// Output is flushed before an error is returned, so it comes before
    /// the error's report.
    pub fn run(&mut self, module: &hir::Module) -> Result<Option<Value>, Diagnostic> {
        let names = self.checker.global_names();
        for m in std::mem::take(&mut self.pending) {
            if let Err(e) = self.interp.run(&m, &names) {
                self.interp.flush();
                self.last_error = Some(e.kind);
                return Err(e.to_diagnostic());
            }
        }
        let result = self.interp.run(module, &names);
        self.interp.flush();
        // An entry that ran memory out has released its values by now.
        twill_eval::reserve::rearm();
        self.last_error = result.as_ref().err().map(|e| e.kind);
        result.map_err(|e| e.to_diagnostic())
    }

    /// `twill run` (`Mode::Run`) and `twill check` (`Mode::Check`): read,
    /// parse, check and (maybe) run one program.
    pub fn run_path(&mut self, path: &str, mode: Mode, reporter: &mut dyn Reporter) -> Status {
        let file = match self.read_source(path) {
            Ok(file) => file,
            Err(msg) => {
                reporter.error(&msg);
                return Status::Static;
            }
        };
        // `check` runs nothing, so it keeps no HIR.
        self.checker.discard_hir = mode == Mode::Check;
        let checked = self.check(file);
        self.checker.discard_hir = false;
        if !checked.diagnostics.is_empty() {
            reporter.diagnostics(&self.sources, &checked.diagnostics);
        }
        let Some(module) = checked.module else {
            return Status::Static;
        };
        if mode == Mode::Check {
            return Status::Ok;
        }
        match self.run(&module) {
            Ok(_) => Status::Ok,
            Err(d) => match self.last_error {
                Some(ErrorKind::Exit(code)) => Status::Exit(code),
                _ => {
                    reporter.diagnostics(&self.sources, &[d]);
                    Status::Runtime
                }
            },
        }
    }

    /// One complete REPL entry: a `:command`, or statements whose value
    /// (when the last is an expression) is printed. Errors are reported
    /// and forgotten: a failed entry defines nothing.
    pub fn entry(&mut self, text: &str, reporter: &mut dyn Reporter) -> Flow {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            // A blank line parts a comment from what follows.
            self.comments.clear();
            return Flow::Continue;
        }
        if let Some(cmd) = trimmed.strip_prefix(':') {
            self.comments.clear();
            return self.command(cmd, reporter);
        }
        if trimmed.lines().all(|l| l.trim_start().starts_with('#')) {
            self.comments.push_str(trimmed);
            self.comments.push('\n');
            return Flow::Continue;
        }
        let joined;
        let text = if self.comments.is_empty() {
            text
        } else {
            joined = std::mem::take(&mut self.comments) + text;
            joined.as_str()
        };
        let file = self.sources.add("<repl>", text);
        match self.check_and_run(file, reporter) {
            Ok(Some(v)) if !matches!(v, Value::Unit) => self.show(v),
            Ok(_) => {}
            Err(flow) => return flow,
        }
        Flow::Continue
    }

    /// Shows an entry's value (printed, or a notebook cell's result in
    /// every form it has) and makes it `_` (spec §12.1, §12.4).
    fn show(&mut self, v: Value) {
        let host = self.interp.host();
        let rich = host.shows_rich();
        let shown = twill_eval::figure::shown(&v, rich).unwrap_or_else(|msg| {
            // A figure that cannot be drawn still shows its text form.
            let _ = writeln!(host.stderr(), "warning: the value is shown as text only: {msg}");
            Display {
                text: display(&v),
                ..Display::default()
            }
        });
        let _ = host.result(&shown);
        let slot = self.checker.bind_value("_");
        self.interp.set_global(slot as usize, v);
    }

    /// Checks and runs one source of the session; its value when it ends
    /// with an expression. Diagnostics are reported; `Err` is how the
    /// session goes on after them (`exit(n)` ends it).
    fn check_and_run(&mut self, file: FileId, reporter: &mut dyn Reporter) -> Result<Option<Value>, Flow> {
        let checked = self.check(file);
        if !checked.diagnostics.is_empty() {
            reporter.diagnostics(&self.sources, &checked.diagnostics);
        }
        let Some(module) = checked.module else {
            return Err(Flow::Continue);
        };
        match self.run(&module) {
            Ok(v) => Ok(v),
            Err(d) => match self.last_error {
                Some(ErrorKind::Exit(code)) => Err(Flow::Exit(code)),
                _ => {
                    reporter.diagnostics(&self.sources, &[d]);
                    Err(Flow::Continue)
                }
            },
        }
    }

    /// `:time ENTRY`: the entry run as any other (its value printed), then
    /// its wall time and, for a tensor value, its shape and dtype.
    fn timed(&mut self, text: &str, reporter: &mut dyn Reporter) -> Flow {
        let file = self.sources.add("<repl>", text);
        let start = self.interp.host().clock();
        let r = self.check_and_run(file, reporter);
        let secs = self.interp.host().clock() - start;
        let v = match r {
            Ok(v) => v,
            Err(flow) => return flow,
        };
        let mut line = format!("time: {}", duration_text(secs));
        if let Some(v) = v {
            if let Some(t) = v.as_tensor() {
                line.push_str(&format!(
                    ", a tensor of shape {:?} and dtype {}",
                    t.shape(),
                    t.dtype()
                ));
            }
            if !matches!(v, Value::Unit) {
                self.show(v);
            }
        }
        self.print_line(&line);
        Flow::Continue
    }

    /// `:load FILE`: the file run into the session, its definitions kept.
    fn load(&mut self, path: &str, reporter: &mut dyn Reporter) -> Flow {
        if path.is_empty() {
            reporter.error("`:load` needs a file: `:load path/to/file.tw`");
            return Flow::Continue;
        }
        let file = match self.read_source(path) {
            Ok(file) => file,
            Err(msg) => {
                reporter.error(&msg);
                return Flow::Continue;
            }
        };
        match self.check_and_run(file, reporter) {
            Ok(_) => Flow::Continue,
            Err(flow) => flow,
        }
    }

    /// `:vars`: every name defined so far with its static type, and a
    /// tensor's shape and dtype.
    fn vars(&mut self) {
        let names = self.checker.global_names();
        let mut lines: Vec<String> = Vec::new();
        for (slot, name) in names.iter().enumerate() {
            // Module members, the checker's own names and `_` are not the
            // user's definitions.
            if name.is_empty() || name.contains('.') || name.starts_with("__") || &**name == "_" {
                continue;
            }
            let ty = self
                .checker
                .global_type(name)
                .map_or("?".to_string(), |t| t.to_string());
            let mut line = format!("{name}: {ty}");
            if let Some(t) = self.interp.global(slot).and_then(Value::as_tensor) {
                line.push_str(&format!(" = shape {:?} {}", t.shape(), t.dtype()));
            }
            lines.push(line);
        }
        lines.sort();
        if lines.is_empty() {
            lines.push("(nothing defined yet)".into());
        }
        self.print_line(&lines.join("\n"));
    }

    /// `:help NAME`'s text: a builtin's or operation's signature and
    /// description, or a function's doc comment; for `x.member` with no
    /// help of its own, the member's (a notebook's inspect, an editor's
    /// hover).
    pub fn help(&self, name: &str) -> Option<String> {
        if name.is_empty() {
            return None;
        }
        self.checker.help(name).or_else(|| {
            let (_, member) = name.rsplit_once('.')?;
            self.checker.help(member)
        })
    }

    /// The static type of an expression, as `:type` shows it, or the
    /// diagnostics that say why it has none. Nothing is defined.
    pub fn type_of(&mut self, expr: &str) -> Result<Option<Ty>, Vec<Diagnostic>> {
        let file = self.sources.add("<repl>", expr);
        let mut parsed = twill_syntax::parse(expr, file);
        if !parsed.errors.is_empty() {
            return Err(parsed.errors);
        }
        // One expression, typed as the value of a throwaway binding built
        // around the parsed tree (so every diagnostic points into the text
        // as typed), on a copy of the checker so nothing is defined.
        let value = match parsed.program.stmts.as_mut_slice() {
            [twill_syntax::ast::Stmt {
                kind: twill_syntax::ast::StmtKind::Expr(e),
                ..
            }] => std::mem::replace(
                e,
                twill_syntax::ast::Expr::new(twill_syntax::ast::ExprKind::Bool(false), e.span),
            ),
            _ => {
                let span = twill_syntax::Span::new(file, 0, expr.len());
                return Err(vec![Diagnostic::error(span, "`:type` takes one expression")]);
            }
        };
        let span = value.span;
        let probe_stmt = twill_syntax::ast::Stmt {
            kind: twill_syntax::ast::StmtKind::Let {
                mutable: false,
                name: twill_syntax::ast::Ident {
                    name: "__type_probe__".into(),
                    span,
                },
                ty: None,
                value,
            },
            span,
        };
        let mut probe = self.checker.clone();
        let checked = probe.check_program(twill_syntax::ast::Program {
            stmts: vec![probe_stmt],
        });
        if checked.module.is_none() {
            return Err(checked.diagnostics);
        }
        Ok(probe.global_type("__type_probe__").cloned())
    }

    fn command(&mut self, cmd: &str, reporter: &mut dyn Reporter) -> Flow {
        let (name, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
        match name {
            "help" | "h" if rest.trim().is_empty() => self.print_line(HELP),
            "help" | "h" => {
                let name = rest.trim();
                match self.checker.help(name) {
                    Some(text) => self.print_line(&text),
                    None => reporter.error(&format!(
                        "no help for `{name}`: it names no builtin, operation or function defined so far"
                    )),
                }
            }
            // A builtin is not a value; its type is its signature.
            "type" | "t" if twill_check::builtins::Builtin::from_name(rest.trim()).is_some() => {
                let text = self.checker.help(rest.trim()).unwrap_or_default();
                let sig = text.lines().next().unwrap_or("");
                self.print_line(&format!("builtin {sig}"));
            }
            "type" | "t" => match self.type_of(rest) {
                Ok(Some(t)) => self.print_line(&t.to_string()),
                Ok(None) => self.print_line("?"),
                Err(diags) => reporter.diagnostics(&self.sources, &diags),
            },
            "time" => return self.timed(rest, reporter),
            "load" => return self.load(rest.trim(), reporter),
            "vars" => self.vars(),
            "reset" => self.reset(),
            "quit" | "q" | "exit" => return Flow::Quit,
            other => reporter.error(&format!("unknown command `:{other}` (try :help)")),
        }
        Flow::Continue
    }

    /// A line of the REPL's own output, through the host like the
    /// program's.
    fn print_line(&mut self, text: &str) {
        let out = self.interp.host().stdout();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// Seconds as the REPL's `:time` shows them: µs, ms or s, three or four
/// significant digits.
fn duration_text(secs: f64) -> String {
    if secs < 1e-3 {
        format!("{:.1} µs", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:.3} ms", secs * 1e3)
    } else {
        format!("{secs:.3} s")
    }
}

/// A program's bytes as text: UTF-8, without a leading byte-order mark
/// (editors on some systems write one; it is not part of the program). Bad
/// UTF-8 is reported at the line and column where it starts.
fn utf8_source(name: &str, mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let prefix = String::from_utf8_lossy(bytes.get(..good).unwrap_or(&[]));
        let (line, col) = twill_syntax::span::line_col(&prefix, prefix.len());
        let byte = bytes.get(good).copied().unwrap_or(0);
        format!("{name}:{line}:{col}: not valid UTF-8 (byte 0x{byte:02x})")
    })
}
