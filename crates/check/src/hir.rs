//! The resolved program the evaluator runs. Every name is already a slot
//! (a local in the current frame, a value captured by the current closure,
//! or a global), every named call knows its target, and every builtin is an
//! enum value: the evaluator does no string lookups on its hot path.

use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_syntax::Span;
use twill_tensor::DType;

use crate::builtins::{Builtin, FormatField, HostMethod, MethodRef, TensorField};
// Struct definitions and symbols live in `types` (a `Ty::Struct` holds its
// definition); they are re-exported here, where the evaluator finds them.
use crate::text::Text;
use crate::types::RtType;
pub use crate::types::{StructDef, Sym};

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

/// An expression: 48 bytes, as the syntax tree's (kinds whose fields would
/// make [`ExprKind`] larger than 32 bytes keep them behind a box; a test
/// holds the sizes), so a long program's HIR stays small.
#[derive(Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// `receiver.method(args)`, resolved.
#[derive(Debug)]
pub struct MethodCall {
    pub receiver: Expr,
    pub method: MethodRef,
    /// The name as a symbol, for a struct field holding a function.
    pub sym: Sym,
    pub args: Args,
}

/// A method that mutates its receiver in place (`a.push(v)` on a `var`).
#[derive(Debug)]
pub struct CallKw {
    pub callee: Expr,
    pub args: Box<[Expr]>,
    /// Name, the name's span, value; in the order written.
    pub keywords: Box<[(Rc<str>, Span, Expr)]>,
}

#[derive(Debug)]
pub struct DefaultArg {
    pub slot: u32,
    pub value: Expr,
    pub check: Option<RtType>,
}

#[derive(Debug)]
pub struct MutMethod {
    pub root: Var,
    pub path: Vec<PathElem>,
    pub method: HostMethod,
    pub args: Box<[Expr]>,
    /// The argument that becomes an element of a typed Arr (`push`'s
    /// value, `insert`'s second) and the element type it is checked
    /// against while running (an Int made an F64), where the checker
    /// could not tell that it has it.
    pub check: Option<(usize, RtType)>,
}

/// `root.path… op= value`.
#[derive(Debug)]
pub struct Assign {
    pub root: Var,
    pub path: Vec<PathElem>,
    pub op: Option<BinOp>,
    pub value: Expr,
    pub span: Span,
    pub check: Option<RtType>,
}

/// Call arguments bound to parameter slots by the checker: each argument
/// with the slot it fills, in source order (the order they are evaluated);
/// keywords are already positions, so nothing is matched by name at run
/// time. A method's receiver is slot 0 and its arguments start at 1.
#[derive(Debug, Default)]
pub struct Args {
    pub items: Box<[(u32, Expr)]>,
    /// The number of slots (parameters, or arguments when there are more).
    pub slots: u32,
}

/// A field access as the checker resolved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    /// A field of a struct whose definition the checker knows, by offset.
    Offset(u32, Sym),
    /// A field of a tensor.
    Tensor(TensorField),
    /// A field of a Format (spec §13).
    Format(FormatField),
    /// A receiver of unknown type: a tensor field or a Format field when
    /// the name is one (whichever the value turns out to be), else a
    /// struct field found by its symbol.
    Dynamic(Sym, Option<TensorField>, Option<FormatField>),
    /// A tuple's element `t.0` (spec §10.1).
    Elem(u32),
}

impl Member {
    pub fn sym(self) -> Option<Sym> {
        match self {
            Member::Offset(_, s) | Member::Dynamic(s, ..) => Some(s),
            Member::Tensor(_) | Member::Format(_) | Member::Elem(_) => None,
        }
    }
}

