//! The tree-walking evaluator over the HIR. Locals live in one value stack
//! addressed by frame base + slot, captures in the running closure, globals
//! in a vector: no name is looked up while running. Control flow (`break`,
//! `continue`, `return`, errors) travels as the `Err` side of `Result`.
//!
//! Invariant: nothing here panics on any program; every failure is a
//! `RuntimeError` with the span of the expression that failed.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use smallvec::SmallVec;
use std::collections::HashMap;
use std::rc::Rc;

use twill_check::builtins::{HostMethod, MethodRef};
use twill_check::hir::{self, Capture, ExprKind as H, Member, Module, PathElem, Pattern, Stmt, Sym, Var};
use twill_check::text::Text;
use twill_check::RtType;
use twill_host::Host;
use twill_syntax::ast::BinOp;
use twill_syntax::Span;
use twill_tensor::Tensor;

use crate::autodiff::binary_values;
use crate::bridge::{collect_leaves, tensor_value, terr, Lit};
use crate::builtins::{self, ArgSpans};
use crate::code::{self, Code, Op, NONE};
pub use crate::error::RuntimeError;
use crate::error::{fail, fail_as, fail_with, Ctrl, Cx, ErrorKind, R};
use crate::ops;
use crate::value::{Closure, DictKey, IndexKey, RangeVal, StructVal, Value};

/// Stack a call must leave free; below it, recursion is reported as a stack
/// overflow instead of crashing the process.
const STACK_RESERVE: usize = 512 * 1024;

/// The address below which a call reports a stack overflow: the native
/// stack's limit on this thread plus [`STACK_RESERVE`] (0 where the limit
/// is unknown). Computed once, when the interpreter is made: it cannot
/// leave its thread (it holds `Rc`s), and nothing here switches stacks, so
/// a call compares the address of one of its locals with it instead of
/// asking `stacker` for the thread's limit on every call.
fn stack_floor() -> usize {
    let here = 0u8;
    let sp = std::ptr::addr_of!(here) as usize;
    stacker::remaining_stack().map_or(0, |r| sp.saturating_sub(r).saturating_add(STACK_RESERVE))
}

/// Deepest call nesting allowed. Spec §7 asks for at least 10,000 and the
/// project promises 100,000; the cap keeps runaway recursion from touching
/// gigabytes of stack before it is reported.
pub const MAX_CALL_DEPTH: usize = 200_000;

/// What the running code can see of its function: where its locals start,
/// what its closure captured, and the closure itself.
#[derive(Clone, Copy)]
pub(crate) struct Frame<'a> {
    pub base: usize,
    pub captures: &'a [Value],
    pub this: Option<&'a Rc<Closure>>,
}

pub struct Interp {
    pub(crate) globals: Vec<Value>,
    pub(crate) global_names: Vec<Rc<str>>,
    /// The checker's interned names, for messages.
    pub(crate) symbols: Rc<Vec<Rc<str>>>,
    pub(crate) stack: Vec<Value>,
    /// Everything outside: files, output, arguments, the clock.
    pub(crate) host: Box<dyn Host>,
    pub(crate) depth: usize,
    /// The lowest address a call's frame may have (see [`stack_floor`]).
    stack_floor: usize,
    /// Whether functions run compiled (`code`) or on the tree walker.
    compiled: bool,
    /// Each function compiled so far, with the function (kept alive, so
    /// the code's pointers into its HIR stay valid)...
    codes: Vec<(Rc<hir::Function>, Rc<Code>)>,
    /// ... and its index there, by the function's address.
    code_index: HashMap<*const hir::Function, u32>,
    /// The program's random generator (spec §11.5): the state of a
    /// SplitMix64 stream, 0 at the start (and once per REPL session),
    /// set by `seed(n)`. A random constructor called without `seed=`
    /// takes the stream's next number as its seed.
    rng: u64,
    /// One empty Arr every `[]` of the compiled engine shares (copied on
    /// write like any Arr), so making one allocates nothing.
    empty_arr: Rc<Vec<Value>>,
    /// The one-character Strs of ASCII, shared (copied on write), so a
    /// loop over a Str allocates nothing per character; made by the first
    /// such loop, so a program without one does not pay for them.
    ascii: Vec<Rc<Text>>,
    /// The iterable the last `progress` call marked, until a `for` loop
    /// starts (spec §12.2); only ever set when the host draws bars.
    progress: Option<Pending>,
}

/// A progress bar waiting for its loop.
pub(crate) struct Pending {
    it: Value,
    total: Option<u64>,
    label: String,
}

/// Which engine runs a program's code (spec §15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The register bytecode of `code`: the default.
    #[default]
    Compiled,
    /// The tree walker, the reference the compiled engine must agree with.
    Tree,
}

/// An evaluated assignment-path step.
pub(crate) enum Key {
    Index(Value, Span),
    Field(Member, Span),
    /// `a[i:j:k]`, the last step of an assignment (spec §10.7).
    Slice(Box<[Option<(Value, Span)>; 3]>, Span),
    /// A subscript of several items, or of `...`: only a tensor takes it
    /// (spec §11.2).
    Sub(Vec<IndexKey>, Span),
}

impl Interp {
    pub fn new(host: Box<dyn Host>) -> Interp {
        Interp {
            globals: Vec::new(),
            global_names: Vec::new(),
            symbols: Rc::new(Vec::new()),
            stack: Vec::with_capacity(1024),
            host,
            depth: 0,
            stack_floor: stack_floor(),
            compiled: true,
            codes: Vec::new(),
            code_index: HashMap::new(),
            rng: 0,
            empty_arr: Rc::new(Vec::new()),
            ascii: Vec::new(),
            progress: None,
        }
    }

    /// The host back, the interpreter and everything it defined dropped
    /// (the REPL's `:reset` starts a new one on it).
    pub fn into_host(self) -> Box<dyn Host> {
        self.host
    }

    /// Sets a global slot (the REPL's `_`), growing the table to it.
    pub fn set_global(&mut self, slot: usize, v: Value) {
        if self.globals.len() <= slot {
            self.globals.resize_with(slot + 1, || Value::Undefined);
        }
        if let Some(g) = self.globals.get_mut(slot) {
            *g = v;
        }
    }

    /// The value in a global slot (the REPL's `:vars`).
    pub fn global(&self, slot: usize) -> Option<&Value> {
        self.globals.get(slot)
    }

    /// Chooses the engine for everything run from now on.
    pub fn set_engine(&mut self, engine: Engine) {
        self.compiled = engine == Engine::Compiled;
    }

    pub fn flush(&mut self) {
        let _ = self.host.stdout().flush();
    }

    /// The host the program runs against (the session reads its sources
    /// and writes the REPL's values through it).
    pub fn host(&mut self) -> &mut dyn Host {
        &mut *self.host
    }

    /// Runs a checked module. Returns the value of its last statement when
    /// that is an expression (for the REPL).
    pub fn run(&mut self, m: &Module, global_names: &[Rc<str>]) -> Result<Option<Value>, RuntimeError> {
        if self.globals.len() < m.num_globals as usize {
            self.globals.resize(m.num_globals as usize, Value::Undefined);
        }
        self.global_names = global_names.to_vec();
        self.symbols = Rc::new(m.symbols.clone());
        for (slot, func) in &m.hoisted {
            if let Some(g) = self.globals.get_mut(*slot as usize) {
                *g = Value::Func(Rc::new(Closure::new(func.clone(), Vec::new())));
            }
        }
        let base = self.stack.len();
        // The main body runs once: compiled for this run, not cached.
        let code = self
            .compiled
            .then(|| code::compile(&m.main.body, m.main.num_locals));
        let size = code.as_ref().map_or(m.main.num_locals, |c| c.frame);
        // The frame, then a slot for the compiled body's value.
        let out = base + size as usize;
        self.stack.resize(out + 1, Value::Unit);
        let frame = Frame {
            base,
            captures: &[],
            this: None,
        };
        let r = match &code {
            Some(c) => self.run_code(c, frame, out).map(|()| take(&mut self.stack[out])),
            None => self.eval(&m.main.body, frame),
        };
        self.stack.truncate(base);
        self.flush();
        match r {
            Ok(v) => Ok(if m.ends_with_expr { Some(v) } else { None }),
            Err(c) => match *c {
                Ctrl::Error(e) => Err(e),
                Ctrl::Return(_) | Ctrl::Break | Ctrl::Continue => Ok(None),
            },
        }
    }

    /// Calls the global function `name`, defined by a module this
    /// interpreter has already run (the standard library, say), with
    /// argument values made in Rust, exactly as a call from twill would
    /// (parameter and return annotations are checked). For tests and
    /// embedders; errors carry an empty span at offset 0.
    pub fn call_global(&mut self, name: &str, args: Vec<Value>) -> Result<Value, RuntimeError> {
        let span = Span::default();
        let callee = self
            .global_names
            .iter()
            .position(|n| &**n == name)
            .and_then(|slot| self.globals.get(slot))
            .filter(|v| !matches!(v, Value::Undefined))
            .cloned();
        let Some(callee) = callee else {
            return Err(RuntimeError {
                kind: ErrorKind::Invalid,
                message: format!("no global `{name}` has been defined"),
                span,
                notes: Vec::new(),
                help: None,
                frames: Vec::new(),
            });
        };
        let r = self.call_with(&callee, args, span);
        self.flush();
        match r {
            Ok(v) => Ok(v),
            Err(c) => match *c {
                Ctrl::Return(v) => Ok(v),
                Ctrl::Error(e) => Err(e),
                // A function body never lets `break` or `continue` escape.
                Ctrl::Break | Ctrl::Continue => Ok(Value::Unit),
            },
        }
    }

    fn load(&self, var: Var, f: Frame, span: Span) -> R<Value> {
        match var {
            Var::Local(s) => Ok(self.stack[f.base + s as usize].clone()),
            Var::Capture(i) => Ok(f.captures.get(i as usize).cloned().unwrap_or(Value::Unit)),
            Var::Global(g) => match self.globals.get(g as usize) {
                Some(Value::Undefined) | None => {
                    let name = self
                        .global_names
                        .get(g as usize)
                        .map(|n| n.to_string())
                        .unwrap_or_default();
                    fail(span, format!("`{name}` is used before its definition has run"))
                }
                Some(v) => Ok(v.clone()),
            },
        }
    }

