//! The lexer: logos recognises raw tokens, and a thin layer on top decodes
//! literals, applies the newline rules of spec §2 and turns malformed input
//! into error tokens (recorded as diagnostics) so the parser can recover.
//!
//! Tokens are produced as the parser pulls them, so no token vector is
//! built, and the stream ends early, with the reason in [`Stop`], at a
//! bracket nested deeper than [`MAX_NESTING`] or after [`MAX_ERRORS`]
//! errors: both keep the parser's error recovery linear in the input.
//!
//! Newline rules: a newline ends a statement, except inside `( )` and `[ ]`,
//! after a token that cannot end an expression (an operator, a comma, an
//! opening bracket, …), and before a line whose first token is `.` or
//! `else`. Runs of newlines and `;` are not collapsed here; the grammar
//! accepts any number of separators.

use std::cell::Cell;

use logos::Logos;

use crate::diagnostic::Diagnostic;
use crate::span::{FileId, Span};

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip(r"#[^\n]*", allow_greedy = true))]
enum Raw {
    #[token("\n")]
    Newline,
    #[token(";")]
    Semi,
    #[regex("[A-Za-z_][A-Za-z0-9_]*")]
    Ident,
    #[regex("[0-9][0-9_]*")]
    DecInt,
    #[regex("0[xX][0-9a-fA-F_]*")]
    HexInt,
    #[regex("0[bB][0-9_]*")]
    BinInt,
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9_]+)?")]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9_]+")]
    Float,
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    Str,
    #[regex(r#""([^"\\\n]|\\[^\n])*"#)]
    UnterminatedStr,
    /// `f"`: the rest of an f-string is scanned by hand (`FScan`).
    #[token("f\"")]
    FStrStart,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("...")]
    Ellipsis,
    #[token(":")]
    Colon,
    #[token("->")]
    Arrow,
    #[token("=>")]
    FatArrow,
    #[token("=")]
    Eq,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("&")]
    Amp,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("//")]
    SlashSlash,
    #[token("%")]
    Percent,
    #[token("@")]
    At,
    #[token("**")]
    StarStar,
    #[token("?")]
    Question,
}

/// A token as the parser sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Newline,
    Semi,
    Let,
    Var,
    Fn,
    Return,
    If,
    Else,
    While,
    For,
    In,
    Break,
    Continue,
    True,
    False,
    And,
    Or,
    Not,
    Match,
    Struct,
    Import,
    Ident(String),
    Int(i64),
    Float(f64),
    Str(String),
    /// An f-string (spec §10.7) is `FStart`, then literal text (`FText`,
    /// escapes and `{{ }}` decoded) and fields (`FOpen`, the expression's
    /// own tokens, an optional `FSpec`, `FClose`), then `FEnd`.
    FStart,
    FText(String),
    FOpen,
    FSpec(String),
    FClose,
    FEnd,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    /// `...` in a subscript (spec §11.1).
    Ellipsis,
    Colon,
    Arrow,
    FatArrow,
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Pipe,
    Caret,
    Amp,
    Shl,
    Shr,
    Plus,
    Minus,
    Star,
    Slash,
    SlashSlash,
    Percent,
    At,
    StarStar,
    Question,
    /// Malformed input; its diagnostic was already recorded. No grammar rule
    /// accepts it, so the parser's error recovery takes over.
    Error,
}

impl Tok {
    /// How the token is shown in "unexpected …" messages.
    // Every token not named here is spelled one way, and `text` names each.
    #[allow(clippy::wildcard_enum_match_arm)]
    pub fn describe(&self) -> String {
        match self {
            Tok::Newline => "end of line".into(),
            Tok::Ident(s) => format!("identifier `{s}`"),
            Tok::Int(_) => "integer literal".into(),
            Tok::Float(_) => "float literal".into(),
            Tok::Str(_) => "string literal".into(),
            Tok::FStart | Tok::FEnd => "f-string".into(),
            Tok::FText(_) => "f-string text".into(),
            Tok::FOpen => "`{` of an f-string".into(),
            Tok::FClose => "`}` of an f-string".into(),
            Tok::FSpec(_) => "format spec".into(),
            Tok::Error => "invalid token".into(),
            other => format!("`{}`", other.text()),
        }
    }

