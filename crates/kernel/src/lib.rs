//! The Jupyter kernel (spec §12.4): `twill jupyter kernel CONNECTION_FILE`
//! serves one notebook with a [`Session`] — the REPL's, so state, `_`,
//! `:commands`, completion and help are the same — on a [`KernelHost`]
//! whose output is protocol messages. This module owns the shell requests
//! (`execute`, `complete`, `inspect`, `is_complete`, `kernel_info`,
//! `history`, `comm_info`, `shutdown`), served in order on the calling
//! thread (the interpreter's, with its large stack); `wire` owns the
//! sockets, `host` the output, `spec` the kernel spec that `twill jupyter
//! install` writes.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
// The kernel is an edge, as the command line is: it owns sockets, the
// connection file and the kernel spec directory, so the core crates' IO
// rule (clippy.toml) does not apply.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod host;
mod spec;
mod wire;

use std::sync::Arc;

use jupyter_protocol::{
    CommInfoReply, CompleteReply, ConnectionInfo, ErrorOutput, ExecuteInput, ExecuteReply, ExecuteRequest,
    ExecutionCount, HistoryReply, InspectReply, IsCompleteReply, IsCompleteReplyStatus, JupyterMessage,
    JupyterMessageContent, KernelInfoReply, LanguageInfo, Media, MediaType, ReplyError, ReplyStatus,
    ShutdownReply, Status,
};
use twill_session::{interrupt, name_at, Flow, Options, Reporter, Session, SourceMap};
use twill_syntax::{Diagnostic, Severity};

use host::{KernelHost, Outbox, Outgoing};
pub use spec::install;

/// The language as `kernel_info` describes it.
fn kernel_info() -> JupyterMessageContent {
    KernelInfoReply {
        status: ReplyStatus::Ok,
        protocol_version: "5.3".to_string(),
        implementation: "twill".to_string(),
        implementation_version: env!("CARGO_PKG_VERSION").to_string(),
        language_info: LanguageInfo {
            name: "twill".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            mimetype: Some("text/x-twill".to_string()),
            file_extension: Some(".tw".to_string()),
            pygments_lexer: None,
            codemirror_mode: None,
            nbconvert_exporter: None,
        },
        banner: format!(
            "twill {} — a small language for numerical work (:help for help)",
            env!("CARGO_PKG_VERSION")
        ),
        help_links: Vec::new(),
        debugger: false,
        error: None,
    }
    .into()
}

/// Serves the notebook whose connection file is `path` until it shuts the
/// kernel down; the process's exit status.
pub fn kernel(path: &str) -> i32 {
    let info = match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<ConnectionInfo>(&text) {
            Ok(info) => info,
            Err(e) => return fail(&format!("{path}: not a Jupyter connection file: {e}")),
        },
        Err(e) => return fail(&format!("cannot read the connection file {path}: {e}")),
    };
    let wire::Wire {
        requests,
        input,
        outbox,
        runtime: _runtime,
    } = match wire::start(&info, kernel_info) {
        Ok(wire) => wire,
        Err(msg) => return fail(&msg),
    };
    let host = KernelHost::new(outbox.clone(), input);
    let mut kernel = Kernel {
        session: Session::new(Box::new(host), Options::default()),
        outbox,
        count: 0,
    };
    kernel.outbox.iopub(Status::idle());
    while let Ok(request) = requests.recv() {
        if let Some(code) = kernel.request(&request) {
            kernel.outbox.send(Outgoing::Exit(code));
            // The writer exits the process; until then nothing more is served.
            loop {
                std::thread::park();
            }
        }
    }
    0
}

fn fail(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    2
}

struct Kernel {
    session: Session,
    outbox: Arc<Outbox>,
    /// The last `execution_count` given.
    count: usize,
}

/// Collects a cell's diagnostics: warnings are shown at once on the
/// cell's stderr, errors become its `error` message.
struct CellReporter {
    outbox: Arc<Outbox>,
    /// The first error's message and every error rendered (with colour,
    /// which notebooks show in tracebacks).
    error: Option<(String, Vec<String>)>,
}

impl CellReporter {
    fn add_error(&mut self, message: &str, rendered: String) {
        match &mut self.error {
            Some((_, all)) => all.push(rendered),
            None => self.error = Some((message.to_string(), vec![rendered])),
        }
    }
}

impl Reporter for CellReporter {
    fn diagnostics(&mut self, sources: &SourceMap, diagnostics: &[Diagnostic]) {
        for d in diagnostics {
            let rendered = twill_session::render(sources, d, true);
            match d.severity {
                Severity::Error => self.add_error(&d.message, rendered),
                Severity::Warning => {
                    self.outbox
                        .iopub(jupyter_protocol::StreamContent::stderr(&rendered));
                }
            }
        }
    }

    fn error(&mut self, message: &str) {
        self.add_error(message, format!("\x1b[31merror\x1b[0m: {message}"));
    }
}

/// `code`'s byte offset of the `chars`-th character (Jupyter counts
/// cursor positions in characters).
fn byte_at(code: &str, chars: usize) -> usize {
    code.char_indices().nth(chars).map_or(code.len(), |(i, _)| i)
}

