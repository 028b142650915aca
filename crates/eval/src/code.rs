//! The compiled engine's bytecode and its compiler (spec §15): a function's
//! HIR body becomes a register program, once, the first time it is called.
//!
//! Registers are the function's frame slots — its locals first, numbered as
//! the checker numbered them, then the temporaries this compiler allocates
//! — so a local is read in place and a compiled instruction and the tree
//! walker see one and the same frame. The compiler translates what decides
//! the speed of host code: literals, variables, arithmetic and comparisons
//! (Int and F64 inline, the rest through `interp::binary`, shared with the
//! tree walker; `+ - * / %` and the comparisons that feed a test are one
//! instruction per operator, so the operator costs no second dispatch),
//! a comparison fused with the `if`/`while` test that reads
//! it (through `and` and `or` too), a literal right operand as a constant, `for` over a range as a
//! counted loop (over an Arr or a Str too; over `range(…)` in the loop's
//! header with no Range made), `and`/`or`/`not`, blocks, `let`, assignment (plain,
//! compound, and through fields and single indices), field reads, single
//! index reads (a literal index as a constant), `len` of a local in place,
//! calls of user functions, builtins and methods (arguments
//! in registers, then the shared `call_builtin`/`call_method`; a Dict's
//! `get` and `contains` in place; a global function whose arguments call
//! nothing is checked before them and read from its global at the call,
//! never copied to a register), mutating
//! methods of a local (`xs.push(v)`, in place), `return`,
//! `break` and `continue` as jumps, flat list literals (through the shared
//! `list_value`). Every other expression (slices, closures, `match`,
//! nested list literals, struct literals, …) and statement is an
//! `Eval` or `Exec` instruction that runs the tree walker on that subtree
//! in the same frame: the two engines share every rule and every message,
//! and differ only in how they sequence evaluation. The golden test runs
//! every program under both and compares the bytes; the fuzzer compares
//! them on every program it runs cleanly.
//!
//! Invariant: a compiled program evaluates the same expressions in the
//! same order as the tree walker, and reports the same error at the same
//! span. Where a later operand could change a local read earlier (a block
//! inside an expression), the earlier value is copied first.

// The `_ =>` arms over HIR kinds here are the fallback to the tree walker:
// a kind the compiler does not translate runs there, which is the
// behaviour wanted for any kind added later too.
#![allow(clippy::wildcard_enum_match_arm)]

use twill_check::builtins::{Builtin, HostFn, HostMethod};
use twill_check::hir::{self, ExprKind as H, Member, PathElem, Stmt, Var};
use twill_check::RtType;
use twill_syntax::ast::BinOp;
use twill_syntax::Span;

use crate::value::Value;

/// A binary operator's right operand.
#[derive(Clone, Copy)]
enum Operand {
    Reg(u32),
    Const(u32),
}

/// A jump target or loop exit that does not exist.
pub(crate) const NONE: u32 = u32::MAX;

/// What a Bool test is for, naming it in the error when the value is not
/// a Bool (the tree walker's wording).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Truth {
    If,
    While,
    And,
    Or,
    Not,
}

impl Truth {
    pub(crate) fn what(self) -> &'static str {
        match self {
            Truth::If => "an `if` condition",
            Truth::While => "a `while` condition",
            Truth::And => "the operand of `and`",
            Truth::Or => "the operand of `or`",
            Truth::Not => "the operand of `not`",
        }
    }
}

