//! The help text of a name (spec §12.1: `:help NAME` in the REPL and
//! `help(name)` in code): its signature and one paragraph, built from the
//! tables that already hold the facts — the operation registry (parameters
//! and help), the builtin tables of `builtins` (signatures and help), the
//! constants, host methods and tensor fields — and, for a user function,
//! its header and the `#` comment block above it (`ast::FnDecl::doc`).
//! Nothing here holds help text of its own.

use crate::builtins::{Builtin, Constant, HostMethod, TensorField};

/// A user function's help: its header as written and its doc comment.
#[derive(Clone, Debug)]
pub struct FnHelp {
    pub signature: std::rc::Rc<str>,
    pub doc: Option<std::rc::Rc<str>>,
}

impl FnHelp {
    pub fn text(&self) -> String {
        match &self.doc {
            Some(doc) => format!("{}\n{}", self.signature, indent(doc)),
            None => format!(
                "{}\n  (no doc comment: write `#` lines right above the `fn`)",
                self.signature
            ),
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("  {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The help of a name that is not the program's own: a builtin function
/// or tensor operation, a constant, a method or a tensor field.
pub fn builtin_help(name: &str) -> Option<String> {
    if let Some(b) = Builtin::from_name(name) {
        return Some(format!("{}\n{}", builtin_signature(b), indent(&paragraph(b))));
    }
    if let Some(c) = Constant::from_name(name) {
        return Some(format!("{name}\n  {} (a constant)", c.help()));
    }
    if let Some(m) = HostMethod::from_name(name) {
        return Some(format!("x.{name}(…)\n  {} (a method)", m.help()));
    }
    if let Some(f) = TensorField::from_name(name) {
        return Some(format!("t.{name}\n  {} (a tensor field)", f.help()));
    }
    None
}

/// `name(a, b=…)`: the parameters in order, those that may be left out
/// written with `=…`.
fn builtin_signature(b: Builtin) -> String {
    let name = b.name();
    if let Some(op) = b.op() {
        let spec = op.spec();
        let mut params: Vec<String> = spec
            .params
            .iter()
            .map(|p| {
                if p.required {
                    p.name.to_string()
                } else {
                    format!("{}=…", p.name)
                }
            })
            .collect();
        if spec.variadic {
            params.push("…".into());
        }
        return format!("{name}({})", params.join(", "));
    }
    let sig = b.signature();
    if sig.params.is_empty() {
        return match sig.max {
            Some(0) => format!("{name}()"),
            Some(_) | None => format!("{name}(…)"),
        };
    }
    let params: Vec<String> = sig
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i < sig.min {
                p.to_string()
            } else {
                format!("{p}=…")
            }
        })
        .collect();
    format!("{name}({})", params.join(", "))
}

/// The one paragraph: the table's help text, and for a tensor operation
/// its method form.
fn paragraph(b: Builtin) -> String {
    match b.op() {
        Some(op) => {
            let first = op.spec().params.first().map_or("x", |p| p.name);
            format!(
                "{}.\nA tensor operation; also the method `{first}.{}(…)`.",
                op.help().trim_end_matches('.'),
                op.name()
            )
        }
        None => format!("{}.", b.help().trim_end_matches('.')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_signature_and_a_paragraph() {
        for b in Builtin::all() {
            let text = builtin_help(b.name()).unwrap();
            let (sig, rest) = text.split_once('\n').unwrap();
            assert!(sig.starts_with(&format!("{}(", b.name())), "{text}");
            assert!(rest.trim().len() > 10, "{text}");
        }
    }

    #[test]
    fn softmax_shows_its_parameters_and_text() {
        let text = builtin_help("softmax").unwrap();
        assert!(text.starts_with("softmax(x, axis=…)\n"), "{text}");
        assert!(text.contains("normalised to sum to 1"), "{text}");
        assert!(text.contains("x.softmax(…)"), "{text}");
        assert_eq!(
            builtin_help("zeros").unwrap().lines().next(),
            Some("zeros(shape, dt=…)")
        );
        assert!(builtin_help("no_such_name").is_none());
    }
}
