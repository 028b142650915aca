//! The abstract syntax tree. It records what was written, with a byte span
//! on every node, and nothing that needs name resolution or types: those
//! belong to the checker. `syntax` knows nothing about tensors.

use std::rc::Rc;

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let x = e` (`mutable == false`) or `var x = e`.
    ///
    /// The annotation and an assignment's target are boxed so that a
    /// statement, the most numerous node after expressions, stays small.
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<Box<TypeExpr>>,
        value: Expr,
    },
    /// `let (a, b) = e` / `var (x, y) = e` (spec §10.1): a tuple pattern
    /// bound from a value.
    LetPattern {
        mutable: bool,
        pattern: Box<Pattern>,
        value: Expr,
    },
    /// `target = value` or, with `op`, `target op= value`.
    Assign {
        target: Box<Expr>,
        op: Option<BinOp>,
        value: Expr,
    },
    Fn(Rc<FnDecl>),
    Struct(StructDecl),
    Expr(Expr),
    Return(Option<Expr>),
    Break,
    Continue,
    /// `import a.b as c` (spec §10.8): the dotted path, and the alias
    /// with the word before it (which must be `as`; the checker says so).
    Import(Box<Import>),
    /// A statement that failed to parse; its error was recorded.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub path: Vec<Ident>,
    pub alias: Option<(Ident, Ident)>,
}

impl Import {
    /// The module's dotted name, `a.b`.
    pub fn dotted(&self) -> String {
        self.path
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The name the module is bound to: the alias, else the dotted path.
    pub fn binding(&self) -> String {
        match &self.alias {
            Some((_, a)) => a.name.clone(),
            None => self.dotted(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDecl {
    pub name: Ident,
    pub fields: Vec<(Ident, TypeExpr)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    /// `= e` (spec §10.5): evaluated at each call that omits the argument.
    pub default: Option<Expr>,
}

/// A named function (`fn f(a) { … }`) or an anonymous one (`fn(a) { … }`).
#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub name: Option<Ident>,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
    /// A named function's doc: the block of `#` comment lines right above
    /// its `fn` (spec §12.1), without the `#`s; filled in by `parse`.
    pub doc: Option<Rc<str>>,
    /// A named top-level function's header as written (`fn f(a: Int, b =
    /// 2) -> Int`, whitespace runs as one space), for help; filled in by
    /// `parse`.
    pub signature: Option<Rc<str>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `Int`, `Tensor[bf16]`, `Res[Int, Str]`, a struct name, …
    Named { name: Ident, args: Vec<TypeExpr> },
    /// `Fn(A, B) -> C`
    Fn {
        params: Vec<TypeExpr>,
        ret: Box<TypeExpr>,
    },
    /// `(A, B)`, `(A,)`; `()` is Unit.
    Tuple(Vec<TypeExpr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::MatMul => "@",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// An expression: 48 bytes. Expressions are most of a program's tree, so
/// every kind whose fields would make [`ExprKind`] larger than 32 bytes
/// keeps them behind a box (a test holds the sizes): a 12 MB source's tree
/// stays near 20 bytes per source byte.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// How deeply it nests: 1 for a leaf, else one more than its deepest
    /// sub-expression (through blocks and function bodies too). The parser
    /// refuses a tree deeper than [`MAX_EXPR_DEPTH`] as it builds it, so a
    /// 12 MB chain `1 + 1 + …` never becomes 3 million nodes.
    pub depth: u32,
}

/// Deepest expression nesting a program may have (language.md §15).
pub const MAX_EXPR_DEPTH: u32 = 20_000;

impl Expr {
    /// A node over `kind`, its depth computed from its children's.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let depth = kind.children_depth().saturating_add(1);
        Expr { kind, span, depth }
    }

    /// An expression that failed to parse.
    pub fn error(span: Span) -> Expr {
        Expr::new(ExprKind::Error, span)
    }
}

impl ExprKind {
    /// The depth of the deepest direct sub-expression (0 for a leaf).
    fn children_depth(&self) -> u32 {
        let of = |e: &Expr| e.depth;
        let args = |a: &[Arg]| a.iter().map(|a| a.value.depth).max().unwrap_or(0);
        match self {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::Name(_)
            | ExprKind::Error => 0,
            ExprKind::List(items) | ExprKind::Tuple(items) => items.iter().map(of).max().unwrap_or(0),
            ExprKind::Dict(entries) => entries
                .iter()
                .map(|(k, v)| k.depth.max(v.depth))
                .max()
                .unwrap_or(0),
            ExprKind::FStr(parts) => parts
                .iter()
                .map(|p| match p {
                    FPart::Text(_) => 0,
                    FPart::Field { value, spec } => spec
                        .iter()
                        .flat_map(|s| &s.fields)
                        .map(|(e, _)| e.depth)
                        .fold(value.depth, Ord::max),
                })
                .max()
                .unwrap_or(0),
            ExprKind::Neg(a) | ExprKind::Not(a) | ExprKind::Try(a) => a.depth,
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => a.depth.max(b.depth),
            ExprKind::Call { callee, args: a } => callee.depth.max(args(a)),
            ExprKind::MethodCall(m) => m.receiver.depth.max(args(&m.args)),
            ExprKind::Field { base, .. } => base.depth,
            ExprKind::Index { base, items } => items
                .iter()
                .map(|it| match it {
                    IndexItem::Single(e) => e.depth,
                    IndexItem::Slice { start, stop, step } => [start, stop, step]
                        .iter()
                        .filter_map(|b| b.as_deref().map(of))
                        .max()
                        .unwrap_or(0),
                    IndexItem::Ellipsis => 0,
                })
                .fold(base.depth, u32::max),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => cond
                .depth
                .max(then.depth())
                .max(otherwise.as_deref().map_or(0, of)),
            ExprKind::While { cond, body } => cond.depth.max(body.depth()),
            ExprKind::For { iter, body, .. } => iter.depth.max(body.depth()),
            ExprKind::Match { scrutinee, arms } => {
                arms.iter().map(|a| a.body.depth).fold(scrutinee.depth, u32::max)
            }
            ExprKind::Block(b) => b.depth(),
            ExprKind::Lambda(f) => f.body.depth(),
            ExprKind::StructLit { fields, .. } => fields.iter().map(|(_, e)| e.depth).max().unwrap_or(0),
        }
    }
}