    fn text(&self) -> &'static str {
        match self {
            Tok::Newline => "\\n",
            Tok::Semi => ";",
            Tok::Let => "let",
            Tok::Var => "var",
            Tok::Fn => "fn",
            Tok::Return => "return",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::While => "while",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::True => "true",
            Tok::False => "false",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Not => "not",
            Tok::Match => "match",
            Tok::Struct => "struct",
            Tok::Import => "import",
            Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Str(_)
            | Tok::FStart
            | Tok::FText(_)
            | Tok::FOpen
            | Tok::FSpec(_)
            | Tok::FClose
            | Tok::FEnd
            | Tok::Error => "",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Ellipsis => "...",
            Tok::Colon => ":",
            Tok::Arrow => "->",
            Tok::FatArrow => "=>",
            Tok::Eq => "=",
            Tok::PlusEq => "+=",
            Tok::MinusEq => "-=",
            Tok::StarEq => "*=",
            Tok::SlashEq => "/=",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Amp => "&",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::SlashSlash => "//",
            Tok::Percent => "%",
            Tok::At => "@",
            Tok::StarStar => "**",
            Tok::Question => "?",
        }
    }

    /// True for tokens after which a line cannot end a statement, so a
    /// following newline is a continuation.
    fn continues_line(&self) -> bool {
        matches!(
            self,
            Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
                | Tok::Comma
                | Tok::Dot
                | Tok::Colon
                | Tok::Arrow
                | Tok::FatArrow
                | Tok::Eq
                | Tok::PlusEq
                | Tok::MinusEq
                | Tok::StarEq
                | Tok::SlashEq
                | Tok::EqEq
                | Tok::NotEq
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge
                | Tok::Pipe
                | Tok::Caret
                | Tok::Amp
                | Tok::Shl
                | Tok::Shr
                | Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::SlashSlash
                | Tok::Percent
                | Tok::At
                | Tok::StarStar
                | Tok::And
                | Tok::Or
                | Tok::Not
                | Tok::Else
                | Tok::Let
                | Tok::Var
                | Tok::Fn
                | Tok::If
                | Tok::While
                | Tok::For
                | Tok::In
                | Tok::Match
                | Tok::Struct
                | Tok::Import
        )
    }
}

/// Every keyword, for completion (each is a `keyword` below; a test
/// holds the two together).
pub const KEYWORDS: &[&str] = &[
    "let", "var", "fn", "return", "if", "else", "while", "for", "in", "break", "continue", "true", "false",
    "and", "or", "not", "match", "struct", "import",
];

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        "let" => Tok::Let,
        "var" => Tok::Var,
        "fn" => Tok::Fn,
        "return" => Tok::Return,
        "if" => Tok::If,
        "else" => Tok::Else,
        "while" => Tok::While,
        "for" => Tok::For,
        "in" => Tok::In,
        "break" => Tok::Break,
        "continue" => Tok::Continue,
        "true" => Tok::True,
        "false" => Tok::False,
        "and" => Tok::And,
        "or" => Tok::Or,
        "not" => Tok::Not,
        "match" => Tok::Match,
        "struct" => Tok::Struct,
        "import" => Tok::Import,
        _ => return None,
    })
}

/// A token with its byte range, in the triple form lalrpop consumes.
pub type Spanned = (usize, Tok, usize);

/// Deepest nesting of `( )`, `[ ]` and `{ }` (blocks included) a source may
/// have. Deeper input is refused before the parser sees it: the parser's
/// error recovery costs time in proportion to the open brackets, and the
/// later phases recurse over the tree.
pub const MAX_NESTING: usize = 1_000;

/// Most errors one source reports. Past it the rest of the input is not
/// read (each error costs recovery work in proportion to the nesting, and
/// nobody reads the hundred-and-first error).
pub const MAX_ERRORS: usize = 100;

/// Why the token stream stopped before the end of the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// This bracket opened level `MAX_NESTING + 1`.
    TooDeep(Span),
    /// `MAX_ERRORS` errors were found; the next token starts here.
    TooManyErrors(usize),
}

/// The token stream of one source, produced on demand (the parser pulls
/// it, so no token vector is ever built), with what the parser's caller
/// needs afterwards: the lexical errors, the bracket balance (for the
/// REPL's "is this complete?") and the joined lines.
pub struct Lexer<'a> {
    raw: logos::Lexer<'a, Raw>,
    file: FileId,
    /// Syntax errors the parser has recovered from so far (it counts them
    /// here), so the stream can end once there are too many.
    parse_errors: Option<&'a Cell<usize>>,
    pub errors: Vec<Diagnostic>,
    /// Open brackets with their spans.
    stack: Vec<(Tok, Span)>,
    pending_newline: Option<(usize, usize)>,
    /// A token held back while the newline before it is handed out.
    queued: Option<Spanned>,
    /// Whether the last token handed out makes a following newline a
    /// continuation.
    last_continues: bool,
    /// The open bracket that swallowed the newline(s) before the next token.
    swallowed_by: Option<Span>,
    /// Lines joined to the one before because a `(` or `[` was open: the
    /// start of the line's first token and the open bracket's span. A
    /// syntax error there is usually an unclosed bracket further up.
    pub joined_lines: Vec<(usize, Span)>,
    pub stopped: Option<Stop>,
    done: bool,
    /// The rest of an f-string's tokens, scanned at its `f"`, or of a
    /// float literal split after a `.` (`t.0.1`).
    fstring: std::collections::VecDeque<Spanned>,
    /// Whether the last raw token was a `.`: then `0.1` is two tuple
    /// fields (spec §10.1), not a float.
    after_dot: bool,
}

