//! Parsing entry points. Wraps the generated LR parser: feeds it the
//! lexer's tokens, collects lexical and syntax errors as diagnostics (the
//! parser recovers at statement level, so one run reports every error), and
//! tells the REPL whether input is merely incomplete.

use lalrpop_util::{ErrorRecovery, ParseError};

use crate::ast::{Expr, ExprKind, Program};
use crate::diagnostic::Diagnostic;
use crate::lexer::{self, Tok};
use crate::span::{FileId, Span};

#[allow(clippy::all, unused_parens, dead_code)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/grammar.rs"));
}

/// Everything a parse produced: the (possibly partial) program and all errors.
pub struct Parsed {
    pub program: Program,
    pub errors: Vec<Diagnostic>,
    /// True when the only problem is that input ended too early (an open
    /// bracket or block, a dangling operator): the REPL reads another line.
    pub incomplete: bool,
}

/// Longest source accepted; spans are 32-bit.
pub const MAX_SOURCE_LEN: usize = u32::MAX as usize / 2;

/// Parses the text of the file `file`; every span in the tree and the
/// errors points into it.
pub fn parse(src: &str, file: FileId) -> Parsed {
    if src.len() > MAX_SOURCE_LEN {
        return Parsed {
            program: Program { stmts: vec![] },
            errors: vec![Diagnostic::error(
                Span::new(file, 0, 0),
                "source file is too large (over 2 GiB)",
            )],
            incomplete: false,
        };
    }
    let lexed = lexer::lex(src, file);
    let mut recovered: Vec<ErrorRecovery<usize, Tok, ()>> = Vec::new();
    let tokens = lexed.tokens.into_iter().map(Ok::<_, ()>);
    let result = grammar::ProgramParser::new().parse(&mut recovered, file, tokens);
    let mut errors = lexed.errors;
    let lex_error_starts: Vec<u32> = errors.iter().map(|d| d.span.start).collect();
    let mut incomplete = lexed.open_brackets > 0;
    let push = |e: ParseError<usize, Tok, ()>, errors: &mut Vec<Diagnostic>, incomplete: &mut bool| {
        if let ParseError::UnrecognizedEof { .. } = e {
            *incomplete = true;
        }
        if let Some(mut d) = to_diagnostic(e, src.len(), file) {
            // An unexpected token at the start of a line that an open
            // bracket joined to the previous one: point at the bracket.
            if let Some((_, open)) = lexed
                .joined_lines
                .iter()
                .find(|(at, _)| *at == d.span.start as usize)
            {
                let bracket = src.get(open.range()).unwrap_or("(");
                let (line, col) = crate::span::line_col(src, open.start as usize);
                d = d.with_note(format!(
                    "the `{bracket}` at line {line}, column {col} is not closed, so this line continues \
                     the one before it (inside ( ) and [ ] a line break does not end a statement)"
                ));
            }
            // An invalid token already has its own diagnostic.
            if !lex_error_starts.contains(&d.span.start) {
                errors.push(d);
            }
        }
    };
    let program = match result {
        Ok(p) => p,
        Err(e) => {
            push(e, &mut errors, &mut incomplete);
            Program { stmts: vec![] }
        }
    };
    for r in recovered {
        push(r.error, &mut errors, &mut incomplete);
    }
    errors.sort_by_key(|d| (d.span.start, d.span.end));
    errors.dedup_by(|a, b| a.span.start == b.span.start);
    // Fail safe: a program with errors may contain `Error` nodes; checkers
    // never see it because parse errors stop the pipeline.
    Parsed {
        program,
        errors,
        incomplete,
    }
}

fn expected_list(expected: &[String]) -> String {
    let mut names: Vec<String> = expected
        .iter()
        .map(|e| match e.as_str() {
            "Identifier" => "a name".to_string(),
            "IntLit" | "FloatLit" => "a number".to_string(),
            "StrLit" => "a string".to_string(),
            "\"\\n\"" => "end of line".to_string(),
            other => format!("`{}`", other.trim_matches('"')),
        })
        .collect();
    names.dedup();
    if names.len() > 8 {
        return String::new();
    }
    match names.len() {
        0 => String::new(),
        1 => format!(", expected {}", names[0]),
        _ => {
            let last = names.pop().unwrap_or_default();
            format!(", expected {} or {}", names.join(", "), last)
        }
    }
}

