//! What the server knows about one open document: it is parsed and
//! checked in a fresh [`Session`] of its own (imports read from disk next
//! to it, then `TWILL_PATH`, then the standard library, as `twill check`
//! finds them) with the type table on, and nothing is ever run. From that:
//! the diagnostics, the static type under the cursor with how its dtype
//! arose, completion (the
//! REPL's engine), signature help from the registry's help text and user
//! functions' headers, the document's symbols, and the definition of a
//! top-level name, here or in an imported module.

use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, DocumentSymbol, Location, NumberOrString,
    ParameterInformation, ParameterLabel, SignatureHelp, SignatureInformation, SymbolKind, Uri,
};
use twill_check::Ty;
use twill_session::{name_at, Options, RealHost, Session};
use twill_syntax::ast::{Program, StmtKind};
use twill_syntax::{Diagnostic, FileId, Severity, Span};

use crate::position::{range, span_range};
use crate::scope::{Kind, Scopes};
use crate::uri;

/// One checked version of a document.
pub(crate) struct Analysis {
    pub(crate) text: String,
    session: Session,
    file: FileId,
    /// Every expression's static type, by byte span in this document.
    types: Vec<(usize, usize, Ty)>,
    /// How an expression's dtype arose, by byte span in this document.
    notes: Vec<(usize, usize, String)>,
    pub(crate) diagnostics: Vec<lsp_types::Diagnostic>,
    program: Option<Program>,
    scopes: Scopes,
}

impl Analysis {
    /// Parses and checks `text`, the document at `path` (a file path, or
    /// the URI's text when it names no file).
    pub(crate) fn new(path: &str, text: String) -> Analysis {
        let host = RealHost::with_stdout(Vec::new(), Box::new(std::io::sink()));
        let mut session = Session::new(
            Box::new(host),
            Options {
                types: true,
                ..Options::default()
            },
        );
        let file = session.add_source(path, text.clone());
        let checked = session.check(file);
        let types = checked
            .types
            .into_iter()
            .filter(|(span, _)| span.file == file)
            .map(|(span, ty)| (span.start as usize, span.end as usize, ty))
            .collect();
        let notes = checked
            .notes
            .into_iter()
            .filter(|(span, _)| span.file == file)
            .map(|(span, note)| (span.start as usize, span.end as usize, note))
            .collect();
        let parsed = twill_syntax::parse(&text, file);
        let scopes = Scopes::of(&parsed.program);
        let mut analysis = Analysis {
            text,
            session,
            file,
            types,
            notes,
            diagnostics: Vec::new(),
            program: Some(parsed.program),
            scopes,
        };
        analysis.diagnostics = checked
            .diagnostics
            .iter()
            .map(|d| analysis.lsp_diagnostic(d))
            .collect();
        analysis
    }