#[derive(Debug)]
pub enum IndexItem {
    Single(Expr),
    Slice {
        start: Option<Box<Expr>>,
        stop: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Ellipsis,
}

#[derive(Debug)]
pub enum Pattern {
    Wildcard,
    Bind(u32),
    Int(i64),
    Float(f64),
    Str(Rc<Text>),
    Bool(bool),
    None,
    Ok(Box<Pattern>),
    Err(Box<Pattern>),
    Some(Box<Pattern>),
    /// `(p, q)`: a tuple of exactly that many elements (`()` is Unit).
    Tuple(Box<[Pattern]>),
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
    Str(Rc<Text>),
    Bool(bool),
    DType(DType),
    NoneValue,
    Load(Var),
    /// The closure that is running (a nested named function naming itself).
    SelfFn,
    /// `[k: v, …]` (spec §10.2): entries evaluated in order, key first.
    Dict(Box<[(Expr, Expr)]>),
    List(Vec<Expr>),
    /// A tuple of one element or more (`()` is `Unit`).
    Tuple(Box<[Expr]>),
    /// A list literal where an `Arr` is expected (spec §10.3): always an
    /// Arr, never a tensor.
    ArrList(Box<[Expr]>),
    /// The value, checked to be a tuple of this many elements: the head of
    /// a destructuring declaration.
    Destructure(Box<Expr>, u32),
    /// A call with keyword arguments (spec §10.5).
    CallKw(Box<CallKw>),
    /// The first statements of a function with defaults: when the
    /// argument in this local was not given, its default.
    DefaultArg(Box<DefaultArg>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// A call of the function held in a global slot (named top-level functions).
    CallGlobal(u32, Box<[Expr]>),
    Call(Box<Expr>, Box<[Expr]>),
    Builtin(Builtin, Args),
    Method(Box<MethodCall>),
    /// A method that mutates its receiver in place (`a.push(v)` on a `var`).
    MutMethod(Box<MutMethod>),
    Field(Box<Expr>, Member),
    Index(Box<Expr>, Box<[IndexItem]>),
    Try(Box<Expr>),
    /// `e?` at top level (spec §10.6): an `Err(x)` or `None` ends the
    /// program with the runtime error `x` (or `None`) at the `?`.
    TryTop(Box<Expr>),
    If(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
    While(Box<Expr>, Box<Expr>),
    For {
        slot: u32,
        iter: Box<Expr>,
        body: Box<Expr>,
    },
    Match(Box<Expr>, Box<[MatchArm]>),
    Block(Vec<Stmt>),
    Closure {
        func: Rc<Function>,
        captures: Box<[Capture]>,
    },
    /// A struct literal's field values in the definition's order, each
    /// with the declared type it is checked against while running (an Int
    /// made an F64) where the checker could not tell that it has it.
    StructLit {
        def: Rc<StructDef>,
        fields: Box<[(Expr, Option<RtType>)]>,
    },
    /// The checker's claim that the expression is a tensor of this dtype,
    /// verified when the program runs (only when cross-checking).
    AssertDtype(Box<Expr>, DType),
}

/// One step of an assignment target after its root variable: `a[i].f = v`.
#[derive(Debug)]
pub enum PathElem {
    Index(Vec<IndexItem>, Span),
    Field(Member, Span),
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
        check: Option<Box<RtType>>,
    },
    Assign(Box<Assign>),
    Return(Option<Expr>, Span),
    Break,
    Continue,
}

#[derive(Debug)]
pub struct Function {
    pub name: Rc<str>,
    pub params: Vec<(Rc<str>, Option<RtType>)>,
    /// The parameters before the first with a default: a call gives at
    /// least these.
    pub required: u32,
    pub ret: Option<RtType>,
    /// Frame size: parameters first, then every other local.
    pub num_locals: u32,
    pub body: Expr,
    pub span: Span,
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
    /// Every symbol interned so far, indexed by [`Sym`], for messages.
    pub symbols: Vec<Rc<str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node sizes a long program's memory rests on (see [`Expr`]).
    #[test]
    fn node_sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<ExprKind>(), 32);
        assert_eq!(size_of::<Expr>(), 48);
        assert!(size_of::<Stmt>() <= 72, "{}", size_of::<Stmt>());
        assert!(size_of::<IndexItem>() <= 48, "{}", size_of::<IndexItem>());
    }
}
