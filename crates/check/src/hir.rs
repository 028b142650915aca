//! The resolved program the evaluator runs. Every name is already a slot
//! (a local in the current frame, a value captured by the current closure,
//! or a global), every named call knows its target, and every builtin is an
//! enum value: the evaluator does no string lookups on its hot path.

use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_syntax::Span;
use twill_tensor::DType;

use crate::builtins::Builtin;
use crate::types::RtType;

/// Where a variable lives at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    /// A slot of the running function's frame.
    Local(u32),
    /// A value copied into the running closure when it was created.
    Capture(u32),
    /// A module-level binding, shared by all code.
    Global(u32),
}

/// What a new closure copies from the code that creates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    Var(Var),
    /// The running closure itself (a nested function captured by a closure
    /// inside its own body).
    SelfFn,
}

#[derive(Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug)]
pub enum Arg {
    Pos(Expr),
    Named(Rc<str>, Expr, Span),
}

#[derive(Debug)]
pub enum IndexItem {
    Single(Expr),
    Slice {
        start: Option<Expr>,
        stop: Option<Expr>,
        step: Option<Expr>,
    },
}

#[derive(Debug)]
pub enum Pattern {
    Wildcard,
    Bind(u32),
    Int(i64),
    Float(f64),
    Str(Rc<String>),
    Bool(bool),
    None,
    Ok(Box<Pattern>),
    Err(Box<Pattern>),
    Some(Box<Pattern>),
}

#[derive(Debug)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub body: Expr,
}

/// `repr(u8)` gives the enum a plain tag byte: without it the compiler
/// hides the tag in a niche of a field, and every `match` in the
/// evaluator's hot loop pays to decode it.
#[derive(Debug)]
#[repr(u8)]
pub enum ExprKind {
    Unit,
    Int(i64),
    Float(f64),
    Str(Rc<String>),
    Bool(bool),
    DType(DType),
    NoneValue,
    Load(Var),
    /// The closure that is running (a nested named function naming itself).
    SelfFn,
    List(Vec<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// A call of the function held in a global slot (named top-level functions).
    CallGlobal(u32, Vec<Expr>),
    Call(Box<Expr>, Vec<Expr>),
    Builtin(Builtin, Vec<Arg>),
    Method {
        receiver: Box<Expr>,
        name: Rc<str>,
        args: Vec<Arg>,
    },
    /// A method that mutates its receiver in place (`a.push(v)` on a `var`).
    MutMethod {
        root: Var,
        path: Vec<PathElem>,
        name: Rc<str>,
        args: Vec<Arg>,
    },
    Field(Box<Expr>, Rc<str>),
    Index(Box<Expr>, Vec<IndexItem>),
    Try(Box<Expr>),
    If(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
    While(Box<Expr>, Box<Expr>),
    For {
        slot: u32,
        iter: Box<Expr>,
        body: Box<Expr>,
    },
    Match(Box<Expr>, Vec<MatchArm>),
    Block(Vec<Stmt>),
    Closure {
        func: Rc<Function>,
        captures: Vec<Capture>,
    },
    StructLit {
        def: Rc<StructDef>,
        fields: Vec<Expr>,
    },
    /// The checker's claim that the expression is a tensor of this dtype,
    /// verified when the program runs (only when cross-checking).
    AssertDtype(Box<Expr>, DType),
}

/// One step of an assignment target after its root variable: `a[i].f = v`.
#[derive(Debug)]
pub enum PathElem {
    Index(Vec<IndexItem>, Span),
    Field(Rc<str>, Span),
}

#[derive(Debug)]
#[repr(u8)]
pub enum Stmt {
    Expr(Expr),
    /// Binds (or rebinds) a variable; `check` is a run-time annotation check
    /// for what the checker could not prove.
    Let {
        var: Var,
        value: Expr,
        check: Option<RtType>,
    },
    Assign {
        root: Var,
        path: Vec<PathElem>,
        op: Option<BinOp>,
        value: Expr,
        span: Span,
        check: Option<RtType>,
    },
    Return(Option<Expr>, Span),
    Break,
    Continue,
}

#[derive(Debug)]
pub struct Function {
    pub name: Rc<str>,
    pub params: Vec<(Rc<str>, Option<RtType>)>,
    pub ret: Option<RtType>,
    /// Frame size: parameters first, then every other local.
    pub num_locals: u32,
    pub body: Expr,
    pub span: Span,
}

#[derive(Debug, PartialEq)]
pub struct StructDef {
    pub name: Rc<str>,
    pub fields: Vec<Rc<str>>,
}

impl StructDef {
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &**f == name)
    }
}

/// A checked program (or one REPL entry): the top-level code runs as the
/// body of a function with `num_locals` slots; globals are numbered in the
/// checker's persistent global table.
#[derive(Debug)]
pub struct Module {
    pub main: Function,
    pub num_globals: u32,
    /// Named top-level functions, assigned to their global slots before the
    /// top-level code runs, so they can be called before their definition.
    pub hoisted: Vec<(u32, Rc<Function>)>,
    /// Whether the last top-level statement is an expression whose value
    /// the REPL should print.
    pub ends_with_expr: bool,
}
