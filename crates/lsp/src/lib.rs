//! `twill lsp` (spec §12.5): a language server over standard input and
//! output on `lsp-server` and `lsp-types`, as rust-analyzer is built. It
//! keeps the open documents (full-text sync) and, for each, an
//! [`analysis::Analysis`] — the document checked, never run. Edits are
//! debounced: every message already waiting is read before a changed
//! document is checked again, so a burst of keystrokes costs one check;
//! a request about a document checks it first if it changed. After each
//! check the server publishes the document's diagnostics. This module
//! owns the message loop and the protocol's requests; `analysis` what
//! they answer, `position` and `uri` the conversions.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
// The language server is an edge, as the command line is: it owns standard
// input and output, and reads the modules a document imports from disk.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod analysis;
mod position;
mod scope;
mod uri;

use std::collections::HashMap;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, Rename, Request as _,
    SignatureHelpRequest,
};
use lsp_types::{
    CompletionItem, CompletionOptions, CompletionParams, CompletionResponse, DocumentSymbolParams,
    DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams,
    HoverProviderCapability, MarkupContent, MarkupKind, OneOf, PublishDiagnosticsParams, RenameParams,
    ServerCapabilities, SignatureHelpOptions, SignatureHelpParams, TextDocumentSyncCapability,
    TextDocumentSyncKind, Uri, WorkspaceEdit,
};

use analysis::Analysis;

/// One open document: its latest text, and its analysis when that is of
/// the latest text.
struct Doc {
    text: String,
    version: Option<i32>,
    analysis: Option<Analysis>,
}

struct Server {
    conn: Connection,
    docs: HashMap<Uri, Doc>,
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".to_string()]),
            ..CompletionOptions::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".to_string(), ",".to_string()]),
            retrigger_characters: None,
            work_done_progress_options: Default::default(),
        }),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

/// Serves one client on standard input and output until it exits; the
/// process's exit status (0 after `shutdown` and `exit`).
pub fn serve() -> i32 {
    let (conn, io_threads) = Connection::stdio();
    let caps = match serde_json::to_value(capabilities()) {
        Ok(caps) => caps,
        Err(e) => return fail(&format!("cannot describe the server: {e}")),
    };
    if let Err(e) = conn.initialize(caps) {
        return fail(&format!("the client did not initialize: {e}"));
    }
    let mut server = Server {
        conn,
        docs: HashMap::new(),
    };
    let status = server.run();
    drop(server);
    match io_threads.join() {
        Ok(()) => status,
        Err(e) => fail(&format!("standard input or output failed: {e}")),
    }
}

fn fail(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    1
}

/// The parameters of a request or notification, or why they are not.
fn params<P: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<P, String> {
    serde_json::from_value(value).map_err(|e| format!("invalid parameters: {e}"))
}

impl Server {
    fn run(&mut self) -> i32 {
        while let Ok(msg) = self.conn.receiver.recv() {
            match msg {
                Message::Request(req) => match self.conn.handle_shutdown(&req) {
                    Ok(true) => return 0,
                    Ok(false) => {
                        self.check_changed();
                        self.request(req);
                    }
                    Err(e) => return fail(&format!("{e}")),
                },
                Message::Notification(n) => self.notification(n),
                Message::Response(_) => {}
            }
            // Debounce: check changed documents once nothing else waits.
            if self.conn.receiver.is_empty() {
                self.check_changed();
            }
        }
        0
    }

    fn send(&self, msg: Message) {
        // The writer thread has gone only when the client has; the loop
        // then ends at the next read.
        let _ = self.conn.sender.send(msg);
    }

    /// Checks every document whose text changed since its last check and
    /// publishes its diagnostics.
    fn check_changed(&mut self) {
        let changed: Vec<Uri> = self
            .docs
            .iter()
            .filter(|(_, d)| d.analysis.is_none())
            .map(|(u, _)| u.clone())
            .collect();
        for uri in changed {
            self.analyse(&uri);
        }
    }