fn to_diagnostic(e: ParseError<usize, Tok, ()>, src_len: usize, file: FileId) -> Option<Diagnostic> {
    Some(match e {
        ParseError::InvalidToken { location } => {
            Diagnostic::error(Span::new(file, location, location + 1), "invalid token")
        }
        ParseError::UnrecognizedEof { location, expected } => Diagnostic::error(
            Span::new(file, location.min(src_len), location.min(src_len)),
            format!("unexpected end of input{}", expected_list(&expected)),
        )
        .with_label("input ends here"),
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => {
            if tok == Tok::Error {
                return None;
            }
            let chained = matches!(
                tok,
                Tok::EqEq | Tok::NotEq | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge
            ) && !expected.iter().any(|e| e == "\"<\"" || e == "\"==\"");
            let d = Diagnostic::error(
                Span::new(file, l, r),
                format!("unexpected {}{}", tok.describe(), expected_list(&expected)),
            )
            .with_label("unexpected here");
            if chained {
                d.with_note("comparisons do not chain: write `a < b and b < c`")
            } else {
                d
            }
        }
        ParseError::ExtraToken { token: (l, tok, r) } => {
            Diagnostic::error(Span::new(file, l, r), format!("unexpected {}", tok.describe()))
        }
        ParseError::User { .. } => return None,
    })
}

/// Helpers called from the grammar's actions.
pub(crate) fn binary(op: crate::ast::BinOp, a: Expr, b: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span,
    }
}

/// A call whose callee is a field access is a method call: `x.sum(axis=0)`.
pub(crate) fn call(callee: Expr, args: Vec<crate::ast::Arg>, span: Span) -> Expr {
    let kind = match callee.kind {
        ExprKind::Field { base, name } => ExprKind::MethodCall {
            receiver: base,
            method: name,
            args,
        },
        kind => ExprKind::Call {
            callee: Box::new(Expr {
                kind,
                span: callee.span,
            }),
            args,
        },
    };
    Expr { kind, span }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::StmtKind;

    fn ok(src: &str) -> Program {
        let p = parse(src, FileId(0));
        assert!(p.errors.is_empty(), "{src:?}: {:?}", p.errors);
        p.program
    }

    #[test]
    fn spec_examples_parse() {
        ok("fn relu_sum(x: Tensor) -> Tensor { x.relu().sum() }");
        ok("let f = fn(x) { x * 2 }");
        ok("if n > 0 { print(\"pos\") } else if n == 0 { print(\"zero\") } else { print(\"neg\") }");
        ok("for i in range(10) { print(i) }\nwhile c { x += 1 }");
        ok("match r { Ok(v) => print(v), Err(e) => print(\"failed: \" + e) }");
        ok("match r {\n  Ok(v) => print(v)\n  Err(e) => {\n    print(e)\n  }\n}");
        ok("struct Linear { w: Tensor, b: Tensor }\nlet l = Linear { w: a, b: c }\nprint(l.w)");
        ok("struct P {\n  x: Int\n  y: Int\n}\nlet p = P {\n  x: 1,\n  y: 2,\n}");
        ok("let x: Tensor[bf16] = zeros([2, 3], bf16)\nx.sum(axis=1, keepdim=true)");
        ok("x[1:2, ::-1, :, 3]\nx[::2]\nx[:, 0]\na[i] = v\ns.f.g = 1");
        ok("let g: Fn(Int, F64) -> Str = h\nfn f() -> Res[Int, Str] { let v = g()?; Ok(v) }");
        ok("x\n  .relu()\n  .sum()");
        ok("if a {\n 1\n}\nelse {\n 2\n}");
        ok("let y = -2 ** 2; let z = not a == b and c or d");
    }

    #[test]
    fn struct_literal_not_in_if_head() {
        let p = ok("if x { y }");
        assert_eq!(p.stmts.len(), 1);
    }

    #[test]
    fn recovers_and_reports_every_error() {
        let p = parse("let = 1\nprint(2)\nlet y = )\nprint(3)", FileId(0));
        assert_eq!(p.errors.len(), 2, "{:?}", p.errors);
        assert!(p
            .program
            .stmts
            .iter()
            .any(|s| matches!(s.kind, StmtKind::Expr(_))));
    }

    #[test]
    fn incomplete_input_is_detected() {
        assert!(parse("fn f() {", FileId(0)).incomplete);
        assert!(parse("let x = (1 +", FileId(0)).incomplete);
        assert!(parse("let x = 1 +", FileId(0)).incomplete);
        assert!(!parse("let x = 1", FileId(0)).incomplete);
        assert!(!parse("let x = )", FileId(0)).incomplete);
    }

    #[test]
    fn comparisons_do_not_chain() {
        let p = parse("a < b < c", FileId(0));
        assert_eq!(p.errors.len(), 1);
        assert!(p.errors[0].notes.iter().any(|n| n.contains("do not chain")));
        assert!(parse("a < )", FileId(0))
            .errors
            .iter()
            .all(|d| d.notes.is_empty()));
    }

    #[test]
    fn unclosed_bracket_is_named() {
        let p = parse("let x = (1 + 2\nprint(x)\n", FileId(0));
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert!(
            p.errors[0].notes.iter().any(|n| n.contains("line 1, column 9")),
            "{:?}",
            p.errors
        );
        // A bracket that is closed says nothing.
        assert!(parse("let x = (1 +\n 2) 3", FileId(0))
            .errors
            .iter()
            .all(|d| d.notes.is_empty()));
    }
}