impl Kernel {
    /// Serves one shell request; `Some(status)` when the kernel is to exit.
    // Requests the shell channel does not serve (comm messages: twill has
    // no widgets) are ignored, as the protocol allows.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn request(&mut self, msg: &JupyterMessage) -> Option<i32> {
        self.outbox
            .begin(msg, ExecutionCount::new(self.count), false, true);
        self.outbox.iopub(Status::busy());
        let mut exit = None;
        let reply: Option<JupyterMessageContent> = match &msg.content {
            JupyterMessageContent::ExecuteRequest(req) => {
                let (reply, flow) = self.execute(msg, req);
                exit = match flow {
                    Flow::Continue => None,
                    Flow::Quit => Some(0),
                    Flow::Exit(code) => Some(code),
                };
                Some(reply)
            }
            JupyterMessageContent::KernelInfoRequest(_) => Some(kernel_info()),
            JupyterMessageContent::CompleteRequest(req) => {
                let byte = byte_at(&req.code, req.cursor_pos);
                let (start, matches) = self.session.complete(&req.code, byte);
                Some(
                    CompleteReply {
                        matches,
                        cursor_start: req.code[..start.min(byte)].chars().count(),
                        cursor_end: req.cursor_pos,
                        metadata: Default::default(),
                        status: ReplyStatus::Ok,
                        error: None,
                    }
                    .into(),
                )
            }
            JupyterMessageContent::InspectRequest(req) => {
                let (_, name) = name_at(&req.code, byte_at(&req.code, req.cursor_pos));
                let help = self.session.help(name);
                Some(
                    InspectReply {
                        found: help.is_some(),
                        data: help
                            .map_or_else(Media::default, |text| Media::new(vec![MediaType::Plain(text)])),
                        metadata: Default::default(),
                        status: ReplyStatus::Ok,
                        error: None,
                    }
                    .into(),
                )
            }
            JupyterMessageContent::IsCompleteRequest(req) => {
                let (status, indent) = if req.code.trim_start().starts_with(':') {
                    (IsCompleteReplyStatus::Complete, "")
                } else {
                    let parsed = twill_syntax::parse(&req.code, twill_syntax::FileId::default());
                    if parsed.incomplete {
                        (IsCompleteReplyStatus::Incomplete, "    ")
                    } else if parsed.errors.is_empty() {
                        (IsCompleteReplyStatus::Complete, "")
                    } else {
                        (IsCompleteReplyStatus::Invalid, "")
                    }
                };
                Some(IsCompleteReply::new(status, indent.to_string()).into())
            }
            JupyterMessageContent::HistoryRequest(_) => Some(HistoryReply::new(Vec::new()).into()),
            JupyterMessageContent::CommInfoRequest(_) => Some(
                CommInfoReply {
                    status: ReplyStatus::Ok,
                    comms: Default::default(),
                    error: None,
                }
                .into(),
            ),
            JupyterMessageContent::ShutdownRequest(req) => {
                exit = Some(0);
                Some(
                    ShutdownReply {
                        restart: req.restart,
                        status: ReplyStatus::Ok,
                        error: None,
                    }
                    .into(),
                )
            }
            _ => None,
        };
        self.outbox.end();
        if let Some(reply) = reply {
            self.outbox
                .send(Outgoing::Shell(JupyterMessage::new(reply, Some(msg))));
        }
        self.outbox
            .send(Outgoing::Iopub(JupyterMessage::new(Status::idle(), Some(msg))));
        exit
    }

    /// Runs a cell as a REPL entry: output streams as it is printed, the
    /// value of a last expression is the `execute_result`, and a failure
    /// is an `error` message with the diagnostic as its traceback.
    fn execute(&mut self, msg: &JupyterMessage, req: &ExecuteRequest) -> (JupyterMessageContent, Flow) {
        if !req.silent && req.store_history {
            self.count += 1;
        }
        let count = ExecutionCount::new(self.count);
        self.outbox.begin(msg, count, req.allow_stdin, req.silent);
        if !req.silent {
            self.outbox.iopub(ExecuteInput {
                code: req.code.clone(),
                execution_count: count,
            });
        }
        // An interrupt that came while the kernel was idle is not for
        // this cell.
        interrupt::clear();
        let mut reporter = CellReporter {
            outbox: self.outbox.clone(),
            error: None,
        };
        let flow = self.session.entry(&req.code, &mut reporter);
        let Some((message, traceback)) = reporter.error else {
            let reply = ExecuteReply {
                status: ReplyStatus::Ok,
                execution_count: count,
                payload: Vec::new(),
                user_expressions: None,
                error: None,
            };
            return (reply.into(), flow);
        };
        let error = ErrorOutput {
            ename: "error".to_string(),
            evalue: message,
            traceback,
        };
        self.outbox.iopub(error.clone());
        let reply = ExecuteReply {
            status: ReplyStatus::Error,
            execution_count: count,
            payload: Vec::new(),
            user_expressions: None,
            error: Some(Box::new(ReplyError {
                ename: error.ename,
                evalue: error.evalue,
                traceback: error.traceback,
            })),
        };
        (reply.into(), flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_positions_in_characters() {
        assert_eq!(byte_at("é + abs", 2), 3);
        assert_eq!(byte_at("ab", 5), 2);
    }
}