    /// The document's analysis, checked now if its text changed.
    fn analyse(&mut self, uri: &Uri) -> Option<&mut Analysis> {
        let doc = self.docs.get_mut(uri)?;
        if doc.analysis.is_none() {
            let path = uri::to_path(uri).unwrap_or_else(|| uri.as_str().to_string());
            let text = doc.text.clone();
            // A panic would be a bug in the checker; the server reports it
            // and goes on without this document's analysis.
            let analysis = std::panic::catch_unwind(|| Analysis::new(&path, text)).ok()?;
            let diagnostics = analysis.diagnostics.clone();
            let version = doc.version;
            doc.analysis = Some(analysis);
            let note = PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics,
                version,
            };
            if let Ok(params) = serde_json::to_value(note) {
                self.send(Message::Notification(Notification {
                    method: PublishDiagnostics::METHOD.to_string(),
                    params,
                }));
            }
        }
        self.docs.get_mut(uri)?.analysis.as_mut()
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) = params::<lsp_types::DidOpenTextDocumentParams>(n.params) {
                    self.docs.insert(
                        p.text_document.uri,
                        Doc {
                            text: p.text_document.text,
                            version: Some(p.text_document.version),
                            analysis: None,
                        },
                    );
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = params::<lsp_types::DidChangeTextDocumentParams>(n.params) {
                    // Full sync: the last change is the whole text.
                    if let (Some(doc), Some(change)) = (
                        self.docs.get_mut(&p.text_document.uri),
                        p.content_changes.into_iter().last(),
                    ) {
                        doc.text = change.text;
                        doc.version = Some(p.text_document.version);
                        doc.analysis = None;
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) = params::<lsp_types::DidCloseTextDocumentParams>(n.params) {
                    self.docs.remove(&p.text_document.uri);
                    // A closed document's diagnostics go with it.
                    let note = PublishDiagnosticsParams {
                        uri: p.text_document.uri,
                        diagnostics: Vec::new(),
                        version: None,
                    };
                    if let Ok(params) = serde_json::to_value(note) {
                        self.send(Message::Notification(Notification {
                            method: PublishDiagnostics::METHOD.to_string(),
                            params,
                        }));
                    }
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            HoverRequest::METHOD => params::<HoverParams>(req.params).map(|p| self.hover(p)),
            Completion::METHOD => params::<CompletionParams>(req.params).map(|p| self.completion(p)),
            SignatureHelpRequest::METHOD => {
                params::<SignatureHelpParams>(req.params).map(|p| self.signature(p))
            }
            GotoDefinition::METHOD => params::<GotoDefinitionParams>(req.params).map(|p| self.definition(p)),
            DocumentSymbolRequest::METHOD => {
                params::<DocumentSymbolParams>(req.params).map(|p| self.symbols(p))
            }
            Rename::METHOD => match params::<RenameParams>(req.params) {
                Ok(p) => match self.rename(p) {
                    Ok(edit) => Ok(edit),
                    Err(msg) => {
                        self.reply_error(id, ErrorCode::RequestFailed, msg);
                        return;
                    }
                },
                Err(msg) => Err(msg),
            },
            other => {
                self.reply_error(id, ErrorCode::MethodNotFound, format!("`{other}` is not served"));
                return;
            }
        };
        match result {
            Ok(value) => self.send(Message::Response(Response::new_ok(id, value))),
            Err(msg) => self.reply_error(id, ErrorCode::InvalidParams, msg),
        }
    }

    fn reply_error(&self, id: RequestId, code: ErrorCode, msg: String) {
        self.send(Message::Response(Response::new_err(id, code as i32, msg)));
    }

    /// The analysis and byte offset a position request is about.
    fn at(&mut self, uri: &Uri, pos: lsp_types::Position) -> Option<(&mut Analysis, usize)> {
        let analysis = self.analyse(uri)?;
        let offset = position::offset(&analysis.text, pos);
        Some((analysis, offset))
    }

    fn hover(&mut self, p: HoverParams) -> serde_json::Value {
        let tdp = p.text_document_position_params;
        let hover = self.at(&tdp.text_document.uri, tdp.position).and_then(|(a, at)| {
            let (value, start, end) = a.hover(at)?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                }),
                range: Some(position::range(&a.text, start, end)),
            })
        });
        serde_json::to_value(hover).unwrap_or_default()
    }

    fn completion(&mut self, p: CompletionParams) -> serde_json::Value {
        let tdp = p.text_document_position;
        let items: Vec<CompletionItem> = self
            .at(&tdp.text_document.uri, tdp.position)
            .map(|(a, at)| a.complete(at).1)
            .unwrap_or_default()
            .into_iter()
            .map(|label| CompletionItem {
                label,
                ..CompletionItem::default()
            })
            .collect();
        serde_json::to_value(CompletionResponse::Array(items)).unwrap_or_default()
    }

    fn signature(&mut self, p: SignatureHelpParams) -> serde_json::Value {
        let tdp = p.text_document_position_params;
        let help = self
            .at(&tdp.text_document.uri, tdp.position)
            .and_then(|(a, at)| a.signature(at));
        serde_json::to_value(help).unwrap_or_default()
    }

    fn definition(&mut self, p: GotoDefinitionParams) -> serde_json::Value {
        let tdp = p.text_document_position_params;
        let uri = tdp.text_document.uri.clone();
        let loc = self
            .at(&tdp.text_document.uri, tdp.position)
            .and_then(|(a, at)| a.definition(at, &uri))
            .map(GotoDefinitionResponse::Scalar);
        serde_json::to_value(loc).unwrap_or_default()
    }

    /// The edits of a rename, or why it is refused.
    fn rename(&mut self, p: RenameParams) -> Result<serde_json::Value, String> {
        let tdp = p.text_document_position;
        let uri = tdp.text_document.uri.clone();
        let Some((a, at)) = self.at(&tdp.text_document.uri, tdp.position) else {
            return Ok(serde_json::Value::Null);
        };
        let edit = a.rename(at, &p.new_name)?.map(|edits| WorkspaceEdit {
            changes: Some(HashMap::from([(uri, edits)])),
            ..WorkspaceEdit::default()
        });
        Ok(serde_json::to_value(edit).unwrap_or_default())
    }

    fn symbols(&mut self, p: DocumentSymbolParams) -> serde_json::Value {
        let symbols = self
            .analyse(&p.text_document.uri)
            .map(|a| a.symbols())
            .unwrap_or_default();
        serde_json::to_value(DocumentSymbolResponse::Nested(symbols)).unwrap_or_default()
    }
}