/// One instruction. Operands are frame registers; `span` fields index
/// [`Code::spans`], `k` [`Code::consts`], `e` [`Code::exprs`] and `s`
/// [`Code::stmts`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Const {
        dst: u32,
        k: u32,
    },
    Move {
        dst: u32,
        src: u32,
    },
    LoadGlobal {
        dst: u32,
        g: u32,
        span: u32,
    },
    StoreGlobal {
        g: u32,
        src: u32,
    },
    LoadCapture {
        dst: u32,
        i: u32,
    },
    Binary {
        op: BinOp,
        dst: u32,
        a: u32,
        b: u32,
        span: u32,
    },
    /// `a op consts[k]`: a binary operator with a literal right operand.
    BinaryK {
        op: BinOp,
        dst: u32,
        a: u32,
        k: u32,
        span: u32,
    },
    /// `dst = a + b`, and below it `-`, `*`, `/` and `%`: the operators
    /// host code lives on, one instruction each, so the operator is known
    /// without a second dispatch (`Binary` serves the rest); `b` indexes
    /// `consts` when `k`.
    Add {
        dst: u32,
        a: u32,
        b: u32,
        k: bool,
        span: u32,
    },
    Sub {
        dst: u32,
        a: u32,
        b: u32,
        k: bool,
        span: u32,
    },
    Mul {
        dst: u32,
        a: u32,
        b: u32,
        k: bool,
        span: u32,
    },
    Div {
        dst: u32,
        a: u32,
        b: u32,
        k: bool,
        span: u32,
    },
    Mod {
        dst: u32,
        a: u32,
        b: u32,
        k: bool,
        span: u32,
    },
    /// Jumps to `to` unless `a < b`, and below it `<=`, `>`, `>=`, `==`
    /// and `!=`: `JumpUnless` with the operator in the instruction (the
    /// comparison's span is the test's too).
    UnlessLt {
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
    },
    UnlessLe {
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
    },
    UnlessGt {
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
    },
    UnlessGe {
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
    },
    UnlessEq {
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
    },
    UnlessNe {
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
    },
    /// Jumps to `to` unless `a op b` (or `a op consts[b]` when `k`) is
    /// true: a comparison fused with the test of an `if` or `while`.
    JumpUnless {
        op: BinOp,
        a: u32,
        b: u32,
        k: bool,
        to: u32,
        what: Truth,
        span: u32,
        test: u32,
    },
    Jump {
        to: u32,
    },
    /// Jumps when `cond` is false (an error when it is not a Bool).
    JumpIfNot {
        cond: u32,
        to: u32,
        what: Truth,
        span: u32,
    },
    /// Jumps when `cond` is true (an error when it is not a Bool).
    JumpIf {
        cond: u32,
        to: u32,
        what: Truth,
        span: u32,
    },
    /// `dst = not src`.
    Not {
        dst: u32,
        src: u32,
        span: u32,
    },
    /// A `while` loop's back edge: the interrupt check, then a jump to
    /// the loop's test (`continue` comes here too).
    Loop {
        to: u32,
        span: u32,
    },
    /// Starts a `for` over the value in `it`: a range, an Arr or a Str
    /// counts in `counter`; anything else (a tensor, or an error) jumps to
    /// `other`.
    ForPrep {
        it: u32,
        counter: u32,
        other: u32,
    },
    /// The interrupt check, then the next element of the range, Arr or
    /// Str in `it` into `var`, or a jump to `exit` when there is none.
    ForNext {
        it: u32,
        counter: u32,
        var: u32,
        exit: u32,
        span: u32,
    },
    /// Starts a `for` over `range(…)` written in the loop's header, with
    /// the call's `n` positional arguments in `args..args + n`, as a
    /// counted loop: no Range value is made. `counter` gets the count,
    /// `counter + 1` the first value and `counter + 2` the step. Arguments
    /// that are not all Ints, or a `progress` bar waiting for a loop, go
    /// through the `range` builtin (`exprs[e]`, the call): its error, or
    /// the Range it makes, which is counted the same way, or put in `it`
    /// for `other` while a bar waits.
    ForRange {
        args: u32,
        n: u32,
        it: u32,
        counter: u32,
        other: u32,
        e: u32,
    },
    /// The interrupt check, then the next value of a `ForRange` loop into
    /// `var`, or a jump to `exit` when the count is spent.
    ForRangeNext {
        counter: u32,
        var: u32,
        exit: u32,
        span: u32,
    },
    /// A `for` over a value that is not a range, run by the tree walker.
    ForOther {
        it: u32,
        var: u32,
        e: u32,
        span: u32,
    },
    /// The callee check of a call of the global `g` whose arguments
    /// call nothing (`calls_nothing`), before they are evaluated: the
    /// function is read from the global again by `CallGlobal`, which no
    /// argument can have changed, instead of being kept in a register.
    /// Left out when no argument can fail (`cannot_fail`): then the
    /// order of the checks is not seen, and `CallGlobal` makes them.
    CheckGlobal {
        g: u32,
        n: u32,
        span: u32,
    },
    /// Calls the function in the global `g` (see `CheckGlobal`) with the
    /// `n` arguments in registers `args..args + n`; a global that is not
    /// a function of `n` parameters gets `CheckGlobal`'s checks here.
    CallGlobal {
        dst: u32,
        g: u32,
        args: u32,
        n: u32,
        span: u32,
    },
    /// The arity check of a call, before its arguments are evaluated.
    CheckCall {
        callee: u32,
        n: u32,
        span: u32,
    },
    /// Calls the function in `callee` with the `n` arguments in registers
    /// `args..args + n`.
    Call {
        dst: u32,
        callee: u32,
        args: u32,
        n: u32,
        span: u32,
    },
    /// Runs the tree walker on an expression; `break`/`continue` out of it
    /// jump to `brk`/`cont` when the enclosing loop is compiled.
    Eval {
        dst: u32,
        e: u32,
        brk: u32,
        cont: u32,
    },
    /// Runs the tree walker on a statement.
    Exec {
        s: u32,
        brk: u32,
        cont: u32,
    },
    /// `root = src` or `root op= src` (`interp::Interp::assign_simple`).
    /// `root = src` or `root op= src`; `src` indexes `consts` when `k`
    /// (`x += 1`).
    Assign {
        root: Var,
        op: Option<BinOp>,
        src: u32,
        k: bool,
        span: u32,
    },
    /// `dst = base.members[m]` (`builtins::field`).
    Field {
        dst: u32,
        base: u32,
        m: u32,
        span: u32,
    },
    /// `dst = base[idx]` with one index (`builtins::index`), `idx`
    /// indexing `consts` when `k` (a literal index, `t[0]`); `ispan` is the
    /// index's own span.
    Index {
        dst: u32,
        base: u32,
        idx: u32,
        k: bool,
        span: u32,
        ispan: u32,
    },
    /// `dst = base[idx].members[m]`: `Index` and then `Field`, without the
    /// element in a register between them (a struct in an Arr is read in
    /// place, its count untouched); `ispan` is the index expression's span
    /// and `ispan + 1` the index's own, as `Index` has them.
    IndexField {
        dst: u32,
        base: u32,
        idx: u32,
        ispan: u32,
        m: u32,
        span: u32,
    },
    /// A list literal with no list literal among its items, whose values
    /// are in `args..args + n` (`interp::list_value`).
    MakeList {
        dst: u32,
        args: u32,
        n: u32,
        span: u32,
    },
    /// A builtin call, `exprs[e]` (a `Builtin` node), with its arguments'
    /// values in `args..` in the node's order (`builtins::call_builtin`).
    CallBuiltin {
        dst: u32,
        args: u32,
        e: u32,
    },
    /// `len(x)` of one positional argument, `exprs[e]` (the `Builtin`
    /// node), with `x` in `src` read in place (a local's register is not
    /// copied): an Arr's, a Dict's or a Str's length here, anything else
    /// through the builtin (`builtins::host_builtin`).
    Len {
        dst: u32,
        src: u32,
        e: u32,
    },
    /// A method call, `exprs[e]` (a `Method` node), with the receiver in
    /// `recv` (copied from a local's register, moved from a temporary)
    /// and the arguments in `args..` (`builtins::call_method`).
    CallMethod {
        dst: u32,
        recv: u32,
        args: u32,
        e: u32,
    },
    /// A mutating method of a local, `exprs[e]` (a `MutMethod` node with
    /// no path, `xs.push(v)`), on the local in place, with the arguments
    /// in `args..` (`builtins::arr_mut_method`).
    MutMethod {
        dst: u32,
        args: u32,
        e: u32,
    },
    /// `d[k] = d.get(k, dflt) + add`, the counting idiom, with `d` and `k`
    /// locals and `dflt`, `add` number literals (constants): one lookup,
    /// the sum stored in place or the key added, then a jump to `to`. The
    /// general code of the same assignment follows, and runs instead (from
    /// the start, nothing changed) when this cannot: `d` not a Dict, `k`
    /// no key, a sum that is not a plain number sum (an overflow), a
    /// declared type (`paths[path]`'s check) the sum does not already have,
    /// memory that runs out. That code gives every error.
    DictCount {
        d: u32,
        key: u32,
        dflt: u32,
        add: u32,
        path: u32,
        to: u32,
    },
    /// `root.path… op= src` through the steps `paths[path]`
    /// (`interp::Interp::assign_keys`).
    AssignPath {
        root: Var,
        op: Option<BinOp>,
        src: u32,
        path: u32,
        span: u32,
    },
    Return {
        src: u32,
    },
}

/// One step of an assignment's path: an index in a register, or a field.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    Index { reg: u32, span: u32 },
    Field { m: u32, span: u32 },
}

/// An `AssignPath`'s steps, and the check of a declared type the value
/// must pass as it is stored (`hir::Assign::check`) with the value's span
/// for its error (an index into [`Code::spans`]).
pub(crate) struct PathCode {
    pub steps: Vec<Step>,
    pub check: Option<(RtType, u32)>,
}

/// One field read's inline cache (see [`Code::field_cache`]).
pub(crate) type FieldCache = std::cell::RefCell<Option<(std::rc::Rc<hir::StructDef>, u32)>>;