impl<'a> Lexer<'a> {
    /// Lexes the text of the file `file`; error spans point into it. With
    /// `parse_errors`, the stream ends once it and the lexical errors
    /// together reach [`MAX_ERRORS`].
    pub fn new(src: &'a str, file: FileId, parse_errors: Option<&'a Cell<usize>>) -> Lexer<'a> {
        Lexer {
            raw: Raw::lexer(src),
            file,
            parse_errors,
            errors: Vec::new(),
            stack: Vec::new(),
            pending_newline: None,
            queued: None,
            last_continues: false,
            swallowed_by: None,
            joined_lines: Vec::new(),
            stopped: None,
            done: false,
            fstring: std::collections::VecDeque::new(),
            after_dot: false,
        }
    }

    /// Brackets still open where the stream ended.
    pub fn open_brackets(&self) -> usize {
        self.stack.len()
    }

    fn stop(&mut self, why: Stop) -> Option<Spanned> {
        self.stopped = Some(why);
        self.done = true;
        None
    }

    /// The next token before the newline rules: `None` at the end.
    fn next_raw(&mut self) -> Option<Spanned> {
        if let Some(t) = self.fstring.pop_front() {
            return Some(t);
        }
        let res = self.raw.next()?;
        let span = self.raw.span();
        let slice = self.raw.slice();
        let after_dot = std::mem::replace(&mut self.after_dot, matches!(res, Ok(Raw::Dot)));
        if let (Ok(Raw::Float), true) = (&res, after_dot) {
            // `t.0.1` is the field 1 of the field 0: the digits on each side
            // of this `.` are two integer tokens.
            if let Some(dot) = slice.find('.').filter(|_| {
                slice
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
            }) {
                let at = span.start + dot;
                let (first, second) = (&slice[..dot], &slice[dot + 1..]);
                let tok = decode(Raw::DecInt, first, self.file, span.start, &mut self.errors);
                let rest = decode(Raw::DecInt, second, self.file, at + 1, &mut self.errors);
                self.fstring.push_back((at, Tok::Dot, at + 1));
                self.fstring.push_back((at + 1, rest, span.end));
                return Some((span.start, tok, at));
            }
        }
        if let Ok(Raw::FStrStart) = res {
            let end = self.scan_fstring(span.start);
            self.raw.bump(end - span.end);
            return self.fstring.pop_front();
        }
        let tok = match res {
            Ok(r) => decode(r, slice, self.file, span.start, &mut self.errors),
            Err(()) => {
                let ch = slice.chars().next().unwrap_or('?');
                self.errors.push(
                    Diagnostic::error(
                        Span::new(self.file, span.start, span.end),
                        format!("unexpected character `{}`", ch.escape_debug()),
                    )
                    .with_label("not part of any token"),
                );
                Tok::Error
            }
        };
        Some((span.start, tok, span.end))
    }

    /// Scans the f-string whose `f"` starts at `start` into `fstring`,
    /// recording its errors; returns where it ends (after its closing `"`,
    /// or at the end of its line when that is missing).
    fn scan_fstring(&mut self, start: usize) -> usize {
        let mut out = Vec::new();
        let mut scan = FScan {
            src: self.raw.source(),
            file: self.file,
            errors: Vec::new(),
        };
        let end = scan.fstring(start, 0, &mut out);
        self.errors.append(&mut scan.errors);
        self.fstring.extend(out);
        end
    }

    fn emit(&mut self, t: Spanned) -> Option<Spanned> {
        self.last_continues = t.1.continues_line();
        Some(t)
    }
}

/// The newline rules of spec §2, applied as tokens are pulled.
impl Iterator for Lexer<'_> {
    type Item = Spanned;

    fn next(&mut self) -> Option<Spanned> {
        if let Some(t) = self.queued.take() {
            return self.emit(t);
        }
        if self.done {
            return None;
        }
        loop {
            let parse_errors = self.parse_errors.map_or(0, Cell::get);
            let Some((l, tok, r)) = self.next_raw() else {
                self.done = true;
                let (nl, nr) = self.pending_newline.take()?;
                return self.emit((nl, Tok::Newline, nr));
            };
            if self.errors.len() + parse_errors >= MAX_ERRORS {
                return self.stop(Stop::TooManyErrors(l));
            }
            if tok == Tok::Newline {
                let in_parens = matches!(self.stack.last(), Some((Tok::LParen | Tok::LBracket, _)));
                if in_parens && !self.last_continues {
                    self.swallowed_by = self.stack.last().map(|(_, sp)| *sp);
                }
                if !in_parens && !self.last_continues && self.pending_newline.is_none() {
                    self.pending_newline = Some((l, r));
                }
                continue;
            }
            if let Some(sp) = self.swallowed_by.take() {
                self.joined_lines.push((l, sp));
            }
            if matches!(tok, Tok::LParen | Tok::LBracket | Tok::LBrace) {
                let span = Span::new(self.file, l, r);
                if self.stack.len() >= MAX_NESTING {
                    return self.stop(Stop::TooDeep(span));
                }
                self.stack.push((tok.clone(), span));
            } else if matches!(tok, Tok::RParen | Tok::RBracket | Tok::RBrace) {
                self.stack.pop();
            }
            if let Some((nl, nr)) = self.pending_newline.take() {
                // A line starting with `.` or `else` continues the one before;
                // a newline before a closing bracket ends nothing.
                if !matches!(
                    tok,
                    Tok::Dot | Tok::Else | Tok::RBrace | Tok::RParen | Tok::RBracket
                ) {
                    self.queued = Some((l, tok, r));
                    return self.emit((nl, Tok::Newline, nr));
                }
            }
            return self.emit((l, tok, r));
        }
    }
}