    /// A checker or parser diagnostic as the client shows it: at its span
    /// when that is in this document (else at the top, naming the file),
    /// its label, notes and suggested fix in the message, and its
    /// secondary labels as related information.
    fn lsp_diagnostic(&self, d: &Diagnostic) -> lsp_types::Diagnostic {
        let sources = self.session.sources();
        let here = d.span.file == self.file;
        let mut message = d.message.clone();
        if !here {
            if let Some(src) = sources.get(d.span.file) {
                let (line, col) = twill_syntax::span::line_col(&src.text, d.span.start as usize);
                message = format!("{}:{line}:{col}: {message}", src.name);
            }
        }
        if !d.label.is_empty() && d.label != "here" {
            message.push_str(&format!("\n{}", d.label));
        }
        for note in &d.notes {
            message.push_str(&format!("\nnote: {note}"));
        }
        if let Some(help) = d.extra.as_ref().and_then(|e| e.help.as_ref()) {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let related: Vec<DiagnosticRelatedInformation> = d
            .secondary
            .iter()
            .filter_map(|l| {
                let src = sources.get(l.span.file)?;
                Some(DiagnosticRelatedInformation {
                    location: Location {
                        uri: uri::from_path(&src.name)?,
                        range: span_range(&src.text, l.span),
                    },
                    message: l.message.clone(),
                })
            })
            .collect();
        lsp_types::Diagnostic {
            range: if here {
                span_range(&self.text, d.span)
            } else {
                range(&self.text, 0, 0)
            },
            severity: Some(match d.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: None::<NumberOrString>,
            code_description: None,
            source: Some("twill".to_string()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            tags: None,
            data: None,
        }
    }

    /// Hover: the static type of the smallest expression at byte `at`
    /// and, for a builtin, operation, method or documented function, its
    /// help text.
    pub(crate) fn hover(&mut self, at: usize) -> Option<(String, usize, usize)> {
        let ty = self
            .types
            .iter()
            .filter(|(s, e, _)| *s <= at && at < (*e).max(*s + 1))
            .min_by_key(|(s, e, _)| e - s)
            .cloned();
        let (start, name) = name_at(&self.text, at);
        let name = name.to_string();
        let help = self.session.help(&name);
        let mut out = String::new();
        let (mut s, mut e) = (start, start + name.len());
        if let Some((ts, te, ty)) = ty {
            out.push_str(&format!("```twill\n{ty}\n```"));
            if let Some((_, _, note)) = self.notes.iter().find(|(ns, ne, _)| (*ns, *ne) == (ts, te)) {
                out.push_str(&format!("\n\n{note}"));
            }
            (s, e) = (ts, te);
        }
        if let Some(help) = help {
            if !out.is_empty() {
                out.push_str("\n\n---\n\n");
            }
            let mut lines = help.lines();
            let sig = lines.next().unwrap_or("");
            out.push_str(&format!("```twill\n{sig}\n```\n"));
            for line in lines {
                out.push_str(line.trim_start());
                out.push('\n');
            }
        }
        (!out.is_empty()).then_some((out, s, e))
    }

    /// Completion at byte `at`: where the word being completed starts,
    /// and the candidates.
    pub(crate) fn complete(&mut self, at: usize) -> (usize, Vec<String>) {
        let text = self.text.clone();
        self.session.complete(&text, at.min(text.len()))
    }

    /// Signature help inside the parentheses of a call before byte `at`:
    /// the callee's signature (the first line of its help), its
    /// parameters, and the one being typed (commas at depth 0).
    pub(crate) fn signature(&self, at: usize) -> Option<SignatureHelp> {
        let before = self.text.get(..at.min(self.text.len()))?;
        let mut depth = 0usize;
        let mut commas = 0u32;
        let mut open = None;
        for (i, c) in before.char_indices().rev() {
            match c {
                ')' | ']' | '}' => depth += 1,
                '[' | '{' if depth > 0 => depth -= 1,
                '(' if depth > 0 => depth -= 1,
                '(' => {
                    open = Some(i);
                    break;
                }
                '[' | '{' => return None,
                ',' if depth == 0 => commas += 1,
                '\n' if depth == 0 && before[..i].trim_end().ends_with(['{', ';']) => return None,
                _ => {}
            }
        }
        let open = open?;
        let (_, name) = name_at(before, open);
        let help = self.session.help(name)?;
        let mut lines = help.lines();
        let label = lines.next()?.to_string();
        let doc: Vec<&str> = lines.map(str::trim_start).collect();
        let params = label
            .find('(')
            .zip(label.rfind(')'))
            .and_then(|(a, b)| label.get(a + 1..b))
            .map(split_params)
            .unwrap_or_default();
        let parameters: Vec<ParameterInformation> = params
            .into_iter()
            .map(|p| ParameterInformation {
                label: ParameterLabel::Simple(p),
                documentation: None,
            })
            .collect();
        let active = commas.min(u32::try_from(parameters.len().saturating_sub(1)).unwrap_or(0));
        Some(SignatureHelp {
            signatures: vec![SignatureInformation {
                label,
                documentation: (!doc.is_empty()).then(|| lsp_types::Documentation::String(doc.join("\n"))),
                parameters: Some(parameters),
                active_parameter: Some(active),
            }],
            active_signature: Some(0),
            active_parameter: Some(active),
        })
    }

    /// The document's top-level functions, structs (with their fields),
    /// bindings and imports.
    pub(crate) fn symbols(&self) -> Vec<DocumentSymbol> {
        let Some(program) = &self.program else {
            return Vec::new();
        };
        let text = &self.text;
        let symbol =
            |name: &str, kind: SymbolKind, full: Span, sel: Span, children: Option<Vec<DocumentSymbol>>| {
                // `deprecated` is deprecated in favour of `tags`, but the struct
                // still has the field.
                #[allow(deprecated)]
                DocumentSymbol {
                    name: name.to_string(),
                    detail: None,
                    kind,
                    tags: None,
                    deprecated: None,
                    range: span_range(
                        text,
                        Span::new(full.file, full.start as usize, full.end.max(sel.end) as usize),
                    ),
                    selection_range: span_range(text, sel),
                    children,
                }
            };
        let mut out = Vec::new();
        for stmt in &program.stmts {
            match &stmt.kind {
                StmtKind::Fn(f) => {
                    if let Some(name) = &f.name {
                        out.push(symbol(
                            &name.name,
                            SymbolKind::FUNCTION,
                            stmt.span,
                            name.span,
                            None,
                        ));
                    }
                }
                StmtKind::Struct(s) => {
                    let fields = s
                        .fields
                        .iter()
                        .map(|(f, _)| symbol(&f.name, SymbolKind::FIELD, f.span, f.span, None))
                        .collect();
                    out.push(symbol(
                        &s.name.name,
                        SymbolKind::STRUCT,
                        stmt.span,
                        s.name.span,
                        Some(fields),
                    ));
                }
                StmtKind::Let { mutable, name, .. } => {
                    let kind = if *mutable {
                        SymbolKind::VARIABLE
                    } else {
                        SymbolKind::CONSTANT
                    };
                    out.push(symbol(&name.name, kind, stmt.span, name.span, None));
                }
                StmtKind::Import(i) => {
                    let sel = i.alias.as_ref().map_or_else(
                        || {
                            let first = i.path.first().map_or(stmt.span, |p| p.span);
                            let last = i.path.last().map_or(stmt.span, |p| p.span);
                            Span::new(first.file, first.start as usize, last.end as usize)
                        },
                        |(_, a)| a.span,
                    );
                    out.push(symbol(&i.binding(), SymbolKind::MODULE, stmt.span, sel, None));
                }
                StmtKind::LetPattern { .. }
                | StmtKind::Assign { .. }
                | StmtKind::Expr(_)
                | StmtKind::Return(_)
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Error => {}
            }
        }
        out
    }

    /// Where the name at byte `at` is defined: its binding in this
    /// document, or — for `m.name` with `m` an imported module read from
    /// disk — the definition in that module's file.
    pub(crate) fn definition(&self, at: usize, this: &Uri) -> Option<Location> {
        if let Some(b) = self.scopes.at(at) {
            let binding = &self.scopes.bindings[b];
            if binding.kind != Kind::Import {
                return Some(Location {
                    uri: this.clone(),
                    range: span_range(&self.text, binding.span),
                });
            }
        }
        let (_, name) = name_at(&self.text, at);
        let program = self.program.as_ref()?;
        if let Some((alias, member)) = name.rsplit_once('.') {
            let import = program.stmts.iter().find_map(|s| {
                if let StmtKind::Import(i) = &s.kind {
                    (i.binding() == alias).then(|| i.clone())
                } else {
                    None
                }
            })?;
            let tail = format!(
                "{}.tw",
                import
                    .path
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join("/")
            );
            for (id, src) in self.session.sources().iter() {
                if id == self.file || !src.name.ends_with(&tail) || src.name.starts_with('<') {
                    continue;
                }
                let module = twill_syntax::parse(&src.text, id).program;
                let span = top_level_definition(&module, member)?;
                return Some(Location {
                    uri: uri::from_path(&src.name)?,
                    range: span_range(&src.text, span),
                });
            }
            return None;
        }
        None
    }

    /// Renames the binding at byte `at` (its definition and every use) to
    /// `new`: the edits, `Ok(None)` when nothing renamable is there, or
    /// why the rename is refused.
    pub(crate) fn rename(&self, at: usize, new: &str) -> Result<Option<Vec<lsp_types::TextEdit>>, String> {
        let Some(b) = self.scopes.at(at) else {
            return Ok(None);
        };
        let binding = &self.scopes.bindings[b];
        if binding.kind == Kind::Import {
            return Err(format!(
                "`{}` names a module: give it another name with `import … as {new}`",
                binding.name
            ));
        }
        let is_name = new.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && new.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !is_name || twill_syntax::lexer::KEYWORDS.contains(&new) {
            return Err(format!("`{new}` is not a name a binding can have"));
        }
        if let Some(clash) = self
            .scopes
            .bindings
            .iter()
            .find(|o| o.name == new && o.kind != Kind::Local && binding.kind != Kind::Local)
        {
            return Err(format!("`{new}` is already defined at byte {}", clash.span.start));
        }
        Ok(Some(
            self.scopes
                .spans(b)
                .into_iter()
                .map(|span| lsp_types::TextEdit {
                    range: span_range(&self.text, span),
                    new_text: new.to_string(),
                })
                .collect(),
        ))
    }
}

/// The name's span where `program` defines it at top level.
fn top_level_definition(program: &Program, name: &str) -> Option<Span> {
    program.stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Fn(f) => f.name.as_ref().filter(|n| n.name == name).map(|n| n.span),
        StmtKind::Struct(d) => (d.name.name == name).then_some(d.name.span),
        StmtKind::Let { name: n, .. } => (n.name == name).then_some(n.span),
        StmtKind::Import(_)
        | StmtKind::LetPattern { .. }
        | StmtKind::Assign { .. }
        | StmtKind::Expr(_)
        | StmtKind::Return(_)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Error => None,
    })
}

/// `a, b=…, c` split at the commas outside brackets.
fn split_params(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in list.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters() {
        assert_eq!(
            split_params("x, axis=…, k=[1, 2]"),
            vec!["x", "axis=…", "k=[1, 2]"]
        );
    }
}