/// A compiled function body. The pointers in `exprs` and `stmts` are into
/// the HIR the code was compiled from; whoever holds the code keeps that
/// HIR alive and unchanged (the engine's cache holds the function's `Rc`,
/// a module's main body is compiled and run within one borrow of it).
pub(crate) struct Code {
    pub ops: Vec<Op>,
    pub consts: Vec<Value>,
    pub spans: Vec<Span>,
    pub exprs: Vec<*const hir::Expr>,
    pub stmts: Vec<*const Stmt>,
    pub members: Vec<Member>,
    /// Per member, the struct definition a field read by name last found
    /// and the offset it found there (an inline cache: a field whose type
    /// the checker did not know is looked up once per definition). The
    /// cache holds the definition, so its address cannot be reused.
    pub field_cache: Vec<FieldCache>,
    pub paths: Vec<PathCode>,
    /// Registers the code uses: at least the function's locals.
    pub frame: u32,
    /// The function's locals, the registers below this.
    pub locals: u32,
}

/// A loop being compiled: where `continue` goes (`NONE` until a `while`
/// loop's back edge is emitted), the jumps to its exit to patch when the
/// exit is known, and the `continue`s to patch when the back edge is.
struct Loop {
    cont: u32,
    exits: Vec<usize>,
    conts: Vec<usize>,
}

struct Compiler {
    code: Code,
    /// Registers below this are the function's locals.
    locals: u32,
    /// The next free temporary.
    next: u32,
    loops: Vec<Loop>,
}

/// Compiles a function body whose frame has `num_locals` slots.
pub(crate) fn compile(body: &hir::Expr, num_locals: u32) -> Code {
    let mut c = Compiler {
        code: Code {
            ops: Vec::new(),
            consts: Vec::new(),
            spans: Vec::new(),
            exprs: Vec::new(),
            stmts: Vec::new(),
            members: Vec::new(),
            field_cache: Vec::new(),
            paths: Vec::new(),
            frame: num_locals,
            locals: num_locals,
        },
        locals: num_locals,
        next: num_locals,
        loops: Vec::new(),
    };
    let r = c.expr(body, None);
    c.emit(Op::Return { src: r });
    let mut code = c.code;
    thread_returns(&mut code);
    code
}

/// The jump targets an instruction holds, to read or to patch: its
/// branch target or loop exit first, then a fallback's `continue` target
/// (a `NONE` target is none).
fn jump_slots(op: &mut Op) -> [Option<&mut u32>; 2] {
    match op {
        Op::Jump { to }
        | Op::JumpIfNot { to, .. }
        | Op::JumpIf { to, .. }
        | Op::JumpUnless { to, .. }
        | Op::UnlessLt { to, .. }
        | Op::UnlessLe { to, .. }
        | Op::UnlessGt { to, .. }
        | Op::UnlessGe { to, .. }
        | Op::UnlessEq { to, .. }
        | Op::UnlessNe { to, .. }
        | Op::Loop { to, .. }
        | Op::DictCount { to, .. } => [Some(to), None],
        Op::ForPrep { other, .. } | Op::ForRange { other, .. } => [Some(other), None],
        Op::ForNext { exit, .. } | Op::ForRangeNext { exit, .. } => [Some(exit), None],
        Op::Eval { brk, cont, .. } | Op::Exec { brk, cont, .. } => [Some(brk), Some(cont)],
        Op::Const { .. }
        | Op::Move { .. }
        | Op::LoadGlobal { .. }
        | Op::StoreGlobal { .. }
        | Op::LoadCapture { .. }
        | Op::Binary { .. }
        | Op::BinaryK { .. }
        | Op::Add { .. }
        | Op::Sub { .. }
        | Op::Mul { .. }
        | Op::Div { .. }
        | Op::Mod { .. }
        | Op::Not { .. }
        | Op::ForOther { .. }
        | Op::CheckGlobal { .. }
        | Op::CallGlobal { .. }
        | Op::CheckCall { .. }
        | Op::Call { .. }
        | Op::Assign { .. }
        | Op::Field { .. }
        | Op::Index { .. }
        | Op::IndexField { .. }
        | Op::MakeList { .. }
        | Op::CallBuiltin { .. }
        | Op::Len { .. }
        | Op::CallMethod { .. }
        | Op::MutMethod { .. }
        | Op::AssignPath { .. }
        | Op::Return { .. } => [None, None],
    }
}

/// Returns without the jumps and copies in front of them: a `Jump` to a
/// `Return` is that `Return`, and `Move { dst, src }` followed by
/// `Return { src: dst }` that nothing jumps to is `Return { src }` (the
/// `Return` left behind is never reached). An `if`/`else` whose branch
/// is the function's value then returns from the branch: a leaf call of a
/// recursive function runs two instructions fewer.
fn thread_returns(code: &mut Code) {
    for i in 0..code.ops.len() {
        if let Some(Op::Jump { to }) = code.ops.get(i) {
            if let Some(&ret @ Op::Return { .. }) = code.ops.get(*to as usize) {
                code.ops[i] = ret;
            }
        }
    }
    let mut target = vec![false; code.ops.len()];
    for op in &code.ops {
        let mut op = *op;
        for t in jump_slots(&mut op).into_iter().flatten() {
            if let Some(slot) = target.get_mut(*t as usize) {
                *slot = true;
            }
        }
    }
    for i in 0..code.ops.len().saturating_sub(1) {
        if let (Op::Move { dst, src }, Op::Return { src: r }) = (code.ops[i], code.ops[i + 1]) {
            if r == dst && !target[i + 1] {
                code.ops[i] = Op::Return { src };
            }
        }
    }
}

/// The arguments of `e` when it is a call of `range` with one to three
/// arguments, positional and in order (what `ForRange` runs as a counted
/// loop).
fn range_args(e: &hir::Expr) -> Option<&[(u32, hir::Expr)]> {
    let H::Builtin(Builtin::Host(HostFn::Range), args) = &e.kind else {
        return None;
    };
    let in_order = args.slots as usize == args.items.len()
        && args
            .items
            .iter()
            .enumerate()
            .all(|(k, (slot, _))| *slot as usize == k);
    (in_order && (1..=3).contains(&args.items.len())).then_some(&args.items[..])
}

