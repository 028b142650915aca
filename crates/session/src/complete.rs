//! Tab completion for the REPL (spec §12.1), from what the checker knows
//! and without running anything: names in scope (the session's
//! definitions, builtins and operations, constants, dtypes, keywords,
//! imported modules), a module's members after `m.`, the methods and fields
//! of the receiver's static type after `x.` (`zeros([2], f32).` offers the
//! tensor operations and `to`, `shape`, …), and the keyword arguments of
//! the builtin or operation being called inside its parentheses. File
//! paths inside a string are the line editor's (the CLI's helper). `name_at`
//! finds the dotted name under a cursor, for help in notebooks and editors.

use twill_check::builtins::{recv_kind, Builtin, Constant, HostMethod, TensorField};
use twill_check::Ty;
use twill_tensor::ops::Op;
use twill_tensor::DType;

use crate::Session;

/// Whether `c` can be part of a name.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the name that ends at byte `end` of `line` starts (`end` when
/// no name ends there).
fn word_start(line: &str, end: usize) -> usize {
    line[..end]
        .char_indices()
        .rev()
        .take_while(|(_, c)| word_char(*c))
        .last()
        .map_or(end, |(i, _)| i)
}

/// The dotted name around byte `at` of `text` (`nn.mlp_init`, `x.sum`,
/// `softmax`) and the byte where it starts: what a notebook's inspect and
/// an editor's hover ask help for.
pub fn name_at(text: &str, at: usize) -> (usize, &str) {
    let at = at.min(text.len());
    let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let end = text[at..]
        .find(|c: char| !word_char(c))
        .map_or(text.len(), |i| at + i);
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| word_char(*c) || *c == '.')
        .last()
        .map_or(at, |(i, _)| i);
    (start, text.get(start..end).unwrap_or(""))
}

/// Where the receiver expression ending just before byte `end` of `line`
/// starts: back over names, dots, string literals and balanced brackets,
/// to the first character outside them that cannot be part of it.
fn receiver_start(line: &str, end: usize) -> usize {
    let mut depth = 0usize;
    let mut start = end;
    // Inside a string literal (scanning back from its closing quote).
    let mut in_str = false;
    for (i, c) in line[..end].char_indices().rev() {
        if in_str {
            in_str = c != '"';
            start = i;
            continue;
        }
        match c {
            '"' => in_str = true,
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            '(' | '[' => break,
            _ if depth > 0 => {}
            c if word_char(c) || c == '.' => {}
            _ => break,
        }
        start = i;
    }
    start
}

/// The builtin or operation whose call's parentheses are open at byte
/// `end` of `line`, if any.
fn open_call(line: &str, end: usize) -> Option<Builtin> {
    let mut depth = 0usize;
    for (i, c) in line[..end].char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '[' if depth > 0 => depth -= 1,
            '(' if depth > 0 => depth -= 1,
            '[' => return None,
            '(' => {
                return Builtin::from_name(&line[word_start(line, i)..i]);
            }
            _ => {}
        }
    }
    None
}

impl Session {
    /// Completions of the word that ends at byte `pos` of `line`: where
    /// the word starts, and the candidates (sorted, no repeats).
    pub fn complete(&mut self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let pos = (0..=pos.min(line.len()))
            .rev()
            .find(|&p| line.is_char_boundary(p))
            .unwrap_or(0);
        let start = word_start(line, pos);
        let prefix = &line[start..pos];
        let mut found: Vec<String> = if line[..start].ends_with('.') {
            let dot = start - 1;
            let recv = line[receiver_start(line, dot)..dot].trim();
            self.members(recv)
        } else {
            self.names_in_scope(line, start)
        };
        found.retain(|c| c.starts_with(prefix));
        found.sort();
        found.dedup();
        (start, found)
    }

    /// Everything a plain name can be, and inside a call the keyword
    /// arguments of what is called (`name=`).
    fn names_in_scope(&mut self, line: &str, start: usize) -> Vec<String> {
        let mut out: Vec<String> = self.checker.top_level_names();
        out.extend(self.checker.module_aliases());
        out.extend(Builtin::all().map(|b| b.name().to_string()));
        out.extend(Constant::all().map(|c| c.name().to_string()));
        out.extend(DType::ALL.iter().map(|d| d.to_string()));
        out.extend(twill_syntax::lexer::KEYWORDS.iter().map(|k| k.to_string()));
        if let Some(b) = open_call(line, start) {
            let params: Vec<&str> = match b.op() {
                Some(op) => op.spec().params.iter().map(|p| p.name).collect(),
                None => b.signature().params.to_vec(),
            };
            out.extend(params.into_iter().map(|p| format!("{p}=")));
        }
        out
    }