/// The number of brackets open after `line`, when `depth` were open before
/// it, counted as the parser's lexer counts them (a closing bracket with
/// none open closes nothing); `None` when the line has a lexical error or
/// nests too deeply, which no further line can repair. A string or comment
/// never spans lines, so going line by line gives the balance of the whole
/// text: the REPL uses it to know an entry is incomplete without parsing it
/// again for every line.
pub fn bracket_depth(depth: usize, line: &str) -> Option<usize> {
    let mut lexer = Lexer::new(line, FileId::default(), None);
    let mut open = depth;
    for (_, tok, _) in lexer.by_ref() {
        if matches!(tok, Tok::LParen | Tok::LBracket | Tok::LBrace) {
            open += 1;
        } else if matches!(tok, Tok::RParen | Tok::RBracket | Tok::RBrace) {
            open = open.saturating_sub(1);
        }
    }
    (lexer.errors.is_empty() && lexer.stopped.is_none() && open <= MAX_NESTING).then_some(open)
}

/// How deeply f-strings may nest inside each other's fields
/// (`f"{f"{x}"}"` is two).
const MAX_FSTRING_NEST: usize = 8;

/// A nested f-string met while finding where a field ends: its `f"`, its
/// tokens and where it ends, spliced in when the field is lexed.
type NestedFString = (usize, Vec<Spanned>, usize);

/// An f-string's scanner: the source, its file, and the errors found.
struct FScan<'s> {
    src: &'s str,
    file: FileId,
    errors: Vec<Diagnostic>,
}