/// Whether evaluating `e` might assign a local of this frame (only a
/// statement can, and statements hide in blocks and the kinds that hold
/// them); conservative: any kind not listed might.
fn writes_locals(e: &hir::Expr) -> bool {
    match &e.kind {
        H::Load(_)
        | H::Int(_)
        | H::Float(_)
        | H::Bool(_)
        | H::Str(_)
        | H::Unit
        | H::NoneValue
        | H::DType(_)
        | H::SelfFn => false,
        H::Binary(_, a, b) | H::And(a, b) | H::Or(a, b) => writes_locals(a) || writes_locals(b),
        H::Not(a) | H::Neg(a) | H::Field(a, _) => writes_locals(a),
        H::CallGlobal(_, args) => args.iter().any(writes_locals),
        H::Call(f, args) => writes_locals(f) || args.iter().any(writes_locals),
        H::Builtin(_, args) => args.items.iter().any(|(_, a)| writes_locals(a)),
        H::Method(m) => writes_locals(&m.receiver) || m.args.items.iter().any(|(_, a)| writes_locals(a)),
        H::Index(base, items) => {
            writes_locals(base)
                || items.iter().any(|it| match it {
                    hir::IndexItem::Single(e) => writes_locals(e),
                    hir::IndexItem::Slice { start, stop, step } => [start, stop, step]
                        .iter()
                        .any(|b| b.as_deref().is_some_and(writes_locals)),
                    hir::IndexItem::Ellipsis => false,
                })
        }
        H::List(items) => items.iter().any(writes_locals),
        H::Tuple(items) | H::ArrList(items) => items.iter().any(writes_locals),
        H::Destructure(a, _) => writes_locals(a),
        H::CallKw(_) | H::DefaultArg(_) => true,
        H::Dict(entries) => entries.iter().any(|(k, v)| writes_locals(k) || writes_locals(v)),
        H::Try(_)
        | H::TryTop(_)
        | H::If(..)
        | H::While(..)
        | H::For { .. }
        | H::Match(..)
        | H::Block(_)
        | H::Closure { .. }
        | H::StructLit { .. }
        | H::MutMethod(_)
        | H::AssertDtype(..) => true,
    }
}

/// Whether evaluating `e` calls nothing and assigns nothing (variables,
/// literals, operators, field and single-index reads), so that no global
/// can change while it runs.
fn calls_nothing(e: &hir::Expr) -> bool {
    match &e.kind {
        H::Load(_)
        | H::Int(_)
        | H::Float(_)
        | H::Bool(_)
        | H::Str(_)
        | H::Unit
        | H::NoneValue
        | H::DType(_) => true,
        H::Binary(_, a, b) | H::And(a, b) | H::Or(a, b) => calls_nothing(a) && calls_nothing(b),
        H::Not(a) | H::Neg(a) | H::Field(a, _) => calls_nothing(a),
        H::Index(base, items) => {
            calls_nothing(base)
                && items.iter().all(|it| match it {
                    hir::IndexItem::Single(i) => calls_nothing(i),
                    _ => false,
                })
        }
        _ => false,
    }
}

/// Whether evaluating `e` cannot fail (a local's or a capture's value, a
/// literal).
fn cannot_fail(e: &hir::Expr) -> bool {
    matches!(
        e.kind,
        H::Load(Var::Local(_) | Var::Capture(_)) | H::Int(_) | H::Float(_) | H::Bool(_) | H::Str(_) | H::Unit
    )
}

/// A literal's value, for the constant-operand forms: a number, or a
/// negated one (`-1`, `-0.5`), whose value the tree walker's negation
/// gives (an Int's negation cannot overflow: its literal is not negative).
fn literal(e: &hir::Expr) -> Option<Value> {
    match &e.kind {
        H::Int(i) => Some(Value::Int(*i)),
        H::Float(x) => Some(Value::F64(*x)),
        H::Neg(a) => match &a.kind {
            H::Int(i) => i.checked_neg().map(Value::Int),
            H::Float(x) => Some(Value::F64(-x)),
            _ => None,
        },
        _ => None,
    }
}

impl Compiler {
    fn emit(&mut self, op: Op) -> usize {
        self.code.ops.push(op);
        self.code.ops.len() - 1
    }

    fn here(&self) -> u32 {
        self.code.ops.len() as u32
    }

    fn temp(&mut self) -> u32 {
        let t = self.next;
        self.next += 1;
        self.code.frame = self.code.frame.max(self.next);
        t
    }

    fn span(&mut self, s: Span) -> u32 {
        self.code.spans.push(s);
        (self.code.spans.len() - 1) as u32
    }

    fn konst(&mut self, v: Value, dst: Option<u32>) -> u32 {
        let d = dst.unwrap_or_else(|| self.temp());
        self.code.consts.push(v);
        let k = (self.code.consts.len() - 1) as u32;
        self.emit(Op::Const { dst: d, k });
        d
    }

    /// Sets the target of the jump at `at` to `to`.
    fn patch(&mut self, at: usize, to: u32) {
        if let Some([Some(t), _]) = self.code.ops.get_mut(at).map(jump_slots) {
            *t = to;
        }
    }

    /// The `(brk, cont)` targets of a tree-walker fallback emitted next:
    /// the innermost compiled loop's, its exit patched when the loop
    /// closes; none outside a loop.
    fn loop_targets(&mut self) -> (u32, u32) {
        let at = self.code.ops.len();
        match self.loops.last_mut() {
            Some(l) => {
                l.exits.push(at);
                if l.cont == NONE {
                    l.conts.push(at);
                }
                (NONE, l.cont)
            }
            None => (NONE, NONE),
        }
    }

    /// A tree-walker fallback for `e`, into `dst`.
    fn fallback(&mut self, e: &hir::Expr, dst: Option<u32>) -> u32 {
        let d = dst.unwrap_or_else(|| self.temp());
        self.code.exprs.push(e as *const hir::Expr);
        let idx = (self.code.exprs.len() - 1) as u32;
        let (brk, cont) = self.loop_targets();
        self.emit(Op::Eval {
            dst: d,
            e: idx,
            brk,
            cont,
        });
        d
    }