    fn place<'s>(&'s mut self, var: Var, f: Frame) -> Option<&'s mut Value> {
        match var {
            Var::Local(s) => self.stack.get_mut(f.base + s as usize),
            Var::Global(g) => self.globals.get_mut(g as usize),
            Var::Capture(_) => None,
        }
    }

    // The hot kinds are matched here and every other kind goes to
    // `eval_cold`: the wildcard is the split, not a forgotten case.
    #[allow(clippy::wildcard_enum_match_arm)]
    pub(crate) fn eval(&mut self, e: &hir::Expr, f: Frame) -> R<Value> {
        match &e.kind {
            H::Load(Var::Local(s)) => Ok(self.stack[f.base + *s as usize].clone()),
            H::Load(Var::Global(g)) => match self.globals.get(*g as usize) {
                Some(Value::Undefined) | None => self.load(Var::Global(*g), f, e.span),
                Some(v) => Ok(v.clone()),
            },
            H::Int(i) => Ok(Value::Int(*i)),
            H::Binary(op, a, b) => {
                let x = self.operand(a, f)?;
                let y = self.operand(b, f)?;
                binary(*op, x, y, e.span)
            }
            H::If(c, t, o) => {
                let cond = match self.operand(c, f)? {
                    Value::Bool(b) => b,
                    other => return not_bool(&other, "an `if` condition", c.span),
                };
                if cond {
                    self.eval(t, f)
                } else if let Some(o) = o {
                    self.eval(o, f)
                } else {
                    Ok(Value::Unit)
                }
            }
            H::Block(stmts) => self.block(stmts, f),
            H::CallGlobal(slot, args) => {
                let callee = self.load(Var::Global(*slot), f, e.span)?;
                self.call_value(&callee, args, f, e.span)
            }
            H::Call(callee, args) => {
                let c = self.eval(callee, f)?;
                self.call_value(&c, args, f, e.span)
            }
            _ => self.eval_cold(e, f),
        }
    }

    /// Evaluates an operand, fetching leaves (variables and literals)
    /// directly instead of recursing into `eval`: they are half of all
    /// evaluations in arithmetic code.
    #[inline(always)]
    #[allow(clippy::wildcard_enum_match_arm)] // leaves here, the rest through `eval`
    fn operand(&mut self, e: &hir::Expr, f: Frame) -> R<Value> {
        match &e.kind {
            H::Load(Var::Local(s)) => Ok(fast_clone(&self.stack[f.base + *s as usize])),
            H::Load(Var::Global(g)) => match self.globals.get(*g as usize) {
                Some(Value::Undefined) | None => self.load(Var::Global(*g), f, e.span),
                Some(v) => Ok(fast_clone(v)),
            },
            H::Int(i) => Ok(Value::Int(*i)),
            H::Float(x) => Ok(Value::F64(*x)),
            _ => self.eval(e, f),
        }
    }

    /// The less frequent expression kinds, kept out of `eval` so that the
    /// hot function's stack frame stays small (deep recursion and call
    /// overhead both depend on it).
    #[inline(never)]
    fn eval_cold(&mut self, e: &hir::Expr, f: Frame) -> R<Value> {
        match &e.kind {
            // Handled by `eval` itself; listed so the match stays exhaustive.
            H::Int(_) | H::Binary(..) | H::If(..) | H::Block(_) | H::CallGlobal(..) | H::Call(..) => {
                self.eval(e, f)
            }
            H::Load(v) => self.load(*v, f, e.span),
            H::Unit => Ok(Value::Unit),
            H::Float(x) => Ok(Value::F64(*x)),
            H::Str(s) => Ok(Value::Str(s.clone())),
            H::Bool(b) => Ok(Value::Bool(*b)),
            H::DType(d) => Ok(Value::DType(*d)),
            H::NoneValue => Ok(Value::None),
            H::SelfFn => Ok(f.this.map(|c| Value::Func(c.clone())).unwrap_or(Value::Unit)),
            H::List(items) => self.eval_list(items, f, e.span),
            H::Tuple(items) => {
                let mut vs = Vec::with_capacity(items.len());
                for it in items.iter() {
                    vs.push(self.eval(it, f)?);
                }
                Ok(Value::Tuple(Rc::new(vs)))
            }
            H::ArrList(items) => {
                let mut vs = Vec::with_capacity(items.len());
                for it in items.iter() {
                    vs.push(self.eval(it, f)?);
                }
                Ok(Value::Arr(Rc::new(vs)))
            }
            H::CallKw(k) => self.call_kw(k, f, e.span),
            H::DefaultArg(d) => self.default_arg(d, f),
            H::Destructure(value, n) => {
                let v = self.eval(value, f)?;
                match &v {
                    Value::Tuple(items) if items.len() == *n as usize => Ok(v),
                    Value::Unit if *n == 0 => Ok(v),
                    other => fail(
                        e.span,
                        format!(
                            "this pattern is a tuple of {n}, but the value is `{}`",
                            other.type_name()
                        ),
                    ),
                }
            }
            H::Dict(entries) => {
                let mut d = crate::value::DictVal::default();
                for (k, v) in entries.iter() {
                    let key = self.eval(k, f)?;
                    let key = DictKey::of(&key).or_else(|m| fail(k.span, m))?;
                    let value = self.eval(v, f)?;
                    d.insert(key, value).or_else(|m| fail(e.span, m))?;
                }
                Ok(Value::Dict(Rc::new(d)))
            }
            H::Neg(a) => match self.eval(a, f)? {
                Value::Int(i) => match i.checked_neg() {
                    Some(n) => Ok(Value::Int(n)),
                    None => fail_as(
                        ErrorKind::Overflow,
                        e.span,
                        format!("Int overflow: -({i}) does not fit in 64 bits"),
                    ),
                },
                Value::F64(x) => Ok(Value::F64(-x)),
                t @ (Value::Tensor(_) | Value::Tracked(_)) => {
                    crate::autodiff::op(twill_tensor::ops::Op::Neg, &[Some(t)])
                        .or_else(|err| fail_as(ErrorKind::Tensor, e.span, err.message))
                }
                other => fail(e.span, format!("cannot negate a `{}`", other.type_name())),
            },
            H::Not(a) => Ok(Value::Bool(!self.truth(a, f, "the operand of `not`")?)),
            H::And(a, b) => Ok(Value::Bool(
                self.truth(a, f, "the operand of `and`")? && self.truth(b, f, "the operand of `and`")?,
            )),
            H::Or(a, b) => Ok(Value::Bool(
                self.truth(a, f, "the operand of `or`")? || self.truth(b, f, "the operand of `or`")?,
            )),
            H::Builtin(b, args) => {
                let slots = self.eval_slots(args, f)?;
                builtins::call_builtin(self, *b, slots, ArgSpans(args), e.span)
            }
            H::Method(m) => {
                let r = self.eval(&m.receiver, f)?;
                let slots = self.eval_slots(&m.args, f)?;
                builtins::call_method(self, r, m.method, m.sym, slots, ArgSpans(&m.args), e.span)
            }
            H::MutMethod(m) => self.mut_method(m, f, e.span),
            H::Field(base, member) => {
                let b = self.eval(base, f)?;
                builtins::field(self, &b, *member, e.span)
            }
            H::Index(base, items) => {
                let b = self.eval(base, f)?;
                let keys = self.index_keys(items, f)?;
                builtins::index(&b, &keys, e.span)
            }
            H::TryTop(inner) => match self.eval(inner, f)? {
                Value::Ok(v) | Value::Some(v) => Ok((*v).clone()),
                Value::Err(x) => fail(e.span, crate::print::display(&x)),
                Value::None => fail(e.span, "None"),
                other => fail(
                    e.span,
                    format!("`?` needs a `Res` or `Opt`, not `{}`", other.type_name()),
                ),
            },
            H::Try(inner) => match self.eval(inner, f)? {
                Value::Ok(v) | Value::Some(v) => Ok((*v).clone()),
                err @ (Value::Err(_) | Value::None) => Err(Box::new(Ctrl::Return(err))),
                other => fail(
                    e.span,
                    format!("`?` needs a `Res` or `Opt`, not `{}`", other.type_name()),
                ),
            },
            H::While(c, body) => {
                while self.truth(c, f, "a `while` condition")? {
                    poll_interrupt(body.span)?;
                    match self.eval(body, f) {
                        Ok(_) => {}
                        Err(c) if matches!(*c, Ctrl::Continue) => {}
                        Err(c) if matches!(*c, Ctrl::Break) => break,
                        Err(other) => return Err(other),
                    }
                }
                Ok(Value::Unit)
            }
            H::For { slot, iter, body } => self.for_loop(*slot, iter, body, f),
            H::Match(s, arms) => {
                let v = self.eval(s, f)?;
                for arm in arms {
                    if self.bind(&arm.pattern, &v, f) {
                        return self.eval(&arm.body, f);
                    }
                }
                // Point at the value matched, not the whole (multi-line) match.
                fail(
                    s.span,
                    format!("no `match` arm matches the value {}", crate::print::repr(&v)),
                )
            }
            H::Closure { func, captures } => {
                let mut vals = Vec::with_capacity(captures.len());
                for c in captures {
                    vals.push(match c {
                        Capture::Var(v) => self.load(*v, f, e.span)?,
                        Capture::SelfFn => f.this.map(|c| Value::Func(c.clone())).unwrap_or(Value::Unit),
                    });
                }
                Ok(Value::Func(Rc::new(Closure::new(func.clone(), vals))))
            }
            H::AssertDtype(inner, d) => {
                let v = self.eval(inner, f)?;
                match &v {
                    Value::Tensor(t) if t.dtype() != *d => fail(
                        inner.span,
                        format!(
                            "internal error: the checker says this is Tensor[{d}] but it is Tensor[{}] (a bug in twill)",
                            t.dtype()
                        ),
                    ),
                    _ => Ok(v),
                }
            }
            H::StructLit { def, fields } => {
                let mut vals = Vec::with_capacity(fields.len());
                for (i, (it, check)) in fields.iter().enumerate() {
                    let v = self.eval(it, f)?;
                    let v = match check {
                        Some(rt) => conform(v, rt).or_else(|(want, got)| {
                            let name = def.fields.get(i).map_or("?", |n| &**n);
                            fail(
                                it.span,
                                format!("field `{name}` is `{want}` but this value is `{got}`"),
                            )
                        })?,
                        None => v,
                    };
                    vals.push(v);
                }
                Ok(Value::Struct(Rc::new(StructVal {
                    def: def.clone(),
                    fields: vals,
                })))
            }
        }
    }

    #[inline(never)]
    fn truth(&mut self, e: &hir::Expr, f: Frame, what: &str) -> R<bool> {
        let v = self.operand(e, f)?;
        truth_of(v, what, e.span)
    }

    #[inline(never)]
    fn block(&mut self, stmts: &[Stmt], f: Frame) -> R<Value> {
        let n = stmts.len();
        for (i, s) in stmts.iter().enumerate() {
            match s {
                Stmt::Expr(e) => {
                    let v = self.eval(e, f)?;
                    if i + 1 == n {
                        return Ok(v);
                    }
                }
                Stmt::Let { var, value, check } => {
                    let mut v = self.eval(value, f)?;
                    if let Some(rt) = check {
                        v = conform(v, rt).or_else(|(want, got)| {
                            fail(
                                value.span,
                                format!("this value is `{got}` but the annotation says `{want}`"),
                            )
                        })?;
                    }
                    if let Some(p) = self.place(*var, f) {
                        *p = v;
                    }
                }
                Stmt::Assign(a) if a.path.is_empty() && a.check.is_none() => {
                    let v = self.operand(&a.value, f)?;
                    self.assign_simple(a.root, a.op, v, a.span, f)?;
                }
                Stmt::Assign(a) => {
                    self.assign(a.root, &a.path, a.op, &a.value, a.span, a.check.as_ref(), f)?
                }
                Stmt::Return(e, _) => {
                    let v = match e {
                        Some(e) => self.eval(e, f)?,
                        None => Value::Unit,
                    };
                    return Err(Box::new(Ctrl::Return(v)));
                }
                Stmt::Break => return Err(Box::new(Ctrl::Break)),
                Stmt::Continue => return Err(Box::new(Ctrl::Continue)),
            }
        }
        Ok(Value::Unit)
    }

    /// `root = v`, or `root op= v`, for a variable with no path and no
    /// annotation to check; both engines assign through here.
    #[inline(always)]
    pub(crate) fn assign_simple(
        &mut self,
        root: Var,
        op: Option<BinOp>,
        v: Value,
        span: Span,
        f: Frame,
    ) -> R<()> {
        let mut v = v;
        // `s += t` on a Str appends in place when the string is not shared
        // (copy on write otherwise), so a loop that builds a string is
        // linear, not quadratic.
        if let (Some(BinOp::Add), Value::Str(tail)) = (op, &v) {
            if let Some(Value::Str(head)) = self.place(root, f) {
                if let Some(h) = Rc::get_mut(head) {
                    let total = h.len() + tail.len();
                    crate::ops::reserve_text(h, total).or_else(|m| fail_with(span, m))?;
                    h.push_text(tail);
                    return Ok(());
                }
            }
        }
        if let Some(op) = op {
            let cur = self.load(root, f, span)?;
            v = match (&cur, &v, op) {
                (Value::Int(a), Value::Int(b), BinOp::Add) if a.checked_add(*b).is_some() => {
                    Value::Int(a + b)
                }
                _ => binary_values(op, &cur, &v).or_else(|m| fail_with(span, m))?,
            };
        }
        if let Some(p) = self.place(root, f) {
            *p = v;
        }
        Ok(())
    }

    // ------------------------------------------------------------- calls

    #[inline(never)]
    pub(crate) fn call_value(
        &mut self,
        callee: &Value,
        args: &[hir::Expr],
        f: Frame,
        span: Span,
    ) -> R<Value> {
        let c = callee_of(callee, args.len(), span)?;
        let out = self.stack.len();
        self.stack.push(Value::Unit);
        for a in args {
            match self.operand(a, f) {
                Ok(v) => self.stack.push(v),
                Err(e) => {
                    self.stack.truncate(out);
                    return Err(e);
                }
            }
        }
        for _ in args.len()..c.func.params.len() {
            self.stack.push(Value::Undefined);
        }
        self.enter_pushed(c, out, span)
    }

    /// A call with keyword arguments (spec §10.5): the arguments are
    /// evaluated in the order written, then bound to the parameters by
    /// position and by name; one not given is left for its default.
    fn call_kw(&mut self, k: &hir::CallKw, f: Frame, span: Span) -> R<Value> {
        let callee = self.eval(&k.callee, f)?;
        let mut pos = Vec::with_capacity(k.args.len());
        for a in k.args.iter() {
            pos.push(self.eval(a, f)?);
        }
        let mut named = Vec::with_capacity(k.keywords.len());
        for (name, nspan, e) in k.keywords.iter() {
            named.push((name, *nspan, self.eval(e, f)?));
        }
        let Value::Func(c) = &callee else {
            return fail(span, not_callable(&callee));
        };
        let func = &c.func;
        if pos.len() > func.params.len() {
            return fail(span, arity_message(func, pos.len()));
        }
        let mut args = pos;
        args.resize(func.params.len(), Value::Undefined);
        for (name, nspan, v) in named {
            let Some(i) = func.params.iter().position(|(p, _)| p == name) else {
                let names: Vec<&str> = func.params.iter().map(|(p, _)| &**p).collect();
                return fail(
                    nspan,
                    format!(
                        "`{}` has no parameter `{name}` (its parameters are: {})",
                        func.name,
                        names.join(", ")
                    ),
                );
            };
            if !matches!(args[i], Value::Undefined) {
                return fail(
                    nspan,
                    format!("argument `{name}` of `{}` is given twice", func.name),
                );
            }
            args[i] = v;
        }
        let missing: Vec<String> = (0..func.required as usize)
            .filter(|&i| matches!(args[i], Value::Undefined))
            .map(|i| format!("`{}`", func.params[i].0))
            .collect();
        if !missing.is_empty() {
            return fail(
                span,
                format!(
                    "missing argument{} {} of `{}`",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    func.name
                ),
            );
        }
        let c = c.clone();
        let out = self.stack.len();
        self.stack.push(Value::Unit);
        self.stack.extend(args);
        self.enter_pushed(&c, out, span)
    }

    /// Fills a missing argument with its default (the prologue of a
    /// function with defaults): evaluated in the callee's frame, checked
    /// against the parameter's annotation.
    fn default_arg(&mut self, d: &hir::DefaultArg, f: Frame) -> R<Value> {
        let at = f.base + d.slot as usize;
        if !matches!(self.stack.get(at), Some(Value::Undefined)) {
            return Ok(Value::Unit);
        }
        let mut v = self.eval(&d.value, f)?;
        if let Some(rt) = &d.check {
            v = conform(v, rt).or_else(|(want, got)| {
                fail(
                    d.value.span,
                    format!("this default is `{got}` but the parameter is `{want}`"),
                )
            })?;
        }
        if let Some(p) = self.stack.get_mut(at) {
            *p = v;
        }
        Ok(Value::Unit)
    }

    /// Calls a function value with already-evaluated arguments (for
    /// builtins that take functions).
    pub(crate) fn call_with(&mut self, callee: &Value, args: Vec<Value>, span: Span) -> R<Value> {
        let c = callee_of(callee, args.len(), span)?;
        let out = self.stack.len();
        self.stack.push(Value::Unit);
        let n = args.len();
        self.stack.extend(args);
        for _ in n..c.func.params.len() {
            self.stack.push(Value::Undefined);
        }
        self.enter_pushed(c, out, span)
    }

    /// Runs a closure whose arguments are on the stack from `base`. A call
    /// pushed above the caller's frame has `keep == base` (and its caller
    /// shortens the stack afterwards); the compiled engine's call runs the
    /// callee in the caller's register window (its arguments are the
    /// caller's last live registers, and its frame starts at the first of
    /// them), with `keep` the end of the caller's frame. Nothing above
    /// `keep` is live during the call; the stack is at least `keep` long
    /// afterwards, and what the callee's frame holds is released, its
    /// result in `out` excepted (`drop_above`).
    fn enter(&mut self, c: &Rc<Closure>, base: usize, keep: usize, span: Span, out: usize) -> R<()> {
        if let Some(stop) = crate::interrupt::take() {
            self.stack.truncate(keep);
            return stopped(stop, span);
        }
        let here = 0u8;
        if self.depth >= MAX_CALL_DEPTH || (std::ptr::addr_of!(here) as usize) < self.stack_floor {
            self.stack.truncate(keep);
            return Err(Box::new(Ctrl::Error(RuntimeError {
                kind: ErrorKind::StackOverflow,
                message: format!(
                    "stack overflow: recursion is too deep ({} nested calls)",
                    self.depth
                ),
                span,
                notes: vec![
                    "up to 200,000 nested calls are supported; this looks like runaway recursion".into(),
                ],
                help: None,
                frames: Vec::new(),
            })));
        }
        let func = &c.func;
        for (i, (name, check)) in func.params.iter().enumerate() {
            if let Some(rt) = check {
                let arg = &self.stack[base + i];
                // A missing argument: its default is checked when filled.
                if already_conforms(arg, rt) || matches!(arg, Value::Undefined) {
                    continue;
                }
                let v = take(&mut self.stack[base + i]);
                match conform(v, rt) {
                    Ok(v) => store(&mut self.stack[base + i], v),
                    Err((want, got)) => {
                        self.stack.truncate(keep);
                        return fail(
                            span,
                            format!(
                                "argument `{name}` of `{}` must be `{want}`, not `{got}`",
                                func.name
                            ),
                        );
                    }
                }
            }
        }
        let code = self.code_of(c);
        let size = code.as_ref().map_or(func.num_locals, |k| k.frame);
        // In a register window the callee's locals start as Unit, as they
        // do above the stack.
        let end = base + size as usize;
        let len = self.stack.len();
        if let Some(slots) = self
            .stack
            .get_mut((base + func.params.len()).min(len)..end.min(len))
        {
            for slot in slots {
                store(slot, Value::Unit);
            }
        }
        if self.stack.len() < end {
            // `resize_with`, not `resize`: cloning `Value::Unit` into each
            // slot went through `Value::clone`, a fifth of a call's cost.
            self.stack.resize_with(end, || Value::Unit);
        }
        self.depth += 1;
        let frame = Frame {
            base,
            captures: &c.captures,
            this: Some(c),
        };
        let r = match &code {
            Some(k) => self.run_code(k, frame, out),
            None => self
                .eval(&func.body, frame)
                .map(|v| store(&mut self.stack[out], v)),
        };
        self.depth -= 1;
        drop_above(&mut self.stack, base.min(keep), end, out);
        if let Err(mut c) = r {
            if let Ctrl::Error(e) = &mut *c {
                // The call stack (spec §10.9), innermost call first.
                e.frames.push((func.name.clone(), span));
            }
            match *c {
                Ctrl::Return(v) => store(&mut self.stack[out], v),
                other => return Err(Box::new(other)),
            }
        }
        match &func.ret {
            Some(rt) if !already_conforms(&self.stack[out], rt) => {
                let v = take(&mut self.stack[out]);
                match conform(v, rt) {
                    Ok(v) => {
                        store(&mut self.stack[out], v);
                        Ok(())
                    }
                    Err((want, got)) => fail(
                        span,
                        format!(
                            "`{}` returned a `{got}` but is declared to return `{want}`",
                            func.name
                        ),
                    ),
                }
            }
            _ => Ok(()),
        }
    }

    /// Calls `c` with its arguments pushed on the stack from `out + 1`,
    /// above a slot at `out` pushed for its result; the stack is `out`
    /// long again afterwards.
    fn enter_pushed(&mut self, c: &Rc<Closure>, out: usize, span: Span) -> R<Value> {
        let r = self.enter(c, out + 1, out + 1, span, out);
        let v = take(&mut self.stack[out]);
        self.stack.truncate(out);
        r.map(|()| v)
    }

    /// The compiled body of `c`'s function under the compiled engine:
    /// from the closure, else from the cache, else compiled now.
    fn code_of(&mut self, c: &Rc<Closure>) -> Option<Rc<Code>> {
        if !self.compiled {
            return None;
        }
        if let Some((_, k)) = self.codes.get(c.code.get() as usize) {
            return Some(k.clone());
        }
        let key = Rc::as_ptr(&c.func);
        let i = match self.code_index.get(&key) {
            Some(&i) => i,
            None => {
                let k = Rc::new(code::compile(&c.func.body, c.func.num_locals));
                let i = u32::try_from(self.codes.len()).unwrap_or(u32::MAX);
                self.codes.push((c.func.clone(), k));
                self.code_index.insert(key, i);
                i
            }
        };
        c.code.set(i);
        self.codes.get(i as usize).map(|(_, k)| k.clone())
    }

    /// `dst = a op b` for one of the per-operator instructions (`op` is a
    /// constant at each call, so the Int and F64 cases fold to the one
    /// operation); `b` indexes `consts` when `k`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn arith(
        &mut self,
        code: &Code,
        base: usize,
        op: BinOp,
        dst: u32,
        a: u32,
        b: u32,
        k: bool,
        s: u32,
    ) -> R<()> {
        let x = &self.stack[base + a as usize];
        let y = if k {
            code.consts.get(b as usize).unwrap_or(&Value::Unit)
        } else {
            &self.stack[base + b as usize]
        };
        // Each arm stores its own result: merged into one `Value` first,
        // the result goes through memory.
        match number_fast(op, x, y) {
            Some(v) => store(&mut self.stack[base + dst as usize], v),
            None => {
                let span = code.spans.get(s as usize).copied().unwrap_or_default();
                let v = binary_cold(op, x, y, span)?;
                store(&mut self.stack[base + dst as usize], v);
            }
        }
        Ok(())
    }

    /// Whether `a op b` holds, for the per-operator conditional jumps: a
    /// comparison of numbers inline, anything else as `JumpUnless` does.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn holds(
        &mut self,
        code: &Code,
        base: usize,
        op: BinOp,
        a: u32,
        b: u32,
        k: bool,
        what: code::Truth,
        s: u32,
    ) -> R<bool> {
        let x = &self.stack[base + a as usize];
        let y = if k {
            code.consts.get(b as usize).unwrap_or(&Value::Unit)
        } else {
            &self.stack[base + b as usize]
        };
        match number_fast(op, x, y) {
            Some(Value::Bool(h)) => Ok(h),
            _ => {
                let span = code.spans.get(s as usize).copied().unwrap_or_default();
                test_cold(op, x, y, what, span)
            }
        }
    }

    /// The `call_builtin` instruction (see `code::Op`), out of the
    /// instruction loop, whose registers its code would otherwise take.
    #[inline(never)]
    fn op_call_builtin(&mut self, code: &Code, base: usize, dst: u32, args: u32, e: u32) -> R<()> {
        let Some(&e) = code.exprs.get(e as usize) else {
            return Ok(());
        };
        // SAFETY: as for `ForOther`.
        let e = unsafe { &*e };
        let H::Builtin(b, hargs) = &e.kind else {
            return Ok(());
        };
        let at = base + args as usize;
        // `sqrt(x)` and the like of a number, in place.
        if hargs.slots == 1 && hargs.items.len() == 1 {
            if let Some(r) = builtins::unary_number(*b, &self.stack[at]) {
                let v = r.or_else(|x| fail_with(e.span, x))?;
                store(&mut self.stack[base + dst as usize], v);
                return Ok(());
            }
        }
        // A host builtin's arguments are positional and in
        // order: they move from their registers to its list.
        if let twill_check::builtins::Builtin::Host(h) = *b {
            if !b.keyword_only()
                && hargs.slots as usize == hargs.items.len()
                && hargs
                    .items
                    .iter()
                    .enumerate()
                    .all(|(k, (slot, _))| *slot as usize == k)
            {
                // Pushed one by one: a `collect` into the inline
                // vector was a tenth of a builtin-heavy loop.
                let mut argv = builtins::ArgVec::new();
                for k in 0..hargs.items.len() {
                    argv.push(take(&mut self.stack[at + k]));
                }
                let v = builtins::host_builtin(self, h, argv, e.span)?;
                store(&mut self.stack[base + dst as usize], v);
                return Ok(());
            }
        }
        let slots = self.take_slots(base + args as usize, hargs);
        let v = builtins::call_builtin(self, *b, slots, ArgSpans(hargs), e.span)?;
        store(&mut self.stack[base + dst as usize], v);
        Ok(())
    }

    /// `Len` of anything but an Arr, a Dict or a Str: the builtin's own
    /// answer (a tensor's first dimension) or error.
    #[inline(never)]
    fn len_other(&mut self, code: &Code, base: usize, dst: u32, src: u32, e: u32) -> R<()> {
        let Some(&e) = code.exprs.get(e as usize) else {
            return Ok(());
        };
        // SAFETY: as for `ForOther`.
        let e = unsafe { &*e };
        let mut argv = builtins::ArgVec::new();
        argv.push(fast_clone(&self.stack[base + src as usize]));
        let v = builtins::host_builtin(self, twill_check::builtins::HostFn::Len, argv, e.span)?;
        store(&mut self.stack[base + dst as usize], v);
        Ok(())
    }

    /// The value of field `members[m]` of `bv` for `Field` and
    /// `IndexField` (see `code::Op`) when it is not a struct field at the
    /// checker's offset: by name through the instruction's cache, or
    /// `builtins::field` (the other kinds, and the errors).
    #[inline(never)]
    fn field_value(&mut self, code: &Code, bv: &Value, m: u32, s: u32) -> R<Value> {
        let span = |i: u32| code.spans.get(i as usize).copied().unwrap_or_default();
        let member = code
            .members
            .get(m as usize)
            .copied()
            .unwrap_or(Member::Dynamic(Sym(0), None, None));
        let cached = |st: &StructVal| {
            let c = code.field_cache.get(m as usize)?.borrow();
            let (def, at) = c.as_ref()?;
            Rc::ptr_eq(def, &st.def).then_some(*at as usize)
        };
        let v = match (bv, member) {
            (Value::Struct(st), Member::Offset(i, _)) if (i as usize) < st.fields.len() => {
                fast_clone(&st.fields[i as usize])
            }
            (Value::Struct(st), Member::Dynamic(sym, ..)) => {
                let at = cached(st).or_else(|| {
                    let at = st.def.field_offset(sym)?;
                    if let Some(c) = code.field_cache.get(m as usize) {
                        *c.borrow_mut() = Some((st.def.clone(), at as u32));
                    }
                    Some(at)
                });
                match at.and_then(|i| st.fields.get(i)) {
                    Some(v) => fast_clone(v),
                    None => builtins::field(self, bv, member, span(s))?,
                }
            }
            _ => builtins::field(self, bv, member, span(s))?,
        };
        Ok(v)
    }

    /// `IndexField` (see `code::Op`) past its fast path: `Index`, then
    /// `Field` of the element, with their errors and spans.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn index_field(
        &mut self,
        code: &Code,
        base: usize,
        b: u32,
        idx: u32,
        ispan: u32,
        m: u32,
        s: u32,
    ) -> R<Value> {
        let (bv, iv) = (&self.stack[base + b as usize], &self.stack[base + idx as usize]);
        let elem = index_single(code, bv, iv, ispan + 1, ispan)?;
        self.field_value(code, &elem, m, s)
    }

    /// The `ForRange` instruction (see `code::Op`), out of the
    /// instruction loop: whether the loop is counted (else the range is
    /// in `it` for the general loop).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn op_for_range(
        &mut self,
        code: &Code,
        base: usize,
        args: u32,
        n: u32,
        it: u32,
        counter: u32,
        e: u32,
    ) -> R<bool> {
        let at = base + args as usize;
        let mut ints = [0i64; 3];
        let all_ints = n <= 3
            && self.stack.get(at..at + n as usize).is_some_and(|args| {
                args.iter().zip(&mut ints).all(|(a, i)| match a {
                    Value::Int(v) => {
                        *i = *v;
                        true
                    }
                    _ => false,
                })
            });
        let ints = all_ints
            .then(|| builtins::range_bounds(&ints[..n as usize]))
            .flatten()
            .filter(|&(_, _, step)| step != 0);
        let r = match ints {
            Some((start, stop, step)) if self.progress.is_none() => RangeVal { start, stop, step },
            _ => match self.range_value(code, at, n, e)? {
                Value::Range(r) if self.progress.is_none() => RangeVal { ..*r },
                v => {
                    // A bar waits: the general loop draws it (or, for the
                    // bar's own loop, consumes it).
                    store(&mut self.stack[base + it as usize], v);
                    return Ok(false);
                }
            },
        };
        let c = base + counter as usize;
        store(&mut self.stack[c], Value::Int(r.len() as i64));
        store(&mut self.stack[c + 1], Value::Int(r.start));
        store(&mut self.stack[c + 2], Value::Int(r.step));
        Ok(true)
    }

    /// The value of the `range` call `exprs[e]` whose `n` positional
    /// arguments are in `stack[at..at + n]`, made by the builtin (its
    /// conversions and its errors), for a `ForRange` whose arguments are
    /// not all Ints.
    #[cold]
    #[inline(never)]
    fn range_value(&mut self, code: &Code, at: usize, n: u32, e: u32) -> R<Value> {
        let span = code.exprs.get(e as usize).map_or(Span::default(), |&e| {
            // SAFETY: as for `ForOther`.
            unsafe { &*e }.span
        });
        let mut argv = builtins::ArgVec::new();
        for k in 0..n as usize {
            argv.push(take(&mut self.stack[at + k]));
        }
        builtins::host_builtin(self, twill_check::builtins::HostFn::Range, argv, span)
    }

    /// The `call_method` instruction (see `code::Op`), out of the
    /// instruction loop, whose registers its code would otherwise take.
    #[inline(never)]
    fn op_call_method(&mut self, code: &Code, base: usize, dst: u32, recv: u32, args: u32, e: u32) -> R<()> {
        let Some(&e) = code.exprs.get(e as usize) else {
            return Ok(());
        };
        // SAFETY: as for `ForOther`.
        let e = unsafe { &*e };
        let H::Method(m) = &e.kind else {
            return Ok(());
        };
        if let Some(v) = self.dict_lookup(base + recv as usize, base + args as usize, m) {
            store(&mut self.stack[base + dst as usize], v);
            return Ok(());
        }
        // A local receiver stays in its register (see `src_value`).
        let local = recv < code.locals;
        if let Some(v) = self.host_method(base + recv as usize, local, base + args as usize, m, e.span)? {
            store(&mut self.stack[base + dst as usize], v);
            return Ok(());
        }
        let r = src_value(&mut self.stack, code, base, recv);
        let slots = self.take_slots(base + args as usize, &m.args);
        let v = builtins::call_method(self, r, m.method, m.sym, slots, ArgSpans(&m.args), e.span)?;
        store(&mut self.stack[base + dst as usize], v);
        Ok(())
    }

    /// The `mut_method` instruction (see `code::Op`), out of the
    /// instruction loop, whose registers its code would otherwise take.
    #[inline(never)]
    fn op_mut_method(&mut self, code: &Code, base: usize, dst: u32, args: u32, e: u32) -> R<()> {
        let Some(&e) = code.exprs.get(e as usize) else {
            return Ok(());
        };
        // SAFETY: as for `ForOther`.
        let e = unsafe { &*e };
        let H::MutMethod(m) = &e.kind else {
            return Ok(());
        };
        let Var::Local(slot) = m.root else {
            return Ok(());
        };
        let at = base + args as usize;
        // `xs.push(v)` of a value of the declared element type, the common
        // case: in place, without the argument list and the method's
        // dispatch. Anything else (a value to convert or refuse, memory
        // that runs out) takes the general path below.
        if m.method == HostMethod::Push
            && m.args.len() == 1
            && m.check
                .as_ref()
                .is_none_or(|(i, rt)| *i != 0 || already_conforms(&self.stack[at], rt))
        {
            let v = take(&mut self.stack[at]);
            if let Value::Arr(rc) = &mut self.stack[base + slot as usize] {
                let items = Rc::make_mut(rc);
                if items.try_reserve(1).is_ok() {
                    items.push(v);
                    store(&mut self.stack[base + dst as usize], Value::Unit);
                    return Ok(());
                }
            }
            self.stack[at] = v;
        }
        let mut argv = builtins::ArgVec::new();
        for k in 0..m.args.len() {
            argv.push(take(&mut self.stack[at + k]));
        }
        check_element(m, &mut argv)?;
        let v = match &mut self.stack[base + slot as usize] {
            Value::Arr(rc) => builtins::arr_mut_method(Rc::make_mut(rc), m.method, argv)
                .or_else(|x| fail_with(e.span, x))?,
            Value::Dict(rc) if m.method.mutates() => {
                builtins::dict_mut_method(Rc::make_mut(rc), m.method, argv)
                    .or_else(|x| fail_with(e.span, x))?
            }
            // Not an array: an ordinary method of whatever it is.
            other => {
                let recv = other.clone();
                let mr = MethodRef {
                    op: None,
                    host: Some(m.method),
                };
                builtins::method_values(recv, mr, m.method.name(), argv.into_vec(), e.span)?
            }
        };
        store(&mut self.stack[base + dst as usize], v);
        Ok(())
    }

    /// `CheckGlobal` when the global is not a function of `n` parameters:
    /// what `LoadGlobal` then `CheckCall` would report (a global used
    /// before its definition, a value that cannot be called, a wrong
    /// number of arguments), or nothing for a function with defaults.
    #[inline(never)]
    fn check_global(&mut self, g: u32, n: u32, span: Span, f: Frame) -> R<()> {
        let v = match self.globals.get(g as usize) {
            Some(Value::Undefined) | None => self.load(Var::Global(g), f, span)?,
            Some(v) => v.clone(),
        };
        match &v {
            Value::Func(c) if arity_ok(&c.func, n as usize) => Ok(()),
            Value::Func(c) => fail(span, arity_message(&c.func, n as usize)),
            other => fail(span, not_callable(other)),
        }
    }

    /// A compiled call of `c` with `n` arguments from register `args`
    /// when it takes another number (a function with defaults): the
    /// missing arguments are marked for their defaults, above the last
    /// live register. A callee whose arity no longer fits changed while
    /// the arguments were evaluated (`CheckCall`/`CheckGlobal` made sure
    /// of it before them).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn call_with_defaults(
        &mut self,
        c: Option<Rc<Closure>>,
        code: &Code,
        base: usize,
        dst: u32,
        args: u32,
        n: u32,
        span: Span,
    ) -> R<()> {
        let Some(c) = c.filter(|c| arity_ok(&c.func, n as usize)) else {
            return fail(
                span,
                "the function called changed while its arguments were evaluated",
            );
        };
        let at = base + args as usize;
        for k in at + n as usize..at + c.func.params.len() {
            match self.stack.get_mut(k) {
                Some(slot) => store(slot, Value::Undefined),
                None => self.stack.push(Value::Undefined),
            }
        }
        let keep = base + code.frame as usize;
        self.enter(&c, at, keep, span, base + dst as usize)
    }

    /// Runs compiled code in the frame `f` (see `code` for the design):
    /// the value of the body, or the error or control flow that ends it.
    fn run_code(&mut self, code: &Code, f: Frame, out: usize) -> R<()> {
        let base = f.base;
        let span = |i: u32| code.spans.get(i as usize).copied().unwrap_or_default();
        let mut pc = 0usize;
        while let Some(op) = code.ops.get(pc) {
            pc += 1;
            match *op {
                Op::Const { dst, k } => {
                    let v = code.consts.get(k as usize).map_or(Value::Unit, fast_clone);
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::Move { dst, src } => {
                    let v = fast_clone(&self.stack[base + src as usize]);
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::LoadGlobal { dst, g, span: s } => {
                    let v = match self.globals.get(g as usize) {
                        Some(Value::Undefined) | None => self.load(Var::Global(g), f, span(s))?,
                        Some(v) => fast_clone(v),
                    };
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::StoreGlobal { g, src } => {
                    let v = fast_clone(&self.stack[base + src as usize]);
                    if let Some(p) = self.globals.get_mut(g as usize) {
                        *p = v;
                    }
                }
                Op::LoadCapture { dst, i } => {
                    let v = f.captures.get(i as usize).cloned().unwrap_or(Value::Unit);
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::Binary {
                    op,
                    dst,
                    a,
                    b,
                    span: s,
                } => {
                    let (x, y) = (&self.stack[base + a as usize], &self.stack[base + b as usize]);
                    // Each arm stores its own result: merged into one
                    // `Value` first, the result goes through memory.
                    match number_fast(op, x, y) {
                        Some(v) => store(&mut self.stack[base + dst as usize], v),
                        None => {
                            let v = binary(op, fast_clone(x), fast_clone(y), span(s))?;
                            store(&mut self.stack[base + dst as usize], v);
                        }
                    }
                }
                Op::BinaryK {
                    op,
                    dst,
                    a,
                    k,
                    span: s,
                } => {
                    let x = &self.stack[base + a as usize];
                    let y = code.consts.get(k as usize).unwrap_or(&Value::Unit);
                    // Each arm stores its own result: merged into one
                    // `Value` first, the result goes through memory.
                    match number_fast(op, x, y) {
                        Some(v) => store(&mut self.stack[base + dst as usize], v),
                        None => {
                            let v = binary(op, fast_clone(x), fast_clone(y), span(s))?;
                            store(&mut self.stack[base + dst as usize], v);
                        }
                    }
                }
                Op::Add {
                    dst,
                    a,
                    b,
                    k,
                    span: s,
                } => self.arith(code, base, BinOp::Add, dst, a, b, k, s)?,
                Op::Sub {
                    dst,
                    a,
                    b,
                    k,
                    span: s,
                } => self.arith(code, base, BinOp::Sub, dst, a, b, k, s)?,
                Op::Mul {
                    dst,
                    a,
                    b,
                    k,
                    span: s,
                } => self.arith(code, base, BinOp::Mul, dst, a, b, k, s)?,
                Op::Div {
                    dst,
                    a,
                    b,
                    k,
                    span: s,
                } => self.arith(code, base, BinOp::Div, dst, a, b, k, s)?,
                Op::Mod {
                    dst,
                    a,
                    b,
                    k,
                    span: s,
                } => self.arith(code, base, BinOp::Mod, dst, a, b, k, s)?,
                Op::UnlessLt {
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                } => {
                    if !self.holds(code, base, BinOp::Lt, a, b, k, what, s)? {
                        pc = to as usize;
                    }
                }
                Op::UnlessLe {
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                } => {
                    if !self.holds(code, base, BinOp::Le, a, b, k, what, s)? {
                        pc = to as usize;
                    }
                }
                Op::UnlessGt {
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                } => {
                    if !self.holds(code, base, BinOp::Gt, a, b, k, what, s)? {
                        pc = to as usize;
                    }
                }
                Op::UnlessGe {
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                } => {
                    if !self.holds(code, base, BinOp::Ge, a, b, k, what, s)? {
                        pc = to as usize;
                    }
                }
                Op::UnlessEq {
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                } => {
                    if !self.holds(code, base, BinOp::Eq, a, b, k, what, s)? {
                        pc = to as usize;
                    }
                }
                Op::UnlessNe {
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                } => {
                    if !self.holds(code, base, BinOp::Ne, a, b, k, what, s)? {
                        pc = to as usize;
                    }
                }
                Op::JumpUnless {
                    op,
                    a,
                    b,
                    k,
                    to,
                    what,
                    span: s,
                    test,
                } => {
                    let x = &self.stack[base + a as usize];
                    let y = if k {
                        code.consts.get(b as usize).unwrap_or(&Value::Unit)
                    } else {
                        &self.stack[base + b as usize]
                    };
                    let holds = match number_fast(op, x, y) {
                        Some(Value::Bool(h)) => h,
                        _ => {
                            let v = binary(op, fast_clone(x), fast_clone(y), span(s))?;
                            truth_of(v, what.what(), span(test))?
                        }
                    };
                    if !holds {
                        pc = to as usize;
                    }
                }
                Op::Jump { to } => pc = to as usize,
                Op::JumpIfNot {
                    cond,
                    to,
                    what,
                    span: s,
                } => match &self.stack[base + cond as usize] {
                    Value::Bool(true) => {}
                    Value::Bool(false) => pc = to as usize,
                    other => {
                        truth_of(other.clone(), what.what(), span(s))?;
                    }
                },
                Op::JumpIf {
                    cond,
                    to,
                    what,
                    span: s,
                } => match &self.stack[base + cond as usize] {
                    Value::Bool(true) => pc = to as usize,
                    Value::Bool(false) => {}
                    other => {
                        truth_of(other.clone(), what.what(), span(s))?;
                    }
                },
                Op::Not { dst, src, span: s } => {
                    let v = fast_clone(&self.stack[base + src as usize]);
                    let b = truth_of(v, code::Truth::Not.what(), span(s))?;
                    store(&mut self.stack[base + dst as usize], Value::Bool(!b));
                }
                Op::Loop { to, span: s } => {
                    poll_interrupt(span(s))?;
                    pc = to as usize;
                }
                Op::ForPrep { it, counter, other } => {
                    // A loop that may draw a progress bar runs as the
                    // general loop (`for_over`), which draws it.
                    if self.progress.is_some() {
                        pc = other as usize;
                        continue;
                    }
                    // The count (of a range: up to 2^64 - 1, kept as the
                    // bits of an Int) beside the index; a Str's index and
                    // count are in bytes.
                    let n = match &self.stack[base + it as usize] {
                        Value::Range(r) => r.len() as i64,
                        Value::Arr(items) => items.len() as i64,
                        Value::Str(text) => {
                            if self.ascii.is_empty() {
                                self.ascii = (0..128u8)
                                    .map(|b| Rc::new(Text::new(char::from(b).to_string())))
                                    .collect();
                            }
                            text.len() as i64
                        }
                        _ => {
                            pc = other as usize;
                            continue;
                        }
                    };
                    store(&mut self.stack[base + counter as usize], Value::Int(0));
                    store(&mut self.stack[base + counter as usize + 1], Value::Int(n));
                }
                Op::ForNext {
                    it,
                    counter,
                    var,
                    exit,
                    span: s,
                } => {
                    poll_interrupt(span(s))?;
                    let c = base + counter as usize;
                    let (Value::Int(i), Value::Int(n)) = (&self.stack[c], &self.stack[c + 1]) else {
                        pc = exit as usize;
                        continue;
                    };
                    let (i, n) = (*i as u64, *n as u64);
                    if i >= n {
                        pc = exit as usize;
                        continue;
                    }
                    // The element, and the index after it.
                    let (x, after) = match &self.stack[base + it as usize] {
                        Value::Range(r) => (Value::Int(r.get(i)), i + 1),
                        Value::Arr(items) => (items.get(i as usize).map_or(Value::Unit, fast_clone), i + 1),
                        Value::Str(text) => match text.get(i as usize..).and_then(|t| t.chars().next()) {
                            Some(ch) => {
                                let v = match self.ascii.get(ch as usize) {
                                    Some(one) => Value::Str(one.clone()),
                                    None => Value::str(ch.to_string()),
                                };
                                (v, i + ch.len_utf8() as u64)
                            }
                            None => (Value::Unit, n),
                        },
                        _ => {
                            pc = exit as usize;
                            continue;
                        }
                    };
                    store(&mut self.stack[c], Value::Int(after as i64));
                    store(&mut self.stack[base + var as usize], x);
                }
                Op::ForRange {
                    args,
                    n,
                    it,
                    counter,
                    other,
                    e,
                } => {
                    if !self.op_for_range(code, base, args, n, it, counter, e)? {
                        pc = other as usize;
                    }
                }
                Op::ForRangeNext {
                    counter,
                    var,
                    exit,
                    span: s,
                } => {
                    poll_interrupt(span(s))?;
                    let c = base + counter as usize;
                    let (Value::Int(left), Value::Int(x), Value::Int(step)) =
                        (&self.stack[c], &self.stack[c + 1], &self.stack[c + 2])
                    else {
                        pc = exit as usize;
                        continue;
                    };
                    let (left, x, step) = (*left, *x, *step);
                    // The count is a u64's bits (a range may hold 2^64 - 1
                    // values); the value after the last may wrap and is
                    // never read.
                    if left == 0 {
                        pc = exit as usize;
                        continue;
                    }
                    store(&mut self.stack[c], Value::Int(left.wrapping_sub(1)));
                    store(&mut self.stack[c + 1], Value::Int(x.wrapping_add(step)));
                    store(&mut self.stack[base + var as usize], Value::Int(x));
                }
                Op::ForOther { it, var, e, span: s } => {
                    let v = take(&mut self.stack[base + it as usize]);
                    let Some(&body) = code.exprs.get(e as usize) else {
                        continue;
                    };
                    // SAFETY: `Code::exprs` points into the HIR the code was
                    // compiled from, which its owner keeps alive (see `Code`).
                    let body = unsafe { &*body };
                    self.for_over(var, v, span(s), body, f)?;
                }
                Op::CheckGlobal { g, n, span: s } => match self.globals.get(g as usize) {
                    Some(Value::Func(c)) if c.func.params.len() == n as usize => {}
                    _ => self.check_global(g, n, span(s), f)?,
                },
                Op::CallGlobal {
                    dst,
                    g,
                    args,
                    n,
                    span: s,
                } => {
                    let c = match self.globals.get(g as usize) {
                        Some(Value::Func(c)) if c.func.params.len() == n as usize => c.clone(),
                        other => {
                            let c = match other {
                                Some(Value::Func(c)) => Some(c.clone()),
                                _ => None,
                            };
                            // `CheckGlobal`'s checks, where the compiler
                            // left it out (they passed if it ran).
                            self.check_global(g, n, span(s), f)?;
                            self.call_with_defaults(c, code, base, dst, args, n, span(s))?;
                            continue;
                        }
                    };
                    let keep = base + code.frame as usize;
                    self.enter(&c, base + args as usize, keep, span(s), base + dst as usize)?;
                }
                Op::CheckCall { callee, n, span: s } => match &self.stack[base + callee as usize] {
                    Value::Func(c) if c.func.params.len() == n as usize => {}
                    Value::Func(c) if arity_ok(&c.func, n as usize) => {}
                    Value::Func(c) => return fail(span(s), arity_message(&c.func, n as usize)),
                    other => return fail(span(s), not_callable(other)),
                },
                Op::Call {
                    dst,
                    callee,
                    args,
                    n,
                    span: s,
                } => {
                    let Value::Func(c) = &self.stack[base + callee as usize] else {
                        return fail(span(s), "this value cannot be called");
                    };
                    if c.func.params.len() != n as usize {
                        let c = Some(c.clone());
                        self.call_with_defaults(c, code, base, dst, args, n, span(s))?;
                        continue;
                    }
                    let c = c.clone();
                    // The arguments are the last live registers: the
                    // callee's frame starts at the first of them.
                    let keep = base + code.frame as usize;
                    self.enter(&c, base + args as usize, keep, span(s), base + dst as usize)?;
                }
                Op::Eval { dst, e, brk, cont } => {
                    let Some(&e) = code.exprs.get(e as usize) else {
                        continue;
                    };
                    // SAFETY: as for `ForOther`.
                    let e = unsafe { &*e };
                    match self.eval(e, f) {
                        Ok(v) => store(&mut self.stack[base + dst as usize], v),
                        Err(c) => pc = escape(c, brk, cont)?,
                    }
                }
                Op::Exec { s, brk, cont } => {
                    let Some(&st) = code.stmts.get(s as usize) else {
                        continue;
                    };
                    // SAFETY: as for `ForOther`.
                    let st = unsafe { &*st };
                    if let Err(c) = self.block(std::slice::from_ref(st), f) {
                        pc = escape(c, brk, cont)?;
                    }
                }
                Op::Assign {
                    root,
                    op,
                    src,
                    k,
                    span: s,
                } => {
                    let y = if k {
                        code.consts.get(src as usize).unwrap_or(&Value::Unit)
                    } else {
                        &self.stack[base + src as usize]
                    };
                    if let Var::Local(slot) = root {
                        let d = base + slot as usize;
                        match (op, &self.stack[d], y) {
                            (None, _, _) => {
                                let v = fast_clone(y);
                                store(&mut self.stack[d], v);
                                continue;
                            }
                            // Numbers: what `assign_simple` computes, inline.
                            (Some(op), Value::Int(_) | Value::F64(_), Value::Int(_) | Value::F64(_)) => {
                                if let Some(v) = number_fast(op, &self.stack[d], y) {
                                    store(&mut self.stack[d], v);
                                    continue;
                                }
                            }
                            _ => {}
                        }
                    }
                    let v = fast_clone(y);
                    self.assign_simple(root, op, v, span(s), f)?;
                }
                Op::Field {
                    dst,
                    base: b,
                    m,
                    span: s,
                } => {
                    let v = match (&self.stack[base + b as usize], code.members.get(m as usize)) {
                        (Value::Struct(st), Some(Member::Offset(i, _)))
                            if (*i as usize) < st.fields.len() =>
                        {
                            fast_clone(&st.fields[*i as usize])
                        }
                        (bv, _) => {
                            let bv = fast_clone(bv);
                            self.field_value(code, &bv, m, s)?
                        }
                    };
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::Index {
                    dst,
                    base: b,
                    idx,
                    k,
                    span: s,
                    ispan,
                } => {
                    let bv = &self.stack[base + b as usize];
                    let iv = if k {
                        code.consts.get(idx as usize).unwrap_or(&Value::Unit)
                    } else {
                        &self.stack[base + idx as usize]
                    };
                    let v = index_single(code, bv, iv, ispan, s)?;
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::IndexField {
                    dst,
                    base: b,
                    idx,
                    ispan,
                    m,
                    span: s,
                } => {
                    let v = match (&self.stack[base + b as usize], &self.stack[base + idx as usize]) {
                        (Value::Arr(items), Value::Int(i)) => {
                            match (items.get(*i as usize), code.members.get(m as usize)) {
                                (Some(Value::Struct(st)), Some(Member::Offset(f, _)))
                                    if *i >= 0 && (*f as usize) < st.fields.len() =>
                                {
                                    Some(fast_clone(&st.fields[*f as usize]))
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    let v = match v {
                        Some(v) => v,
                        None => self.index_field(code, base, b, idx, ispan, m, s)?,
                    };
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::MakeList {
                    dst,
                    args,
                    n,
                    span: s,
                } => {
                    let v = self.vm_list(base + args as usize, n as usize, span(s))?;
                    store(&mut self.stack[base + dst as usize], v);
                }
                Op::CallBuiltin { dst, args, e } => self.op_call_builtin(code, base, dst, args, e)?,
                Op::Len { dst, src, e } => {
                    let n = match &self.stack[base + src as usize] {
                        Value::Arr(items) => items.len(),
                        Value::Dict(d) => d.len(),
                        Value::Str(s) => s.char_len(),
                        _ => {
                            self.len_other(code, base, dst, src, e)?;
                            continue;
                        }
                    };
                    store(&mut self.stack[base + dst as usize], Value::Int(n as i64));
                }
                Op::CallMethod { dst, recv, args, e } => {
                    self.op_call_method(code, base, dst, recv, args, e)?
                }
                Op::MutMethod { dst, args, e } => self.op_mut_method(code, base, dst, args, e)?,
                Op::DictCount {
                    d,
                    key,
                    dflt,
                    add,
                    path,
                    to,
                } => {
                    if self.dict_count(code, base + d as usize, base + key as usize, dflt, add, path) {
                        pc = to as usize;
                    }
                }
                Op::AssignPath {
                    root,
                    op,
                    src,
                    path,
                    span: s,
                } => {
                    let Some(pc) = code.paths.get(path as usize) else {
                        continue;
                    };
                    let steps = &pc.steps[..];
                    // A declared type to check (`hir::Assign::check`): the
                    // general path checks it, unless `v` already has it.
                    let checked = match &pc.check {
                        None => true,
                        Some((rt, _)) => {
                            op.is_none() && already_conforms(&self.stack[base + src as usize], rt)
                        }
                    };
                    // `a[i] = v` on a local Arr with `i` in range: in place.
                    if let (true, Var::Local(r), None, [code::Step::Index { reg, .. }]) =
                        (checked, root, op, steps)
                    {
                        let ri = base + r as usize;
                        let at = match (&self.stack[ri], &self.stack[base + *reg as usize]) {
                            (Value::Arr(items), Value::Int(i)) if *i >= 0 && (*i as usize) < items.len() => {
                                Some(*i as usize)
                            }
                            _ => None,
                        };
                        if let Some(i) = at {
                            let v = src_value(&mut self.stack, code, base, src);
                            if let Value::Arr(rc) = &mut self.stack[ri] {
                                store(&mut Rc::make_mut(rc)[i], v);
                            }
                            continue;
                        }
                    }
                    // `d[k] = v` and `d[k] op= v` (numbers, the key there) on
                    // a local Dict: one lookup, in place.
                    if let (true, Var::Local(r), [code::Step::Index { reg, .. }]) = (checked, root, steps) {
                        if self.set_dict_entry(
                            base + r as usize,
                            base + *reg as usize,
                            op,
                            base + src as usize,
                        ) {
                            continue;
                        }
                    }
                    // `a[i].f = v` and `a[i].f op= v` on a local Arr of structs,
                    // numbers for the compound form: in place.
                    if let (
                        true,
                        Var::Local(r),
                        [code::Step::Index { reg, .. }, code::Step::Field { m, .. }],
                    ) = (checked, root, steps)
                    {
                        if let Some(member) = code.members.get(*m as usize).copied() {
                            if self.set_elem_field(
                                base + r as usize,
                                base + *reg as usize,
                                member,
                                op,
                                base + src as usize,
                                src < code.locals,
                            ) {
                                continue;
                            }
                        }
                    }
                    // Paths of up to four steps (all the usual ones) are
                    // assigned without a heap allocation.
                    let mut keys: SmallVec<[Key; 4]> = SmallVec::new();
                    for st in steps {
                        keys.push(match *st {
                            code::Step::Index { reg, span: is } => {
                                // Cloned: the register may be a local's
                                // (an index read in place).
                                Key::Index(fast_clone(&self.stack[base + reg as usize]), span(is))
                            }
                            code::Step::Field { m, span: fs } => Key::Field(
                                code.members.get(m as usize).copied().unwrap_or(Member::Dynamic(
                                    Sym(0),
                                    None,
                                    None,
                                )),
                                span(fs),
                            ),
                        });
                    }
                    let v = src_value(&mut self.stack, code, base, src);
                    let (check, value_span) = match &pc.check {
                        Some((rt, vs)) => (Some(rt), span(*vs)),
                        None => (None, Span::default()),
                    };
                    self.assign_keys(root, &keys, op, v, span(s), check, value_span, f)?;
                }
                Op::Return { src } => {
                    // A local's register is copied (`thread_returns` may
                    // return one directly): a module's locals outlive it.
                    let v = src_value(&mut self.stack, code, base, src);
                    store(&mut self.stack[out], v);
                    return Ok(());
                }
            }
        }
        store(&mut self.stack[out], Value::Unit);
        Ok(())
    }

    // ------------------------------------------------------------- loops

    #[inline(never)]
    fn for_loop(&mut self, slot: u32, iter: &hir::Expr, body: &hir::Expr, f: Frame) -> R<Value> {
        let it = self.eval(iter, f)?;
        self.for_over(slot, it, iter.span, body, f)
    }

    /// A `for` loop over the evaluated iterable `it` (the compiled engine
    /// runs loops over anything but a range, an Arr or a Str here, and
    /// every loop while a `progress` bar waits for its loop). The loop
    /// over the value `progress` marked draws the bar: a step per element,
    /// ended however the loop ends.
    pub(crate) fn for_over(
        &mut self,
        slot: u32,
        it: Value,
        iter_span: Span,
        body: &hir::Expr,
        f: Frame,
    ) -> R<Value> {
        let bar = match self.progress.take() {
            Some(p) if same_object(&p.it, &it) => {
                self.host.progress_begin(&p.label, p.total);
                true
            }
            Some(_) | None => false,
        };
        let r = self.for_each(slot, it, iter_span, body, f, bar);
        if bar {
            self.host.progress_end();
        }
        r
    }

    fn for_each(
        &mut self,
        slot: u32,
        it: Value,
        iter_span: Span,
        body: &hir::Expr,
        f: Frame,
        bar: bool,
    ) -> R<Value> {
        let idx = f.base + slot as usize;
        macro_rules! run_body {
            () => {
                poll_interrupt(body.span)?;
                match self.eval(body, f) {
                    Ok(_) => {}
                    Err(c) if matches!(*c, Ctrl::Continue) => {}
                    Err(c) if matches!(*c, Ctrl::Break) => break,
                    Err(other) => return Err(other),
                }
                if bar {
                    self.host.progress_tick();
                }
            };
        }
        match it {
            Value::Range(r) => {
                let n = r.len();
                let mut i = 0;
                while i < n {
                    self.stack[idx] = Value::Int(r.get(i));
                    i += 1;
                    run_body!();
                }
            }
            Value::Arr(items) => {
                for v in items.iter() {
                    self.stack[idx] = v.clone();
                    run_body!();
                }
            }
            Value::Str(s) => {
                for ch in s.chars() {
                    self.stack[idx] = Value::str(ch.to_string());
                    run_body!();
                }
            }
            // The keys, in insertion order, of the Dict as it was when the
            // loop began (values are never shared: the body's changes to
            // the variable are to a copy).
            Value::Dict(d) => {
                for (k, _) in d.iter() {
                    self.stack[idx] = k.to_value();
                    run_body!();
                }
            }
            t @ (Value::Tensor(_) | Value::Tracked(_)) if t.as_tensor().is_some_and(|t| t.ndim() > 0) => {
                // A tensor iterates over its first axis, as in NumPy.
                for i in 0..t.as_tensor().map_or(0, |t| t.shape()[0]) {
                    let row =
                        crate::autodiff::index(&t, &[twill_tensor::index::IndexItem::Single(i as i64)])
                            .or_else(|m| fail(iter_span, m))?;
                    self.stack[idx] = row;
                    run_body!();
                }
            }
            t @ (Value::Tensor(_) | Value::Tracked(_)) => {
                return fail(
                    iter_span,
                    format!(
                        "cannot iterate over a rank-0 tensor (a `{}` holding one value); use .item() for the value",
                        t.type_name()
                    ),
                )
            }
            other => {
                return fail(
                    iter_span,
                    format!("cannot iterate over a `{}`", other.type_name()),
                )
            }
        }
        Ok(Value::Unit)
    }

    fn bind(&mut self, p: &Pattern, v: &Value, f: Frame) -> bool {
        match (p, v) {
            (Pattern::Wildcard, _) => true,
            (Pattern::Bind(s), v) => {
                self.stack[f.base + *s as usize] = v.clone();
                true
            }
            (Pattern::Int(i), v) => ops::equal(&Value::Int(*i), v),
            (Pattern::Float(x), v) => ops::equal(&Value::F64(*x), v),
            (Pattern::Str(s), Value::Str(t)) => s == t,
            (Pattern::Bool(b), Value::Bool(c)) => b == c,
            (Pattern::None, Value::None) => true,
            (Pattern::Ok(p), Value::Ok(x))
            | (Pattern::Err(p), Value::Err(x))
            | (Pattern::Some(p), Value::Some(x)) => self.bind(p, x, f),
            (Pattern::Tuple(ps), Value::Tuple(xs)) => {
                ps.len() == xs.len() && ps.iter().zip(xs.iter()).all(|(p, x)| self.bind(p, x, f))
            }
            (Pattern::Tuple(ps), Value::Unit) => ps.is_empty(),
            _ => false,
        }
    }

    // -------------------------------------------------------- assignment

    fn index_keys(&mut self, items: &[hir::IndexItem], f: Frame) -> R<Vec<IndexKey>> {
        let mut keys = Vec::with_capacity(items.len());
        for it in items {
            keys.push(match it {
                hir::IndexItem::Single(e) => IndexKey::Single(self.eval(e, f)?, e.span),
                hir::IndexItem::Slice { start, stop, step } => {
                    let mut one = |e: &Option<Box<hir::Expr>>| -> R<Option<(Value, Span)>> {
                        match e {
                            Some(e) => Ok(Some((self.eval(e, f)?, e.span))),
                            None => Ok(None),
                        }
                    };
                    IndexKey::Slice(one(start)?, one(stop)?, one(step)?)
                }
                hir::IndexItem::Ellipsis => IndexKey::Ellipsis,
            });
        }
        Ok(keys)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn assign(
        &mut self,
        root: Var,
        path: &[PathElem],
        op: Option<BinOp>,
        value: &hir::Expr,
        span: Span,
        check: Option<&RtType>,
        f: Frame,
    ) -> R<()> {
        let v = self.eval(value, f)?;
        let keys = self.path_keys(path, f)?;
        self.assign_keys(root, &keys, op, v, span, check, value.span, f)
    }

    /// The rest of an assignment once its value and path are evaluated
    /// (both engines assign through here).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assign_keys(
        &mut self,
        root: Var,
        keys: &[Key],
        op: Option<BinOp>,
        mut v: Value,
        span: Span,
        check: Option<&RtType>,
        value_span: Span,
        f: Frame,
    ) -> R<()> {
        if keys.is_empty() {
            if let Some(op) = op {
                let cur = self.load(root, f, span)?;
                v = binary_values(op, &cur, &v).or_else(|m| fail_with(span, m))?;
            }
            if let Some(rt) = check {
                v = conform(v, rt).or_else(|(want, got)| {
                    fail(
                        value_span,
                        format!("cannot assign a `{got}` to a variable of type `{want}`"),
                    )
                })?;
            }
            if let Some(p) = self.place(root, f) {
                *p = v;
            }
            return Ok(());
        }
        let syms = self.symbols.clone();
        let Some(mut place) = self.place(root, f) else {
            return fail(span, "cannot assign to a captured variable");
        };
        let Some((last, init)) = keys.split_last() else {
            return Ok(());
        };
        for (i, k) in init.iter().enumerate() {
            if place.is_tensor() {
                return tensor_assign(place, &keys[i..], op, v, span);
            }
            place = child_mut(place, k, &syms, false).or_else(|(kind, m, s)| fail_as(kind, s, m))?;
        }
        if place.is_tensor() {
            return tensor_assign(place, std::slice::from_ref(last), op, v, span);
        }
        if let Key::Sub(_, sspan) = last {
            return fail(
                *sspan,
                format!("a `{}` takes exactly one index", place.type_name()),
            );
        }
        if let Key::Slice(bounds, sspan) = last {
            if op.is_some() {
                return fail(*sspan, "a slice takes `=` only: `a[i:j] = b`");
            }
            return slice_assign(place, bounds, v, *sspan);
        }
        // `d[k] = v` adds a key; `d[k] += v` needs it already.
        let slot = child_mut(place, last, &syms, op.is_none()).or_else(|(kind, m, s)| fail_as(kind, s, m))?;
        if let Some(op) = op {
            v = match number_fast(op, slot, &v) {
                Some(x) => x,
                None => binary_values(op, slot, &v).or_else(|m| fail_with(span, m))?,
            };
        }
        if let Some(rt) = check {
            let place = if matches!(last, Key::Field(..)) {
                "a field"
            } else {
                "an element"
            };
            v = conform(v, rt).or_else(|(want, got)| {
                fail(
                    value_span,
                    format!("cannot assign a `{got}` to {place} of type `{want}`"),
                )
            })?;
        }
        store(slot, v);
        Ok(())
    }

    fn path_keys(&mut self, path: &[PathElem], f: Frame) -> R<Vec<Key>> {
        let mut keys = Vec::with_capacity(path.len());
        for p in path {
            match p {
                PathElem::Index(items, span) => {
                    let mut ks = self.index_keys(items, f)?;
                    if ks.len() != 1 {
                        keys.push(Key::Sub(ks, *span));
                        continue;
                    }
                    match ks.pop() {
                        Some(IndexKey::Single(v, _)) => keys.push(Key::Index(v, *span)),
                        Some(IndexKey::Slice(a, b, c)) => keys.push(Key::Slice(Box::new([a, b, c]), *span)),
                        Some(k @ IndexKey::Ellipsis) => keys.push(Key::Sub(vec![k], *span)),
                        None => return fail(*span, "an empty subscript cannot be assigned to"),
                    }
                }
                PathElem::Field(member, span) => keys.push(Key::Field(*member, *span)),
            }
        }
        Ok(keys)
    }

    fn mut_method(&mut self, m: &hir::MutMethod, f: Frame, span: Span) -> R<Value> {
        let (root, path, method) = (m.root, &m.path, m.method);
        let mut argv = builtins::ArgVec::with_capacity(m.args.len());
        for a in &m.args {
            argv.push(self.eval(a, f)?);
        }
        check_element(m, &mut argv)?;
        let keys = self.path_keys(path, f)?;
        let syms = self.symbols.clone();
        let Some(mut place) = self.place(root, f) else {
            return fail(span, "cannot modify a captured variable");
        };
        for k in &keys {
            place = child_mut(place, k, &syms, false).or_else(|(kind, m, s)| fail_as(kind, s, m))?;
        }
        if let Value::Dict(rc) = place {
            if method.mutates() {
                return builtins::dict_mut_method(Rc::make_mut(rc), method, argv)
                    .or_else(|m| fail_with(span, m));
            }
        }
        let Value::Arr(rc) = place else {
            // Not an array: an ordinary method of whatever it is.
            let recv = place.clone();
            let m = MethodRef {
                op: None,
                host: Some(method),
            };
            return builtins::method_values(recv, m, method.name(), argv.into_vec(), span);
        };
        let items = Rc::make_mut(rc);
        builtins::arr_mut_method(items, method, argv).or_else(|m| fail_with(span, m))
    }
}

/// The value of a list literal (spec §4): a tensor when its leaves are all
/// numbers or all Bools (and it is regular), else an Arr; both engines make
/// every list literal here.
fn list_value(lit: Lit, span: Span) -> R<Value> {
    // A flat list with an item that is neither a number nor a Bool (or
    // with no items) is an Arr whatever the rest are: no leaves to gather.
    if let Lit::List(items) = &lit {
        let flat = items.iter().all(|i| matches!(i, Lit::Leaf(_)));
        let other = |i: &Lit| matches!(i, Lit::Leaf(v) if !matches!(v, Value::Int(_) | Value::F64(_) | Value::Bool(_)));
        if flat && (items.is_empty() || items.iter().any(other)) {
            return Ok(lit.into_value());
        }
    }
    let mut leaves = Vec::new();
    let mut shape = Vec::new();
    let mut regular = true;
    collect_leaves(&lit, 0, &mut shape, &mut leaves, &mut regular);
    let all_numbers = !leaves.is_empty() && leaves.iter().all(|v| matches!(v, Value::Int(_) | Value::F64(_)));
    let all_bools = !leaves.is_empty() && leaves.iter().all(|v| matches!(v, Value::Bool(_)));
    let nested = matches!(&lit, Lit::List(items) if items.iter().any(|i| matches!(i, Lit::List(_))));
    if all_numbers || all_bools {
        if !regular {
            return fail(
                span,
                "ragged nested list: every row of a tensor literal must have the same length",
            );
        }
        let t = if let Some(be) = crate::backend::active() {
            // Another backend (the reference runtime) makes it from the
            // leaves as they are.
            (be.construct)(
                "literal",
                vec![
                    Value::Arr(Rc::new(leaves)),
                    crate::builtins::shape_value(&shape),
                    Value::Bool(all_bools),
                ],
            )
        } else if all_bools {
            let v: Vec<bool> = leaves.iter().map(|v| matches!(v, Value::Bool(true))).collect();
            Tensor::from_vec(v, shape)
        } else {
            let v: Vec<f64> = leaves
                .iter()
                .map(|v| match v {
                    Value::Int(i) => *i as f64,
                    Value::F64(x) => *x,
                    _ => 0.0,
                })
                .collect();
            Tensor::from_vec(v, shape)
        };
        return t.map(tensor_value).or_else(|e| terr(span, e));
    }
    if nested
        && leaves
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::F64(_) | Value::Bool(_)))
        && !leaves.is_empty()
    {
        return fail(span, "a tensor literal cannot mix numbers and Bools");
    }
    // An Arr: each list literal inside it is decided on its own, so
    // `[t, [true, false]]` holds two tensors.
    match lit {
        Lit::Leaf(v) => Ok(v),
        Lit::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for it in items {
                out.push(match it {
                    Lit::Leaf(v) => v,
                    sub @ Lit::List(_) => list_value(sub, span)?,
                });
            }
            Ok(Value::Arr(Rc::new(out)))
        }
    }
}

/// `x op y` on host values, with the Int and F64 fast paths; both engines
/// evaluate every binary operator here.
#[inline(always)]
pub(crate) fn binary(op: BinOp, x: Value, y: Value, span: Span) -> R<Value> {
    if let Some(v) = number_fast(op, &x, &y) {
        return Ok(v);
    }
    match (&x, &y) {
        (Value::Int(_), Value::Int(_)) | (Value::F64(_), Value::F64(_)) => {
            ops::binary(op, &x, &y).or_else(|m| fail_with(span, m))
        }
        _ => binary_values(op, &x, &y).or_else(|m| fail_with(span, m)),
    }
}

/// [`binary`] out of line, for the compiled engine's slow paths (kept
/// out of the instruction loop, whose registers it would otherwise take).
#[cold]
#[inline(never)]
fn binary_cold(op: BinOp, x: &Value, y: &Value, span: Span) -> R<Value> {
    // An Int with an F64: the Int converted, as `ops::binary` does for
    // arithmetic (its comparisons are exact, so they are left to it).
    let mixed = match (x, y) {
        (Value::Int(p), Value::F64(q)) => mixed_fast(op, *p as f64, *q),
        (Value::F64(p), Value::Int(q)) => mixed_fast(op, *p, *q as f64),
        _ => None,
    };
    match mixed {
        Some(v) => Ok(v),
        None => binary(op, fast_clone(x), fast_clone(y), span),
    }
}

/// A comparison that is not of two numbers, as the test of a conditional
/// jump: its value, which must be a Bool (`what` names the test).
#[cold]
#[inline(never)]
fn test_cold(op: BinOp, x: &Value, y: &Value, what: code::Truth, span: Span) -> R<bool> {
    let v = binary(op, fast_clone(x), fast_clone(y), span)?;
    truth_of(v, what.what(), span)
}

/// `x op y` when both are Ints or both F64s and the result needs no error
/// path: exactly what [`binary`] gives for them (`None`: ask it).
#[inline(always)]
fn number_fast(op: BinOp, x: &Value, y: &Value) -> Option<Value> {
    match (x, y) {
        (Value::Int(p), Value::Int(q)) => {
            let (p, q) = (*p, *q);
            match op {
                BinOp::Add => p.checked_add(q).map(Value::Int),
                BinOp::Sub => p.checked_sub(q).map(Value::Int),
                BinOp::Mul => p.checked_mul(q).map(Value::Int),
                BinOp::Lt => Some(Value::Bool(p < q)),
                BinOp::Le => Some(Value::Bool(p <= q)),
                BinOp::Gt => Some(Value::Bool(p > q)),
                BinOp::Ge => Some(Value::Bool(p >= q)),
                BinOp::Eq => Some(Value::Bool(p == q)),
                BinOp::Ne => Some(Value::Bool(p != q)),
                BinOp::Mod if q > 0 => Some(Value::Int(p.rem_euclid(q))),
                // Python's floor division, for a positive divisor.
                BinOp::FloorDiv if q > 0 => Some(Value::Int(p.div_euclid(q))),
                BinOp::Div => Some(Value::F64(p as f64 / q as f64)),
                BinOp::BitAnd => Some(Value::Int(p & q)),
                BinOp::BitOr => Some(Value::Int(p | q)),
                BinOp::BitXor => Some(Value::Int(p ^ q)),
                // Shifts in range that lose no bits; the rest (errors, and
                // shifts of 64 or more) are `binary`'s.
                BinOp::Shl if (0..64).contains(&q) && (p << q) >> q == p => Some(Value::Int(p << q)),
                BinOp::Shr if (0..64).contains(&q) => Some(Value::Int(p >> q)),
                BinOp::FloorDiv | BinOp::Mod | BinOp::Pow | BinOp::MatMul | BinOp::Shl | BinOp::Shr => None,
            }
        }
        (Value::F64(p), Value::F64(q)) => {
            let (p, q) = (*p, *q);
            match op {
                BinOp::Add => Some(Value::F64(p + q)),
                BinOp::Sub => Some(Value::F64(p - q)),
                BinOp::Mul => Some(Value::F64(p * q)),
                BinOp::Div => Some(Value::F64(p / q)),
                BinOp::Lt => Some(Value::Bool(p < q)),
                BinOp::Le => Some(Value::Bool(p <= q)),
                BinOp::Gt => Some(Value::Bool(p > q)),
                BinOp::Ge => Some(Value::Bool(p >= q)),
                BinOp::Eq => Some(Value::Bool(p == q)),
                BinOp::Ne => Some(Value::Bool(p != q)),
                BinOp::FloorDiv
                | BinOp::Mod
                | BinOp::Pow
                | BinOp::MatMul
                | BinOp::BitAnd
                | BinOp::BitOr
                | BinOp::BitXor
                | BinOp::Shl
                | BinOp::Shr => None,
            }
        }
        _ => None,
    }
}

/// `x op y` for an Int and an F64 converted to `x` and `y`: what
/// `number_fast` gives for two F64s, except the comparisons, which
/// `ops::binary` makes exact for mixed operands (`None`: ask `binary`);
/// the compiled engine's slow path tries it first.
#[inline(always)]
fn mixed_fast(op: BinOp, x: f64, y: f64) -> Option<Value> {
    if op.is_comparison() {
        return None;
    }
    number_fast(op, &Value::F64(x), &Value::F64(y))
}

/// `v`, which must be a Bool: `what` names it in the error.
#[inline(always)]
pub(crate) fn truth_of(v: Value, what: &str, span: Span) -> R<bool> {
    match v {
        Value::Bool(b) => Ok(b),
        other => not_bool(&other, what, span),
    }
}

/// The error for `v` where a Bool must be (`what` names the place), with
/// spec §10.9's help for a tensor: `.item()` for a one-element tensor,
/// `.all()`/`.any()` for a bool one.
#[cold]
#[inline(never)]
pub(crate) fn not_bool<T>(v: &Value, what: &str, span: Span) -> R<T> {
    let mut e = RuntimeError::new(
        ErrorKind::Invalid,
        span,
        format!("{what} must be a Bool, not `{}`", v.type_name()),
    );
    e.help = v.as_tensor().and_then(|t| {
        twill_check::suggest::tensor_truth_help(
            Some(t.numel() == 1),
            Some(t.dtype() == twill_tensor::DType::Bool),
        )
        .map(str::to_string)
    });
    Err(Box::new(Ctrl::Error(e)))
}

/// Puts `v` in `slot`. A slot holding a value with nothing to drop (a
/// number, a Bool, Unit) is overwritten without calling the drop glue, so
/// the new value goes from registers straight to the slot.
#[inline(always)]
fn store(slot: &mut Value, v: Value) {
    // `forget` of a number: the drop glue is not called for a value that
    // has nothing to drop.
    match (&mut *slot, &v) {
        // The same kind of number as before: only the payload changes.
        (Value::Int(p), Value::Int(q)) => {
            *p = *q;
            std::mem::forget(v);
        }
        (Value::F64(p), Value::F64(q)) => {
            *p = *q;
            std::mem::forget(v);
        }
        (Value::Bool(p), Value::Bool(q)) => {
            *p = *q;
            std::mem::forget(v);
        }
        (
            Value::Unit | Value::Int(_) | Value::F64(_) | Value::Bool(_) | Value::None | Value::Undefined,
            _,
        ) => {
            std::mem::forget(std::mem::replace(slot, v));
        }
        _ => *slot = v,
    }
}

/// The value a mutating method makes an element of a typed Arr, held to
/// the element type (`hir::MutMethod::check`): both engines check it once
/// the arguments are evaluated.
fn check_element(m: &hir::MutMethod, argv: &mut builtins::ArgVec) -> R<()> {
    let Some((i, rt)) = &m.check else {
        return Ok(());
    };
    let (Some(slot), Some(arg)) = (argv.get_mut(*i), m.args.get(*i)) else {
        return Ok(());
    };
    if already_conforms(slot, rt) {
        return Ok(());
    }
    let v = std::mem::replace(slot, Value::Unit);
    *slot = conform(v, rt).or_else(|(want, got)| {
        fail(
            arg.span,
            format!(
                "`{}` would put a value of type `{got}` into an Arr of `{want}`",
                m.method.name()
            ),
        )
    })?;
    Ok(())
}

/// `bv[iv]` with one index, for `Index` and `IndexField`'s element: an
/// Arr's element in range read in place, anything else through
/// `builtins::index` with its errors (`ispan` indexes the index's span in
/// `code.spans`, `s` the indexing expression's).
#[inline(always)]
fn index_single(code: &Code, bv: &Value, iv: &Value, ispan: u32, s: u32) -> R<Value> {
    match (bv, iv) {
        (Value::Arr(items), Value::Int(i)) if *i >= 0 && (*i as usize) < items.len() => {
            Ok(fast_clone(&items[*i as usize]))
        }
        _ => {
            let span = |i: u32| code.spans.get(i as usize).copied().unwrap_or_default();
            let (bv, iv) = (bv.clone(), iv.clone());
            builtins::index(&bv, &[IndexKey::Single(iv, span(ispan))], span(s))
        }
    }
}

/// Releases what a returned call's registers hold (`stack[from..end]`,
/// its whole frame, all of it dead once it returned: the part inside its
/// caller's frame is the caller's topmost temporaries, its arguments and
/// above), but the result in `out`; numbers stay where they are, and the
/// stack keeps its length: the next call's frame is mostly there already,
/// where shrinking the stack on every return and growing it again on
/// every call cost a tenth of a call. (Releasing only what lay above the
/// caller's frame kept a callee's temporaries alive until overwritten:
/// a 2 GiB tensor a call made and dropped was still held when the next
/// call made another, so under a memory cap the compiled engine ran out
/// where the tree walker did not.)
#[inline(always)]
fn drop_above(stack: &mut [Value], from: usize, end: usize, out: usize) {
    fn release(slots: &mut [Value]) {
        for slot in slots {
            if !matches!(slot, Value::Int(_) | Value::F64(_) | Value::Bool(_) | Value::Unit) {
                *slot = Value::Unit;
            }
        }
    }
    let end = end.min(stack.len());
    let Some(slots) = stack.get_mut(from.min(end)..end) else {
        return;
    };
    // `out` is kept: the slots on either side of it are released (one
    // test per slot, not a comparison with `out` in the loop).
    match out.checked_sub(from) {
        Some(k) if k < slots.len() => {
            let (below, above) = slots.split_at_mut(k);
            release(below);
            release(above.get_mut(1..).unwrap_or_default());
        }
        _ => release(slots),
    }
}

/// The value in register `r` that an assignment stores: moved out of a
/// temporary, copied from a local's register (a local read in place).
#[inline(always)]
fn src_value(stack: &mut [Value], code: &Code, base: usize, r: u32) -> Value {
    if r < code.locals {
        fast_clone(&stack[base + r as usize])
    } else {
        take(&mut stack[base + r as usize])
    }
}

/// Whether `v` already has the run-time type `rt` as it is (the usual
/// cases, checked in place; `conform` decides the rest).
#[inline(always)]
fn already_conforms(v: &Value, rt: &RtType) -> bool {
    matches!(
        (rt, v),
        (RtType::Int, Value::Int(_))
            | (RtType::F64, Value::F64(_))
            | (RtType::Bool, Value::Bool(_))
            | (RtType::Str, Value::Str(_))
            | (RtType::Arr, Value::Arr(_))
    )
}

/// Moves the value out of `slot`, leaving Unit there; a number is copied
/// and stays (reading it by its kind, not as sixteen bytes: a register
/// just written as a tag and a payload is read back without a stall).
#[inline(always)]
fn take(slot: &mut Value) -> Value {
    match slot {
        Value::Int(i) => Value::Int(*i),
        Value::F64(x) => Value::F64(*x),
        Value::Bool(b) => Value::Bool(*b),
        _ => std::mem::replace(slot, Value::Unit),
    }
}

/// Clones a value, copying numbers and the usual aggregates (a count
/// raised in place) without the call into `Clone`.
#[inline(always)]
pub(crate) fn fast_clone(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::F64(x) => Value::F64(*x),
        Value::Bool(b) => Value::Bool(*b),
        Value::Arr(a) => Value::Arr(Rc::clone(a)),
        Value::Str(s) => Value::Str(Rc::clone(s)),
        Value::Struct(s) => Value::Struct(Rc::clone(s)),
        Value::Func(c) => Value::Func(Rc::clone(c)),
        other => other.clone(),
    }
}

type PlaceErr = (ErrorKind, String, Span);

/// Where the field `member` is in the struct `s`: a checker's offset when
/// it is in range, else the field of that name.
fn field_offset(s: &StructVal, member: Member) -> Option<usize> {
    match member {
        Member::Offset(i, _) if (i as usize) < s.fields.len() => Some(i as usize),
        Member::Offset(_, sym) | Member::Dynamic(sym, ..) => s.def.field_offset(sym),
        Member::Tensor(_) | Member::Format(_) | Member::Elem(_) => None,
    }
}

/// `place[k0][k1]… op= v` where `place` holds a tensor (spec §11.2). One
/// subscript writes into the tensor — in place when its storage is not
/// shared and nothing is tracked; a chain reads `place[k0]`, assigns into
/// that, and writes it back.
fn tensor_assign(place: &mut Value, keys: &[Key], op: Option<BinOp>, v: Value, span: Span) -> R<()> {
    let Some((first, rest)) = keys.split_first() else {
        return Ok(());
    };
    let (items, at) = match first {
        Key::Index(i, s) => (builtins::tensor_items(&[IndexKey::Single(i.clone(), *s)])?, *s),
        Key::Slice(b, s) => {
            let [a, b, c] = (**b).clone();
            (builtins::tensor_items(&[IndexKey::Slice(a, b, c)])?, *s)
        }
        Key::Sub(ks, s) => (builtins::tensor_items(ks)?, *s),
        Key::Field(_, s) => return fail(*s, "a tensor's fields cannot be assigned to"),
    };
    if !rest.is_empty() {
        let mut sub = crate::autodiff::index(place, &items).or_else(|m| fail_as(ErrorKind::Index, at, m))?;
        tensor_assign(&mut sub, rest, op, v, span)?;
        return tensor_assign(place, std::slice::from_ref(first), None, sub, span);
    }
    let tracked = matches!(place, Value::Tracked(_)) || matches!(v, Value::Tracked(_));
    if let (Value::Tensor(rc), false) = (&mut *place, tracked) {
        let operand = match &v {
            Value::Tensor(t) => twill_tensor::ops::Operand::Tensor(t),
            Value::Int(i) => twill_tensor::ops::Operand::Int(*i),
            Value::F64(x) => twill_tensor::ops::Operand::Float(*x),
            Value::Bool(b) => twill_tensor::ops::Operand::Bool(*b),
            other => {
                return fail(
                    span,
                    format!("cannot assign a `{}` into a tensor", other.type_name()),
                )
            }
        };
        let bop = match op {
            None => None,
            Some(o) => Some(crate::bridge::binary_op(o).or_else(|m| fail(span, m))?),
        };
        let t = Rc::make_mut(rc);
        return twill_tensor::ops::assign::assign(t, &items, operand, bop).or_else(|e| terr(span, e));
    }
    *place =
        crate::autodiff::assign(place, &items, &v, op).or_else(|m| fail_as(ErrorKind::Tensor, span, m))?;
    Ok(())
}

/// `a[i:j:k] = b` on an Arr (spec §10.7), as Python does it: with no step
/// (or step 1) the slice is replaced by the elements of `b`, which may be
/// longer or shorter; with another step `b` must have one element for each
/// position of the slice.
fn slice_assign(place: &mut Value, bounds: &[Option<(Value, Span)>; 3], v: Value, span: Span) -> R<()> {
    let Value::Arr(rc) = place else {
        return fail(
            span,
            format!(
                "cannot assign to a slice of a `{}`; slices of an Arr can be assigned",
                place.type_name()
            ),
        );
    };
    let Value::Arr(new) = v else {
        return fail(
            span,
            format!("a slice is assigned an Arr, not a `{}`", v.type_name()),
        );
    };
    let (start, stop, step) = (
        builtins::as_int(&bounds[0])?,
        builtins::as_int(&bounds[1])?,
        builtins::as_int(&bounds[2])?,
    );
    let items = Rc::make_mut(rc);
    let at = builtins::slice_indices(start, stop, step, items.len()).or_else(|m| fail(span, m))?;
    if step.unwrap_or(1) == 1 {
        let lo = at.first().copied().unwrap_or_else(|| {
            // An empty slice inserts at its start, clamped as Python does.
            let n = items.len() as i64;
            let s = start.unwrap_or(0);
            (if s < 0 { (s + n).max(0) } else { s.min(n) }) as usize
        });
        let hi = at.last().map_or(lo, |&i| i + 1);
        let extra = new.len().saturating_sub(hi - lo);
        crate::ops::reserve_arr(items, extra).or_else(|f| fail_with(span, f))?;
        items.splice(lo..hi, new.iter().cloned());
        return Ok(());
    }
    if at.len() != new.len() {
        return fail(
            span,
            format!(
                "a slice with a step has {} positions, but the Arr assigned has {} elements",
                at.len(),
                new.len()
            ),
        );
    }
    for (i, x) in at.into_iter().zip(new.iter()) {
        items[i] = x.clone();
    }
    Ok(())
}

/// The element or field `key` of `place`, to assign to; with `create`, a
/// key missing from a Dict is added (as Unit, for the caller to set).
fn child_mut<'v>(
    place: &'v mut Value,
    key: &Key,
    symbols: &[Rc<str>],
    create: bool,
) -> Result<&'v mut Value, PlaceErr> {
    match key {
        Key::Index(idx, span) => match place {
            Value::Arr(rc) => {
                let items = Rc::make_mut(rc);
                let i = builtins::norm_index(idx, items.len()).map_err(|f| (f.kind, f.message, *span))?;
                Ok(&mut items[i])
            }
            Value::Dict(rc) => {
                let k = DictKey::of(idx).map_err(|m| (ErrorKind::Invalid, m, *span))?;
                let d = Rc::make_mut(rc);
                if create {
                    return d.slot(&k).map_err(|m| (ErrorKind::Invalid, m, *span));
                }
                match d.get_mut(&k) {
                    Some(v) => Ok(v),
                    None => {
                        let msg = format!("key {} is not in the Dict", crate::print::repr(idx));
                        Err((ErrorKind::Index, msg, *span))
                    }
                }
            }
            other => Err((
                ErrorKind::Invalid,
                format!("cannot assign into an element of a `{}`", other.type_name()),
                *span,
            )),
        },
        Key::Slice(_, span) => Err((
            ErrorKind::Invalid,
            "a slice can only be the last step of an assignment: `a[i:j] = b`".into(),
            *span,
        )),
        Key::Sub(_, span) => Err((
            ErrorKind::Invalid,
            format!("a `{}` takes exactly one index", place.type_name()),
            *span,
        )),
        Key::Field(member, span) => {
            let name = |syms: &[Rc<str>]| match (member.sym(), member) {
                (Some(s), _) => syms.get(s.0 as usize).cloned().unwrap_or_else(|| Rc::from("?")),
                (None, Member::Elem(i)) => Rc::from(i.to_string()),
                (None, _) => Rc::from("?"),
            };
            match place {
                Value::Tuple(rc) => {
                    let items = Rc::make_mut(rc);
                    let n = items.len();
                    match member {
                        Member::Elem(i) if (*i as usize) < n => Ok(&mut items[*i as usize]),
                        _ => Err((
                            ErrorKind::Invalid,
                            format!("a tuple of {n} has no field `{}`", name(symbols)),
                            *span,
                        )),
                    }
                }
                Value::Struct(rc) => {
                    let s = Rc::make_mut(rc);
                    match field_offset(s, *member) {
                        Some(i) => Ok(&mut s.fields[i]),
                        None => Err((
                            ErrorKind::Invalid,
                            format!("struct `{}` has no field `{}`", s.def.name, name(symbols)),
                            *span,
                        )),
                    }
                }
                other => Err((
                    ErrorKind::Invalid,
                    format!("a `{}` has no field `{}`", other.type_name(), name(symbols)),
                    *span,
                )),
            }
        }
    }
}

fn not_callable(v: &Value) -> String {
    format!("a `{}` is not a function and cannot be called", v.type_name())
}

/// The closure a call of `callee` with `n` arguments calls, or the error
/// when it is not a function or `n` does not fit its parameters.
fn callee_of(callee: &Value, n: usize, span: Span) -> R<&Rc<Closure>> {
    let Value::Func(c) = callee else {
        return fail(span, not_callable(callee));
    };
    if n != c.func.params.len() && !arity_ok(&c.func, n) {
        return fail(span, arity_message(&c.func, n));
    }
    Ok(c)
}

/// Whether a call with `n` arguments fits `func` (spec §10.5), by the
/// checker's rule.
fn arity_ok(func: &hir::Function, n: usize) -> bool {
    twill_check::types::accepts(func.required as usize, func.params.len(), n)
}

fn arity_message(func: &hir::Function, n: usize) -> String {
    let want = twill_check::types::arity_text(func.required as usize, func.params.len());
    // The checker's wording (`resolve::arity_error`).
    format!(
        "`{}` takes {want} argument{}, but {n} {} given",
        func.name,
        if want == "1" { "" } else { "s" },
        if n == 1 { "was" } else { "were" }
    )
}

/// Checks a value against an annotation, converting Int to F64 where an
/// F64 is wanted. On mismatch gives (wanted, got) type names.
pub(crate) fn conform(v: Value, rt: &RtType) -> Result<Value, (String, String)> {
    let ok = match (rt, &v) {
        (RtType::Any, _) => true,
        (RtType::Crosscheck(d), t @ (Value::Tensor(_) | Value::Tracked(_))) => {
            t.as_tensor().is_some_and(|t| t.dtype() == *d)
        }
        (RtType::Tape, Value::Tape(_)) => true,
        (RtType::Format, Value::Format(_)) => true,
        (RtType::Figure, Value::Figure(_)) => true,
        (RtType::F64, Value::Int(i)) => return Ok(Value::F64(*i as f64)),
        (RtType::Int, Value::Int(_))
        | (RtType::F64, Value::F64(_))
        | (RtType::Bool, Value::Bool(_))
        | (RtType::Str, Value::Str(_))
        | (RtType::DType, Value::DType(_))
        | (RtType::Range, Value::Range(_))
        | (RtType::Arr, Value::Arr(_))
        | (RtType::Dict, Value::Dict(_))
        | (RtType::Res, Value::Ok(_) | Value::Err(_))
        | (RtType::Opt, Value::Some(_) | Value::None)
        | (RtType::Fn, Value::Func(_)) => true,
        (RtType::Struct(n), Value::Struct(s)) => *s.def.name == **n,
        (RtType::Tuple(n), Value::Tuple(items)) => items.len() == *n,
        (RtType::Tensor(None), Value::Tensor(_) | Value::Tracked(_)) => true,
        (RtType::Tensor(Some(d)), t @ (Value::Tensor(_) | Value::Tracked(_))) => {
            t.as_tensor().is_some_and(|t| t.dtype() == *d)
        }
        _ => false,
    };
    if ok {
        Ok(v)
    } else {
        Err((rt_name(rt), v.type_name()))
    }
}

fn rt_name(rt: &RtType) -> String {
    match rt {
        RtType::Int => "Int".into(),
        RtType::F64 => "F64".into(),
        RtType::Bool => "Bool".into(),
        RtType::Str => "Str".into(),
        RtType::DType => "DType".into(),
        RtType::Range => "Range".into(),
        RtType::Tape => "Tape".into(),
        RtType::Format => "Format".into(),
        RtType::Figure => "Figure".into(),
        RtType::Arr => "Arr".into(),
        RtType::Dict => "Dict".into(),
        RtType::Tuple(n) => format!("tuple of {n}"),
        RtType::Tensor(None) => "Tensor".into(),
        RtType::Tensor(Some(d)) => format!("Tensor[{d}]"),
        RtType::Res => "Res".into(),
        RtType::Opt => "Opt".into(),
        RtType::Fn => "Fn".into(),
        RtType::Struct(n) => n.to_string(),
        RtType::Any => "?".into(),
        RtType::Crosscheck(d) => {
            format!("Tensor[{d}] (the checker's static dtype; a mismatch is a bug in twill)")
        }
    }
}

impl Interp {
    /// Evaluates a list literal, deciding between a tensor and an `Arr`
    /// (spec §4): all numbers (Int or F64, at any nesting of literal lists)
    /// make an f64 tensor, all Bools a bool tensor, anything else an Arr.
    pub(crate) fn eval_list(&mut self, items: &[hir::Expr], f: Frame, span: Span) -> R<Value> {
        let lit = self.eval_lit(items, f)?;
        list_value(lit, span)
    }

    /// A flat list literal whose items compiled code left in the registers
    /// `at..at + n`.
    #[inline(never)]
    fn vm_list(&mut self, at: usize, n: usize, span: Span) -> R<Value> {
        // As `list_value` decides: no items, or one that is neither a
        // number nor a Bool, make an Arr of the items as they are.
        let scalar = |v: &Value| matches!(v, Value::Int(_) | Value::F64(_) | Value::Bool(_));
        if n == 0 {
            return Ok(Value::Arr(self.empty_arr.clone()));
        }
        if self.stack[at..at + n].iter().any(|v| !scalar(v)) {
            let items: Vec<Value> = (at..at + n).map(|i| take(&mut self.stack[i])).collect();
            return Ok(Value::Arr(Rc::new(items)));
        }
        let items = (at..at + n)
            .map(|i| Lit::Leaf(take(&mut self.stack[i])))
            .collect();
        list_value(Lit::List(items), span)
    }
    fn eval_lit(&mut self, items: &[hir::Expr], f: Frame) -> R<Lit> {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            out.push(if let hir::ExprKind::List(inner) = &it.kind {
                self.eval_lit(inner, f)?
            } else {
                Lit::Leaf(self.eval(it, f)?)
            });
        }
        Ok(Lit::List(out))
    }

    /// `a[i].f = v` or `a[i].f op= v` when the local `a` (register `arr`)
    /// is an Arr, `i` (register `idx`) an Int in range, the element a
    /// struct with the field `member`, and for `op=` both numbers the
    /// fast arithmetic takes: done in place, `true`; otherwise nothing is
    /// touched and the general path runs (the same result, every error).
    fn set_elem_field(
        &mut self,
        arr: usize,
        idx: usize,
        member: Member,
        op: Option<BinOp>,
        src: usize,
        copy: bool,
    ) -> bool {
        let i = match self.stack.get(idx) {
            Some(Value::Int(i)) if *i >= 0 => *i as usize,
            _ => return false,
        };
        let (k, old) = match self.stack.get(arr) {
            Some(Value::Arr(items)) => match items.get(i) {
                Some(Value::Struct(sv)) => match field_offset(sv, member) {
                    Some(k) => (k, &sv.fields[k]),
                    None => return false,
                },
                _ => return false,
            },
            _ => return false,
        };
        let new = match op {
            Some(op) => match number_fast(op, old, &self.stack[src]) {
                Some(v) => v,
                None => return false,
            },
            None if copy => fast_clone(&self.stack[src]),
            None => take(&mut self.stack[src]),
        };
        if let Value::Arr(rc) = &mut self.stack[arr] {
            if let Some(Value::Struct(sv)) = Rc::make_mut(rc).get_mut(i) {
                store(&mut Rc::make_mut(sv).fields[k], new);
            }
        }
        true
    }

    /// `Op::DictCount` on the Dict in register `d` and the key in `key`:
    /// true when done; false (nothing changed) for the general code.
    #[inline(never)]
    fn dict_count(&mut self, code: &Code, d: usize, key: usize, dflt: u32, add: u32, path: u32) -> bool {
        let (Some(dflt), Some(add)) = (code.consts.get(dflt as usize), code.consts.get(add as usize)) else {
            return false;
        };
        let Some(k) = self.stack.get(key).and_then(DictKey::try_of) else {
            return false;
        };
        let Some(Value::Dict(rc)) = self.stack.get_mut(d) else {
            return false;
        };
        let conforms = |v: &Value| match code.paths.get(path as usize) {
            Some(p) => p.check.as_ref().is_none_or(|(rt, _)| already_conforms(v, rt)),
            None => false,
        };
        match rc.get(&k).map(|old| number_fast(BinOp::Add, old, add)) {
            Some(Some(new)) if conforms(&new) => {
                if let Some(slot) = Rc::make_mut(rc).get_mut(&k) {
                    store(slot, new);
                }
                true
            }
            Some(_) => false,
            None => match number_fast(BinOp::Add, dflt, add) {
                Some(new) if conforms(&new) => match Rc::make_mut(rc).slot(&k) {
                    Ok(slot) => {
                        store(slot, new);
                        true
                    }
                    Err(_) => false,
                },
                _ => false,
            },
        }
    }

    /// `d[k] = v`, or `d[k] op= v` on numbers with `k` present, for the
    /// Dict in register `d`, the key in `key` and the value in `src`: true
    /// when done in place; false (nothing changed) for the general path,
    /// which reports every error.
    fn set_dict_entry(&mut self, d: usize, key: usize, op: Option<BinOp>, src: usize) -> bool {
        let Some(Value::Dict(_)) = self.stack.get(d) else {
            return false;
        };
        let Some(k) = self.stack.get(key).and_then(DictKey::try_of) else {
            return false;
        };
        let Some(v) = self.stack.get(src).map(fast_clone) else {
            return false;
        };
        let Some(Value::Dict(rc)) = self.stack.get_mut(d) else {
            return false;
        };
        let dict = Rc::make_mut(rc);
        match op {
            None => match dict.slot(&k) {
                Ok(slot) => {
                    store(slot, v);
                    true
                }
                Err(_) => false,
            },
            Some(op) => match dict.get_mut(&k) {
                Some(slot) => match number_fast(op, slot, &v) {
                    Some(x) => {
                        store(slot, x);
                        true
                    }
                    None => false,
                },
                None => false,
            },
        }
    }

    /// A host method of a Str, an Arr or a Dict with its arguments
    /// positional and in order, called on the registers from `recv` (the
    /// receiver) and `at` (the arguments) without the general path's
    /// argument slots; `None` (nothing taken) for any other call.
    fn host_method(
        &mut self,
        recv: usize,
        local: bool,
        at: usize,
        m: &hir::MethodCall,
        span: Span,
    ) -> R<Option<Value>> {
        let Some(h) = m.method.host else {
            return Ok(None);
        };
        let n = m.args.items.len();
        let positional = m.args.slots as usize == n + 1
            && m.args
                .items
                .iter()
                .enumerate()
                .all(|(k, (slot, _))| *slot as usize == k + 1);
        // The counts and widths of these take rank-0 tensors too, which
        // the general path converts.
        let converts = matches!(h, HostMethod::Repeat | HostMethod::PadLeft | HostMethod::PadRight);
        if !positional
            || converts
            || !matches!(
                self.stack.get(recv),
                Some(Value::Str(_) | Value::Arr(_) | Value::Dict(_))
            )
        {
            return Ok(None);
        }
        // A Str query of a Str (`"ACGT".find(c)`): no argument vector.
        if let (1, Some(Value::Str(s)), Some(Value::Str(p))) = (n, self.stack.get(recv), self.stack.get(at)) {
            if let Some(v) = builtins::str_query(s, h, p) {
                take(&mut self.stack[at]);
                if !local {
                    take(&mut self.stack[recv]);
                }
                return Ok(Some(v));
            }
        }
        let mut argv = Vec::with_capacity(n);
        for k in 0..n {
            argv.push(take(&mut self.stack[at + k]));
        }
        let r = if local {
            fast_clone(&self.stack[recv])
        } else {
            take(&mut self.stack[recv])
        };
        builtins::method_values(r, m.method, h.name(), argv, span).map(Some)
    }

    /// `d.get(k)`, `d.get(k, default)` and `d.contains(k)` on a Dict in
    /// register `recv` with positional arguments from register `at`: the
    /// lookup in place, without the argument vectors of a method call
    /// (the compiled engine's fast path; `None` sends the call the general
    /// way, which gives the same value and every error).
    fn dict_lookup(&mut self, recv: usize, at: usize, m: &hir::MethodCall) -> Option<Value> {
        let h = m.method.host?;
        let n = m.args.items.len();
        let fits = (h == HostMethod::Get && (n == 1 || n == 2)) || (h == HostMethod::Contains && n == 1);
        if !fits
            || m.args.slots as usize != n + 1
            || m.args
                .items
                .iter()
                .enumerate()
                .any(|(k, (slot, _))| *slot as usize != k + 1)
        {
            return None;
        }
        let Value::Dict(d) = self.stack.get(recv)? else {
            return None;
        };
        let key = DictKey::try_of(self.stack.get(at)?)?;
        let found = d.get(&key).cloned();
        Some(match (h, found) {
            (HostMethod::Contains, f) => Value::Bool(f.is_some()),
            (_, Some(v)) if n == 2 => v,
            (_, None) if n == 2 => take(&mut self.stack[at + 1]),
            (_, Some(v)) => Value::Some(Rc::new(v)),
            (_, None) => Value::None,
        })
    }

    /// The argument slots of a call whose values compiled code left in the
    /// registers from `at` on, in `args`' order (as `eval_slots` makes them).
    fn take_slots(&mut self, at: usize, args: &hir::Args) -> Vec<Option<Value>> {
        let mut slots: Vec<Option<Value>> = vec![None; args.slots as usize];
        for (k, (slot, _)) in args.items.iter().enumerate() {
            let v = take(&mut self.stack[at + k]);
            if let Some(s) = slots.get_mut(*slot as usize) {
                *s = Some(v);
            }
        }
        slots
    }

    /// Evaluates call arguments in source order into their slots.
    pub(crate) fn eval_slots(&mut self, args: &hir::Args, f: Frame) -> R<Vec<Option<Value>>> {
        let mut slots: Vec<Option<Value>> = vec![None; args.slots as usize];
        for (slot, e) in &args.items {
            let v = self.eval(e, f)?;
            if let Some(s) = slots.get_mut(*slot as usize) {
                *s = Some(v);
            }
        }
        Ok(slots)
    }
}

impl Cx for Interp {
    fn call_value(&mut self, callee: &Value, args: Vec<Value>, span: Span) -> R<Value> {
        self.call_with(callee, args, span)
    }

    fn host(&mut self) -> &mut dyn Host {
        &mut *self.host
    }

    fn sym_name(&self, sym: Sym) -> Rc<str> {
        self.symbols
            .get(sym.0 as usize)
            .cloned()
            .unwrap_or_else(|| Rc::from("?"))
    }

    fn sym_of(&self, name: &str) -> Sym {
        let at = self.symbols.iter().position(|s| &**s == name);
        Sym(at.and_then(|i| u32::try_from(i).ok()).unwrap_or(u32::MAX))
    }

    fn next_seed(&mut self) -> u64 {
        // SplitMix64 (Steele, Lea and Flood, 2014).
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn reseed(&mut self, n: u64) {
        self.rng = n;
    }

    fn mark_progress(&mut self, it: &Value, total: Option<u64>, label: String) {
        self.progress = Some(Pending {
            it: it.clone(),
            total,
            label,
        });
    }
}

/// Whether `a` and `b` are one and the same object (not merely equal): a
/// `progress` bar belongs to the loop over the value it was given.
fn same_object(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Arr(x), Value::Arr(y)) => Rc::ptr_eq(x, y),
        (Value::Range(x), Value::Range(y)) => Rc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Rc::ptr_eq(x, y),
        (Value::Str(x), Value::Str(y)) => Rc::ptr_eq(x, y),
        (Value::Tensor(x), Value::Tensor(y)) => Rc::ptr_eq(x, y),
        (Value::Tracked(x), Value::Tracked(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// Where compiled code goes on when a tree-walker fallback ends with `c`:
/// a `break` or `continue` of the enclosing compiled loop jumps to its
/// target; anything else ends the code.
#[allow(clippy::boxed_local)] // the evaluator's control flow is boxed
fn escape(c: Box<Ctrl>, brk: u32, cont: u32) -> R<usize> {
    match *c {
        Ctrl::Break if brk != NONE => Ok(brk as usize),
        Ctrl::Continue if cont != NONE => Ok(cont as usize),
        other => Err(Box::new(other)),
    }
}

/// The error for a stop request taken at `span` (see `interrupt`).
#[cold]
pub(crate) fn stopped<T>(stop: crate::interrupt::Stop, span: Span) -> R<T> {
    match stop {
        crate::interrupt::Stop::Interrupted => fail_as(ErrorKind::Interrupted, span, "interrupted"),
        crate::interrupt::Stop::OutOfMemory => Err(Box::new(Ctrl::Error(RuntimeError {
            kind: ErrorKind::OutOfMemory,
            message: "out of memory".into(),
            span,
            notes: vec![
                "memory ran out while the program ran; it stopped at the next loop iteration or call after that".into(),
            ],
            help: None,
            frames: Vec::new(),
        }))),
    }
}

/// `error: interrupted` at `span` when Ctrl-C was pressed since the last
/// poll, `error: out of memory` when memory ran out (see `interrupt`).
#[inline]
fn poll_interrupt(span: Span) -> R<()> {
    if let Some(stop) = crate::interrupt::take() {
        return stopped(stop, span);
    }
    Ok(())
}