impl FScan<'_> {
    /// Scans the f-string whose `f"` starts at `start` (inside `nest` others)
    /// into `out`; returns where it ends (after its closing `"`, or at the end
    /// of its line when that is missing).
    fn fstring(&mut self, start: usize, nest: usize, out: &mut Vec<Spanned>) -> usize {
        let (src, file) = (self.src, self.file);
        let b = src.as_bytes();
        let line_end = src[start..].find('\n').map_or(src.len(), |n| start + n);
        out.push((start, Tok::FStart, start + 2));
        let errors_before = self.errors.len();
        let mut i = start + 2;
        let unterminated = |errors: &mut Vec<Diagnostic>| {
            errors.push(
                Diagnostic::error(Span::new(file, start, line_end), "unterminated f-string")
                    .with_label("the closing `\"` is missing on this line"),
            );
        };
        loop {
            // Literal text, up to a field, the end, or the end of the line.
            let text_start = i;
            let mut text = String::new();
            let mut raw_from = i;
            let flush =
                |text: &mut String, from: usize, to: usize, errors: &mut Vec<Diagnostic>| match unescape(
                    &src[from..to],
                    file,
                    from,
                ) {
                    Ok(s) => text.push_str(&s),
                    Err(d) => errors.push(d),
                };
            let stop = loop {
                match b.get(i) {
                    None | Some(b'\n') => break None,
                    Some(b'\\') => i = after_escape(src, i),
                    Some(b'{') if b.get(i + 1) == Some(&b'{') => {
                        flush(&mut text, raw_from, i + 1, &mut self.errors);
                        i += 2;
                        raw_from = i;
                    }
                    Some(b'}') if b.get(i + 1) == Some(&b'}') => {
                        flush(&mut text, raw_from, i + 1, &mut self.errors);
                        i += 2;
                        raw_from = i;
                    }
                    Some(&c @ (b'{' | b'}' | b'"')) => break Some(c),
                    Some(_) => i += 1,
                }
            };
            let i_text_end = i.min(line_end);
            flush(&mut text, raw_from.min(i_text_end), i_text_end, &mut self.errors);
            if !text.is_empty() {
                out.push((text_start, Tok::FText(text), i_text_end));
            }
            match stop {
                None => {
                    unterminated(&mut self.errors);
                    out.push((line_end, Tok::Error, line_end));
                    i = line_end;
                    break;
                }
                Some(b'"') => {
                    out.push((i, Tok::FEnd, i + 1));
                    i += 1;
                    break;
                }
                Some(b'}') => {
                    self.errors.push(
                        Diagnostic::error(Span::new(file, i, i + 1), "a single `}` in an f-string")
                            .with_label("write `}}` for a literal brace"),
                    );
                    i += 1;
                    continue;
                }
                Some(_) => {}
            }
            // A field: `{`, an expression, maybe `:spec` (literal text with
            // `{expr}` fields in it), `}`.
            let open = i;
            let mut nested = Vec::new();
            let mut spec: Option<(usize, Vec<SpecPiece>)> = None;
            let field = self.field(open + 1, nest, &mut nested);
            let close = match field {
                Some((at, b'}')) => Some(at),
                Some((colon, _)) => {
                    let pieces = self.spec(colon + 1, nest, &mut nested);
                    let close = pieces.as_ref().map(|(close, _)| *close);
                    spec = pieces.map(|(_, p)| (colon, p));
                    close
                }
                None => None,
            };
            let Some(close) = close else {
                if self.errors.len() == errors_before {
                    self.errors.push(
                        Diagnostic::error(
                            Span::new(file, open, line_end.max(open + 1)),
                            "unclosed `{` in an f-string",
                        )
                        .with_label("this field has no `}`"),
                    );
                }
                out.push((line_end, Tok::Error, line_end));
                i = line_end;
                break;
            };
            let expr_end = spec.as_ref().map_or(close, |(colon, _)| *colon);
            if src[open + 1..expr_end].trim().is_empty() {
                self.errors.push(
                    Diagnostic::error(Span::new(file, open, close + 1), "an empty field in an f-string")
                        .with_label("an expression goes here")
                        .with_note("write `{{` for a literal brace"),
                );
                i = close + 1;
                continue;
            }
            out.push((open, Tok::FOpen, open + 1));
            self.lex_field(open + 1, expr_end, &mut nested, out);
            // A spec with an empty field is reported and left out, so the
            // parser sees a well-formed field.
            let mut empty = false;
            for piece in spec.iter().flat_map(|(_, p)| p) {
                if let &SpecPiece::Field(l, r) = piece {
                    if src[l + 1..r].trim().is_empty() {
                        self.errors.push(
                            Diagnostic::error(Span::new(file, l, r + 1), "an empty field in a format spec")
                                .with_label("an expression goes here"),
                        );
                        empty = true;
                    }
                }
            }
            if let Some((colon, pieces)) = spec.filter(|_| !empty) {
                let mut from = colon + 1;
                for piece in pieces {
                    match piece {
                        SpecPiece::Text(to) => {
                            out.push((from, Tok::FSpec(src[from..to].to_string()), to));
                        }
                        SpecPiece::Field(l, r) => {
                            out.push((l, Tok::FOpen, l + 1));
                            self.lex_field(l + 1, r, &mut nested, out);
                            out.push((r, Tok::FClose, r + 1));
                            from = r + 1;
                        }
                    }
                }
            }
            out.push((close, Tok::FClose, close + 1));
            i = close + 1;
        }
        i
    }

    /// Finds where the expression of an f-string field starting at `from`
    /// ends: `Some((at, c))` with `c` the `}` or `:` at `at` (outside brackets
    /// and strings), `None` when the line or the f-string ends first. A nested
    /// f-string is scanned on the way, into `nested`.
    fn field(&mut self, from: usize, nest: usize, nested: &mut Vec<NestedFString>) -> Option<(usize, u8)> {
        let (src, file) = (self.src, self.file);
        let b = src.as_bytes();
        let mut i = from;
        let mut depth = 0usize;
        loop {
            match b.get(i) {
                None | Some(b'\n') => return None,
                Some(b'f')
                    if b.get(i + 1) == Some(&b'"')
                        && (i == from
                            || !(b[i - 1].is_ascii_alphanumeric()
                                || b[i - 1] == b'_'
                                || b[i - 1] >= 0x80)) =>
                {
                    if nest + 1 >= MAX_FSTRING_NEST {
                        self.errors.push(
                            Diagnostic::error(Span::new(file, i, i + 2), "f-strings nested too deeply")
                                .with_label(format!("the {}th f-string inside another's field", nest + 1))
                                .with_note(format!("at most {MAX_FSTRING_NEST} f-strings may nest")),
                        );
                        return None;
                    }
                    let mut toks = Vec::new();
                    let end = self.fstring(i, nest + 1, &mut toks);
                    // An unterminated one ends in an error token at its line's end.
                    if toks.last().is_some_and(|t| t.1 == Tok::Error) {
                        return None;
                    }
                    nested.push((i, toks, end));
                    i = end;
                }
                Some(b'"') => {
                    // A string inside the expression, to its closing quote.
                    i += 1;
                    while let Some(&c) = b.get(i) {
                        if c == b'\n' || c == b'"' {
                            break;
                        }
                        i = if c == b'\\' { after_escape(src, i) } else { i + 1 };
                    }
                    if b.get(i) != Some(&b'"') {
                        return None;
                    }
                    i += 1;
                }
                Some(b'(' | b'[' | b'{') => {
                    depth += 1;
                    i += 1;
                }
                Some(b')' | b']' | b'}') if depth > 0 => {
                    depth -= 1;
                    i += 1;
                }
                Some(&c @ (b'}' | b':')) if depth == 0 => return Some((i, c)),
                Some(_) => i += 1,
            }
        }
    }

    /// The pieces of a format spec starting at `from`, up to the field's
    /// closing `}` (returned with them); `None`, with an error where there is
    /// one to say, when the spec is not closed.
    fn spec(
        &mut self,
        from: usize,
        nest: usize,
        nested: &mut Vec<NestedFString>,
    ) -> Option<(usize, Vec<SpecPiece>)> {
        let (src, file) = (self.src, self.file);
        let b = src.as_bytes();
        let mut pieces = Vec::new();
        let mut i = from;
        loop {
            match b.get(i) {
                None | Some(b'\n' | b'"') => return None,
                Some(b'}') => {
                    pieces.push(SpecPiece::Text(i));
                    return Some((i, pieces));
                }
                Some(b'{') => {
                    pieces.push(SpecPiece::Text(i));
                    match self.field(i + 1, nest, nested)? {
                        (close, b'}') => {
                            pieces.push(SpecPiece::Field(i, close));
                            i = close + 1;
                        }
                        (colon, _) => {
                            self.errors.push(
                                Diagnostic::error(
                                    Span::new(file, colon, colon + 1),
                                    "a format spec inside a format spec's field",
                                )
                                .with_label("a field in a spec is an expression alone")
                                .with_note("compute the inner value first: `{x:{w}}` takes `w` as text"),
                            );
                            return None;
                        }
                    }
                }
                Some(_) => i += 1,
            }
        }
    }

    /// The tokens of an f-string field's expression, `src[from..to]`, into
    /// `out`; a nested f-string's `f"` takes the tokens scanned for it.
    fn lex_field(&mut self, from: usize, to: usize, nested: &mut Vec<NestedFString>, out: &mut Vec<Spanned>) {
        let (src, file) = (self.src, self.file);
        let mut inner = Raw::lexer(&src[from..to]);
        while let Some(res) = inner.next() {
            let sp = inner.span();
            let (l, r) = (from + sp.start, from + sp.end);
            let tok = match res {
                Ok(Raw::FStrStart) => match nested.iter().position(|n| n.0 == l) {
                    Some(k) => {
                        let (_, toks, end) = nested.swap_remove(k);
                        out.extend(toks);
                        inner.bump(end.min(to).saturating_sub(r));
                        continue;
                    }
                    None => {
                        self.errors.push(Diagnostic::error(
                            Span::new(file, l, r),
                            "an f-string inside an f-string's field",
                        ));
                        Tok::Error
                    }
                },
                Ok(r) => decode(r, inner.slice(), file, l, &mut self.errors),
                Err(()) => {
                    let ch = inner.slice().chars().next().unwrap_or('?');
                    self.errors.push(
                        Diagnostic::error(
                            Span::new(file, l, r),
                            format!("unexpected character `{}`", ch.escape_debug()),
                        )
                        .with_label("not part of any token"),
                    );
                    Tok::Error
                }
            };
            out.push((l, tok, r));
        }
    }
}