    /// The members of `recv`: a module's names, or the methods and fields
    /// of its static type (all of them when the type is not known).
    fn members(&mut self, recv: &str) -> Vec<String> {
        if recv.is_empty() {
            return Vec::new();
        }
        if self.checker.module_aliases().iter().any(|m| m == recv) {
            return self.checker.module_members(recv);
        }
        let ty = match self.type_of(recv) {
            Ok(Some(t)) => t,
            Ok(None) | Err(_) => Ty::Unknown,
        };
        let ops = || Op::ALL.iter().map(|op| op.name().to_string());
        let fields = || TensorField::names().into_iter().map(str::to_string);
        let methods = |ty: &Ty| {
            let kind = recv_kind(ty);
            HostMethod::all()
                .filter(move |m| kind.is_none_or(|k| m.applies_to(k)))
                .map(|m| m.name().to_string())
        };
        match &ty {
            Ty::Tensor(_) => ops().chain(fields()).chain(methods(&ty)).collect(),
            Ty::Struct(def) => def.fields.iter().map(|f| f.to_string()).collect(),
            Ty::Unknown => ops().chain(fields()).chain(methods(&ty)).collect(),
            Ty::Str
            | Ty::Arr(_)
            | Ty::Dict(..)
            | Ty::Res(..)
            | Ty::Opt(_)
            | Ty::Tape
            | Ty::Format
            | Ty::Figure => methods(&ty).collect(),
            // Numbers take the elementwise functions as methods.
            Ty::Int | Ty::F64 => ops().collect(),
            Ty::Unit | Ty::Bool | Ty::DType | Ty::Range | Ty::Tuple(_) | Ty::Fn(..) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CollectReporter, Options};
    use twill_host::CaptureHost;

    #[test]
    fn names_under_the_cursor() {
        assert_eq!(name_at("softmax(x)", 3).1, "softmax");
        assert_eq!(name_at("y = nn.mlp_init(", 9).1, "nn.mlp_init");
        assert_eq!(name_at("x.sum()", 4).1, "x.sum");
        assert_eq!(name_at("é + abs", 7).1, "abs");
        assert_eq!(name_at("y = nn.mlp_init(", 9), (4, "nn.mlp_init"));
        assert_eq!(name_at("softmax(x)", 3), (0, "softmax"));
    }

    fn session() -> Session {
        Session::new(Box::new(CaptureHost::new()), Options::default())
    }

    fn names(s: &mut Session, line: &str) -> Vec<String> {
        s.complete(line, line.len()).1
    }

    #[test]
    fn a_tensors_methods_and_fields() {
        let mut s = session();
        let got = names(&mut s, "zeros([2], f32).");
        for want in ["sum", "to", "shape", "dtype", "softmax", "item"] {
            assert!(got.iter().any(|g| g == want), "{want} missing from {got:?}");
        }
        assert!(!got.iter().any(|g| g == "push"), "{got:?}");
        assert_eq!(names(&mut s, "zeros([2], f32).so"), ["softmax", "solve", "sort"]);
        assert_eq!(
            s.complete("x = zeros([2]).resh", 19),
            (15, vec!["reshape".to_string()])
        );
    }

    #[test]
    fn names_definitions_modules_and_keywords() {
        let mut s = session();
        let mut r = CollectReporter::default();
        s.entry(
            "import nn\nlet weights = zeros([3], bf16)\nstruct Point { x: Int, y: Int }\n",
            &mut r,
        );
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert_eq!(names(&mut s, "weig"), ["weights"]);
        assert_eq!(names(&mut s, "print(weights.dt"), ["dtype"]);
        assert_eq!(names(&mut s, "Poi"), ["Point"]);
        assert_eq!(names(&mut s, "whi"), ["while"]);
        assert_eq!(names(&mut s, "bf"), ["bf16"]);
        assert!(
            names(&mut s, "nn.").iter().any(|n| n == "mlp_init"),
            "{:?}",
            names(&mut s, "nn.")
        );
        assert!(names(&mut s, "nn.").iter().all(|n| !n.starts_with('_')));
        let p = "let p = Point { x: 1, y: 2 }\n";
        s.entry(p, &mut r);
        assert_eq!(names(&mut s, "p."), ["x", "y"]);
        assert_eq!(names(&mut s, "\"abc\".up"), ["upper"]);
    }

    #[test]
    fn keyword_arguments_inside_a_call() {
        let mut s = session();
        // The keywords come with the names in scope.
        let got = names(&mut s, "zeros([2, 3], d");
        assert!(
            got.iter().any(|g| g == "dt=") && got.iter().any(|g| g == "dot"),
            "{got:?}"
        );
        assert_eq!(names(&mut s, "softmax(x, ax"), ["axis="]);
        assert_eq!(names(&mut s, "progress(xs, lab"), ["label="]);
        // Not inside a call: no keywords.
        assert!(!names(&mut s, "ax").iter().any(|n| n == "axis="));
    }

    #[test]
    fn odd_input_never_panics() {
        let mut s = session();
        for line in [
            "", ".", "..", "(((", ")))", "é.", "x.é", "[1, 2].", "1.", "\"", "zeros(", "a.b.c.d.",
        ] {
            for pos in 0..=line.len() + 2 {
                let _ = s.complete(line, pos);
            }
        }
    }
}