    /// Compiles `e`; its value ends up in `dst` when given, else in the
    /// returned register (a local's own register when `e` reads one).
    fn expr(&mut self, e: &hir::Expr, dst: Option<u32>) -> u32 {
        match &e.kind {
            H::Load(Var::Local(s)) => match dst {
                Some(d) if d != *s => {
                    self.emit(Op::Move { dst: d, src: *s });
                    d
                }
                _ => *s,
            },
            H::Load(Var::Global(g)) => {
                let d = dst.unwrap_or_else(|| self.temp());
                let span = self.span(e.span);
                self.emit(Op::LoadGlobal { dst: d, g: *g, span });
                d
            }
            H::Load(Var::Capture(i)) => {
                let d = dst.unwrap_or_else(|| self.temp());
                self.emit(Op::LoadCapture { dst: d, i: *i });
                d
            }
            H::Neg(_) if literal(e).is_some() => {
                let v = literal(e).unwrap_or(Value::Unit);
                self.konst(v, dst)
            }
            H::Int(i) => self.konst(Value::Int(*i), dst),
            H::Float(x) => self.konst(Value::F64(*x), dst),
            H::Bool(b) => self.konst(Value::Bool(*b), dst),
            H::Str(s) => self.konst(Value::Str(s.clone()), dst),
            H::Unit => self.konst(Value::Unit, dst),
            H::NoneValue => self.konst(Value::None, dst),
            H::DType(d) => self.konst(Value::DType(*d), dst),
            H::Binary(op, a, b) => {
                let mark = self.next;
                let (ra, rb) = self.operands(a, b);
                // The operands are read before the result is written, so
                // the result may reuse their temporaries.
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let span = self.span(e.span);
                let (b, k) = match rb {
                    Operand::Reg(r) => (r, false),
                    Operand::Const(k) => (k, true),
                };
                let a = ra;
                let special = match op {
                    BinOp::Add => Some(Op::Add {
                        dst: d,
                        a,
                        b,
                        k,
                        span,
                    }),
                    BinOp::Sub => Some(Op::Sub {
                        dst: d,
                        a,
                        b,
                        k,
                        span,
                    }),
                    BinOp::Mul => Some(Op::Mul {
                        dst: d,
                        a,
                        b,
                        k,
                        span,
                    }),
                    BinOp::Div => Some(Op::Div {
                        dst: d,
                        a,
                        b,
                        k,
                        span,
                    }),
                    BinOp::Mod => Some(Op::Mod {
                        dst: d,
                        a,
                        b,
                        k,
                        span,
                    }),
                    _ => None,
                };
                if let Some(op) = special {
                    self.emit(op);
                    return d;
                }
                self.emit(match rb {
                    Operand::Reg(b) => Op::Binary {
                        op: *op,
                        dst: d,
                        a: ra,
                        b,
                        span,
                    },
                    Operand::Const(k) => Op::BinaryK {
                        op: *op,
                        dst: d,
                        a: ra,
                        k,
                        span,
                    },
                });
                d
            }
            H::Not(a) => {
                let mark = self.next;
                let ra = self.expr(a, None);
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let span = self.span(a.span);
                self.emit(Op::Not {
                    dst: d,
                    src: ra,
                    span,
                });
                d
            }
            H::And(a, b) | H::Or(a, b) => {
                // and: a false or b false → false, else true.
                // or:  a true or b true → true, else false.
                let and = matches!(e.kind, H::And(..));
                let what = if and { Truth::And } else { Truth::Or };
                let d = dst.unwrap_or_else(|| self.temp());
                let mut tests = Vec::with_capacity(2);
                for x in [a, b] {
                    let mark = self.next;
                    let r = self.expr(x, None);
                    self.next = mark;
                    let span = self.span(x.span);
                    tests.push(if and {
                        self.emit(Op::JumpIfNot {
                            cond: r,
                            to: NONE,
                            what,
                            span,
                        })
                    } else {
                        self.emit(Op::JumpIf {
                            cond: r,
                            to: NONE,
                            what,
                            span,
                        })
                    });
                }
                self.konst(Value::Bool(and), Some(d));
                let done = self.emit(Op::Jump { to: NONE });
                let short = self.here();
                self.konst(Value::Bool(!and), Some(d));
                let end = self.here();
                for t in tests {
                    self.patch(t, short);
                }
                self.patch(done, end);
                d
            }
            H::If(c, t, o) => {
                let d = dst.unwrap_or_else(|| self.temp());
                let test = self.jump_unless(c, Truth::If);
                self.expr(t, Some(d));
                let done = self.emit(Op::Jump { to: NONE });
                let at_else = self.here();
                match o {
                    Some(o) => {
                        self.expr(o, Some(d));
                    }
                    None => {
                        self.konst(Value::Unit, Some(d));
                    }
                }
                let end = self.here();
                self.patch_all(&test, at_else);
                self.patch(done, end);
                d
            }
            H::Block(stmts) => {
                let d = dst.unwrap_or_else(|| self.temp());
                let n = stmts.len();
                let mut valued = false;
                for (i, s) in stmts.iter().enumerate() {
                    let mark = self.next;
                    match s {
                        Stmt::Expr(e) if i + 1 == n => {
                            self.expr(e, Some(d));
                            valued = true;
                        }
                        _ => self.stmt(s),
                    }
                    self.next = mark;
                }
                if !valued {
                    self.konst(Value::Unit, Some(d));
                }
                d
            }
            H::While(..) | H::For { .. } => {
                self.looped(e);
                self.konst(Value::Unit, dst)
            }
            H::CallGlobal(g, args) if args.iter().all(calls_nothing) => {
                let mark = self.next;
                let span = self.span(e.span);
                let n = args.len() as u32;
                // Arguments that cannot fail leave no order of errors to
                // keep: `CallGlobal` checks the callee itself.
                if !args.iter().all(cannot_fail) {
                    self.emit(Op::CheckGlobal { g: *g, n, span });
                }
                let first = self.arg_values(args.iter());
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                self.emit(Op::CallGlobal {
                    dst: d,
                    g: *g,
                    args: first,
                    n,
                    span,
                });
                d
            }
            H::CallGlobal(g, args) => {
                let mark = self.next;
                let callee = self.temp();
                let span = self.span(e.span);
                self.emit(Op::LoadGlobal {
                    dst: callee,
                    g: *g,
                    span,
                });
                self.call(callee, args, span, dst, mark)
            }
            H::Call(f, args) => {
                let mark = self.next;
                let callee = self.temp();
                self.expr(f, Some(callee));
                let span = self.span(e.span);
                self.call(callee, args, span, dst, mark)
            }
            H::Field(inner, member) if matches!(&inner.kind, H::Index(_, items) if matches!(&items[..], [hir::IndexItem::Single(_)])) =>
            {
                let H::Index(base, items) = &inner.kind else {
                    return self.fallback(e, dst);
                };
                let [hir::IndexItem::Single(i)] = &items[..] else {
                    return self.fallback(e, dst);
                };
                let mark = self.next;
                let (rb, ri) = self.index_operands(base, i);
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let ispan = self.span(inner.span);
                self.span(i.span);
                let m = self.member(*member);
                let span = self.span(e.span);
                self.emit(Op::IndexField {
                    dst: d,
                    base: rb,
                    idx: ri,
                    ispan,
                    m,
                    span,
                });
                d
            }
            H::Field(base, member) => {
                let mark = self.next;
                let rb = self.expr(base, None);
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let m = self.member(*member);
                let span = self.span(e.span);
                self.emit(Op::Field {
                    dst: d,
                    base: rb,
                    m,
                    span,
                });
                d
            }
            H::List(items) if !items.iter().any(|i| matches!(i.kind, H::List(_))) => {
                let mark = self.next;
                let first = self.arg_values(items.iter());
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let span = self.span(e.span);
                self.emit(Op::MakeList {
                    dst: d,
                    args: first,
                    n: items.len() as u32,
                    span,
                });
                d
            }
            H::Builtin(Builtin::Host(HostFn::Len), args)
                if args.slots == 1 && matches!(&args.items[..], [(0, _)]) =>
            {
                let mark = self.next;
                let src = self.expr(&args.items[0].1, None);
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let e_idx = self.node(e);
                self.emit(Op::Len {
                    dst: d,
                    src,
                    e: e_idx,
                });
                d
            }
            H::Builtin(_, args) => {
                let mark = self.next;
                let first = self.arg_values(args.items.iter().map(|(_, a)| a));
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let e_idx = self.node(e);
                self.emit(Op::CallBuiltin {
                    dst: d,
                    args: first,
                    e: e_idx,
                });
                d
            }
            H::MutMethod(m) if m.path.is_empty() && matches!(m.root, Var::Local(_)) => {
                let mark = self.next;
                let first = self.arg_values(m.args.iter());
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let e_idx = self.node(e);
                self.emit(Op::MutMethod {
                    dst: d,
                    args: first,
                    e: e_idx,
                });
                d
            }
            H::Method(m) => {
                let mark = self.next;
                // A local receiver is read in place (the instruction
                // copies it), unless an argument could assign it first.
                let mut recv = self.expr(&m.receiver, None);
                if self.is_local(recv) && m.args.items.iter().any(|(_, a)| writes_locals(a)) {
                    let t = self.temp();
                    self.emit(Op::Move { dst: t, src: recv });
                    recv = t;
                }
                let first = self.arg_values(m.args.items.iter().map(|(_, a)| a));
                self.next = mark;
                let d = dst.unwrap_or_else(|| self.temp());
                let e_idx = self.node(e);
                self.emit(Op::CallMethod {
                    dst: d,
                    recv,
                    args: first,
                    e: e_idx,
                });
                d
            }
            H::Index(base, items) => match &items[..] {
                [hir::IndexItem::Single(i)] => {
                    let mark = self.next;
                    let (rb, ri, k) = match literal(i) {
                        Some(v) => {
                            let rb = self.expr(base, None);
                            self.code.consts.push(v);
                            (rb, (self.code.consts.len() - 1) as u32, true)
                        }
                        None => {
                            let (rb, ri) = self.index_operands(base, i);
                            (rb, ri, false)
                        }
                    };
                    self.next = mark;
                    let d = dst.unwrap_or_else(|| self.temp());
                    let span = self.span(e.span);
                    let ispan = self.span(i.span);
                    self.emit(Op::Index {
                        dst: d,
                        base: rb,
                        idx: ri,
                        k,
                        span,
                        ispan,
                    });
                    d
                }
                _ => self.fallback(e, dst),
            },
            _ => self.fallback(e, dst),
        }
    }