/// A piece of a format spec: literal text ending at a position, or a
/// `{expr}` field from its `{` to its `}`. Text and fields alternate,
/// starting and ending with text (maybe empty).
enum SpecPiece {
    Text(usize),
    Field(usize, usize),
}

fn decode(r: Raw, slice: &str, file: FileId, start: usize, errors: &mut Vec<Diagnostic>) -> Tok {
    let span = Span::new(file, start, start + slice.len());
    match r {
        Raw::Newline => Tok::Newline,
        Raw::Semi => Tok::Semi,
        Raw::Ident => keyword(slice).unwrap_or_else(|| Tok::Ident(slice.to_string())),
        Raw::DecInt => int_literal(slice, 10, span, errors),
        Raw::HexInt => int_literal(&slice[2..], 16, span, errors),
        Raw::BinInt => int_literal(&slice[2..], 2, span, errors),
        Raw::Float => {
            let clean: String = slice.chars().filter(|c| *c != '_').collect();
            match clean.parse::<f64>() {
                Ok(v) => Tok::Float(v),
                Err(_) => {
                    errors.push(Diagnostic::error(span, "malformed float literal").with_label("malformed"));
                    Tok::Float(0.0)
                }
            }
        }
        Raw::Str => match unescape(&slice[1..slice.len() - 1], file, start + 1) {
            Ok(s) => Tok::Str(s),
            Err(d) => {
                errors.push(d);
                Tok::Str(String::new())
            }
        },
        // Scanned by `FScan` (from `Lexer::scan_fstring`) before it gets here.
        Raw::FStrStart => Tok::Error,
        Raw::UnterminatedStr => {
            errors.push(
                Diagnostic::error(span, "unterminated string literal")
                    .with_label("the closing `\"` is missing on this line"),
            );
            Tok::Error
        }
        Raw::LParen => Tok::LParen,
        Raw::RParen => Tok::RParen,
        Raw::LBracket => Tok::LBracket,
        Raw::RBracket => Tok::RBracket,
        Raw::LBrace => Tok::LBrace,
        Raw::RBrace => Tok::RBrace,
        Raw::Comma => Tok::Comma,
        Raw::Dot => Tok::Dot,
        Raw::Ellipsis => Tok::Ellipsis,
        Raw::Colon => Tok::Colon,
        Raw::Arrow => Tok::Arrow,
        Raw::FatArrow => Tok::FatArrow,
        Raw::Eq => Tok::Eq,
        Raw::PlusEq => Tok::PlusEq,
        Raw::MinusEq => Tok::MinusEq,
        Raw::StarEq => Tok::StarEq,
        Raw::SlashEq => Tok::SlashEq,
        Raw::EqEq => Tok::EqEq,
        Raw::NotEq => Tok::NotEq,
        Raw::Lt => Tok::Lt,
        Raw::Le => Tok::Le,
        Raw::Gt => Tok::Gt,
        Raw::Ge => Tok::Ge,
        Raw::Pipe => Tok::Pipe,
        Raw::Caret => Tok::Caret,
        Raw::Amp => Tok::Amp,
        Raw::Shl => Tok::Shl,
        Raw::Shr => Tok::Shr,
        Raw::Plus => Tok::Plus,
        Raw::Minus => Tok::Minus,
        Raw::Star => Tok::Star,
        Raw::Slash => Tok::Slash,
        Raw::SlashSlash => Tok::SlashSlash,
        Raw::Percent => Tok::Percent,
        Raw::At => Tok::At,
        Raw::StarStar => Tok::StarStar,
        Raw::Question => Tok::Question,
    }
}