impl Block {
    /// The depth of its deepest statement's expressions.
    pub fn depth(&self) -> u32 {
        self.stmts.iter().map(Stmt::depth).max().unwrap_or(0)
    }
}

impl Stmt {
    /// The depth of its deepest expression.
    pub fn depth(&self) -> u32 {
        match &self.kind {
            StmtKind::Let { value, .. } | StmtKind::LetPattern { value, .. } | StmtKind::Expr(value) => {
                value.depth
            }
            StmtKind::Assign { target, value, .. } => target.depth.max(value.depth),
            StmtKind::Fn(f) => f.body.depth(),
            StmtKind::Return(e) => e.as_ref().map_or(0, |e| e.depth),
            StmtKind::Struct(_)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Import(_)
            | StmtKind::Error => 0,
        }
    }
}

/// `receiver.method(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodCall {
    pub receiver: Expr,
    pub method: Ident,
    pub args: Vec<Arg>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// `Some` for a keyword argument `name=value`.
    pub name: Option<Box<Ident>>,
    pub value: Expr,
}

// A slice's bounds are boxed: inline, three optional expressions made this
// the largest value the parser moves (its stack holds the largest node
// kind in every slot), for every token of every program.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexItem {
    Single(Expr),
    Slice {
        start: Option<Box<Expr>>,
        stop: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    /// `...`: as many whole axes as the other items leave (spec §11.1).
    Ellipsis,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub body: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// A bare name: `_`, `None`, or a variable to bind.
    Name(Ident),
    /// `Ok(p)`, `Err(p)`, `Some(p)`.
    Ctor {
        name: Ident,
        args: Vec<Pattern>,
    },
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    /// `(p, q)`, `(p,)`, `()`.
    Tuple(Vec<Pattern>),
}

/// A piece of an f-string: literal text, or a field (a value and its
/// format spec, if any).
#[derive(Clone, Debug, PartialEq)]
pub enum FPart {
    Text(String),
    Field { value: Expr, spec: Option<FormatSpec> },
}

/// The `:spec` of an f-string field: literal text, or text with `{expr}`
/// fields in it (`{x:>{w}.2f}`), whose values' `str` is spliced in.
#[derive(Clone, Debug, PartialEq)]
pub struct FormatSpec {
    /// The text before the first field (all of it when there is none).
    pub first: String,
    /// Each field and the text after it.
    pub fields: Vec<(Expr, String)>,
    /// From after the `:` to before the closing `}`.
    pub span: Span,
}

impl FormatSpec {
    /// The spec's text when it has no fields.
    pub fn literal(&self) -> Option<&str> {
        self.fields.is_empty().then_some(self.first.as_str())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Str(String),
    /// `f"…{x:spec}…"` (spec §10.7).
    FStr(Box<[FPart]>),
    Bool(bool),
    Name(String),
    /// `[a, b, …]`: a tensor literal or an `Arr`, decided by its elements.
    List(Vec<Expr>),
    /// `(a, b)`, `(a,)` (spec §10.1); `()` is `Tuple([])`, the Unit value.
    Tuple(Vec<Expr>),
    /// `[k: v, …]`, or `[:]` (spec §10.2).
    Dict(Box<[(Expr, Expr)]>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Call {
        callee: Box<Expr>,
        args: Box<[Arg]>,
    },
    MethodCall(Box<MethodCall>),
    Field {
        base: Box<Expr>,
        name: Box<Ident>,
    },
    Index {
        base: Box<Expr>,
        items: Box<[IndexItem]>,
    },
    Try(Box<Expr>),
    If {
        cond: Box<Expr>,
        then: Box<Block>,
        otherwise: Option<Box<Expr>>,
    },
    While {
        cond: Box<Expr>,
        body: Box<Block>,
    },
    For {
        var: Box<Pattern>,
        iter: Box<Expr>,
        body: Box<Block>,
    },
    Match {
        scrutinee: Box<Expr>,
        arms: Box<[MatchArm]>,
    },
    Block(Box<Block>),
    Lambda(Rc<FnDecl>),
    StructLit {
        name: Box<Ident>,
        fields: Box<[(Ident, Expr)]>,
    },
    /// An expression that failed to parse; its error was recorded.
    Error,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node sizes the tree's memory bound rests on: a change that makes
    /// one larger should be a decision, not an accident.
    #[test]
    fn node_sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<ExprKind>(), 32);
        assert_eq!(size_of::<Expr>(), 48);
        assert_eq!(size_of::<Arg>(), 56);
        assert!(size_of::<Stmt>() <= 120, "{}", size_of::<Stmt>());
    }
}