    /// `d[k] = d.get(k, dflt) + add` (see `Op::DictCount`): the fused
    /// instruction, then the assignment's general code, which it jumps over
    /// when it is done. False (nothing emitted) for any other assignment.
    fn dict_count(&mut self, a: &hir::Assign) -> bool {
        let local = |e: &hir::Expr| match e.kind {
            H::Load(Var::Local(s)) => Some(s),
            _ => None,
        };
        let (Var::Local(d), None, [PathElem::Index(items, _)]) = (a.root, a.op, &a.path[..]) else {
            return false;
        };
        let [hir::IndexItem::Single(ke)] = &items[..] else {
            return false;
        };
        let H::Binary(BinOp::Add, sum, add) = &a.value.kind else {
            return false;
        };
        let H::Method(m) = &sum.kind else {
            return false;
        };
        let (Some(key), Some(add), Some(HostMethod::Get)) = (local(ke), literal(add), m.method.host) else {
            return false;
        };
        let [(1, k2), (2, dflt)] = &m.args.items[..] else {
            return false;
        };
        let Some(dflt) = literal(dflt) else {
            return false;
        };
        if m.args.slots != 3 || local(&m.receiver) != Some(d) || local(k2) != Some(key) {
            return false;
        }
        self.code.consts.push(dflt);
        self.code.consts.push(add);
        let k = self.code.consts.len() as u32;
        let check = a.check.clone().map(|rt| (rt, NONE));
        self.code.paths.push(PathCode {
            steps: Vec::new(),
            check,
        });
        let path = (self.code.paths.len() - 1) as u32;
        let at = self.emit(Op::DictCount {
            d,
            key,
            dflt: k - 2,
            add: k - 1,
            path,
            to: NONE,
        });
        // A single index is a path `assign_path` compiles: it emits.
        self.assign_path(a);
        let end = self.here();
        self.patch(at, end);
        true
    }

    /// `a.root.path… op= value` with every index a single one: the value
    /// first, then the indices, as the tree walker evaluates them.
    fn assign_path(&mut self, a: &hir::Assign) -> bool {
        let simple = a.path.iter().all(|p| match p {
            PathElem::Index(items, _) => matches!(&items[..], [hir::IndexItem::Single(_)]),
            PathElem::Field(..) => true,
        });
        if !simple {
            return false;
        }
        // A local as an index, or as the value, is read in place when no
        // index can assign a local (the value, evaluated first, may: an
        // index read follows it, as in the tree walker). The instruction
        // copies a local's value and moves a temporary's.
        let in_place = !a.path.iter().any(|p| match p {
            PathElem::Index(items, _) => items.iter().any(|it| match it {
                hir::IndexItem::Single(e) => writes_locals(e),
                hir::IndexItem::Slice { .. } | hir::IndexItem::Ellipsis => true,
            }),
            PathElem::Field(..) => false,
        });
        let src = match &a.value.kind {
            H::Load(Var::Local(s)) if in_place => *s,
            _ => {
                let src = self.temp();
                self.expr(&a.value, Some(src));
                src
            }
        };
        let mut steps = Vec::with_capacity(a.path.len());
        for p in &a.path {
            steps.push(match p {
                PathElem::Index(items, span) => {
                    let r = match &items[..] {
                        [hir::IndexItem::Single(hir::Expr {
                            kind: H::Load(Var::Local(s)),
                            ..
                        })] if in_place => *s,
                        [hir::IndexItem::Single(i)] => {
                            let r = self.temp();
                            self.expr(i, Some(r));
                            r
                        }
                        _ => self.temp(),
                    };
                    Step::Index {
                        reg: r,
                        span: self.span(*span),
                    }
                }
                PathElem::Field(member, span) => Step::Field {
                    m: self.member(*member),
                    span: self.span(*span),
                },
            });
        }
        let check = a.check.clone().map(|rt| (rt, self.span(a.value.span)));
        self.code.paths.push(PathCode { steps, check });
        let path = (self.code.paths.len() - 1) as u32;
        let span = self.span(a.span);
        self.emit(Op::AssignPath {
            root: a.root,
            op: a.op,
            src,
            path,
            span,
        });
        true
    }