/// An integer literal's digits (prefix removed) in `radix`; `_` separators
/// are dropped.
fn int_literal(digits: &str, radix: u32, span: Span, errors: &mut Vec<Diagnostic>) -> Tok {
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    if clean.is_empty() || clean.chars().any(|c| !c.is_digit(radix)) {
        errors.push(Diagnostic::error(span, "malformed integer literal").with_label("malformed"));
        return Tok::Error;
    }
    match i64::from_str_radix(&clean, radix) {
        Ok(v) => Tok::Int(v),
        Err(_) => {
            errors.push(
                Diagnostic::error(span, "integer literal out of range for Int (64-bit signed)")
                    .with_label("does not fit in i64"),
            );
            // Keep parsing as if it were a valid literal so one
            // mistake does not cascade into parse errors.
            Tok::Int(0)
        }
    }
}

/// Where the text after the escape whose `\\` is at `i` goes on: past the
/// escaped character, whatever its length (the end of the line at most).
fn after_escape(src: &str, i: usize) -> usize {
    match src.get(i + 1..).and_then(|rest| rest.chars().next()) {
        Some('\n') | None => i + 1,
        Some(c) => i + 1 + c.len_utf8(),
    }
}

/// Decodes the escapes of spec §2: `\n \t \r \\ \" \u{XXXX}`.
fn unescape(body: &str, file: FileId, base: usize) -> Result<String, Diagnostic> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err(Diagnostic::error(
                Span::new(file, base + i, base + i + 1),
                "unfinished escape",
            ));
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            'u' => {
                let rest = &body[i + 2..];
                let close = rest.find('}');
                let code = if rest.starts_with('{') {
                    close
                        .and_then(|c| u32::from_str_radix(&rest[1..c], 16).ok())
                        .and_then(char::from_u32)
                } else {
                    None
                };
                match (code, close) {
                    (Some(ch), Some(c)) => {
                        out.push(ch);
                        // Skip `{XXXX}`: its characters are all ASCII.
                        for _ in 0..=c {
                            chars.next();
                        }
                    }
                    _ => {
                        let end = base + i + 2 + close.map(|c| c + 1).unwrap_or(0);
                        return Err(Diagnostic::error(
                            Span::new(file, base + i, end),
                            "invalid unicode escape: expected `\\u{XXXX}` naming a Unicode scalar value",
                        ));
                    }
                }
            }
            other => {
                return Err(Diagnostic::error(
                    Span::new(file, base + i, base + i + 1 + other.len_utf8()),
                    format!("unknown escape `\\{}`", other.escape_debug()),
                )
                .with_note("the escapes are \\n \\t \\r \\\\ \\\" and \\u{XXXX}"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_keyword_is_a_keyword() {
        for k in KEYWORDS {
            assert!(keyword(k).is_some(), "{k}");
        }
        // And no other word of the grammar's tokens is one.
        for w in ["elif", "def", "lambda", "none", "pub", "return_"] {
            assert!(keyword(w).is_none() && !KEYWORDS.contains(&w), "{w}");
        }
    }

    fn toks(src: &str) -> Vec<Tok> {
        Lexer::new(src, FileId(0), None).map(|(_, t, _)| t).collect()
    }

    #[test]
    fn an_fstring_is_text_fields_and_specs() {
        let src = r#"f"a{{{x + 1:>8.2f}}} {s["k"]}é\n""#;
        let spanned: Vec<_> = Lexer::new(src, FileId(0), None).collect();
        let kinds: Vec<Tok> = spanned.iter().map(|(_, t, _)| t.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                Tok::FStart,
                Tok::FText("a{".into()),
                Tok::FOpen,
                Tok::Ident("x".into()),
                Tok::Plus,
                Tok::Int(1),
                Tok::FSpec(">8.2f".into()),
                Tok::FClose,
                Tok::FText("} ".into()),
                Tok::FOpen,
                Tok::Ident("s".into()),
                Tok::LBracket,
                Tok::Str("k".into()),
                Tok::RBracket,
                Tok::FClose,
                Tok::FText("é\n".into()),
                Tok::FEnd,
            ]
        );
        // Every token's span is its own text in the source.
        let (l, _, r) = spanned[3];
        assert_eq!(&src[l..r], "x");
        let (l, _, r) = spanned[6];
        assert_eq!(&src[l..r], ">8.2f");
        // An f-string does not swallow what follows it.
        assert_eq!(toks(r#"f"{1}" + 2"#).last(), Some(&Tok::Int(2)));
    }

    #[test]
    fn a_spec_holds_fields_and_a_field_holds_fstrings() {
        let src = r#"f"{x:<{w}.{p}f}{f"{y:{z}}!"}" + 1"#;
        let spanned: Vec<_> = Lexer::new(src, FileId(0), None).collect();
        let kinds: Vec<Tok> = spanned.iter().map(|(_, t, _)| t.clone()).collect();
        let id = |s: &str| Tok::Ident(s.into());
        let spec = |s: &str| Tok::FSpec(s.into());
        assert_eq!(
            kinds,
            vec![
                Tok::FStart,
                Tok::FOpen,
                id("x"),
                spec("<"),
                Tok::FOpen,
                id("w"),
                Tok::FClose,
                spec("."),
                Tok::FOpen,
                id("p"),
                Tok::FClose,
                spec("f"),
                Tok::FClose,
                Tok::FOpen,
                Tok::FStart,
                Tok::FOpen,
                id("y"),
                spec(""),
                Tok::FOpen,
                id("z"),
                Tok::FClose,
                spec(""),
                Tok::FClose,
                Tok::FText("!".into()),
                Tok::FEnd,
                Tok::FClose,
                Tok::FEnd,
                Tok::Plus,
                Tok::Int(1),
            ]
        );
        for (l, t, r) in &spanned {
            let want = if let Tok::Ident(n) | Tok::FSpec(n) = t {
                n.as_str()
            } else if *t == Tok::FOpen {
                "{"
            } else if *t == Tok::FClose {
                "}"
            } else {
                continue;
            };
            assert_eq!(&src[*l..*r], want, "{t:?} at {l}");
        }
    }

    #[test]
    fn fstring_errors_are_located_and_the_line_goes_on() {
        for (src, msg) in [
            (r#"f"a } b""#, "a single `}`"),
            (r#"f"{}""#, "an empty field"),
            (r#"f"{x""#, "unclosed `{`"),
            (r#"f"{1:{}}""#, "an empty field in a format spec"),
            (r#"f"{1:{2:3}}""#, "a format spec inside a format spec's field"),
            (r#"f"{1:{2}""#, "unclosed `{`"),
            (r#"f"{f"ab"#, "unterminated f-string"),
            (
                r#"f"{f"{f"{f"{f"{f"{f"{f"{f"{1}"}"}"}"}"}"}"}"}""#,
                "nested too deeply",
            ),
            (r#"f"abc"#, "unterminated f-string"),
            (r#"f"\é""#, "unknown escape"),
        ] {
            let mut lx = Lexer::new(src, FileId(0), None);
            lx.by_ref().for_each(drop);
            assert!(
                lx.errors.iter().any(|d| d.message.contains(msg)),
                "{src}: {:?}",
                lx.errors.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
        }
    }

    /// Lexes all of `src`: the tokens and the lexer, for its errors.
    fn lex(src: &str) -> (Vec<Spanned>, Lexer<'_>) {
        let mut lexer = Lexer::new(src, FileId(0), None);
        let tokens = lexer.by_ref().collect();
        (tokens, lexer)
    }

    #[test]
    fn literals() {
        assert_eq!(
            toks("42 1_000 0x1F 0b101"),
            vec![Tok::Int(42), Tok::Int(1000), Tok::Int(31), Tok::Int(5)]
        );
        assert_eq!(
            toks("1.0 1e3 2.5e-7"),
            vec![Tok::Float(1.0), Tok::Float(1000.0), Tok::Float(2.5e-7)]
        );
        assert_eq!(
            toks("1.foo"),
            vec![Tok::Int(1), Tok::Dot, Tok::Ident("foo".into())]
        );
        assert_eq!(toks(r#""a\n\u{1F600}""#), vec![Tok::Str("a\n\u{1F600}".into())]);
    }

    #[test]
    fn out_of_range_int_is_an_error() {
        assert_eq!(lex("9223372036854775808").1.errors.len(), 1);
        assert!(lex("9223372036854775807").1.errors.is_empty());
    }

    #[test]
    fn newlines_follow_spec() {
        assert_eq!(toks("f(1,\n2)"), toks("f(1, 2)"));
        assert_eq!(toks("x\n.y"), toks("x.y"));
        assert_eq!(toks("}\nelse {"), toks("} else {"));
        assert_eq!(
            toks("a\n\n\nb"),
            vec![Tok::Ident("a".into()), Tok::Newline, Tok::Ident("b".into())]
        );
        assert_eq!(toks("a +\nb"), toks("a + b"));
        assert_eq!(
            toks("{\na\n}"),
            vec![Tok::LBrace, Tok::Ident("a".into()), Tok::RBrace]
        );
    }

    #[test]
    fn bracket_depth_adds_up_line_by_line() {
        let text = "let a = [1, (2\n# ) ] not counted\n\"(\" , 3)\n, {]\n";
        let mut depth = 0;
        for line in text.lines() {
            depth = bracket_depth(depth, line).unwrap();
        }
        let (_, whole) = lex(text);
        assert_eq!(depth, whole.open_brackets());
        assert_eq!(depth, 1);
        assert_eq!(bracket_depth(0, ") ("), Some(1));
        assert_eq!(bracket_depth(3, "0x"), None);
        assert_eq!(bracket_depth(MAX_NESTING, "("), None);
    }

    #[test]
    fn bad_input_becomes_error_tokens() {
        let (tokens, l) = lex("let x = $ \"abc");
        assert_eq!(l.errors.len(), 2);
        assert!(tokens.iter().any(|(_, t, _)| *t == Tok::Error));
    }
}