    /// Both operands of a binary operator, the right one as a constant
    /// when it is a literal. A local read on the left is copied first when
    /// the right one might assign it.
    fn operands(&mut self, a: &hir::Expr, b: &hir::Expr) -> (u32, Operand) {
        let mut ra = self.expr(a, None);
        if self.is_local(ra) && writes_locals(b) {
            let t = self.temp();
            self.emit(Op::Move { dst: t, src: ra });
            ra = t;
        }
        let rb = match literal(b) {
            Some(v) => {
                self.code.consts.push(v);
                Operand::Const((self.code.consts.len() - 1) as u32)
            }
            None => Operand::Reg(self.expr(b, None)),
        };
        (ra, rb)
    }

    /// The test of an `if` or `while`: the jumps (to be patched) taken when
    /// `c` is false; a comparison is fused with its jump, `a and b` is the
    /// tests of `a` then of `b`, each jumping out when false, and `a or b`
    /// tests `b` only when `a` is false (the tree walker's order, and its
    /// message for an operand that is not a Bool).
    fn jump_unless(&mut self, c: &hir::Expr, what: Truth) -> Vec<usize> {
        if let H::And(a, b) = &c.kind {
            let mut jumps = self.jump_unless(a, Truth::And);
            jumps.extend(self.jump_unless(b, Truth::And));
            return jumps;
        }
        // `a or b`: when `a` holds, straight to what follows the test;
        // else the test of `b`.
        if let H::Or(a, b) = &c.kind {
            let a_false = self.jump_unless(a, Truth::Or);
            let a_true = self.emit(Op::Jump { to: NONE });
            let at_b = self.here();
            self.patch_all(&a_false, at_b);
            let jumps = self.jump_unless(b, Truth::Or);
            let after = self.here();
            self.patch(a_true, after);
            return jumps;
        }
        // `while true` tests nothing; `false` always jumps.
        match &c.kind {
            H::Bool(true) => return Vec::new(),
            H::Bool(false) => return vec![self.emit(Op::Jump { to: NONE })],
            _ => {}
        }
        let mark = self.next;
        let at = match &c.kind {
            H::Binary(op, a, b) if op.is_comparison() => {
                let (ra, rb) = self.operands(a, b);
                let span = self.span(c.span);
                let (b, k) = match rb {
                    Operand::Reg(r) => (r, false),
                    Operand::Const(k) => (k, true),
                };
                let to = NONE;
                let a = ra;
                match op {
                    BinOp::Lt => self.emit(Op::UnlessLt {
                        a,
                        b,
                        k,
                        to,
                        what,
                        span,
                    }),
                    BinOp::Le => self.emit(Op::UnlessLe {
                        a,
                        b,
                        k,
                        to,
                        what,
                        span,
                    }),
                    BinOp::Gt => self.emit(Op::UnlessGt {
                        a,
                        b,
                        k,
                        to,
                        what,
                        span,
                    }),
                    BinOp::Ge => self.emit(Op::UnlessGe {
                        a,
                        b,
                        k,
                        to,
                        what,
                        span,
                    }),
                    BinOp::Eq => self.emit(Op::UnlessEq {
                        a,
                        b,
                        k,
                        to,
                        what,
                        span,
                    }),
                    BinOp::Ne => self.emit(Op::UnlessNe {
                        a,
                        b,
                        k,
                        to,
                        what,
                        span,
                    }),
                    // The comparison's own span, then the test's (the same
                    // span: an error names the condition).
                    _ => self.emit(Op::JumpUnless {
                        op: *op,
                        a: ra,
                        b,
                        k,
                        to: NONE,
                        what,
                        span,
                        test: span,
                    }),
                }
            }
            _ => {
                let rc = self.expr(c, None);
                let span = self.span(c.span);
                self.emit(Op::JumpIfNot {
                    cond: rc,
                    to: NONE,
                    what,
                    span,
                })
            }
        };
        self.next = mark;
        vec![at]
    }

    /// Patches every jump of a test to `to`.
    fn patch_all(&mut self, jumps: &[usize], to: u32) {
        for &j in jumps {
            self.patch(j, to);
        }
    }

    /// Compiles `e` for its effect only: a block, `if` or loop whose value
    /// nobody reads materialises none.
    fn effect(&mut self, e: &hir::Expr) {
        match &e.kind {
            H::Block(stmts) => {
                for s in stmts.iter() {
                    let mark = self.next;
                    self.stmt(s);
                    self.next = mark;
                }
            }
            H::If(c, t, o) => {
                let test = self.jump_unless(c, Truth::If);
                self.effect(t);
                match o {
                    Some(o) => {
                        let done = self.emit(Op::Jump { to: NONE });
                        let at_else = self.here();
                        self.effect(o);
                        let end = self.here();
                        self.patch_all(&test, at_else);
                        self.patch(done, end);
                    }
                    None => {
                        let end = self.here();
                        self.patch_all(&test, end);
                    }
                }
            }
            H::While(..) | H::For { .. } => {
                self.looped(e);
            }
            _ => {
                let mark = self.next;
                self.expr(e, None);
                self.next = mark;
            }
        }
    }

    /// Evaluates `args` into fresh consecutive temporaries, in order; the
    /// first one's register.
    fn arg_values<'e>(&mut self, args: impl ExactSizeIterator<Item = &'e hir::Expr>) -> u32 {
        let first = self.next;
        let n = args.len();
        for _ in 0..n {
            self.temp();
        }
        for (k, a) in args.enumerate() {
            self.expr(a, Some(first + k as u32));
        }
        first
    }

    /// `e` in the table of HIR nodes instructions refer to.
    fn node(&mut self, e: &hir::Expr) -> u32 {
        self.code.exprs.push(e as *const hir::Expr);
        (self.code.exprs.len() - 1) as u32
    }

    fn member(&mut self, m: Member) -> u32 {
        self.code.members.push(m);
        self.code.field_cache.push(std::cell::RefCell::new(None));
        (self.code.members.len() - 1) as u32
    }

    fn is_local(&self, r: u32) -> bool {
        r < self.locals
    }

    /// A call of the function in `callee` (a temporary allocated at
    /// `mark`); the result may reuse it, as the call reads it first.
    fn call(&mut self, callee: u32, args: &[hir::Expr], span: u32, dst: Option<u32>, mark: u32) -> u32 {
        let n = args.len() as u32;
        self.emit(Op::CheckCall { callee, n, span });
        let first = self.arg_values(args.iter());
        self.next = mark;
        let d = dst.unwrap_or_else(|| self.temp());
        self.emit(Op::Call {
            dst: d,
            callee,
            args: first,
            n,
            span,
        });
        d
    }

    /// A `while` or `for` loop (its value, Unit, is the caller's).
    fn looped(&mut self, e: &hir::Expr) {
        match &e.kind {
            H::While(c, body) => {
                let head = self.here();
                let test = self.jump_unless(c, Truth::While);
                let poll = self.span(body.span);
                self.loops.push(Loop {
                    cont: NONE,
                    exits: test,
                    conts: Vec::new(),
                });
                self.effect(body);
                let back = self.emit(Op::Loop { to: head, span: poll });
                if let Some(l) = self.loops.last_mut() {
                    for at in std::mem::take(&mut l.conts) {
                        self.patch_cont(at, back as u32);
                    }
                }
                self.close_loop();
            }
            H::For { slot, iter, body } if range_args(iter).is_some() => {
                let outer = self.next;
                let it = self.temp();
                // The count, the next value and the step.
                let counter = self.temp();
                self.temp();
                self.temp();
                let mark = self.next;
                let items = range_args(iter).unwrap_or(&[]);
                let first = self.arg_values(items.iter().map(|(_, a)| a));
                self.next = mark;
                let e_idx = self.node(iter);
                let prep = self.emit(Op::ForRange {
                    args: first,
                    n: items.len() as u32,
                    it,
                    counter,
                    other: NONE,
                    e: e_idx,
                });
                self.counted_loop(prep, it, *slot, iter, body, |poll| Op::ForRangeNext {
                    counter,
                    var: *slot,
                    exit: NONE,
                    span: poll,
                });
                self.next = outer;
            }
            H::For { slot, iter, body } => {
                let outer = self.next;
                let it = self.temp();
                self.expr(iter, Some(it));
                // The index, and beside it the count.
                let counter = self.temp();
                self.temp();
                let prep = self.emit(Op::ForPrep {
                    it,
                    counter,
                    other: NONE,
                });
                self.counted_loop(prep, it, *slot, iter, body, |poll| Op::ForNext {
                    it,
                    counter,
                    var: *slot,
                    exit: NONE,
                    span: poll,
                });
                self.next = outer;
            }
            _ => self.effect(e),
        }
    }

    /// The registers of `base[i]`'s base and index, evaluated in that
    /// order; a local base is read in place unless the index could assign
    /// a local first (then it is copied before).
    fn index_operands(&mut self, base: &hir::Expr, i: &hir::Expr) -> (u32, u32) {
        let mut rb = self.expr(base, None);
        if self.is_local(rb) && writes_locals(i) {
            let t = self.temp();
            self.emit(Op::Move { dst: t, src: rb });
            rb = t;
        }
        let ri = self.expr(i, None);
        (rb, ri)
    }

    /// The rest of a counted `for` loop after its set-up instruction
    /// `prep`: the step instruction `next` makes (given the span its
    /// interrupt check reports), the body, the back edge, and the general
    /// loop (`ForOther`) that `prep` sends other iterables to.
    fn counted_loop(
        &mut self,
        prep: usize,
        it: u32,
        slot: u32,
        iter: &hir::Expr,
        body: &hir::Expr,
        next: impl FnOnce(u32) -> Op,
    ) {
        let head = self.here();
        let poll = self.span(body.span);
        let step = self.emit(next(poll));
        self.loops.push(Loop {
            cont: head,
            exits: vec![step],
            conts: Vec::new(),
        });
        self.effect(body);
        self.emit(Op::Jump { to: head });
        let other = self.here();
        self.patch(prep, other);
        let body_idx = self.node(body);
        let span = self.span(iter.span);
        self.emit(Op::ForOther {
            it,
            var: slot,
            e: body_idx,
            span,
        });
        self.close_loop();
    }

    /// Sets where the `continue` at `at` (a jump, or a fallback's `cont`)
    /// goes.
    fn patch_cont(&mut self, at: usize, to: u32) {
        match self.code.ops.get_mut(at) {
            Some(Op::Jump { to: t }) => *t = to,
            Some(Op::Eval { cont, .. } | Op::Exec { cont, .. }) => *cont = to,
            _ => {}
        }
    }

    /// Ends the innermost loop: its exits jump here.
    fn close_loop(&mut self) {
        let end = self.here();
        if let Some(l) = self.loops.pop() {
            for at in l.exits {
                self.patch(at, end);
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Expr(e) => self.effect(e),
            Stmt::Let {
                var,
                value,
                check: None,
            } => match var {
                Var::Local(slot) => {
                    if matches!(value.kind, H::Block(_) | H::If(..) | H::While(..) | H::For { .. }) {
                        let r = self.expr(value, None);
                        self.emit(Op::Move { dst: *slot, src: r });
                    } else {
                        self.expr(value, Some(*slot));
                    }
                }
                Var::Global(g) => {
                    let r = self.expr(value, None);
                    self.emit(Op::StoreGlobal { g: *g, src: r });
                }
                // The checker never binds a capture; evaluate for effect.
                Var::Capture(_) => {
                    self.expr(value, None);
                }
            },
            Stmt::Assign(a) if a.path.is_empty() && a.check.is_none() => {
                // `x = e` into a local writes the register directly, as the
                // last step of `e` (a block or `if` goes through a
                // temporary, as for `let`).
                if let (Var::Local(slot), None) = (a.root, a.op) {
                    if !matches!(
                        a.value.kind,
                        H::Block(_) | H::If(..) | H::While(..) | H::For { .. }
                    ) {
                        self.expr(&a.value, Some(slot));
                        return;
                    }
                }
                let span = self.span(a.span);
                if let (Some(_), Some(v)) = (a.op, literal(&a.value)) {
                    self.code.consts.push(v);
                    let k = (self.code.consts.len() - 1) as u32;
                    self.emit(Op::Assign {
                        root: a.root,
                        op: a.op,
                        src: k,
                        k: true,
                        span,
                    });
                    return;
                }
                let r = self.expr(&a.value, None);
                self.emit(Op::Assign {
                    root: a.root,
                    op: a.op,
                    src: r,
                    k: false,
                    span,
                });
            }
            Stmt::Assign(a) if self.dict_count(a) || self.assign_path(a) => {}
            Stmt::Return(e, _) => {
                let r = match e {
                    Some(e) => self.expr(e, None),
                    None => self.konst(Value::Unit, None),
                };
                self.emit(Op::Return { src: r });
            }
            Stmt::Break if !self.loops.is_empty() => {
                let at = self.emit(Op::Jump { to: NONE });
                if let Some(l) = self.loops.last_mut() {
                    l.exits.push(at);
                }
            }
            Stmt::Continue if !self.loops.is_empty() => {
                let at = self.code.ops.len();
                if let Some(l) = self.loops.last_mut() {
                    if l.cont == NONE {
                        l.conts.push(at);
                    }
                }
                let cont = self.loops.last().map_or(NONE, |l| l.cont);
                self.emit(Op::Jump { to: cont });
            }
            Stmt::Let { .. } | Stmt::Assign(_) | Stmt::Break | Stmt::Continue => {
                self.code.stmts.push(s as *const Stmt);
                let idx = (self.code.stmts.len() - 1) as u32;
                let (brk, cont) = self.loop_targets();
                self.emit(Op::Exec { s: idx, brk, cont });
            }
        }
    }
}
