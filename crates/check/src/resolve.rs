//! Name resolution and the static checks of spec §1, in one pass over the
//! AST that produces the HIR. It turns every name into a slot, every call of
//! a named function or builtin into a direct call, checks arities, methods,
//! annotations and assignability, and infers types as far as they are known
//! (gradually: what it cannot know is `Ty::Unknown` and checked at run time).
//!
//! Invariant: `check` never evaluates anything, and a program it accepts
//! has no unresolved name.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use twill_syntax::ast::{self, BinOp, ExprKind as A, StmtKind};
use twill_syntax::{Diagnostic, Severity, Span};
use twill_tensor::ops::{Host, Op};
use twill_tensor::DType;

use crate::builtins::{
    host_method_type, recv_kind, Builtin, ConstValue, Constant, Ctor, FormatField, HostFn, HostMethod, Make,
    MethodRef, Recv, TensorField, DTYPE_PARAM,
};
use crate::hir::{self, Capture, ExprKind as H, Member, Sym, Var};
use crate::suggest;
use crate::text::Text;
use crate::types::{RtType, Sig, Ty, TypeName};

/// Deepest expression nesting the checker follows before giving up with an
/// error instead of exhausting the stack.
const MAX_NESTING: u32 = twill_syntax::ast::MAX_EXPR_DEPTH;

/// Rounds of `var` inference before every inferred `var` is taken to be
/// unknown (see [`Checker::check_program`]).
const MAX_ROUNDS: usize = 4;

#[derive(Clone, Debug)]
struct GlobalInfo {
    slot: u32,
    mutable: bool,
    ty: Ty,
    /// Parameter count when the global is a named function.
    arity: Option<usize>,
    /// Top-level code may read a global only after its definition.
    visible: bool,
    /// For a `var` without an annotation, declared once at top level: the
    /// span of its name, which keys its inferred type.
    decl: Option<Span>,
    /// A named function's header and doc comment, for `help`.
    help: Option<crate::help::FnHelp>,
}

/// The checker's persistent state: the globals and structs defined so far.
/// A REPL keeps one `Checker` for the whole session.
#[derive(Clone, Debug, Default)]
pub struct Checker {
    /// Wrap every tensor expression whose dtype is known statically in a
    /// run-time assertion of that dtype (the golden harness turns this on
    /// to prove the checker and the evaluator agree).
    pub crosscheck: bool,
    /// Record every expression's type in `CheckOutput::types` (for
    /// editors and tests); off by default, since a long program would pay
    /// tens of bytes per expression for a table nobody reads.
    pub record_types: bool,
    /// Drop each top-level statement's HIR once it is checked, and return
    /// a module with an empty body (`twill check`, which runs nothing, so
    /// holds one statement's HIR at a time).
    pub discard_hir: bool,
    globals: HashMap<String, GlobalInfo>,
    structs: HashMap<String, (Rc<hir::StructDef>, Vec<Ty>)>,
    num_globals: u32,
    /// The modules a program (or earlier REPL entries) imported: the name
    /// each is bound to, and its key (spec §10.8).
    main_aliases: HashMap<String, String>,
    /// Interned names (struct fields, methods), indexed by `Sym`.
    symbols: Vec<Rc<str>>,
    sym_ids: HashMap<Rc<str>, Sym>,
}

/// What a user call calls: a global function by slot, or a value.
enum Target {
    Global(u32),
    Value(hir::Expr),
}

/// A checked call argument before it is bound to a parameter slot.
struct RawArg {
    name: Option<(String, Span)>,
    expr: hir::Expr,
}

/// Binds arguments to slots: positional ones from `first` on, keywords at
/// the position `index` gives their name (an unknown keyword has already
/// been reported, and the program will not run, so it is dropped).
fn bind_slots(raw: Vec<RawArg>, first: u32, index: impl Fn(&str) -> Option<usize>) -> hir::Args {
    let mut next = first;
    let mut slots = first;
    let mut items = Vec::with_capacity(raw.len());
    for a in raw {
        let slot = match &a.name {
            None => {
                next += 1;
                Some(next - 1)
            }
            Some((k, _)) => index(k).and_then(|i| u32::try_from(i).ok()),
        };
        if let Some(slot) = slot {
            slots = slots.max(slot + 1);
            items.push((slot, a.expr));
        }
    }
    hir::Args {
        items: items.into(),
        slots,
    }
}

/// A file's check, with the modules it imported.
struct FileOutput {
    module: Option<hir::Module>,
    diagnostics: Vec<Diagnostic>,
    types: Vec<(Span, Ty)>,
    notes: Vec<(Span, String)>,
    aliases: HashMap<String, String>,
}

pub struct CheckOutput {
    /// `None` when there were errors.
    pub module: Option<hir::Module>,
    pub diagnostics: Vec<Diagnostic>,
    /// The static type of every expression checked, by span, in the order
    /// the checker finished them (children before parents), for hover,
    /// completion and the REPL's `:type`.
    pub types: Vec<(Span, Ty)>,
    /// How the dtype of an expression arose (`` `+` of f16, bf16 gives
    /// f32 ``), by span, where the checker knows it (recorded with
    /// `types`, for hover).
    pub notes: Vec<(Span, String)>,
}

struct Local {
    name: String,
    slot: u32,
    mutable: bool,
    ty: Ty,
    /// Warn when a `let`/`var` binding is never read.
    warn_unused: bool,
    /// For a `var` without an annotation, the span of its name, which keys
    /// its inferred type.
    decl: Option<Span>,
    used: bool,
    span: Span,
}

struct FnCtx {
    /// A `fn` expression or a named function below top level: it captures
    /// by value every variable it reads from outside, top-level ones
    /// included. A top-level named function reads globals when it runs.
    is_closure: bool,
    scopes: Vec<Vec<Local>>,
    num_locals: u32,
    captures: Vec<(String, Capture, Ty)>,
    self_name: Option<(String, Ty)>,
    loop_depth: u32,
    ret: Option<Ty>,
}

impl FnCtx {
    fn new() -> FnCtx {
        FnCtx {
            is_closure: false,
            scopes: vec![Vec::new()],
            num_locals: 0,
            captures: Vec::new(),
            self_name: None,
            loop_depth: 0,
            ret: None,
        }
    }
}

/// A resolved variable reference.
#[derive(Clone)]
enum Found {
    Var { var: Var, ty: Ty, mutable: bool },
    SelfFn(Ty),
}

/// Most errors, and separately most warnings, one check shows; the rest
/// are counted in a closing diagnostic (nobody reads the hundred-and-first,
/// and a generated program can have a million).
const MAX_SHOWN: usize = 100;

struct Pass<'a> {
    ck: &'a mut Checker,
    fns: Vec<FnCtx>,
    diags: Vec<Diagnostic>,
    /// Every problem reported so far (its message by hash), to report each
    /// once in constant time.
    reported: HashSet<(Severity, Span, u64)>,
    /// Errors and warnings kept in `diags`, by kind.
    shown: [usize; 2],
    /// Errors and warnings past [`MAX_SHOWN`] of their kind: how many, and
    /// where the first was.
    hidden: [(usize, Span); 2],
    depth: u32,
    /// How an expression's dtype arose ("f16 + bf16 promotes to f32"), by
    /// span, for notes on annotation errors.
    why: HashMap<(u32, u32), String>,
    /// The note of the latest binding of a name, carried to its uses.
    why_by_name: HashMap<String, String>,
    /// Where `let`/`var` bindings are declared, for unused warnings.
    binding_span: Span,
    /// The type a function body's final expression is expected to have
    /// (its return annotation), taken by the next block (spec §10.3).
    tail_expect: Option<Ty>,
    /// The element dtypes of list literals of tensors, by span (for the
    /// result dtype of `concat` and `stack`).
    list_dtypes: HashMap<(u32, u32), Vec<Option<DType>>>,
    /// Every expression's type, for [`CheckOutput::types`].
    types: Vec<(Span, Ty)>,
    /// The dtype notes of those expressions, for [`CheckOutput::notes`].
    notes: Vec<(Span, String)>,
    /// Inferred `var` types (spec §10), by the span of the name declared:
    /// what an earlier round of the check found they hold, ...
    var_assume: HashMap<Span, Ty>,
    /// ... the type each was bound with in this round, ...
    var_bound: HashMap<Span, Ty>,
    /// ... and the join of every type assigned to it in this round.
    var_seen: HashMap<Span, Ty>,
    /// `key.` while checking the module `key`, empty for a program: the
    /// prefix of this file's top-level names in the checker's tables.
    prefix: String,
    /// The modules this file imported (and, in the REPL, earlier entries):
    /// the name each is bound to, and its key.
    aliases: HashMap<String, String>,
    /// Whether a statement other than an `import` was met at top level
    /// (an `import` after one is an error).
    past_imports: bool,
}

impl Checker {
    pub fn new() -> Checker {
        Checker::default()
    }

    /// Checks a whole program (or one REPL entry). On error the checker's
    /// state is left as it was, so a failed REPL entry defines nothing.
    /// The program is consumed: each top-level statement's tree is freed
    /// as soon as it is lowered, so a long program never holds its whole
    /// syntax tree and its whole HIR at once.
    pub fn check_program(&mut self, program: ast::Program) -> CheckOutput {
        self.check_program_with(program, Vec::new())
    }

    /// [`Checker::check_program`] for a program whose imports the session
    /// loaded: `imports` binds each import's name to its module's key.
    pub fn check_program_with(
        &mut self,
        program: ast::Program,
        imports: Vec<(String, String)>,
    ) -> CheckOutput {
        let out = self.check_file(program, None, imports);
        if out.module.is_some() {
            // In the REPL, later entries see the modules this one imported.
            self.main_aliases.extend(out.aliases);
        }
        CheckOutput {
            module: out.module,
            diagnostics: out.diagnostics,
            types: out.types,
            notes: out.notes,
        }
    }

    /// Checks the module `key` (spec §10.8): a file whose top-level names
    /// are its members, `key.name` in this checker's tables, read by the
    /// files that import it as `m.name`. Its imports must already be
    /// checked; the session loads them in order, and runs the module
    /// before the program that imported it.
    pub fn check_module(
        &mut self,
        program: ast::Program,
        key: &str,
        imports: Vec<(String, String)>,
    ) -> CheckOutput {
        let out = self.check_file(program, Some(key), imports);
        CheckOutput {
            module: out.module,
            diagnostics: out.diagnostics,
            types: out.types,
            notes: out.notes,
        }
    }

    fn check_file(
        &mut self,
        program: ast::Program,
        module: Option<&str>,
        imports: Vec<(String, String)>,
    ) -> FileOutput {
        let saved = self.clone();
        let prefix = module.map(|k| format!("{k}.")).unwrap_or_default();
        let mut aliases = if module.is_none() {
            self.main_aliases.clone()
        } else {
            HashMap::new()
        };
        let own: HashMap<String, String> = imports.into_iter().collect();
        aliases.extend(own.clone());
        // Rounds (spec §10, `var` inference): a `var` is bound with the type
        // of its first value; when an assignment gives it another type, the
        // whole check runs again from the saved state with the joined type
        // assumed from the start, until nothing widens. Types only widen,
        // so this ends; after a few rounds every inferred `var` is unknown
        // (the type a `var` had before it was inferred), which ends it.
        let mut assume: HashMap<Span, Ty> = HashMap::new();
        let mut round = 0;
        loop {
            let (module, diagnostics, (types, notes), widened, bound) =
                self.check_round(&program, std::mem::take(&mut assume), &prefix, &aliases);
            if widened.is_empty() {
                if diagnostics.iter().any(|d| d.is_error()) {
                    *self = saved;
                    return FileOutput {
                        module: None,
                        diagnostics,
                        types,
                        notes,
                        aliases: own,
                    };
                }
                return FileOutput {
                    module: Some(module),
                    diagnostics,
                    types,
                    notes,
                    aliases: own,
                };
            }
            round += 1;
            assume = if round >= MAX_ROUNDS {
                bound
                    .into_keys()
                    .chain(widened.into_keys())
                    .map(|d| (d, Ty::Unknown))
                    .collect()
            } else {
                let mut a = bound;
                a.extend(widened);
                a
            };
            *self = saved.clone();
        }
    }

    /// One round of [`Checker::check_program`]: the module, diagnostics and
    /// types, the inferred `var`s whose type widened (with the wider type),
    /// and the type each inferred `var` was bound with.
    #[allow(clippy::type_complexity)]
    fn check_round(
        &mut self,
        program: &ast::Program,
        assume: HashMap<Span, Ty>,
        prefix: &str,
        aliases: &HashMap<String, String>,
    ) -> (
        hir::Module,
        Vec<Diagnostic>,
        (Vec<(Span, Ty)>, Vec<(Span, String)>),
        HashMap<Span, Ty>,
        HashMap<Span, Ty>,
    ) {
        // A global an earlier REPL entry declared keeps its type, widened
        // when this entry's assignments disagree with it.
        let mut bound = HashMap::new();
        for g in self.globals.values_mut() {
            if let Some(d) = g.decl {
                if let Some(t) = assume.get(&d) {
                    g.ty = join_var(g.ty.clone(), t);
                }
                bound.insert(d, g.ty.clone());
            }
        }
        let mut pass = Pass {
            ck: self,
            fns: vec![FnCtx::new()],
            diags: Vec::new(),
            reported: HashSet::new(),
            shown: [0; 2],
            hidden: [(0, Span::default()); 2],
            depth: 0,
            why: HashMap::new(),
            why_by_name: HashMap::new(),
            binding_span: Span::default(),
            tail_expect: None,
            list_dtypes: HashMap::new(),
            types: Vec::new(),
            notes: Vec::new(),
            var_assume: assume,
            var_bound: bound,
            var_seen: HashMap::new(),
            prefix: prefix.to_string(),
            aliases: aliases.clone(),
            past_imports: false,
        };
        let module = pass.program(program);
        pass.summarise_hidden();
        let widened: HashMap<Span, Ty> = pass
            .var_seen
            .iter()
            .filter_map(|(d, seen)| {
                let b = pass.var_bound.get(d)?;
                let j = join_var(b.clone(), seen);
                (j != *b).then_some((*d, j))
            })
            .collect();
        (
            module,
            pass.diags,
            (pass.types, pass.notes),
            widened,
            pass.var_bound,
        )
    }

    /// The symbol of a name, interning it on first use.
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(s) = self.sym_ids.get(name) {
            return *s;
        }
        let s = Sym(u32::try_from(self.symbols.len()).unwrap_or(u32::MAX));
        let name: Rc<str> = name.into();
        self.symbols.push(name.clone());
        self.sym_ids.insert(name, s);
        s
    }

    /// Global names indexed by slot, for run-time messages.
    pub fn global_names(&self) -> Vec<Rc<str>> {
        let mut names: Vec<Rc<str>> = vec!["".into(); self.num_globals as usize];
        for (name, g) in &self.globals {
            if let Some(n) = names.get_mut(g.slot as usize) {
                *n = name.as_str().into();
            }
        }
        names
    }

    /// The static type of a global, for the REPL and tests.
    pub fn global_type(&self, name: &str) -> Option<&Ty> {
        self.globals.get(name).map(|g| &g.ty)
    }

    /// Binds the top-level name `name` as a value of unknown type that
    /// the caller sets (the REPL's `_`, the last value printed): its slot.
    pub fn bind_value(&mut self, name: &str) -> u32 {
        if let Some(g) = self.globals.get_mut(name) {
            g.mutable = false;
            g.ty = Ty::Unknown;
            g.arity = None;
            g.visible = true;
            g.decl = None;
            g.help = None;
            return g.slot;
        }
        let slot = self.num_globals;
        self.num_globals += 1;
        self.globals.insert(
            name.to_string(),
            GlobalInfo {
                slot,
                mutable: false,
                ty: Ty::Unknown,
                arity: None,
                visible: true,
                decl: None,
                help: None,
            },
        );
        slot
    }

    /// The names defined at top level so far (not the modules' own), for
    /// completion.
    pub fn top_level_names(&self) -> Vec<String> {
        self.globals
            .keys()
            .chain(self.structs.keys())
            .filter(|k| !k.contains('.') && !k.starts_with("__"))
            .cloned()
            .collect()
    }

    /// The names modules are imported under so far.
    pub fn module_aliases(&self) -> Vec<String> {
        self.main_aliases.keys().cloned().collect()
    }

    /// The public names of the module imported as `alias`.
    pub fn module_members(&self, alias: &str) -> Vec<String> {
        let Some(key) = self.main_aliases.get(alias) else {
            return Vec::new();
        };
        let prefix = format!("{key}.");
        self.globals
            .keys()
            .chain(self.structs.keys())
            .filter_map(|k| k.strip_prefix(prefix.as_str()))
            .filter(|k| !k.starts_with('_') && !k.contains('.'))
            .map(str::to_string)
            .collect()
    }

    /// The help text of a name as the REPL's `:help NAME` shows it: a
    /// function defined so far (or of a module imported so far, `m.f`),
    /// else a builtin, operation, constant, method or tensor field.
    pub fn help(&self, path: &str) -> Option<String> {
        help_in(&self.globals, &self.main_aliases, "", path)
    }
}

fn expr(kind: H, span: Span) -> hir::Expr {
    hir::Expr { kind, span }
}

/// A call of the builtin `b` with `args` in its first parameters.
fn builtin_call(b: Builtin, args: Vec<hir::Expr>) -> H {
    let slots = args.len() as u32;
    H::Builtin(
        b,
        hir::Args {
            items: (0..).zip(args).collect(),
            slots,
        },
    )
}

/// A Str literal.
fn str_lit(s: &str, span: Span) -> hir::Expr {
    expr(H::Str(Rc::new(Text::new(s.to_string()))), span)
}

/// The Str concatenation (`+`) of `pieces`, left to right; `None` when
/// there are none.
fn concat(pieces: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
    pieces
        .into_iter()
        .reduce(|acc, p| expr(H::Binary(BinOp::Add, Box::new(acc), Box::new(p)), span))
}

/// A block as an expression. A block of one expression statement is that
/// expression: names are already slots, so the block adds nothing but a
/// level of evaluation.
fn block_expr(mut stmts: Vec<hir::Stmt>, span: Span) -> hir::Expr {
    if stmts.len() == 1 && matches!(stmts[0], hir::Stmt::Expr(_)) {
        if let Some(hir::Stmt::Expr(e)) = stmts.pop() {
            return e;
        }
    }
    expr(H::Block(stmts), span)
}

/// `a` or `a.b.c` when `e` is a name or a chain of fields of one.
// Every other expression names no module.
#[allow(clippy::wildcard_enum_match_arm)]
fn dotted_path(e: &ast::Expr) -> Option<String> {
    match &e.kind {
        A::Name(n) => Some(n.clone()),
        A::Field { base, name } => Some(format!("{}.{}", dotted_path(base)?, name.name)),
        _ => None,
    }
}

/// The help text of `path` (`name` or `module.name`) as seen from a file
/// whose top-level names have `prefix` and whose imports are `aliases`:
/// the file's own function, else a module's, else a builtin's.
fn help_in(
    globals: &HashMap<String, GlobalInfo>,
    aliases: &HashMap<String, String>,
    prefix: &str,
    path: &str,
) -> Option<String> {
    let own = |key: &str| globals.get(key).and_then(|g| g.help.as_ref()).map(|h| h.text());
    if let Some((m, member)) = path.rsplit_once('.') {
        let key = aliases.get(m)?;
        return own(&format!("{key}.{member}"));
    }
    own(&format!("{prefix}{path}")).or_else(|| crate::help::builtin_help(path))
}

/// The names a declaration's pattern binds, in order (`_` binds none).
fn pattern_names<'p>(p: &'p ast::Pattern, out: &mut Vec<&'p ast::Ident>) {
    use ast::PatternKind as P;
    match &p.kind {
        P::Name(n) if n.name != "_" => out.push(n),
        P::Tuple(items) => items.iter().for_each(|p| pattern_names(p, out)),
        P::Ctor { args, .. } => args.iter().for_each(|p| pattern_names(p, out)),
        P::Name(_) | P::Int(_) | P::Float(_) | P::Str(_) | P::Bool(_) => {}
    }
}

/// The join of two types a `var` holds (spec §10): the same type, a
/// tensor of unknown dtype for tensors of two dtypes, an Arr of the joined
/// elements, else unknown.
// Every other pair of types joins to unknown.
#[allow(clippy::wildcard_enum_match_arm)]
fn join_var(a: Ty, b: &Ty) -> Ty {
    match (a, b) {
        (a, b) if a == *b => a,
        (Ty::Tensor(_), Ty::Tensor(_)) => Ty::Tensor(None),
        (Ty::Arr(x), Ty::Arr(y)) => Ty::Arr(Box::new(join_var(*x, y))),
        _ => Ty::Unknown,
    }
}

/// The dtype of `a op b` when an operand is a tensor, by the registry's
/// rules (a comparison is bool even when an operand's dtype is unknown).
fn tensor_binop_dtype(op: BinOp, a: &Ty, b: &Ty) -> Option<DType> {
    use twill_tensor::ops::dtypes;
    let inputs = [dtype_input(a), dtype_input(b)];
    let result = match tensor_binary_op(op) {
        Some(bop) => dtypes::binary(bop, inputs[0], inputs[1]),
        None => dtypes::result(Op::Matmul, &inputs),
    };
    result.or(if op.is_comparison() {
        Some(DType::Bool)
    } else {
        None
    })
}

/// The type of `a op b` as far as the rules tell it, reporting nothing (a
/// compound assignment's value, for an inferred `var`).
fn silent_binop(op: BinOp, a: &Ty, b: &Ty) -> Ty {
    if is_structural_eq(op, a, b) {
        return Ty::Bool;
    }
    if matches!(a, Ty::Tensor(_)) || matches!(b, Ty::Tensor(_)) {
        return Ty::Tensor(tensor_binop_dtype(op, a, b));
    }
    if !a.is_known() || !b.is_known() {
        return Ty::Unknown;
    }
    host_binop(op, a, b).unwrap_or(Ty::Unknown)
}

/// `==`/`!=` between a tensor and a value of another kind (an Arr, a Str,
/// a struct): a structural comparison giving a Bool (`x.shape == [2, 3]`),
/// as `==` is on host values, not an elementwise one.
fn is_structural_eq(op: BinOp, a: &Ty, b: &Ty) -> bool {
    let other_kind = |t: &Ty| t.is_known() && !matches!(t, Ty::Tensor(_) | Ty::Int | Ty::F64 | Ty::Bool);
    matches!(op, BinOp::Eq | BinOp::Ne)
        && (matches!(a, Ty::Tensor(_)) && other_kind(b) || matches!(b, Ty::Tensor(_)) && other_kind(a))
}

fn join(a: Ty, b: &Ty) -> Ty {
    if a == *b {
        a
    } else {
        Ty::Unknown
    }
}

/// What the dtype rules need to know about a static type.
fn dtype_input(t: &Ty) -> twill_tensor::ops::dtypes::Input {
    use twill_tensor::ops::dtypes::Input;
    use twill_tensor::promote::ScalarKind;
    match t {
        Ty::Tensor(d) => Input::Tensor(*d),
        Ty::Int => Input::Scalar(ScalarKind::Int),
        Ty::F64 => Input::Scalar(ScalarKind::Float),
        Ty::Bool => Input::Scalar(ScalarKind::Bool),
        Ty::Unknown
        | Ty::Unit
        | Ty::Str
        | Ty::DType
        | Ty::Range
        | Ty::Tape
        | Ty::Format
        | Ty::Figure
        | Ty::Arr(_)
        | Ty::Dict(..)
        | Ty::Tuple(_)
        | Ty::Res(..)
        | Ty::Opt(_)
        | Ty::Fn(..)
        | Ty::Struct(_) => Input::Other,
    }
}

/// The tensor operator of a language operator (`@` is `matmul`, not one).
fn tensor_binary_op(op: BinOp) -> Option<twill_tensor::ops::BinaryOp> {
    use twill_tensor::ops::BinaryOp as T;
    Some(match op {
        BinOp::Add => T::Add,
        BinOp::Sub => T::Sub,
        BinOp::Mul => T::Mul,
        BinOp::Div => T::Div,
        BinOp::FloorDiv => T::FloorDiv,
        BinOp::Mod => T::Mod,
        BinOp::Pow => T::Pow,
        BinOp::Eq => T::Eq,
        BinOp::Ne => T::Ne,
        BinOp::Lt => T::Lt,
        BinOp::Le => T::Le,
        BinOp::Gt => T::Gt,
        BinOp::Ge => T::Ge,
        BinOp::BitAnd => T::BitAnd,
        BinOp::BitOr => T::BitOr,
        BinOp::BitXor => T::BitXor,
        BinOp::Shl => T::Shl,
        BinOp::Shr => T::Shr,
        BinOp::MatMul => return None,
    })
}

fn is_host_scalar(t: &Ty) -> bool {
    matches!(t, Ty::Int | Ty::F64 | Ty::Bool | Ty::Str | Ty::Unit | Ty::DType)
}

/// The result of a binary operator on two host values, `None` when the
/// evaluator would reject the combination. The evaluator implements exactly
/// these rules (see `eval::ops`).
pub fn host_binop(op: BinOp, a: &Ty, b: &Ty) -> Option<Ty> {
    use Ty::*;
    let numeric = |t: &Ty| matches!(t, Int | F64);
    if matches!(op, BinOp::Eq | BinOp::Ne) {
        return Some(Bool);
    }
    match (a, b) {
        // `==` and `!=` returned above; they are listed with the comparisons.
        (Int, Int) => Some(match op {
            BinOp::Div => F64,
            // An Int power is an Int or an F64 depending on the exponent's sign.
            BinOp::Pow => Unknown,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Bool,
            BinOp::MatMul => return None,
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::FloorDiv
            | BinOp::Mod
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::Shl
            | BinOp::Shr => Int,
        }),
        (x, y) if numeric(x) && numeric(y) => match op {
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Some(Bool),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod | BinOp::Pow => {
                Some(F64)
            }
            BinOp::MatMul | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => None,
        },
        (Bool, Bool) => match op {
            BinOp::Eq | BinOp::Ne | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => Some(Bool),
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::Div
            | BinOp::FloorDiv
            | BinOp::Mod
            | BinOp::Pow
            | BinOp::MatMul
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::Shl
            | BinOp::Shr => None,
        },
        (Str, Str) => match op {
            BinOp::Add => Some(Str),
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Some(Bool),
            BinOp::Sub
            | BinOp::Mul
            | BinOp::Div
            | BinOp::FloorDiv
            | BinOp::Mod
            | BinOp::Pow
            | BinOp::MatMul
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::Shl
            | BinOp::Shr => None,
        },
        (Arr(x), Arr(y)) if op == BinOp::Add => Some(Arr(Box::new(join((**x).clone(), y)))),
        // Repetition (spec §10.7): `s * n`, `a * n`, either order.
        (Str, Int) | (Int, Str) if op == BinOp::Mul => Some(Str),
        (Arr(x), Int) | (Int, Arr(x)) if op == BinOp::Mul => Some(Arr(x.clone())),
        _ => None,
    }
}

impl Pass<'_> {
    fn err(&mut self, d: Diagnostic) {
        // A function's annotations are read when its name is declared and
        // again when its body is checked: report each problem once.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        d.message.hash(&mut h);
        if !self.reported.insert((d.severity, d.span, h.finish())) {
            return;
        }
        let kind = usize::from(d.severity == Severity::Warning);
        if self.shown[kind] < MAX_SHOWN {
            self.shown[kind] += 1;
            self.diags.push(d);
            return;
        }
        let hidden = &mut self.hidden[kind];
        if hidden.0 == 0 {
            hidden.1 = d.span;
        }
        hidden.0 += 1;
    }

    /// One closing diagnostic for each kind that had more than
    /// [`MAX_SHOWN`], at the first one not shown.
    fn summarise_hidden(&mut self) {
        let [(errors, at_error), (warnings, at_warning)] = self.hidden;
        if errors > 0 {
            self.diags.push(
                Diagnostic::error(at_error, format!("{errors} more errors not shown"))
                    .with_label("the first of them")
                    .with_note(format!("a check shows at most {MAX_SHOWN} errors")),
            );
        }
        if warnings > 0 {
            self.diags.push(
                Diagnostic::warning(at_warning, format!("{warnings} more warnings not shown"))
                    .with_label("the first of them")
                    .with_note(format!("a check shows at most {MAX_SHOWN} warnings")),
            );
        }
    }

    /// Every name a bare identifier could mean here, for "did you mean":
    /// the variables in scope, the program's globals and structs, the
    /// builtins, constants and dtypes.
    fn known_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for f in &self.fns {
            for scope in &f.scopes {
                names.extend(scope.iter().map(|l| l.name.as_str()));
            }
            names.extend(f.captures.iter().map(|(n, _, _)| n.as_str()));
        }
        // This file's own top-level names: a module's without its prefix.
        let prefix = self.prefix.as_str();
        for k in self.ck.globals.keys().chain(self.ck.structs.keys()) {
            if prefix.is_empty() {
                if !k.contains('.') {
                    names.push(k);
                }
            } else if let Some(own) = k.strip_prefix(prefix) {
                names.push(own);
            }
        }
        names.extend(Builtin::all().map(|b| b.name()));
        names.extend(Constant::all().map(|c| c.name()));
        names.extend(DType::ALL.iter().map(|d| d.name()));
        names
    }

    /// Whether an error reported now is shown (the first [`MAX_SHOWN`]
    /// are): a "did you mean" is worked out only for those.
    fn showing(&self) -> bool {
        self.shown[0] < MAX_SHOWN
    }

    /// "did you mean" for an unknown bare name. Only for an error that is
    /// shown: gathering every name in scope for each of thousands of
    /// errors past the cap made a 12 MB source of them quadratic.
    fn name_help(&self, n: &str) -> Option<String> {
        if !self.showing() {
            return None;
        }
        // The standard library's names before version 2 (`nn_mlp_init`)
        // are module members now (spec §10.8).
        for m in ["nn", "optim", "amp", "float"] {
            if let Some(member) = n.strip_prefix(m).and_then(|r| r.strip_prefix('_')) {
                if !member.is_empty() {
                    return Some(format!(
                        "the standard library is modules: `import {m}` at the top, then `{m}.{member}`"
                    ));
                }
            }
        }
        let names = self.known_names();
        suggest::did_you_mean(n, names.iter().copied())
    }

    /// The key of a top-level name of the file being checked in the
    /// checker's tables: itself in the program, `key.name` in the module
    /// `key` (spec §10.8), so modules' names never collide.
    fn gkey<'n>(&self, name: &'n str) -> std::borrow::Cow<'n, str> {
        if self.prefix.is_empty() {
            std::borrow::Cow::Borrowed(name)
        } else {
            std::borrow::Cow::Owned(format!("{}{name}", self.prefix))
        }
    }

    /// The key of a struct name as written: `m.Point` is the struct
    /// `Point` of the module bound to `m`, any other name this file's own.
    fn struct_key(&self, name: &str) -> String {
        match name.rsplit_once('.') {
            Some((m, member)) => match self.aliases.get(m) {
                Some(key) => format!("{key}.{member}"),
                None => name.to_string(),
            },
            None => self.gkey(name).into_owned(),
        }
    }

    fn cur(&mut self) -> &mut FnCtx {
        // There is always at least the main context.
        let n = self.fns.len() - 1;
        &mut self.fns[n]
    }

    fn at_top_level(&self) -> bool {
        self.fns.len() == 1 && self.fns[0].scopes.len() == 1
    }

    // ---------------------------------------------------------- declarations

    fn program(&mut self, program: &ast::Program) -> hir::Module {
        self.predeclare(&program.stmts);
        let mut hoisted = Vec::new();
        let keep = !self.ck.discard_hir;
        let mut stmts = Vec::with_capacity(if keep { program.stmts.len() } else { 1 });
        for s in &program.stmts {
            if !matches!(s.kind, StmtKind::Import(_)) {
                self.past_imports = true;
            }
            if let StmtKind::Fn(decl) = &s.kind {
                if let Some(name) = &decl.name {
                    let func = self.function(decl, None);
                    if let Some(g) = self.ck.globals.get(&*self.gkey(&name.name)).filter(|_| keep) {
                        hoisted.push((g.slot, Rc::new(func)));
                    }
                    continue;
                }
            }
            self.stmt(s, &mut stmts);
            if !keep {
                stmts.clear();
            }
        }
        let ends_with_expr = matches!(stmts.last(), Some(hir::Stmt::Expr(_)));
        let main = &self.fns[0];
        hir::Module {
            main: hir::Function {
                name: "<main>".into(),
                params: Vec::new(),
                required: 0,
                ret: None,
                num_locals: main.num_locals,
                body: expr(H::Block(stmts), Span::default()),
                span: Span::default(),
            },
            num_globals: self.ck.num_globals,
            symbols: self.ck.symbols.clone(),
            hoisted,
            ends_with_expr,
        }
    }

    /// Registers every top-level name before any code is resolved, so that
    /// functions can call functions defined later and structs can refer to
    /// each other.
    fn predeclare(&mut self, stmts: &[ast::Stmt]) {
        // `finfo` and `iinfo` name their structs in annotations too.
        self.info_struct(HostFn::Finfo);
        self.info_struct(HostFn::Iinfo);
        for s in stmts {
            if let StmtKind::Struct(decl) = &s.kind {
                if self.ck.structs.contains_key(&*self.gkey(&decl.name.name))
                    || Builtin::from_name(&decl.name.name).is_some()
                {
                    self.err(Diagnostic::error(
                        decl.name.span,
                        format!("`{}` is already defined", decl.name.name),
                    ));
                    continue;
                }
                let syms = decl.fields.iter().map(|(n, _)| self.ck.intern(&n.name)).collect();
                let def = Rc::new(hir::StructDef {
                    name: (*self.gkey(&decl.name.name)).into(),
                    fields: decl.fields.iter().map(|(n, _)| n.name.as_str().into()).collect(),
                    syms,
                });
                self.ck
                    .structs
                    .insert(self.gkey(&decl.name.name).into_owned(), (def, Vec::new()));
            }
        }
        for s in stmts {
            if let StmtKind::Struct(decl) = &s.kind {
                let mut seen: Vec<&str> = Vec::new();
                let mut tys = Vec::new();
                for (n, t) in &decl.fields {
                    if seen.contains(&n.name.as_str()) {
                        self.err(Diagnostic::error(
                            n.span,
                            format!("field `{}` is declared twice", n.name),
                        ));
                    }
                    seen.push(&n.name);
                    tys.push(self.type_expr(t));
                }
                let key = self.gkey(&decl.name.name).into_owned();
                if let Some(entry) = self.ck.structs.get_mut(&key) {
                    entry.1 = tys;
                }
            }
        }
        // A top-level `var` without an annotation has its type inferred
        // (keyed by its name's span) when it is the name's only top-level
        // declaration; a name declared twice keeps the unknown type.
        let mut declared: HashMap<&str, usize> = HashMap::new();
        let mut inferred: Vec<&ast::Ident> = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::Let {
                    mutable, name, ty, ..
                } => {
                    self.declare_global(&name.name, *mutable, None, false);
                    *declared.entry(&name.name).or_default() += 1;
                    if *mutable && ty.is_none() {
                        inferred.push(name);
                    }
                }
                StmtKind::LetPattern { mutable, pattern, .. } => {
                    let mut names = Vec::new();
                    pattern_names(pattern, &mut names);
                    for n in names {
                        self.declare_global(&n.name, *mutable, None, false);
                        *declared.entry(&n.name).or_default() += 1;
                        if *mutable {
                            inferred.push(n);
                        }
                    }
                }
                StmtKind::Fn(decl) => {
                    if let Some(name) = &decl.name {
                        let ty = self.fn_type(decl);
                        self.record_binding(name.span, &ty);
                        self.declare_global(&name.name, false, Some(decl.params.len()), true);
                        let key = self.gkey(&name.name).into_owned();
                        if let Some(g) = self.ck.globals.get_mut(&key) {
                            g.ty = ty;
                            g.help = decl.signature.clone().map(|signature| crate::help::FnHelp {
                                signature,
                                doc: decl.doc.clone(),
                            });
                        }
                    }
                }
                // Structs are declared when reached; the rest declare no global.
                StmtKind::Assign { .. }
                | StmtKind::Struct(_)
                | StmtKind::Expr(_)
                | StmtKind::Return(_)
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Import(_)
                | StmtKind::Error => {}
            }
        }
        for n in inferred {
            if declared.get(n.name.as_str()) == Some(&1) {
                let key = self.gkey(&n.name).into_owned();
                if let Some(g) = self.ck.globals.get_mut(&key) {
                    g.decl = Some(n.span);
                }
            }
        }
    }

    fn declare_global(&mut self, name: &str, mutable: bool, arity: Option<usize>, visible: bool) {
        let name = &*self.gkey(name).into_owned();
        match self.ck.globals.get_mut(name) {
            Some(g) => {
                // A rebinding at top level reuses the slot; it is a function
                // only if every binding of the name is that function.
                g.mutable = mutable;
                g.arity = arity;
                g.visible |= visible;
                g.ty = Ty::Unknown;
                g.decl = None;
                g.help = None;
            }
            None => {
                let slot = self.ck.num_globals;
                self.ck.num_globals += 1;
                self.ck.globals.insert(
                    name.to_string(),
                    GlobalInfo {
                        slot,
                        mutable,
                        ty: Ty::Unknown,
                        arity,
                        visible,
                        decl: None,
                        help: None,
                    },
                );
            }
        }
    }

    fn fn_type(&mut self, decl: &ast::FnDecl) -> Ty {
        let params = decl
            .params
            .iter()
            .map(|p| p.ty.as_ref().map(|t| self.type_expr(t)).unwrap_or(Ty::Unknown))
            .collect();
        let ret = decl
            .ret
            .as_ref()
            .map(|t| self.type_expr(t))
            .unwrap_or(Ty::Unknown);
        let sig = Sig {
            names: decl
                .params
                .iter()
                .map(|p| Rc::from(p.name.name.as_str()))
                .collect(),
            required: decl
                .params
                .iter()
                .position(|p| p.default.is_some())
                .unwrap_or(decl.params.len()),
        };
        Ty::Fn(Some(params), Box::new(ret), Some(Rc::new(sig)))
    }

    fn type_expr(&mut self, t: &ast::TypeExpr) -> Ty {
        match &t.kind {
            ast::TypeKind::Tuple(items) if items.is_empty() => Ty::Unit,
            ast::TypeKind::Tuple(items) => Ty::Tuple(items.iter().map(|t| self.type_expr(t)).collect()),
            ast::TypeKind::Fn { params, ret } => {
                let ps = params.iter().map(|p| self.type_expr(p)).collect();
                Ty::Fn(Some(ps), Box::new(self.type_expr(ret)), None)
            }
            ast::TypeKind::Named { name, args } => {
                let n = name.name.as_str();
                let want = |this: &mut Self, k: usize| {
                    if args.len() != k {
                        this.err(Diagnostic::error(
                            t.span,
                            format!(
                                "type `{n}` takes {k} type argument{}",
                                if k == 1 { "" } else { "s" }
                            ),
                        ));
                        return false;
                    }
                    true
                };
                use TypeName as T;
                let Some(tn) = TypeName::from_name(n) else {
                    let key = self.struct_key(n);
                    return match self.ck.structs.get(&key) {
                        Some((def, _)) if args.is_empty() => Ty::Struct(def.clone()),
                        _ => {
                            self.err(Diagnostic::error(name.span, format!("unknown type `{n}`")));
                            Ty::Unknown
                        }
                    };
                };
                match tn {
                    T::Int
                    | T::F64
                    | T::Bool
                    | T::Str
                    | T::DType
                    | T::Tape
                    | T::Format
                    | T::Figure
                    | T::Unit
                    | T::Range
                        if !args.is_empty() =>
                    {
                        want(self, 0);
                        Ty::Unknown
                    }
                    T::Int => Ty::Int,
                    T::F64 => Ty::F64,
                    T::Bool => Ty::Bool,
                    T::Str => Ty::Str,
                    T::DType => Ty::DType,
                    T::Tape => Ty::Tape,
                    T::Format => Ty::Format,
                    T::Figure => Ty::Figure,
                    T::Unit => Ty::Unit,
                    T::Range => Ty::Range,
                    T::Arr | T::Opt => {
                        if !want(self, 1) {
                            return Ty::Unknown;
                        }
                        let inner = Box::new(self.type_expr(&args[0]));
                        if tn == T::Arr {
                            Ty::Arr(inner)
                        } else {
                            Ty::Opt(inner)
                        }
                    }
                    T::Res | T::Dict => {
                        if !want(self, 2) {
                            return Ty::Unknown;
                        }
                        let (a, b) = (
                            Box::new(self.type_expr(&args[0])),
                            Box::new(self.type_expr(&args[1])),
                        );
                        if tn == T::Res {
                            Ty::Res(a, b)
                        } else {
                            Ty::Dict(a, b)
                        }
                    }
                    T::Tensor => match args.as_slice() {
                        [] => Ty::Tensor(None),
                        [a] => match &a.kind {
                            ast::TypeKind::Named { name, args } if args.is_empty() => {
                                match DType::from_name(&name.name) {
                                    Some(d) => Ty::Tensor(Some(d)),
                                    None => {
                                        self.err(
                                            Diagnostic::error(
                                                a.span,
                                                format!("unknown dtype `{}`", name.name),
                                            )
                                            .with_note("the dtypes are bool i8 i32 bf16 f16 f32 f64"),
                                        );
                                        Ty::Unknown
                                    }
                                }
                            }
                            ast::TypeKind::Named { .. }
                            | ast::TypeKind::Fn { .. }
                            | ast::TypeKind::Tuple(_) => {
                                self.err(Diagnostic::error(a.span, "expected a dtype name"));
                                Ty::Unknown
                            }
                        },
                        _ => {
                            want(self, 1);
                            Ty::Unknown
                        }
                    },
                }
            }
        }
    }

    // -------------------------------------------------------------- lookup

    fn find(&mut self, depth: usize, name: &str) -> Option<Found> {
        let ctx = &mut self.fns[depth];
        for scope in ctx.scopes.iter_mut().rev() {
            if let Some(l) = scope.iter_mut().rev().find(|l| l.name == name) {
                l.used = true;
                return Some(Found::Var {
                    var: Var::Local(l.slot),
                    ty: l.ty.clone(),
                    mutable: l.mutable,
                });
            }
        }
        if let Some(i) = ctx.captures.iter().position(|c| c.0 == name) {
            return Some(Found::Var {
                var: Var::Capture(i as u32),
                ty: ctx.captures[i].2.clone(),
                mutable: false,
            });
        }
        if let Some((n, ty)) = &ctx.self_name {
            if n == name {
                return Some(Found::SelfFn(ty.clone()));
            }
        }
        if depth == 0 {
            let top_level_code = self.fns.len() == 1;
            return self.ck.globals.get(&*self.gkey(name)).and_then(|g| {
                if top_level_code && !g.visible {
                    None
                } else {
                    Some(Found::Var {
                        var: Var::Global(g.slot),
                        ty: g.ty.clone(),
                        mutable: g.mutable,
                    })
                }
            });
        }
        let outer = self.find(depth - 1, name)?;
        let (src, ty) = match outer {
            Found::Var {
                var: Var::Global(g),
                ty,
                mutable,
                ..
            } if !self.fns[depth].is_closure || !self.captures_global(name) => {
                return Some(Found::Var {
                    var: Var::Global(g),
                    ty,
                    mutable,
                })
            }
            Found::Var { var, ty, .. } => (Capture::Var(var), ty),
            Found::SelfFn(ty) => (Capture::SelfFn, ty),
        };
        let ctx = &mut self.fns[depth];
        ctx.captures.push((name.to_string(), src, ty.clone()));
        Some(Found::Var {
            var: Var::Capture((ctx.captures.len() - 1) as u32),
            ty,
            mutable: false,
        })
    }

    /// Whether a closure reading the global `name` captures its value
    /// (closures capture by value, spec §3). A top-level variable is
    /// captured when the closure is created inside a named function, or
    /// when it is already defined where top-level code creates the closure.
    /// Named functions, and variables that top-level code defines further
    /// down, are read when the closure runs (so `let f = fn(n) { … f(n - 1)
    /// … }` can recurse).
    fn captures_global(&self, name: &str) -> bool {
        let in_named_fn = self.fns.get(1).is_some_and(|c| !c.is_closure);
        self.ck
            .globals
            .get(&*self.gkey(name))
            .is_some_and(|g| g.arity.is_none() && (g.visible || in_named_fn))
    }

    fn lookup(&mut self, name: &str) -> Option<Found> {
        let depth = self.fns.len() - 1;
        self.find(depth, name)
    }

    /// The global `name` of this file when it has this slot.
    fn global_at(&self, name: &str, slot: u32) -> Option<&GlobalInfo> {
        self.ck.globals.get(&*self.gkey(name)).filter(|g| g.slot == slot)
    }

    /// The parameter count of the named function `name` resolved to, when
    /// it is a global one. By name, not by scanning every global for the
    /// slot: a program of many functions made that quadratic.
    fn global_arity(&self, name: &str, var: Var) -> Option<usize> {
        match var {
            Var::Global(slot) => self.global_at(name, slot).and_then(|g| g.arity),
            Var::Local(_) | Var::Capture(_) => None,
        }
    }

    /// Declares a local (or, directly at top level, a global) and returns
    /// where it lives.
    fn declare(&mut self, name: &str, mutable: bool, ty: Ty) -> Var {
        let span = std::mem::take(&mut self.binding_span);
        if span != Span::default() {
            self.record_binding(span, &ty);
        }
        if self.at_top_level() {
            let key = self.gkey(name).into_owned();
            if let Some(g) = self.ck.globals.get_mut(&key) {
                g.visible = true;
                g.ty = ty;
                g.mutable = mutable;
                return Var::Global(g.slot);
            }
            self.declare_global(name, mutable, None, true);
            let key = self.gkey(name).into_owned();
            if let Some(g) = self.ck.globals.get_mut(&key) {
                g.ty = ty;
                return Var::Global(g.slot);
            }
        }
        let ctx = self.cur();
        let slot = ctx.num_locals;
        ctx.num_locals += 1;
        let n = ctx.scopes.len() - 1;
        ctx.scopes[n].push(Local {
            name: name.to_string(),
            slot,
            mutable,
            ty,
            warn_unused: span != Span::default(),
            decl: None,
            used: false,
            span,
        });
        Var::Local(slot)
    }

    // ---------------------------------------------------------- statements

    fn block(&mut self, b: &ast::Block) -> (Vec<hir::Stmt>, Ty) {
        self.cur().scopes.push(Vec::new());
        // Sized to the block (a `Vec` grows to 4 slots at its first push,
        // which would make a one-line block cost four statements).
        let mut out = Vec::with_capacity(b.stmts.len());
        let mut ty = Ty::Unit;
        let expect = self.tail_expect.take();
        for (i, s) in b.stmts.iter().enumerate() {
            let t = match (&s.kind, &expect) {
                (StmtKind::Expr(e), Some(want)) if i + 1 == b.stmts.len() => {
                    let (h, t) = self.expr_expect(e, Some(want));
                    out.push(hir::Stmt::Expr(h));
                    t
                }
                _ => self.stmt(s, &mut out),
            };
            if i + 1 == b.stmts.len() {
                ty = t;
            }
        }
        self.pop_scope();
        if !matches!(out.last(), Some(hir::Stmt::Expr(_))) {
            ty = Ty::Unit;
        }
        out.shrink_to_fit();
        (out, ty)
    }

    /// Resolves one statement into `out`; returns its type when it is an
    /// expression statement (`Unit` otherwise).
    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<hir::Stmt>) -> Ty {
        match &s.kind {
            StmtKind::Let {
                mutable,
                name,
                ty,
                value,
            } => {
                let ann = ty.as_ref().map(|t| self.type_expr(t));
                let (v, vty) = self.expr_expect(value, ann.as_ref());
                let mut check = None;
                let bind_ty = match ann {
                    Some(ann) => {
                        if !vty.fits(&ann) {
                            let mut d = Diagnostic::error(
                                value.span,
                                format!("`{}` is annotated `{ann}` but this value is `{vty}`", name.name),
                            )
                            .with_label(format!("this is {vty}"))
                            .with_secondary(ty.as_ref().map(|t| t.span).unwrap_or(name.span), "annotation");
                            if let Some(w) = self.why.get(&(value.span.start, value.span.end)) {
                                d = d.with_note(format!("this is {vty}: {w}"));
                            }
                            self.err(d);
                        }
                        if vty != ann {
                            check = Some(RtType::from_ty(&ann));
                        }
                        ann
                    }
                    None if *mutable => self.inferred_type(name, vty),
                    None => vty,
                };
                match self.why.get(&(value.span.start, value.span.end)).cloned() {
                    Some(w) => {
                        if self.ck.record_types {
                            self.notes.push((name.span, w.clone()));
                        }
                        self.why_by_name.insert(name.name.clone(), w)
                    }
                    None => self.why_by_name.remove(&name.name),
                };
                if check.is_none() && self.ck.crosscheck {
                    if let Ty::Tensor(Some(d)) = bind_ty {
                        check = Some(RtType::Crosscheck(d));
                    }
                }
                self.binding_span = name.span;
                let inferred = *mutable && ty.is_none();
                let var = self.declare(&name.name, *mutable, bind_ty);
                if inferred {
                    self.mark_inferred(var, name.span);
                }
                out.push(hir::Stmt::Let {
                    var,
                    value: v,
                    check: check.map(Box::new),
                });
                Ty::Unit
            }
            StmtKind::LetPattern {
                mutable,
                pattern,
                value,
            } => {
                let (v, vty) = self.expr(value);
                self.destructure(pattern, v, vty, *mutable, out);
                Ty::Unit
            }
            StmtKind::Assign { target, op, value } => {
                self.assign(target, *op, value, s.span, out);
                Ty::Unit
            }
            StmtKind::Fn(decl) => {
                // A named function below top level: a closure bound to a local.
                let name = decl.name.as_ref().map(|n| n.name.clone()).unwrap_or_default();
                let fty = self.fn_type(decl);
                let var = self.declare(&name, false, fty);
                let (kind, _) = self.closure(decl, Some(name));
                out.push(hir::Stmt::Let {
                    var,
                    value: expr(kind, decl.span),
                    check: None,
                });
                Ty::Unit
            }
            StmtKind::Struct(decl) => {
                if !self.at_top_level() {
                    self.err(Diagnostic::error(
                        decl.name.span,
                        "structs can only be declared at top level",
                    ));
                }
                Ty::Unit
            }
            StmtKind::Expr(e) => {
                let (h, ty) = self.expr(e);
                out.push(hir::Stmt::Expr(h));
                ty
            }
            StmtKind::Return(e) => {
                if self.fns.len() == 1 {
                    self.err(Diagnostic::error(s.span, "`return` outside a function"));
                }
                let v = e.as_ref().map(|e| {
                    let expected = self.cur().ret.clone();
                    let (h, ty) = self.expr_expect(e, expected.as_ref());
                    if let Some(ret) = self.cur().ret.clone() {
                        if !ty.fits(&ret) {
                            self.err(
                                Diagnostic::error(
                                    e.span,
                                    format!("this function returns `{ret}` but this value is `{ty}`"),
                                )
                                .with_label(format!("this is {ty}")),
                            );
                        }
                    }
                    h
                });
                out.push(hir::Stmt::Return(v, s.span));
                Ty::Unit
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.cur().loop_depth == 0 {
                    let what = if s.kind == StmtKind::Break {
                        "break"
                    } else {
                        "continue"
                    };
                    self.err(Diagnostic::error(s.span, format!("`{what}` outside a loop")));
                }
                out.push(if s.kind == StmtKind::Break {
                    hir::Stmt::Break
                } else {
                    hir::Stmt::Continue
                });
                Ty::Unit
            }
            StmtKind::Import(imp) => {
                if !self.at_top_level() || self.past_imports {
                    self.err(
                        Diagnostic::error(
                            s.span,
                            "`import` must come before every other statement of a file",
                        )
                        .with_note("imports are statements at the top of a file (spec §10.8)"),
                    );
                }
                if let Some((kw, _)) = &imp.alias {
                    if kw.name != "as" {
                        self.err(
                            Diagnostic::error(kw.span, format!("expected `as`, found `{}`", kw.name))
                                .with_note("`import a.b as c` binds the module `a.b` to the name `c`"),
                        );
                    }
                }
                Ty::Unit
            }
            StmtKind::Error => Ty::Unit,
        }
    }

    fn assign(
        &mut self,
        target: &ast::Expr,
        op: Option<BinOp>,
        value: &ast::Expr,
        span: Span,
        out: &mut Vec<hir::Stmt>,
    ) {
        let sliced = if let A::Index { base, items } = &target.kind {
            matches!(&items[..], [ast::IndexItem::Slice { .. }]).then_some(base)
        } else {
            None
        };
        let expected = match (sliced, op) {
            // `a[i:j] = [..]`: a slice of an Arr is assigned an Arr.
            (Some(base), None) => self.lvalue_type(base).map(|(t, _)| t),
            (None, None) => self.lvalue_type(target).map(|(t, _)| t),
            (_, Some(_)) => None,
        };
        let (v, vty) = self.expr_expect(value, expected.as_ref());
        if let A::Index { base, .. } = &target.kind {
            if let Some((Ty::Tensor(Some(d)), _)) = self.lvalue_type(base) {
                self.tensor_assign(d, op, &vty, value.span);
            }
        }
        let Some((root, path, root_ty)) = self.lvalue(target, "assign to") else {
            return;
        };
        let mut check = None;
        let decl = match (&target.kind, path.is_empty()) {
            (A::Name(n), true) => self.inferred_decl(n, root),
            _ => None,
        };
        if let Some(decl) = decl {
            // An inferred `var` (spec §10): the assigned type joins its
            // type, and the check runs again when that widens it.
            let assigned = match op {
                None => vty,
                Some(op) => silent_binop(op, &root_ty, &vty),
            };
            let seen = match self.var_seen.remove(&decl) {
                Some(t) => join_var(t, &assigned),
                None => assigned,
            };
            self.var_seen.insert(decl, seen);
            if self.ck.crosscheck {
                if let Ty::Tensor(Some(d)) = root_ty {
                    check = Some(RtType::Crosscheck(d));
                }
            }
        } else if sliced.is_none() && root_ty.is_known() && self.declared_place(target, root, &path) {
            // A declared type: an annotated variable's, or a typed struct
            // field's, Arr element's or Dict value's at the end of a path.
            // The value (`x op v` for a compound assignment) must fit it:
            // statically when its type is known, else checked (and an Int
            // made an F64) as it is stored.
            let place = match path.last() {
                None => "a variable",
                Some(hir::PathElem::Field(..)) => "a field",
                Some(hir::PathElem::Index(..)) => "an element",
            };
            let result = match op {
                None => vty.clone(),
                Some(op) => silent_binop(op, &root_ty, &vty),
            };
            if !result.fits(&root_ty) {
                let diag = match op {
                    None => Diagnostic::error(
                        value.span,
                        format!("cannot assign a `{vty}` to {place} of type `{root_ty}`"),
                    )
                    .with_label(format!("this is {vty}")),
                    Some(op) => Diagnostic::error(
                        span,
                        format!(
                            "`{}=` would make {place} of type `{root_ty}` a `{result}`",
                            op.symbol()
                        ),
                    )
                    .with_label(format!("`{root_ty} {} {vty}` is {result}", op.symbol())),
                };
                self.err(diag);
            }
            if result != root_ty {
                check = Some(RtType::from_ty(&root_ty));
            }
        }
        out.push(hir::Stmt::Assign(Box::new(hir::Assign {
            root,
            path,
            op,
            value: v,
            span,
            check,
        })));
    }

    /// Whether the place a path from `root` ends at has a declared type
    /// (an annotated variable or parameter, or a struct field and what is
    /// inside it), which assignments and element-adding methods must
    /// respect. In an inferred `var` (spec §10) the types of what the
    /// literal it started from holds are inferred too, and its elements may
    /// take other types, as its own assignments may.
    // Only a name, an index or a field is a place; the `_` arm is every other expression.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn declared_place(&mut self, target: &ast::Expr, root: Var, path: &[hir::PathElem]) -> bool {
        let mut e = target;
        let name = loop {
            match &e.kind {
                A::Name(n) => break n,
                A::Index { base, .. } | A::Field { base, .. } => e = base,
                _ => return false,
            }
        };
        path.iter().any(|p| matches!(p, hir::PathElem::Field(..))) || self.inferred_decl(name, root).is_none()
    }

    /// `x[s] = v` or `x[s] op= v` into a tensor of dtype `d` (spec §11.2):
    /// when v's dtype is known, an assignment that would change x's dtype
    /// is a static error.
    fn tensor_assign(&mut self, d: DType, op: Option<BinOp>, vty: &Ty, at: Span) {
        use twill_tensor::ops::dtypes::{self, Input};
        let v = dtype_input(vty);
        if matches!(v, Input::Other | Input::Tensor(None)) {
            return;
        }
        let bop = op.map_or(Some(twill_tensor::ops::BinaryOp::Add), tensor_binary_op);
        let Some(got) = bop.and_then(|b| dtypes::binary(b, Input::Tensor(Some(d)), v)) else {
            return;
        };
        if got == d {
            return;
        }
        let diag = match op {
            None => Diagnostic::error(
                at,
                format!("cannot assign a `{vty}` into a `Tensor[{d}]`: that would make it {got}"),
            )
            .with_label(format!("this is {vty}"))
            .with_help(Some(if matches!(vty, Ty::Tensor(_)) {
                format!("cast the value with `.to({d})`")
            } else {
                format!(
                    "write a value of the tensor's kind, or make it a {got} tensor with `.to({got})` first"
                )
            })),
            Some(op) => Diagnostic::error(
                at,
                format!(
                    "`{}=` would change the tensor's dtype from {d} to {got}",
                    op.symbol()
                ),
            )
            .with_help(Some(format!("write `x = x {} v` for a new tensor", op.symbol()))),
        };
        self.err(diag);
    }

    /// Resolves an assignment target: a mutable variable followed by any
    /// chain of indexing and field access; the type is the variable's, or
    /// what is known of the element or field a path ends at (the type the
    /// assignment's value must fit, and the path's own members).
    // Only a name, an index or a field is a place; the `_` arm is every other expression.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn lvalue(&mut self, target: &ast::Expr, what: &str) -> Option<(Var, Vec<hir::PathElem>, Ty)> {
        match &target.kind {
            A::Name(n) => match self.lookup(n) {
                Some(Found::Var { var, ty, mutable }) => {
                    if let Var::Capture(_) = var {
                        self.err(
                            Diagnostic::error(target.span, format!("cannot {what} `{n}`: it is captured by this closure"))
                                .with_note("closures capture variables by value, so the closure's copy cannot change the original"),
                        );
                        return None;
                    }
                    if !mutable {
                        self.err(
                            Diagnostic::error(
                                target.span,
                                format!("cannot {what} `{n}`: it is not declared with `var`"),
                            )
                            .with_label("immutable")
                            .with_note(format!("declare it with `var {n} = …` to make it mutable")),
                        );
                        return None;
                    }
                    Some((var, Vec::new(), ty))
                }
                Some(Found::SelfFn(_)) => {
                    self.err(Diagnostic::error(
                        target.span,
                        format!("cannot {what} the function `{n}`"),
                    ));
                    None
                }
                None => {
                    let help = self.name_help(n);
                    self.err(
                        Diagnostic::error(target.span, format!("unknown name `{n}`"))
                            .with_label("not defined")
                            .with_help(help),
                    );
                    None
                }
            },
            A::Index { base, items } => {
                let (root, mut path, ty) = self.lvalue(base, what)?;
                // The element's type, for a field of it below (`a[i].f`):
                // an Arr's element or a Dict's value under one index.
                let elem = match (&ty, &items[..]) {
                    (Ty::Arr(t) | Ty::Dict(_, t), [ast::IndexItem::Single(_)]) => (**t).clone(),
                    _ => Ty::Unknown,
                };
                let items = self.index_items(items, &ty);
                path.push(hir::PathElem::Index(items, target.span));
                Some((root, path, elem))
            }
            A::Field { base, name } => {
                let (root, mut path, ty) = self.lvalue(base, what)?;
                // A field of a known struct by its offset, as a field read
                // finds it; otherwise by name while running (which reports
                // a field the value lacks).
                let (member, fty) = match name.name.parse::<u32>() {
                    Ok(i) => (Member::Elem(i), Ty::Unknown),
                    Err(_) => {
                        let sym = self.ck.intern(&name.name);
                        match &ty {
                            Ty::Struct(def) => match def.field_index(&name.name) {
                                Some(i) => (
                                    Member::Offset(u32::try_from(i).unwrap_or(u32::MAX), sym),
                                    self.ck
                                        .structs
                                        .get(&*def.name)
                                        .and_then(|(_, tys)| tys.get(i).cloned())
                                        .unwrap_or(Ty::Unknown),
                                ),
                                None => (Member::Dynamic(sym, None, None), Ty::Unknown),
                            },
                            _ => (Member::Dynamic(sym, None, None), Ty::Unknown),
                        }
                    }
                };
                path.push(hir::PathElem::Field(member, name.span));
                Some((root, path, fty))
            }
            _ => {
                self.err(
                    Diagnostic::error(target.span, format!("cannot {what} this expression")).with_note(
                        "the target must be a variable, optionally indexed or with fields: `a[i].f = v`",
                    ),
                );
                None
            }
        }
    }

    // ---------------------------------------------------------- functions

    /// Resolves a top-level function, which never captures anything.
    fn function(&mut self, decl: &ast::FnDecl, self_name: Option<(String, Ty)>) -> hir::Function {
        let mut captures = Vec::new();
        self.function_with_captures(decl, self_name, false, &mut captures)
    }

    fn closure(&mut self, decl: &ast::FnDecl, self_name: Option<String>) -> (H, Ty) {
        let fty = self.fn_type(decl);
        let self_name = self_name.map(|n| (n, fty.clone()));
        let mut ctx_captures = Vec::new();
        let func = Rc::new(self.function_with_captures(decl, self_name, true, &mut ctx_captures));
        (
            H::Closure {
                func,
                captures: ctx_captures.into(),
            },
            fty,
        )
    }

    fn function_with_captures(
        &mut self,
        decl: &ast::FnDecl,
        self_name: Option<(String, Ty)>,
        is_closure: bool,
        captures: &mut Vec<Capture>,
    ) -> hir::Function {
        // Resolves the body in a fresh context. `self_name` lets a nested
        // named function call itself; `captures` receives what the body
        // reads from enclosing functions, in capture-slot order.
        let mut ctx = FnCtx::new();
        ctx.is_closure = is_closure;
        ctx.self_name = self_name;
        ctx.ret = decl.ret.as_ref().map(|t| self.type_expr(t));
        self.fns.push(ctx);
        let mut params = Vec::with_capacity(decl.params.len());
        let mut seen: Vec<&str> = Vec::new();
        for p in &decl.params {
            if seen.contains(&p.name.name.as_str()) {
                self.err(Diagnostic::error(
                    p.name.span,
                    format!("parameter `{}` is declared twice", p.name.name),
                ));
            }
            seen.push(&p.name.name);
            let ty = p.ty.as_ref().map(|t| self.type_expr(t));
            self.record_binding(p.name.span, ty.as_ref().unwrap_or(&Ty::Unknown));
            self.declare(&p.name.name, false, ty.clone().unwrap_or(Ty::Unknown));
            params.push((p.name.name.as_str().into(), ty.as_ref().map(RtType::from_ty)));
        }
        let defaults = self.defaults(decl, &params);
        self.tail_expect = self.cur().ret.clone();
        let (mut stmts, body_ty) = self.block(&decl.body);
        if !defaults.is_empty() {
            stmts.splice(0..0, defaults);
        }
        let required = decl
            .params
            .iter()
            .position(|p| p.default.is_some())
            .unwrap_or(decl.params.len());
        let ctx = self.fns.pop();
        let ret = ctx.as_ref().and_then(|c| c.ret.clone());
        if let Some(ret) = &ret {
            if !body_ty.fits(ret)
                && !matches!(decl.body.stmts.last().map(|s| &s.kind), Some(StmtKind::Return(_)))
            {
                self.err(
                    Diagnostic::error(
                        decl.body.span,
                        format!("this function returns `{ret}` but its body ends with a `{body_ty}`"),
                    )
                    .with_label(format!("this is {body_ty}")),
                );
            }
        }
        if let Some(c) = &ctx {
            captures.extend(c.captures.iter().map(|(_, src, _)| *src));
        }
        // A module's top-level function is named with its module, in call
        // stacks (`nn.mlp_forward`).
        let name = match &decl.name {
            Some(n) if self.fns.len() == 1 => self.gkey(&n.name).into_owned(),
            Some(n) => n.name.clone(),
            None => "<anonymous>".to_string(),
        };
        hir::Function {
            name: name.as_str().into(),
            params,
            required: u32::try_from(required).unwrap_or(u32::MAX),
            ret: ret.as_ref().map(RtType::from_ty),
            num_locals: ctx.map(|c| c.num_locals).unwrap_or(0),
            body: block_expr(stmts, decl.body.span),
            span: decl.span,
        }
    }

    /// The statements that fill the defaults of a function's parameters
    /// (spec §10.5). A default is resolved in the function's defining
    /// scope: the parameters are hidden from it (renamed while it is
    /// resolved), so `fn f(lr = lr)` reads the `lr` outside. A parameter
    /// without a default after one with a default is an error.
    fn defaults(&mut self, decl: &ast::FnDecl, params: &[(Rc<str>, Option<RtType>)]) -> Vec<hir::Stmt> {
        let mut out = Vec::new();
        let mut after_default = false;
        for (i, p) in decl.params.iter().enumerate() {
            let Some(d) = &p.default else {
                if after_default {
                    self.err(
                        Diagnostic::error(
                            p.name.span,
                            format!(
                                "parameter `{}` needs a default: it follows one with a default",
                                p.name.name
                            ),
                        )
                        .with_label("no default"),
                    );
                }
                continue;
            };
            after_default = true;
            let hide = |this: &mut Self, on: bool| {
                if let Some(scope) = this.cur().scopes.last_mut() {
                    for l in scope.iter_mut() {
                        if on {
                            l.name.insert(0, '\u{1}');
                        } else if l.name.starts_with('\u{1}') {
                            l.name.remove(0);
                        }
                    }
                }
            };
            // The annotation is the default's context (spec §10.3): a
            // list literal for an `Arr[…]` parameter is an Arr.
            let ann = p.ty.as_ref().map(|t| self.type_expr(t));
            hide(self, true);
            let (value, vty) = self.expr_expect(d, ann.as_ref());
            hide(self, false);
            let check = params.get(i).and_then(|(_, rt)| rt.clone());
            if let Some(ann) = ann {
                if !vty.fits(&ann) {
                    self.err(
                        Diagnostic::error(
                            d.span,
                            format!(
                                "parameter `{}` is `{ann}` but its default is `{vty}`",
                                p.name.name
                            ),
                        )
                        .with_label(format!("this is {vty}")),
                    );
                }
            }
            out.push(hir::Stmt::Expr(expr(
                H::DefaultArg(Box::new(hir::DefaultArg {
                    slot: u32::try_from(i).unwrap_or(u32::MAX),
                    value,
                    check,
                })),
                d.span,
            )));
        }
        out
    }

    // --------------------------------------------------------- expressions

    fn expr(&mut self, e: &ast::Expr) -> (hir::Expr, Ty) {
        self.depth += 1;
        let r = if self.depth > MAX_NESTING {
            if self.depth == MAX_NESTING + 1 {
                self.err(Diagnostic::error(e.span, "expression nested too deeply"));
            }
            (expr(H::Unit, e.span), Ty::Unknown)
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        if self.ck.record_types {
            self.types.push((e.span, r.1.clone()));
            if let Some(w) = self.why.get(&(e.span.start, e.span.end)) {
                self.notes.push((e.span, w.clone()));
            }
        }
        r
    }

    /// An expression where a type is expected (spec §10.3): a list literal
    /// expected to be an `Arr[…]` is an Arr, not a tensor, its elements
    /// expected to be the element type (so nested literals follow), an
    /// Int element converted where an F64 is expected; Dict and tuple
    /// literals pass the expectation to their parts. Anything else is an
    /// ordinary expression.
    fn expr_expect(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> (hir::Expr, Ty) {
        match (&e.kind, expected) {
            (A::List(items), Some(Ty::Arr(el))) => {
                let mut hs = Vec::with_capacity(items.len());
                let mut joined: Option<Ty> = None;
                for it in items {
                    let (h, t) = self.expr_expect(it, Some(el));
                    let h = if **el == Ty::F64 && t == Ty::Int {
                        let sp = h.span;
                        expr(builtin_call(Builtin::Host(HostFn::Float), vec![h]), sp)
                    } else {
                        h
                    };
                    let t = if t.fits(el) {
                        (**el).clone()
                    } else {
                        self.err(
                            Diagnostic::error(
                                it.span,
                                format!("this element is `{t}`, but the Arr holds `{el}`"),
                            )
                            .with_label(format!("this is {t}")),
                        );
                        (**el).clone()
                    };
                    joined = Some(match joined {
                        None => t,
                        Some(acc) => join(acc, &t),
                    });
                    hs.push(h);
                }
                let ty = Ty::Arr(Box::new(joined.unwrap_or_else(|| (**el).clone())));
                if self.ck.record_types {
                    self.types.push((e.span, ty.clone()));
                }
                (expr(H::ArrList(hs.into_boxed_slice()), e.span), ty)
            }
            (A::Dict(entries), Some(Ty::Dict(_, v))) if !entries.is_empty() => {
                let (h, ty) = self.dict_literal(entries, Some(v));
                if self.ck.record_types {
                    self.types.push((e.span, ty.clone()));
                }
                (expr(h, e.span), ty)
            }
            (A::Tuple(items), Some(Ty::Tuple(ts))) if items.len() == ts.len() => {
                let (hs, tys): (Vec<_>, Vec<_>) = items
                    .iter()
                    .zip(ts.iter())
                    .map(|(it, t)| self.expr_expect(it, Some(t)))
                    .unzip();
                let ty = Ty::Tuple(tys);
                if self.ck.record_types {
                    self.types.push((e.span, ty.clone()));
                }
                (expr(H::Tuple(hs.into_boxed_slice()), e.span), ty)
            }
            // `Some([1, 2])` where an `Opt[Arr[Int]]` is expected, `Ok(…)`
            // and `Err(…)` where a `Res`: the argument is resolved where
            // the payload's type is expected.
            (A::Call { callee, args }, Some(exp @ (Ty::Opt(_) | Ty::Res(..)))) => {
                let ctor = match (&callee.kind, &args[..]) {
                    (A::Name(n), [arg]) if arg.name.is_none() && self.lookup(n).is_none() => {
                        Builtin::from_name(n).map(|b| (b, &arg.value))
                    }
                    _ => None,
                };
                let inner = match (ctor, exp) {
                    (Some((b @ Builtin::Host(HostFn::Some), arg)), Ty::Opt(t))
                    | (Some((b @ Builtin::Host(HostFn::Ok), arg)), Ty::Res(t, _))
                    | (Some((b @ Builtin::Host(HostFn::Err), arg)), Ty::Res(_, t)) => Some((b, arg, t)),
                    _ => None,
                };
                let Some((b, arg, t)) = inner else {
                    return self.expr(e);
                };
                let (h, at) = self.expr_expect(arg, Some(t));
                let ty = b.result_type(std::slice::from_ref(&at));
                if self.ck.record_types {
                    self.types.push((e.span, ty.clone()));
                }
                (expr(builtin_call(b, vec![h]), e.span), ty)
            }
            _ => self.expr(e),
        }
    }

    /// A Dict literal `[k: v, …]`, each value resolved where `expected`
    /// (the annotated value type, if any) is expected (spec §10.2, §10.3).
    fn dict_literal(&mut self, entries: &[(ast::Expr, ast::Expr)], expected: Option<&Ty>) -> (H, Ty) {
        let mut hs = Vec::with_capacity(entries.len());
        let (mut kt, mut vt): (Option<Ty>, Option<Ty>) = (None, None);
        for (k, v) in entries.iter() {
            let (hk, tk) = self.expr(k);
            let (hv, tv) = self.expr_expect(v, expected);
            self.dict_key(&tk, k.span);
            kt = Some(match kt {
                None => tk,
                Some(acc) => join(acc, &tk),
            });
            vt = Some(match vt {
                None => tv,
                Some(acc) => join(acc, &tv),
            });
            hs.push((hk, hv));
        }
        let ty = Ty::Dict(
            Box::new(kt.unwrap_or(Ty::Unknown)),
            Box::new(vt.unwrap_or(Ty::Unknown)),
        );
        (H::Dict(hs.into_boxed_slice()), ty)
    }

    fn cond(&mut self, e: &ast::Expr, what: &str) -> hir::Expr {
        let (h, ty) = self.expr(e);
        if ty.is_known() && ty != Ty::Bool {
            // Spec §10.9: a tensor condition is told how to read it.
            let help = if let Ty::Tensor(d) = &ty {
                suggest::tensor_truth_help(None, d.map(|d| d == DType::Bool))
            } else {
                None
            };
            self.err(
                Diagnostic::error(e.span, format!("{what} must be a Bool, not `{ty}`"))
                    .with_label(format!("this is {ty}"))
                    .with_help(help.map(str::to_string)),
            );
        }
        h
    }

    /// An f-string (spec §10.7), as the Str concatenation of its text and
    /// of its fields' `str(x)` or `format(x, spec)`, so both engines run it
    /// as they run those. A literal spec is checked here: one that does not
    /// parse, or that cannot format the field's type when that is known, is
    /// a static error at the spec.
    fn fstring(&mut self, parts: &[ast::FPart], span: Span) -> H {
        let mut pieces: Vec<hir::Expr> = Vec::with_capacity(parts.len());
        for p in parts {
            match p {
                ast::FPart::Text(t) => pieces.push(str_lit(t, span)),
                ast::FPart::Field { value, spec } => {
                    let (h, ty) = self.expr(value);
                    let call = match spec {
                        None => builtin_call(Builtin::Host(HostFn::Str), vec![h]),
                        Some(spec) => {
                            let sspan = spec.span;
                            let spec_expr = match spec.literal() {
                                Some(lit) => {
                                    self.check_spec(lit, sspan, &ty);
                                    str_lit(lit, sspan)
                                }
                                // `{x:>{w}.2f}`: the spec is the Str of its
                                // text and of its fields' `str`, formed
                                // when the field is, as in Python.
                                None => {
                                    let mut parts = vec![str_lit(&spec.first, sspan)];
                                    for (e, after) in &spec.fields {
                                        let (fh, _) = self.expr(e);
                                        parts.push(expr(
                                            builtin_call(Builtin::Host(HostFn::Str), vec![fh]),
                                            e.span,
                                        ));
                                        if !after.is_empty() {
                                            parts.push(str_lit(after, sspan));
                                        }
                                    }
                                    concat(parts, sspan).unwrap_or_else(|| str_lit("", sspan))
                                }
                            };
                            builtin_call(Builtin::Host(HostFn::Format), vec![h, spec_expr])
                        }
                    };
                    pieces.push(expr(call, value.span));
                }
            }
        }
        // A single field is still a Str: `f"{x}"` is `str(x)`.
        concat(pieces, span).map_or_else(|| H::Str(Rc::default()), |whole| whole.kind)
    }

    /// A literal format spec: it must parse, and format a value of type
    /// `ty` when that is known.
    fn check_spec(&mut self, text: &str, span: Span, ty: &Ty) {
        use twill_tensor::fmtspec::Spec;
        let spec = match Spec::parse(text) {
            Ok(s) => s,
            Err(m) => {
                self.err(Diagnostic::error(span, format!("bad format spec: {m}")).with_label("this spec"));
                return;
            }
        };
        let float = |spec: &Spec| spec.float(0.0, "0").map(drop);
        let int = |spec: &Spec| spec.int(0, "0").map(drop);
        let result = match ty {
            Ty::Int => int(&spec),
            Ty::F64 => float(&spec),
            Ty::Str | Ty::Bool => spec.text("").map(drop),
            Ty::Tensor(Some(d)) => match d {
                DType::Bool => spec.text("").map(drop),
                DType::I8 | DType::I32 => int(&spec),
                DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => float(&spec),
            },
            Ty::Unknown | Ty::Tensor(None) => Ok(()),
            Ty::Unit
            | Ty::DType
            | Ty::Range
            | Ty::Tape
            | Ty::Format
            | Ty::Figure
            | Ty::Arr(_)
            | Ty::Dict(..)
            | Ty::Tuple(_)
            | Ty::Res(..)
            | Ty::Opt(_)
            | Ty::Fn(..)
            | Ty::Struct(_) => spec.text("").map(drop),
        };
        if let Err(m) = result {
            self.err(
                Diagnostic::error(
                    span,
                    format!("this spec cannot format a value of type `{ty}`: {m}"),
                )
                .with_label("this spec"),
            );
        }
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> (hir::Expr, Ty) {
        let span = e.span;
        let (kind, ty) = match &e.kind {
            A::Int(v) => (H::Int(*v), Ty::Int),
            A::Float(v) => (H::Float(*v), Ty::F64),
            A::Str(s) => (H::Str(Rc::new(Text::new(s.clone()))), Ty::Str),
            A::FStr(parts) => (self.fstring(parts, span), Ty::Str),
            A::Dict(entries) => self.dict_literal(entries, None),
            A::Bool(b) => (H::Bool(*b), Ty::Bool),
            A::Name(n) => self.name(n, span),
            A::Tuple(items) if items.is_empty() => (H::Unit, Ty::Unit),
            A::Tuple(items) => {
                let (hs, tys): (Vec<_>, Vec<_>) = items.iter().map(|e| self.expr(e)).unzip();
                (H::Tuple(hs.into_boxed_slice()), Ty::Tuple(tys))
            }
            A::List(items) => {
                // One pass, keeping only what decides the type (a 12 MB
                // list literal holds no per-element types): the leaves,
                // through nested list literals, decide between a tensor and
                // an Arr, mirroring the evaluator's rule; a tensor-valued
                // variable is not a leaf.
                let mut hs = Vec::with_capacity(items.len());
                let mut dtypes: Option<Vec<Option<DType>>> = Some(Vec::new());
                let (mut all_numbers, mut all_bools, mut some_non_leaf) = (true, true, false);
                let mut joined: Option<Ty> = None;
                for it in items {
                    let nested = matches!(it.kind, A::List(_));
                    let (h, t) = self.expr(it);
                    hs.push(h);
                    match (&mut dtypes, &t) {
                        (Some(ds), Ty::Tensor(d)) => ds.push(*d),
                        _ => dtypes = None,
                    }
                    if nested {
                        all_numbers &= t == Ty::Tensor(Some(DType::F64));
                        all_bools &= t == Ty::Tensor(Some(DType::Bool));
                        some_non_leaf |= matches!(t, Ty::Arr(_));
                    } else {
                        all_numbers &= matches!(t, Ty::Int | Ty::F64);
                        all_bools &= t == Ty::Bool;
                        some_non_leaf |= t.is_known() && !matches!(t, Ty::Int | Ty::F64 | Ty::Bool);
                    }
                    joined = Some(match joined {
                        None => t,
                        Some(acc) => join(acc, &t),
                    });
                }
                if let Some(ds) = dtypes.filter(|ds| !ds.is_empty()) {
                    self.list_dtypes.insert((span.start, span.end), ds);
                }
                let ty = match joined {
                    None => Ty::Arr(Box::new(Ty::Unknown)),
                    Some(_) if all_numbers => Ty::Tensor(Some(DType::F64)),
                    Some(_) if all_bools => Ty::Tensor(Some(DType::Bool)),
                    Some(j) if some_non_leaf => Ty::Arr(Box::new(j)),
                    Some(_) => Ty::Unknown,
                };
                (H::List(hs), ty)
            }
            A::Neg(a) => {
                let (h, t) = self.expr(a);
                let ty = match t {
                    Ty::Int | Ty::F64 | Ty::Tensor(_) | Ty::Unknown => t,
                    other @ (Ty::Unit
                    | Ty::Bool
                    | Ty::Str
                    | Ty::DType
                    | Ty::Range
                    | Ty::Tape
                    | Ty::Format
                    | Ty::Figure
                    | Ty::Arr(_)
                    | Ty::Dict(..)
                    | Ty::Tuple(_)
                    | Ty::Res(..)
                    | Ty::Opt(_)
                    | Ty::Fn(..)
                    | Ty::Struct(_)) => {
                        self.err(
                            Diagnostic::error(span, format!("cannot negate a `{other}`"))
                                .with_label(format!("this is {other}")),
                        );
                        Ty::Unknown
                    }
                };
                (H::Neg(Box::new(h)), ty)
            }
            A::Not(a) => (H::Not(Box::new(self.cond(a, "the operand of `not`"))), Ty::Bool),
            A::And(a, b) => {
                let (ha, hb) = (
                    self.cond(a, "the operand of `and`"),
                    self.cond(b, "the operand of `and`"),
                );
                (H::And(Box::new(ha), Box::new(hb)), Ty::Bool)
            }
            A::Or(a, b) => {
                let (ha, hb) = (
                    self.cond(a, "the operand of `or`"),
                    self.cond(b, "the operand of `or`"),
                );
                (H::Or(Box::new(ha), Box::new(hb)), Ty::Bool)
            }
            A::Binary(op, a, b) => {
                let (ha, ta) = self.expr(a);
                let (hb, tb) = self.expr(b);
                let ty = self.binary_type(*op, (&ta, a.span), (&tb, b.span), span);
                (H::Binary(*op, Box::new(ha), Box::new(hb)), ty)
            }
            A::Call { callee, args } => self.call(callee, args, span),
            A::MethodCall(m) if self.module_of(&m.receiver).is_some() => {
                self.module_call(&m.receiver, &m.method, &m.args, span)
            }
            A::MethodCall(m) => self.method(&m.receiver, &m.method, &m.args),
            A::Field { base, name } if self.module_of(base).is_some() => {
                let Some(key) = self.module_of(base) else {
                    return (expr(H::Unit, span), Ty::Unknown);
                };
                let shown = dotted_path(base).unwrap_or_default();
                match self.module_member(&key, &shown, name) {
                    Some((slot, ty, _)) => (H::Load(Var::Global(slot)), ty),
                    None => (H::Unit, Ty::Unknown),
                }
            }
            A::Field { base, name } if name.name.starts_with(|c: char| c.is_ascii_digit()) => {
                let (h, t) = self.expr(base);
                let (i, ty) = self.tuple_field(&t, name);
                (H::Field(Box::new(h), Member::Elem(i)), ty)
            }
            A::Field { base, name } => {
                let (h, t) = self.expr(base);
                let ty = self.field_type(&t, name);
                let member = self.member(&t, &name.name);
                (H::Field(Box::new(h), member), ty)
            }
            A::Index { base, items } => {
                let (h, t) = self.expr(base);
                let all_single = items.iter().all(|i| matches!(i, ast::IndexItem::Single(_)));
                let hitems = self.index_items(items, &t);
                let ty = match &t {
                    Ty::Arr(el) if all_single && items.len() == 1 => (**el).clone(),
                    Ty::Arr(_) if items.len() == 1 => t.clone(),
                    Ty::Str if items.len() == 1 => Ty::Str,
                    Ty::Dict(_, v) if all_single && items.len() == 1 => (**v).clone(),
                    Ty::Tensor(d) => Ty::Tensor(*d),
                    Ty::Unknown => Ty::Unknown,
                    other @ (Ty::Arr(_) | Ty::Str | Ty::Dict(..)) => {
                        self.err(Diagnostic::error(
                            span,
                            format!("a `{other}` takes exactly one index"),
                        ));
                        Ty::Unknown
                    }
                    other @ (Ty::Unit
                    | Ty::Int
                    | Ty::F64
                    | Ty::Bool
                    | Ty::DType
                    | Ty::Range
                    | Ty::Tape
                    | Ty::Format
                    | Ty::Figure
                    | Ty::Res(..)
                    | Ty::Opt(_)
                    | Ty::Tuple(_)
                    | Ty::Fn(..)
                    | Ty::Struct(_)) => {
                        self.err(
                            Diagnostic::error(span, format!("a `{other}` cannot be indexed"))
                                .with_label(format!("this is {other}")),
                        );
                        Ty::Unknown
                    }
                };
                (H::Index(Box::new(h), hitems.into()), ty)
            }
            A::Try(inner) => {
                let (h, t) = self.expr(inner);
                let top = self.fns.len() == 1;
                if top {
                    // At top level an `Err` or `None` ends the program.
                } else if let Some(ret) = self.cur().ret.clone() {
                    let mixed = matches!((&t, &ret), (Ty::Opt(_), Ty::Res(..)) | (Ty::Res(..), Ty::Opt(_)));
                    let ok = matches!(
                        (&t, &ret),
                        (Ty::Res(..), Ty::Res(..))
                            | (Ty::Opt(_), Ty::Opt(_))
                            | (_, Ty::Res(..) | Ty::Opt(_) | Ty::Unknown)
                    );
                    if mixed {
                        let (what, ends) = if matches!(t, Ty::Opt(_)) {
                            ("an `Opt`", "a `None` has no error for the `Res` to carry")
                        } else {
                            ("a `Res`", "an `Err` cannot end a function that returns an `Opt`")
                        };
                        self.err(
                            Diagnostic::error(
                                span,
                                format!("`?` on {what} in a function that returns `{ret}`: {ends}"),
                            )
                            .with_label(format!("this is {t}"))
                            .with_note(
                                "`?` returns early with the same kind of value: a `None` from a function returning `Opt`, an `Err` from one returning `Res`",
                            ),
                        );
                    } else if !ok {
                        self.err(Diagnostic::error(
                            span,
                            format!("`?` in a function that returns `{ret}`; it needs a function returning `Res` or `Opt`"),
                        ));
                    }
                }
                let ty = match t {
                    Ty::Res(ok, _) => *ok,
                    Ty::Opt(v) => *v,
                    Ty::Unknown => Ty::Unknown,
                    other @ (Ty::Unit
                    | Ty::Int
                    | Ty::F64
                    | Ty::Bool
                    | Ty::Str
                    | Ty::DType
                    | Ty::Range
                    | Ty::Tape
                    | Ty::Format
                    | Ty::Figure
                    | Ty::Arr(_)
                    | Ty::Dict(..)
                    | Ty::Tuple(_)
                    | Ty::Tensor(_)
                    | Ty::Fn(..)
                    | Ty::Struct(_)) => {
                        self.err(
                            Diagnostic::error(span, format!("`?` needs a `Res` or `Opt`, not `{other}`"))
                                .with_label(format!("this is {other}")),
                        );
                        Ty::Unknown
                    }
                };
                (
                    if top {
                        H::TryTop(Box::new(h))
                    } else {
                        H::Try(Box::new(h))
                    },
                    ty,
                )
            }
            A::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond(cond, "an `if` condition");
                let (ts, tt) = self.block(then);
                let then_e = block_expr(ts, then.span);
                match otherwise {
                    Some(o) => {
                        let (oh, ot) = self.expr(o);
                        (
                            H::If(Box::new(c), Box::new(then_e), Some(Box::new(oh))),
                            join(tt, &ot),
                        )
                    }
                    None => (H::If(Box::new(c), Box::new(then_e), None), Ty::Unit),
                }
            }
            A::While { cond, body } => {
                let c = self.cond(cond, "a `while` condition");
                self.cur().loop_depth += 1;
                let (bs, _) = self.block(body);
                self.cur().loop_depth -= 1;
                (
                    H::While(Box::new(c), Box::new(block_expr(bs, body.span))),
                    Ty::Unit,
                )
            }
            A::For { var, iter, body } => {
                let (ih, it) = self.expr(iter);
                let el = match &it {
                    Ty::Range => Ty::Int,
                    Ty::Arr(t) => (**t).clone(),
                    Ty::Dict(k, _) => (**k).clone(),
                    Ty::Str => Ty::Str,
                    Ty::Tensor(d) => Ty::Tensor(*d),
                    Ty::Unknown => Ty::Unknown,
                    other @ (Ty::Unit
                    | Ty::Int
                    | Ty::F64
                    | Ty::Bool
                    | Ty::DType
                    | Ty::Tape
                    | Ty::Format
                    | Ty::Figure
                    | Ty::Res(..)
                    | Ty::Opt(_)
                    | Ty::Tuple(_)
                    | Ty::Fn(..)
                    | Ty::Struct(_)) => {
                        self.err(
                            Diagnostic::error(iter.span, format!("cannot iterate over a `{other}`"))
                                .with_label(format!("this is {other}")),
                        );
                        Ty::Unknown
                    }
                };
                self.cur().scopes.push(Vec::new());
                let mut binds = Vec::new();
                let slot = if let ast::PatternKind::Name(n) = &var.kind {
                    self.record_binding(n.span, &el);
                    self.declare_local(&n.name, el)
                } else {
                    let tmp = self.declare_local(" item", Ty::Unknown);
                    self.destructure(var, expr(H::Load(tmp), var.span), el, false, &mut binds);
                    tmp
                };
                let slot = match slot {
                    Var::Local(s) => s,
                    Var::Capture(_) | Var::Global(_) => 0,
                };
                self.cur().loop_depth += 1;
                let (mut bs, _) = self.block(body);
                self.cur().loop_depth -= 1;
                self.pop_scope();
                if !binds.is_empty() {
                    binds.append(&mut bs);
                    bs = binds;
                }
                (
                    H::For {
                        slot,
                        iter: Box::new(ih),
                        body: Box::new(block_expr(bs, body.span)),
                    },
                    Ty::Unit,
                )
            }
            A::Match { scrutinee, arms } => {
                let (sh, st) = self.expr(scrutinee);
                let mut harms = Vec::new();
                let mut ty: Option<Ty> = None;
                for arm in arms {
                    self.cur().scopes.push(Vec::new());
                    let pattern = self.pattern(&arm.pattern, &st);
                    let (body, bt) = self.expr(&arm.body);
                    self.pop_scope();
                    ty = Some(match ty {
                        None => bt,
                        Some(t) => join(t, &bt),
                    });
                    harms.push(hir::MatchArm { pattern, body });
                }
                (H::Match(Box::new(sh), harms.into()), ty.unwrap_or(Ty::Unit))
            }
            A::Block(b) => {
                let (stmts, ty) = self.block(b);
                return (block_expr(stmts, span), ty);
            }
            A::Lambda(decl) => self.closure(decl, None),
            A::StructLit { name, fields } => self.struct_lit(name, fields, span),
            A::Error => (H::Unit, Ty::Unknown),
        };
        (expr(kind, span), ty)
    }

    /// Declares a local even at top level (loop variables and pattern
    /// bindings never become globals).
    /// The type an unannotated `var` is bound with: the one an earlier
    /// round of the check settled on for it, else its first value's.
    fn inferred_type(&mut self, name: &ast::Ident, first: Ty) -> Ty {
        // A top-level name declared twice is not inferred.
        if self.at_top_level()
            && self
                .ck
                .globals
                .get(&*self.gkey(&name.name))
                .is_some_and(|g| g.decl != Some(name.span))
        {
            return Ty::Unknown;
        }
        let ty = match self.var_assume.get(&name.span) {
            Some(t) => join_var(t.clone(), &first),
            None => first,
        };
        self.var_bound.insert(name.span, ty.clone());
        ty
    }

    /// Records that the local just declared is an inferred `var`.
    fn mark_inferred(&mut self, var: Var, decl: Span) {
        if let Var::Local(slot) = var {
            if let Some(l) = self
                .cur()
                .scopes
                .last_mut()
                .and_then(|s| s.iter_mut().rev().find(|l| l.slot == slot))
            {
                l.decl = Some(decl);
            }
        }
    }

    /// The declaration of `name` (resolved to `var`) when it is an inferred
    /// `var`.
    fn inferred_decl(&mut self, name: &str, var: Var) -> Option<Span> {
        match var {
            Var::Global(slot) => self.global_at(name, slot).and_then(|g| g.decl),
            Var::Local(slot) => self
                .cur()
                .scopes
                .iter()
                .rev()
                .flat_map(|s| s.iter().rev())
                .find(|l| l.slot == slot && l.name == name)
                .and_then(|l| l.decl),
            Var::Capture(_) => None,
        }
    }

    /// With the type table on (the language server's hover), the type a
    /// name is bound to, at the name where it is bound.
    fn record_binding(&mut self, span: Span, ty: &Ty) {
        if self.ck.record_types {
            self.types.push((span, ty.clone()));
        }
    }

    fn declare_local(&mut self, name: &str, ty: Ty) -> Var {
        let ctx = self.cur();
        let slot = ctx.num_locals;
        ctx.num_locals += 1;
        let n = ctx.scopes.len() - 1;
        ctx.scopes[n].push(Local {
            name: name.to_string(),
            slot,
            mutable: false,
            ty,
            warn_unused: false,
            decl: None,
            used: false,
            span: Span::default(),
        });
        Var::Local(slot)
    }

    /// Ends a scope, warning about `let`/`var` bindings nobody read.
    fn pop_scope(&mut self) {
        let Some(scope) = self.cur().scopes.pop() else {
            return;
        };
        for l in scope {
            if l.warn_unused && !l.used && !l.name.starts_with('_') {
                self.err(
                    Diagnostic::warning(l.span, format!("unused variable `{}`", l.name))
                        .with_label("never read")
                        .with_note(format!("if this is intended, name it `_{}`", l.name)),
                );
            }
        }
    }

    /// The static type of table operation `op` on these arguments.
    // The `_` arm is every other operation, typed by its registry dtype rule.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn op_type(&mut self, op: Op, inputs: &[(Ty, Span)], span: Span) -> Ty {
        use twill_tensor::ops::dtypes;
        match op {
            Op::Concat | Op::Stack => {
                let elems = inputs
                    .first()
                    .and_then(|(_, sp)| self.list_dtypes.get(&(sp.start, sp.end)).cloned());
                let joined = match (elems, inputs.first().map(|(t, _)| t)) {
                    (Some(ds), _) if !ds.is_empty() && ds.iter().all(Option::is_some) => ds
                        .iter()
                        .flatten()
                        .copied()
                        .reduce(twill_tensor::promote::promote),
                    (_, Some(Ty::Arr(el))) => el.tensor_dtype(),
                    _ => None,
                };
                Ty::Tensor(joined)
            }
            Op::Allclose => Ty::Bool,
            Op::UniqueCounts => Ty::Tuple(vec![
                Ty::Tensor(inputs.first().and_then(|(t, _)| t.tensor_dtype())),
                Ty::Tensor(Some(DType::I32)),
            ]),
            Op::Split => Ty::Arr(Box::new(Ty::Tensor(
                inputs.first().and_then(|(t, _)| t.tensor_dtype()),
            ))),
            _ if matches!(op.spec().rule, twill_tensor::ops::Rule::Linalg(_)) => {
                self.linalg_type(op, inputs, span)
            }
            _ => {
                let ins: Vec<dtypes::Input> = inputs.iter().map(|(t, _)| dtype_input(t)).collect();
                let result = dtypes::result(op, &ins);
                // Only the operands whose dtypes promote together can widen.
                let promoted = &inputs[dtypes::promoted(op, inputs.len())];
                self.tensor_result(&format!("`{op}`"), promoted, result, span)
            }
        }
    }

    /// A linear-algebra operation (spec §11.4): a tensor of the computing
    /// dtype, or a tuple of them for `slogdet qr eigh svd`; an input that
    /// is not f32 or f64 is converted to f32, and the checker says so.
    fn linalg_type(&mut self, op: Op, inputs: &[(Ty, Span)], span: Span) -> Ty {
        use twill_tensor::ops::{dtypes, Rule};
        let ins: Vec<dtypes::Input> = inputs.iter().map(|(t, _)| dtype_input(t)).collect();
        let result = dtypes::result(op, &ins);
        let promoted = &inputs[dtypes::promoted(op, inputs.len())];
        let mut converted = false;
        for (t, sp) in promoted {
            if let Ty::Tensor(Some(d)) = t {
                if !matches!(d, DType::F32 | DType::F64) {
                    converted = true;
                    self.err(
                        Diagnostic::warning(*sp, format!("`{op}` computes in f32: this {d} tensor is converted to f32"))
                            .with_label(format!("this is {d}"))
                            .with_note("linear algebra runs in f32 or f64 (spec §11.4); write `.to(f32)` or `.to(f64)` to say which"),
                    );
                }
            }
        }
        let one = if converted {
            Ty::Tensor(result)
        } else {
            self.tensor_result(&format!("`{op}`"), promoted, result, span)
        };
        match op.spec().rule {
            Rule::Linalg(k) if k > 1 => Ty::Tuple(vec![one; k]),
            Rule::Same
            | Rule::Float
            | Rule::Bool
            | Rule::Sum
            | Rule::Index
            | Rule::Join01
            | Rule::Join12
            | Rule::Binary(_)
            | Rule::Contract(_)
            | Rule::Einsum
            | Rule::Lists
            | Rule::Bits
            | Rule::Given
            | Rule::Linalg(_) => one,
        }
    }

    /// The dtype rules of the runtime (`twill_tensor::ops::dtypes`), applied
    /// to an operation on tensors: returns the result type, records how a
    /// promotion arose, and warns about lossy and f64 widenings.
    fn tensor_result(&mut self, what: &str, inputs: &[(Ty, Span)], result: Option<DType>, span: Span) -> Ty {
        let Some(r) = result else {
            return Ty::Tensor(None);
        };
        let dts: Vec<(DType, Span)> = inputs
            .iter()
            .filter_map(|(t, sp)| {
                if let Ty::Tensor(Some(d)) = t {
                    Some((*d, *sp))
                } else {
                    None
                }
            })
            .collect();
        if dts.iter().any(|(d, _)| *d != r) && r != DType::Bool && !matches!(r, DType::I32) || dts.len() > 1 {
            let names: Vec<String> = inputs
                .iter()
                .map(|(t, _)| match t {
                    Ty::Tensor(Some(d)) => d.to_string(),
                    Ty::Int | Ty::F64 | Ty::Bool => t.to_string(),
                    Ty::Unknown
                    | Ty::Unit
                    | Ty::Str
                    | Ty::DType
                    | Ty::Range
                    | Ty::Tape
                    | Ty::Format
                    | Ty::Figure
                    | Ty::Arr(_)
                    | Ty::Dict(..)
                    | Ty::Tuple(_)
                    | Ty::Tensor(None)
                    | Ty::Res(..)
                    | Ty::Opt(_)
                    | Ty::Fn(..)
                    | Ty::Struct(_) => "?".into(),
                })
                .collect();
            if dts.iter().any(|(d, _)| *d != r) {
                self.why.insert(
                    (span.start, span.end),
                    format!("{what} of {} gives {r}", names.join(", ")),
                );
            }
        }
        for (d, sp) in &dts {
            if twill_tensor::promote::is_lossy_widening(*d, r) {
                self.err(
                    Diagnostic::warning(span, format!("lossy widening: an {d} tensor is promoted to {r}"))
                        .with_label(format!("the result is {r}"))
                        .with_secondary(*sp, format!("this is {d}"))
                        .with_note(format!("{r} cannot hold every {d} value exactly; cast explicitly (`.to({r})` or `.to(f64)`) to say which you mean")),
                );
            }
        }
        if r == DType::F64 {
            if let (Some((narrow, nsp)), Some((_, wsp))) = (
                dts.iter()
                    .find(|(d, _)| matches!(d, DType::Bf16 | DType::F16 | DType::F32)),
                dts.iter().find(|(d, _)| *d == DType::F64),
            ) {
                self.err(
                    Diagnostic::warning(
                        *nsp,
                        format!("this {narrow} tensor is widened to f64 by an f64 operand"),
                    )
                    .with_label(format!("this is {narrow}"))
                    .with_secondary(*wsp, "this operand is f64")
                    .with_note(format!(
                        "list literals are f64; write `.to({narrow})` on the f64 operand to stay in {narrow}"
                    )),
                );
            }
        }
        Ty::Tensor(Some(r))
    }

    fn name(&mut self, n: &str, span: Span) -> (H, Ty) {
        if let Some(w) = self.why_by_name.get(n) {
            self.why.insert((span.start, span.end), w.clone());
        }
        match self.lookup(n) {
            Some(Found::Var { var, ty, .. }) => return (H::Load(var), ty),
            Some(Found::SelfFn(ty)) => return (H::SelfFn, ty),
            None => {}
        }
        if let Some(c) = Constant::from_name(n) {
            return match c.value() {
                ConstValue::F64(x) => (H::Float(x), Ty::F64),
                ConstValue::None => (H::NoneValue, Ty::Opt(Box::new(Ty::Unknown))),
            };
        }
        if let Some(d) = DType::from_name(n) {
            return (H::DType(d), Ty::DType);
        }
        if Builtin::from_name(n).is_some() {
            self.err(
                Diagnostic::error(span, format!("the builtin `{n}` can only be called")).with_note(format!(
                    "wrap it in a function to pass it around: `fn(x) {{ {n}(x) }}`"
                )),
            );
        } else if self.ck.structs.contains_key(&*self.gkey(n)) {
            self.err(Diagnostic::error(
                span,
                format!("`{n}` is a struct type; build one with `{n} {{ … }}`"),
            ));
        } else if self.ck.globals.contains_key(&*self.gkey(n)) && self.fns.len() == 1 {
            self.err(
                Diagnostic::error(span, format!("`{n}` is used before its definition"))
                    .with_label("not defined yet at this point"),
            );
        } else {
            let help = self.name_help(n);
            self.err(
                Diagnostic::error(span, format!("unknown name `{n}`"))
                    .with_label("not defined")
                    .with_help(help),
            );
        }
        (H::Unit, Ty::Unknown)
    }

    fn binary_type(&mut self, op: BinOp, a: (&Ty, Span), b: (&Ty, Span), span: Span) -> Ty {
        let ((a, asp), (b, bsp)) = (a, b);
        if is_structural_eq(op, a, b) {
            return Ty::Bool;
        }
        if matches!(a, Ty::Tensor(_)) || matches!(b, Ty::Tensor(_)) {
            let result = tensor_binop_dtype(op, a, b);
            return self.tensor_result(
                &format!("`{}`", op.symbol()),
                &[(a.clone(), asp), (b.clone(), bsp)],
                result,
                span,
            );
        }
        // An unknown operand may be a tensor, and then `==` is elementwise:
        // the result is unknown too.
        if !a.is_known() || !b.is_known() {
            return Ty::Unknown;
        }
        match host_binop(op, a, b) {
            Some(t) => t,
            None => {
                if is_host_scalar(a) && is_host_scalar(b)
                    || matches!((a, b), (Ty::Arr(_), _) | (_, Ty::Arr(_)))
                {
                    self.err(
                        Diagnostic::error(span, format!("cannot apply `{}` to `{a}` and `{b}`", op.symbol()))
                            .with_label(format!("{a} {} {b}", op.symbol())),
                    );
                }
                Ty::Unknown
            }
        }
    }

    /// The element `t.0` of a tuple: its index, and its type.
    // Every type but a tuple (and an unknown one) has no numbered fields.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn tuple_field(&mut self, t: &Ty, name: &ast::Ident) -> (u32, Ty) {
        let i = name.name.parse::<u32>().unwrap_or(u32::MAX);
        let ty = match t {
            Ty::Tuple(items) => match items.get(i as usize) {
                Some(t) => t.clone(),
                None => {
                    let n = items.len();
                    self.err(
                        Diagnostic::error(name.span, format!("this tuple has no field `{}`", name.name))
                            .with_label(format!(
                                "the tuple `{t}` has {n} element{}",
                                if n == 1 { "" } else { "s" }
                            )),
                    );
                    Ty::Unknown
                }
            },
            Ty::Unknown => Ty::Unknown,
            other => {
                self.err(
                    Diagnostic::error(name.span, format!("a `{other}` has no field `{}`", name.name))
                        .with_label("numbered fields belong to tuples"),
                );
                Ty::Unknown
            }
        };
        (i, ty)
    }

    /// Binds the names of a `let`/`var`/`for` tuple pattern from `value`,
    /// as statements into `out`: the value goes to a hidden local, checked
    /// to be a tuple of the pattern's length (`Destructure`), and each name
    /// is bound to its element. Only names, `_` and tuples may appear: a
    /// declaration's pattern always matches.
    // Every type but a tuple of the pattern's length (and an unknown one)
    // is the same mismatch.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn destructure(
        &mut self,
        p: &ast::Pattern,
        value: hir::Expr,
        ty: Ty,
        mutable: bool,
        out: &mut Vec<hir::Stmt>,
    ) {
        use ast::PatternKind as P;
        match &p.kind {
            P::Name(n) if n.name == "_" => out.push(hir::Stmt::Expr(value)),
            P::Name(n) => {
                self.binding_span = n.span;
                let bind_ty = if mutable { self.inferred_type(n, ty) } else { ty };
                let var = self.declare(&n.name, mutable, bind_ty);
                if mutable {
                    self.mark_inferred(var, n.span);
                }
                out.push(hir::Stmt::Let {
                    var,
                    value,
                    check: None,
                });
            }
            P::Tuple(items) => {
                let n = items.len();
                match &ty {
                    Ty::Tuple(ts) if ts.len() == n => {}
                    Ty::Unit if n == 0 => {}
                    Ty::Unknown => {}
                    other => self.err(
                        Diagnostic::error(
                            p.span,
                            format!("this pattern is a tuple of {n}, but the value is `{other}`"),
                        )
                        .with_label(format!("the value is {other}")),
                    ),
                }
                let span = value.span;
                let len = u32::try_from(n).unwrap_or(u32::MAX);
                let tmp = self.declare_local(" tuple", Ty::Unknown);
                out.push(hir::Stmt::Let {
                    var: tmp,
                    value: expr(H::Destructure(Box::new(value), len), p.span),
                    check: None,
                });
                for (i, item) in items.iter().enumerate() {
                    let ity = match &ty {
                        Ty::Tuple(ts) => ts.get(i).cloned().unwrap_or(Ty::Unknown),
                        _ => Ty::Unknown,
                    };
                    let idx = u32::try_from(i).unwrap_or(u32::MAX);
                    let elem = expr(
                        H::Field(Box::new(expr(H::Load(tmp), span)), Member::Elem(idx)),
                        item.span,
                    );
                    self.destructure(item, elem, ity, mutable, out);
                }
            }
            P::Ctor { .. } | P::Int(_) | P::Float(_) | P::Str(_) | P::Bool(_) => {
                self.err(
                    Diagnostic::error(p.span, "a declaration's pattern is made of names, `_` and tuples")
                        .with_note("use `match` for a pattern that may not match"),
                );
            }
        }
    }

    fn field_type(&mut self, t: &Ty, name: &ast::Ident) -> Ty {
        match t {
            Ty::Struct(def) => match def.field_index(&name.name) {
                Some(i) => self
                    .ck
                    .structs
                    .get(&*def.name)
                    .and_then(|(_, tys)| tys.get(i).cloned())
                    .unwrap_or(Ty::Unknown),
                None => {
                    self.err(
                        Diagnostic::error(
                            name.span,
                            format!("struct `{}` has no field `{}`", def.name, name.name),
                        )
                        .with_note(format!("its fields are: {}", def.fields.join(", ")))
                        .with_help(
                            self.showing()
                                .then(|| suggest::did_you_mean(&name.name, def.fields.iter().map(|f| &**f)))
                                .flatten(),
                        ),
                    );
                    Ty::Unknown
                }
            },
            Ty::Tensor(d) => match TensorField::from_name(&name.name) {
                Some(TensorField::Dtype) => Ty::DType,
                Some(TensorField::Shape) => Ty::Arr(Box::new(Ty::Int)),
                Some(TensorField::Ndim) => Ty::Int,
                Some(TensorField::T) => Ty::Tensor(*d),
                None => Ty::Unknown,
            },
            Ty::Format => match FormatField::from_name(&name.name) {
                Some(f) => f.ty(),
                None => {
                    self.err(
                        Diagnostic::error(name.span, format!("a Format has no field `{}`", name.name))
                            .with_note(format!("its fields are: {}", FormatField::names().join(", ")))
                            .with_help(
                                self.showing()
                                    .then(|| suggest::did_you_mean(&name.name, FormatField::names()))
                                    .flatten(),
                            ),
                    );
                    Ty::Unknown
                }
            },
            Ty::Unknown | Ty::Tape => Ty::Unknown,
            other @ (Ty::Unit
            | Ty::Int
            | Ty::F64
            | Ty::Bool
            | Ty::Str
            | Ty::DType
            | Ty::Range
            | Ty::Figure
            | Ty::Arr(_)
            | Ty::Dict(..)
            | Ty::Tuple(_)
            | Ty::Res(..)
            | Ty::Opt(_)
            | Ty::Fn(..)) => {
                self.err(
                    Diagnostic::error(name.span, format!("a `{other}` has no field `{}`", name.name))
                        .with_label(format!("this is a field of a {other}")),
                );
                Ty::Unknown
            }
        }
    }

    /// A key of a type that cannot be one (spec §10.2) is a static error
    /// where the checker knows it (a literal's key, `d[k]`, `d.get(k)`).
    fn dict_key(&mut self, t: &Ty, span: Span) {
        if !matches!(t, Ty::Int | Ty::Str | Ty::Bool | Ty::DType | Ty::Unknown) {
            self.err(
                Diagnostic::error(
                    span,
                    format!("a Dict key is an Int, Str, Bool or DType, not `{t}`"),
                )
                .with_label(format!("this is {t}")),
            );
        }
    }

    /// The HIR of a subscript's items; under a Dict (`base`), the key's
    /// type is checked.
    fn index_items(&mut self, items: &[ast::IndexItem], base: &Ty) -> Vec<hir::IndexItem> {
        items
            .iter()
            .map(|it| match it {
                ast::IndexItem::Single(e) => {
                    let (h, t) = self.expr(e);
                    if matches!(base, Ty::Dict(..)) {
                        self.dict_key(&t, e.span);
                    }
                    hir::IndexItem::Single(h)
                }
                ast::IndexItem::Slice { start, stop, step } => hir::IndexItem::Slice {
                    start: start.as_ref().map(|e| Box::new(self.expr(e).0)),
                    stop: stop.as_ref().map(|e| Box::new(self.expr(e).0)),
                    step: step.as_ref().map(|e| Box::new(self.expr(e).0)),
                },
                ast::IndexItem::Ellipsis => hir::IndexItem::Ellipsis,
            })
            .collect()
    }

    fn args(&mut self, args: &[ast::Arg]) -> (Vec<RawArg>, Vec<Ty>) {
        let mut out = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        let mut seen_kw = false;
        for a in args {
            let (h, t) = self.expr(&a.value);
            match &a.name {
                Some(n) => {
                    seen_kw = true;
                    out.push(RawArg {
                        name: Some((n.name.clone(), n.span)),
                        expr: h,
                    });
                }
                None => {
                    if seen_kw {
                        self.err(Diagnostic::error(
                            a.value.span,
                            "a positional argument cannot follow a keyword argument",
                        ));
                    }
                    tys.push(t);
                    out.push(RawArg { name: None, expr: h });
                }
            }
        }
        (out, tys)
    }

    /// How a field access on a value of type `ty` is looked up at run time.
    fn member(&mut self, ty: &Ty, name: &str) -> Member {
        let sym = self.ck.intern(name);
        match ty {
            Ty::Tensor(_) => match TensorField::from_name(name) {
                Some(f) => Member::Tensor(f),
                None => Member::Dynamic(sym, None, None),
            },
            Ty::Format => match FormatField::from_name(name) {
                Some(f) => Member::Format(f),
                None => Member::Dynamic(sym, None, None),
            },
            Ty::Struct(def) => match def.field_index(name).and_then(|i| u32::try_from(i).ok()) {
                Some(i) => Member::Offset(i, sym),
                None => Member::Dynamic(sym, None, None),
            },
            Ty::Unknown
            | Ty::Unit
            | Ty::Int
            | Ty::F64
            | Ty::Bool
            | Ty::Str
            | Ty::DType
            | Ty::Range
            | Ty::Tape
            | Ty::Figure
            | Ty::Arr(_)
            | Ty::Dict(..)
            | Ty::Tuple(_)
            | Ty::Res(..)
            | Ty::Opt(_)
            | Ty::Fn(..) => Member::Dynamic(sym, TensorField::from_name(name), FormatField::from_name(name)),
        }
    }

    /// Positional arguments, the i-th resolved where `expected[i]` is
    /// expected.
    /// Positional arguments, each checked with the type it is expected to
    /// have (a contextual literal takes it): their HIR and their types.
    fn positional_typed(
        &mut self,
        args: &[ast::Arg],
        what: &str,
        expected: &[Option<Ty>],
    ) -> (Vec<hir::Expr>, Vec<Ty>) {
        let mut out = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            if let Some(n) = &a.name {
                self.err(
                    Diagnostic::error(n.span, format!("{what} takes no keyword arguments"))
                        .with_note("keyword arguments are for builtin operations and user functions"),
                );
            }
            let (h, t) = self.expr_expect(&a.value, expected.get(i).and_then(Option::as_ref));
            out.push(h);
            tys.push(t);
        }
        (out, tys)
    }

    fn arity_error(&mut self, span: Span, name: &str, want: String, got: usize) {
        self.err(
            Diagnostic::error(
                span,
                format!(
                    "`{name}` takes {want} argument{}, but {got} {} given",
                    if want == "1" { "" } else { "s" },
                    if got == 1 { "was" } else { "were" }
                ),
            )
            .with_label(format!("{got} argument{}", if got == 1 { "" } else { "s" })),
        );
    }

    fn call(&mut self, callee: &ast::Expr, args: &[ast::Arg], span: Span) -> (H, Ty) {
        if let A::Name(n) = &callee.kind {
            match self.lookup(n) {
                Some(Found::Var { var, ty, .. }) => {
                    let arity = self.global_arity(n, var).or(ty.param_count());
                    let target = match var {
                        Var::Global(slot) => Target::Global(slot),
                        v @ (Var::Local(_) | Var::Capture(_)) => Target::Value(expr(H::Load(v), callee.span)),
                    };
                    return self.user_call(target, callee.span, &ty, arity, args, span, n);
                }
                Some(Found::SelfFn(ty)) => {
                    let arity = ty.param_count();
                    let target = Target::Value(expr(H::SelfFn, callee.span));
                    return self.user_call(target, callee.span, &ty, arity, args, span, n);
                }
                None => {}
            }
            if n == "help" {
                return self.help_call(args, span);
            }
            if let Some(b) = Builtin::from_name(n) {
                let (raw, tys) = self.args(args);
                // `format(x, "spec")`: a literal spec is checked as in an f-string.
                if b == Builtin::Host(HostFn::Format) {
                    if let (
                        Some(ty),
                        Some(ast::Arg {
                            value: spec,
                            name: None,
                            ..
                        }),
                    ) = (tys.first(), args.get(1))
                    {
                        if let A::Str(text) = &spec.kind {
                            let (text, sspan, ty) = (text.clone(), spec.span, ty.clone());
                            self.check_spec(&text, sspan, &ty);
                        }
                    }
                }
                let sig = b.signature();
                let npos = tys.len();
                let mut given: Vec<String> = Vec::new();
                if let Builtin::Op(op) = b {
                    self.check_op_keywords(op, &raw, npos);
                    given.extend(raw.iter().filter_map(|a| a.name.as_ref().map(|(k, _)| k.clone())));
                } else {
                    for a in &raw {
                        if let Some((k, ks)) = &a.name {
                            match sig.params.iter().position(|p| *p == k.as_str()) {
                                None => self.err(
                                    Diagnostic::error(*ks, format!("`{n}` has no keyword argument `{k}`"))
                                        .with_help(
                                            self.showing()
                                                .then(|| suggest::did_you_mean(k, sig.params.iter().copied()))
                                                .flatten(),
                                        ),
                                ),
                                Some(i) if (i < npos && !b.keyword_only()) || given.contains(k) => self.err(
                                    Diagnostic::error(*ks, format!("argument `{k}` of `{n}` is given twice")),
                                ),
                                Some(_) => given.push(k.clone()),
                            }
                        }
                    }
                }
                let required_by_keyword = sig
                    .params
                    .iter()
                    .take(sig.min)
                    .skip(npos)
                    .all(|p| given.iter().any(|g| g == p));
                let filled = npos + given.len();
                if !(npos >= sig.min || required_by_keyword && filled >= sig.min)
                    || sig.max.is_some_and(|m| npos > m)
                {
                    let want = match sig.max {
                        Some(m) if m == sig.min => m.to_string(),
                        Some(m) => format!("{} to {}", sig.min, m),
                        None => format!("at least {}", sig.min),
                    };
                    self.arity_error(span, n, want, npos);
                }
                let mut ty = b.result_type(&tys);
                if let Builtin::Host(h @ (HostFn::Finfo | HostFn::Iinfo)) = b {
                    ty = self.info_type(h, args, span);
                }
                if let (Ty::Tensor(None), Some(mut dpos)) = (&ty, b.dtype_param()) {
                    // `arange(n, dt)`: a dtype in second place is the dtype.
                    let second_is_dtype = args.iter().filter(|a| a.name.is_none()).nth(1).is_some_and(
                        |a| matches!(&a.value.kind, A::Name(x) if DType::from_name(x).is_some()),
                    );
                    if b == Builtin::Make(Make::Arange) && npos == 2 && second_is_dtype {
                        dpos = 1;
                    }
                    ty = Ty::Tensor(self.literal_dtype_arg(args, dpos));
                    // `randint`'s default dtype is i32, not f64.
                    let dt_given = npos > dpos
                        || args
                            .iter()
                            .any(|a| a.name.as_ref().is_some_and(|n| n.name == DTYPE_PARAM));
                    if b == Builtin::Make(Make::Randint) && !dt_given {
                        ty = Ty::Tensor(Some(DType::I32));
                    }
                }
                // A tensor operation types by the registry's dtype rule when
                // it works on tensors (always, or for those that also take
                // host numbers, when an argument is a tensor).
                // `min(a)`, `max(a)`, `sum(a)` of an Arr of numbers are host
                // values (spec §10.7).
                if let (Some(Op::Min | Op::Max | Op::Sum), [Ty::Arr(el)], 1) =
                    (b.op(), tys.as_slice(), raw.len())
                {
                    let ty = if matches!(**el, Ty::Int | Ty::F64) {
                        (**el).clone()
                    } else {
                        Ty::Unknown
                    };
                    let hargs = bind_slots(raw, 0, |k| b.op().and_then(|op| op.spec().param_index(k)));
                    return (H::Builtin(b, hargs), ty);
                }
                let tensor_op = b.op().and_then(|op| match op.spec().host {
                    Host::No => Some(op),
                    Host::Unary(_) | Host::Binary(_) | Host::Clip => {
                        tys.iter().any(|t| matches!(t, Ty::Tensor(_))).then_some(op)
                    }
                });
                let mut raw = raw;
                if b == Builtin::Host(HostFn::Print) && self.ck.crosscheck {
                    let mut pos_tys = tys.iter();
                    for a in raw.iter_mut().filter(|a| a.name.is_none()) {
                        if let Some(Ty::Tensor(Some(d))) = pos_tys.next() {
                            let e = std::mem::replace(&mut a.expr, expr(H::Unit, Span::default()));
                            let sp = e.span;
                            a.expr = expr(H::AssertDtype(Box::new(e), *d), sp);
                        }
                    }
                    let first = sig.params.len() as u32;
                    return (
                        H::Builtin(
                            b,
                            bind_slots(raw, first, |k| sig.params.iter().position(|p| *p == k)),
                        ),
                        ty,
                    );
                }
                if let Some(op) = tensor_op {
                    let spans: Vec<Span> = args
                        .iter()
                        .filter(|a| a.name.is_none())
                        .map(|a| a.value.span)
                        .collect();
                    let inputs: Vec<(Ty, Span)> = tys.iter().cloned().zip(spans).collect();
                    ty = self.op_type(op, &inputs, span);
                }
                let hargs = match b.op() {
                    Some(op) => bind_slots(raw, 0, |k| op.spec().param_index(k)),
                    None => {
                        let first = if b.keyword_only() {
                            sig.params.len() as u32
                        } else {
                            0
                        };
                        bind_slots(raw, first, |k| sig.params.iter().position(|p| *p == k))
                    }
                };
                return (H::Builtin(b, hargs), ty);
            }
            if self.ck.structs.contains_key(&*self.gkey(n)) {
                self.err(Diagnostic::error(
                    callee.span,
                    format!("`{n}` is a struct; build one with `{n} {{ field: value, … }}`"),
                ));
            } else if self.ck.globals.contains_key(&*self.gkey(n)) && self.fns.len() == 1 {
                self.err(
                    Diagnostic::error(callee.span, format!("`{n}` is used before its definition"))
                        .with_label("not defined yet at this point"),
                );
            } else {
                let help = self.name_help(n);
                self.err(
                    Diagnostic::error(callee.span, format!("unknown function `{n}`"))
                        .with_label("not defined")
                        .with_help(help),
                );
            }
            self.args(args);
            return (H::Unit, Ty::Unknown);
        }
        let (ch, cty) = self.expr(callee);
        let arity = cty.param_count();
        self.user_call(
            Target::Value(ch),
            callee.span,
            &cty,
            arity,
            args,
            span,
            "this value",
        )
    }

    /// The key of the module `e` names (spec §10.8): a name an import bound,
    /// or a dotted chain of names an import bound together (`import a.b`
    /// binds `a.b`), when no variable of that name hides it.
    fn module_of(&mut self, e: &ast::Expr) -> Option<String> {
        if self.aliases.is_empty() {
            return None;
        }
        let path = dotted_path(e)?;
        let key = self.aliases.get(&path)?.clone();
        let first = path.split('.').next().unwrap_or_default();
        if self.lookup(first).is_some() {
            return None;
        }
        Some(key)
    }

    /// A module's member `shown.member`: its global slot, type and arity;
    /// `None` (reported) for a private or unknown member.
    fn module_member(
        &mut self,
        key: &str,
        shown: &str,
        member: &ast::Ident,
    ) -> Option<(u32, Ty, Option<usize>)> {
        if member.name.starts_with('_') {
            self.err(
                Diagnostic::error(
                    member.span,
                    format!("`{}` is private to the module `{shown}`", member.name),
                )
                .with_note("a module's names that start with `_` are for the module itself"),
            );
            return None;
        }
        let full = format!("{key}.{}", member.name);
        if let Some(g) = self.ck.globals.get(&full) {
            return Some((g.slot, g.ty.clone(), g.arity));
        }
        let prefix = format!("{key}.");
        let mut members: Vec<&str> = self
            .ck
            .globals
            .keys()
            .chain(self.ck.structs.keys())
            .filter_map(|k| k.strip_prefix(prefix.as_str()))
            .filter(|k| !k.starts_with('_'))
            .collect();
        members.sort_unstable();
        let help = self
            .showing()
            .then(|| suggest::did_you_mean(&member.name, members.iter().copied()))
            .flatten();
        let note = if self.ck.structs.contains_key(&full) {
            format!(
                "`{shown}.{}` is a struct: build one with `{shown}.{} {{ … }}`",
                member.name, member.name
            )
        } else {
            format!("its members are: {}", members.join(", "))
        };
        self.err(
            Diagnostic::error(
                member.span,
                format!("the module `{shown}` has no member `{}`", member.name),
            )
            .with_label("unknown member")
            .with_note(note)
            .with_help(help),
        );
        None
    }

    /// `m.f(…)`: a call of a module's function (spec §10.8), checked as a
    /// call of any function the checker knows.
    fn module_call(
        &mut self,
        receiver: &ast::Expr,
        method: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
    ) -> (H, Ty) {
        let Some(key) = self.module_of(receiver) else {
            return (H::Unit, Ty::Unknown);
        };
        let shown = dotted_path(receiver).unwrap_or_default();
        let Some((slot, ty, arity)) = self.module_member(&key, &shown, method) else {
            self.args(args);
            return (H::Unit, Ty::Unknown);
        };
        let name = format!("{shown}.{}", method.name);
        self.user_call(Target::Global(slot), method.span, &ty, arity, args, span, &name)
    }

    /// A call of a user function or a function value (spec §10.5):
    /// positional arguments, then keywords. With the callee's signature
    /// known, an unknown, repeated or missing argument is a static error;
    /// the call is `CallKw` when it has keywords (the evaluator binds them
    /// by name, in the order written) and a plain call otherwise, where
    /// the callee fills the defaults of the arguments not given.
    #[allow(clippy::too_many_arguments)]
    fn user_call(
        &mut self,
        target: Target,
        callee_span: Span,
        ty: &Ty,
        arity: Option<usize>,
        args: &[ast::Arg],
        span: Span,
        name: &str,
    ) -> (H, Ty) {
        let mut pos = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        let mut kws: Vec<(Rc<str>, Span, hir::Expr, Ty)> = Vec::new();
        let (param_tys, names) = if let Ty::Fn(ps, _, sig) = ty {
            (ps.clone(), sig.clone())
        } else {
            (None, None)
        };
        for a in args {
            let at = match &a.name {
                None => Some(pos.len()),
                Some(k) => names
                    .as_ref()
                    .and_then(|s| s.names.iter().position(|n| **n == k.name)),
            };
            let expected = at.and_then(|i| param_tys.as_ref().and_then(|ps| ps.get(i)));
            let (h, t) = self.expr_expect(&a.value, expected);
            match &a.name {
                Some(k) => kws.push((Rc::from(k.name.as_str()), k.span, h, t)),
                None => {
                    if !kws.is_empty() {
                        self.err(Diagnostic::error(
                            a.value.span,
                            "a positional argument cannot follow a keyword argument",
                        ));
                    }
                    pos.push(h);
                    tys.push(t);
                }
            }
        }
        let sig = if let Ty::Fn(_, _, Some(sig)) = ty {
            Some(sig.clone())
        } else {
            None
        };
        match (&sig, arity) {
            (Some(sig), _) => {
                if pos.len() > sig.names.len() || (kws.is_empty() && !sig.accepts(pos.len())) {
                    self.arity_error(span, name, sig.arity_text(), pos.len());
                } else {
                    tys.resize(sig.names.len(), Ty::Unknown);
                    let mut given: Vec<bool> = (0..sig.names.len()).map(|i| i < pos.len()).collect();
                    for (k, kspan, _, t) in &kws {
                        match sig.names.iter().position(|n| n == k) {
                            None => {
                                let help = self
                                    .showing()
                                    .then(|| suggest::did_you_mean(k, sig.names.iter().map(|n| &**n)))
                                    .flatten();
                                self.err(
                                    Diagnostic::error(*kspan, format!("`{name}` has no parameter `{k}`"))
                                        .with_label("unknown keyword")
                                        .with_note(format!(
                                            "its parameters are: {}",
                                            sig.names.iter().map(|n| &**n).collect::<Vec<_>>().join(", ")
                                        ))
                                        .with_help(help),
                                );
                            }
                            Some(i) if given[i] => self.err(
                                Diagnostic::error(
                                    *kspan,
                                    format!("argument `{k}` of `{name}` is given twice"),
                                )
                                .with_label("given again here"),
                            ),
                            Some(i) => {
                                given[i] = true;
                                tys[i] = t.clone();
                            }
                        }
                    }
                    let missing: Vec<String> = (0..sig.required)
                        .filter(|&i| !given[i])
                        .map(|i| format!("`{}`", sig.names[i]))
                        .collect();
                    if !kws.is_empty() && !missing.is_empty() {
                        self.err(
                            Diagnostic::error(
                                span,
                                format!(
                                    "missing argument{} {} of `{name}`",
                                    if missing.len() == 1 { "" } else { "s" },
                                    missing.join(", ")
                                ),
                            )
                            .with_label("in this call"),
                        );
                    }
                }
            }
            (None, Some(k)) if kws.is_empty() && k != pos.len() => {
                self.arity_error(span, name, k.to_string(), pos.len())
            }
            (None, _) => {}
        }
        let ret = self.call_result(ty, &tys, span, name);
        let kind = if kws.is_empty() {
            match target {
                Target::Global(slot) => H::CallGlobal(slot, pos.into()),
                Target::Value(e) => H::Call(Box::new(e), pos.into()),
            }
        } else {
            let callee = match target {
                Target::Global(slot) => expr(H::Load(Var::Global(slot)), callee_span),
                Target::Value(e) => e,
            };
            H::CallKw(Box::new(hir::CallKw {
                callee,
                args: pos.into(),
                keywords: kws.into_iter().map(|(k, s, h, _)| (k, s, h)).collect(),
            }))
        };
        (kind, ret)
    }

    /// Keyword arguments of a tensor operation must name one of its
    /// parameters (from the operation table) and not repeat a positional.
    fn check_op_keywords(&mut self, op: Op, args: &[RawArg], npos: usize) {
        let spec = op.spec();
        let mut seen: Vec<&str> = Vec::new();
        for a in args {
            if let Some((k, ks)) = &a.name {
                match spec.param_index(k) {
                    None => {
                        let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
                        self.err(
                            Diagnostic::error(*ks, format!("`{op}` has no argument `{k}`"))
                                .with_note(format!("its parameters are: {}", names.join(", ")))
                                .with_help(
                                    self.showing()
                                        .then(|| suggest::did_you_mean(k, names.iter().copied()))
                                        .flatten(),
                                ),
                        )
                    }
                    Some(i) if i < npos || seen.contains(&k.as_str()) => self.err(Diagnostic::error(
                        *ks,
                        format!("argument `{k}` of `{op}` is given twice"),
                    )),
                    Some(_) => seen.push(k),
                }
            }
        }
    }

    /// The arguments of a host method that takes keywords (a figure's,
    /// [`HostMethod::params`]): no unknown or repeated keyword, no more
    /// arguments than parameters, and the first `min` given.
    fn check_host_keywords(&mut self, name: &str, span: Span, args: &[RawArg], min: usize, params: &[&str]) {
        let npos = args.iter().take_while(|a| a.name.is_none()).count();
        let mut given = vec![false; params.len()];
        for (i, g) in given.iter_mut().enumerate().take(npos) {
            *g = i < params.len();
        }
        if npos > params.len() {
            self.err(
                Diagnostic::error(
                    span,
                    format!("`{name}` takes at most {} arguments, not {npos}", params.len()),
                )
                .with_note(format!("its parameters are: {}", params.join(", "))),
            );
            return;
        }
        for a in &args[npos..] {
            let Some((k, ks)) = &a.name else {
                self.err(Diagnostic::error(
                    a.expr.span,
                    "a positional argument cannot follow a keyword argument",
                ));
                continue;
            };
            match params.iter().position(|p| p == k) {
                None => self.err(
                    Diagnostic::error(*ks, format!("`{name}` has no argument `{k}`"))
                        .with_note(if params.is_empty() {
                            format!("`{name}` takes no arguments")
                        } else {
                            format!("its parameters are: {}", params.join(", "))
                        })
                        .with_help(
                            self.showing()
                                .then(|| suggest::did_you_mean(k, params.iter().copied()))
                                .flatten(),
                        ),
                ),
                Some(i) if given[i] => self.err(Diagnostic::error(
                    *ks,
                    format!("argument `{k}` of `{name}` is given twice"),
                )),
                Some(i) => given[i] = true,
            }
        }
        if let Some(missing) = given.iter().take(min).position(|g| !g) {
            self.err(
                Diagnostic::error(span, format!("`{name}` needs its argument `{}`", params[missing]))
                    .with_note(format!("its parameters are: {}", params.join(", "))),
            );
        }
    }

    /// The struct type `finfo`/`iinfo` returns (registered by `predeclare`);
    /// a dtype written in place that has no such limits is a static error,
    /// any other is checked at run time.
    /// `help(name)` (spec §12.1): the help text of a name — a builtin, an
    /// operation, a function of this program or of an imported module
    /// (`help(nn.linear)`), a constant, a method — written in place or as
    /// a Str literal. The text is known here, so the call is that Str.
    fn help_call(&mut self, args: &[ast::Arg], span: Span) -> (H, Ty) {
        let path = match args {
            [ast::Arg { name: None, value }] => {
                if let A::Str(s) = &value.kind {
                    Some(s.clone())
                } else {
                    dotted_path(value)
                }
            }
            _ => None,
        };
        let Some(path) = path else {
            self.err(Diagnostic::error(
                span,
                "`help` takes one name: `help(softmax)`, `help(nn.linear)` or `help(\"softmax\")`",
            ));
            return (H::Str(Rc::default()), Ty::Str);
        };
        match help_in(&self.ck.globals, &self.aliases, &self.prefix, &path) {
            Some(text) => (H::Str(Rc::new(Text::new(text))), Ty::Str),
            None => {
                let names: Vec<&str> = Builtin::all()
                    .map(|b| b.name())
                    .chain(
                        self.ck
                            .globals
                            .iter()
                            .filter(|(_, g)| g.help.is_some())
                            .map(|(k, _)| k.as_str()),
                    )
                    .collect();
                let help = self
                    .showing()
                    .then(|| suggest::did_you_mean(&path, names))
                    .flatten();
                self.err(
                    Diagnostic::error(
                        span,
                        format!("no help for `{path}`: it names no builtin, operation or function"),
                    )
                    .with_help(help),
                );
                (H::Str(Rc::default()), Ty::Str)
            }
        }
    }

    fn info_type(&mut self, h: HostFn, args: &[ast::Arg], span: Span) -> Ty {
        let ty = self.info_struct(h);
        let one_positional = args.len() == 1 && args.iter().all(|a| a.name.is_none());
        if let Some(d) = one_positional.then(|| self.literal_dtype_arg(args, 0)).flatten() {
            if let Err(m) = crate::builtins::info_values(h, d) {
                let (msg, note) = m.split_once("; ").unwrap_or((&m, ""));
                self.err(Diagnostic::error(span, msg.to_string()).with_note(note.to_string()));
            }
        }
        ty
    }

    /// The struct of `finfo` or `iinfo`, registered under the builtin's
    /// name (which no program can give a struct of its own) if it is not.
    fn info_struct(&mut self, h: HostFn) -> Ty {
        let Some((name, fields)) = crate::builtins::info_fields(h) else {
            return Ty::Unknown;
        };
        if !self.ck.structs.contains_key(name) {
            let Some(def) = crate::builtins::info_struct(h, |f| self.ck.intern(f)) else {
                return Ty::Unknown;
            };
            let tys = fields
                .iter()
                .map(|&(_, int)| if int { Ty::Int } else { Ty::F64 })
                .collect();
            self.ck.structs.insert(name.to_string(), (Rc::new(def), tys));
        }
        self.ck
            .structs
            .get(name)
            .map_or(Ty::Unknown, |(def, _)| Ty::Struct(def.clone()))
    }

    /// The dtype a constructor call asks for when its dtype argument is a
    /// dtype constant written in place (positional at `pos` or `dt=`); f64
    /// when the argument is absent; `None` when it is computed.
    fn literal_dtype_arg(&mut self, args: &[ast::Arg], pos: usize) -> Option<DType> {
        let arg = args
            .iter()
            .find(|a| a.name.as_ref().is_some_and(|n| n.name == DTYPE_PARAM))
            .or_else(|| args.iter().filter(|a| a.name.is_none()).nth(pos));
        let Some(a) = arg else {
            return Some(DType::F64);
        };
        // Only a dtype name written in place is known statically; any other
        // expression is computed.
        let A::Name(n) = &a.value.kind else {
            return None;
        };
        if self.lookup(n).is_some() {
            return None;
        }
        DType::from_name(n)
    }

    fn call_result(&mut self, callee: &Ty, args: &[Ty], span: Span, name: &str) -> Ty {
        match callee {
            Ty::Fn(params, ret, _) => {
                if let Some(ps) = params {
                    for (i, (a, p)) in args.iter().zip(ps).enumerate() {
                        if !a.fits(p) {
                            self.err(Diagnostic::error(
                                span,
                                format!("argument {} of `{name}` must be `{p}`, not `{a}`", i + 1),
                            ));
                        }
                    }
                }
                (**ret).clone()
            }
            Ty::Unknown => Ty::Unknown,
            other @ (Ty::Unit
            | Ty::Int
            | Ty::F64
            | Ty::Bool
            | Ty::Str
            | Ty::DType
            | Ty::Range
            | Ty::Tape
            | Ty::Format
            | Ty::Figure
            | Ty::Arr(_)
            | Ty::Dict(..)
            | Ty::Tuple(_)
            | Ty::Tensor(_)
            | Ty::Res(..)
            | Ty::Opt(_)
            | Ty::Struct(_)) => {
                self.err(Diagnostic::error(
                    span,
                    format!("a `{other}` is not a function and cannot be called"),
                ));
                Ty::Unknown
            }
        }
    }

    fn method(&mut self, receiver: &ast::Expr, method: &ast::Ident, args: &[ast::Arg]) -> (H, Ty) {
        let name = method.name.as_str();
        let mref = MethodRef::resolve(name);
        let mutating = mref.host.filter(|h| h.mutates());
        if let Some(host) =
            mutating.filter(|_| matches!(receiver.kind, A::Name(_) | A::Index { .. } | A::Field { .. }))
        {
            // Peek at the receiver's type and mutability without reporting:
            // a non-lvalue receiver falls through to an ordinary method call.
            if let Some(rt) = self.lvalue_type(receiver) {
                if matches!(rt, (Ty::Arr(_) | Ty::Dict(..), _) | (Ty::Unknown, true)) {
                    if !rt.1 {
                        // Known Arr or Dict, immutable root: report it properly.
                        self.lvalue(receiver, &format!("call `{name}` on"));
                        return (H::Unit, Ty::Unknown);
                    }
                    let Some((root, path, _)) = self.lvalue(receiver, &format!("call `{name}` on")) else {
                        return (H::Unit, Ty::Unknown);
                    };
                    // `xs.push([1, 2])` on an `Arr[Arr[Int]]` pushes an Arr
                    // (spec §10.3).
                    let el = if let Ty::Arr(el) = &rt.0 {
                        Some((**el).clone())
                    } else {
                        None
                    };
                    let expected: Vec<Option<Ty>> = if host == HostMethod::Push {
                        vec![el]
                    } else if host == HostMethod::Insert {
                        vec![None, el]
                    } else if host == HostMethod::Extend {
                        vec![el.map(|e| Ty::Arr(Box::new(e)))]
                    } else {
                        Vec::new()
                    };
                    let (hargs, tys) = self.positional_typed(args, &format!("`{name}`"), &expected);
                    // The value that becomes an element must fit the
                    // element type: statically when its type is known,
                    // else checked while running.
                    let mut check = None;
                    let declared = self.declared_place(receiver, root, &path);
                    for (i, (want, (got, arg))) in expected.iter().zip(tys.iter().zip(args)).enumerate() {
                        if !declared {
                            break;
                        }
                        let Some(want) = want.as_ref().filter(|w| w.is_known()) else {
                            continue;
                        };
                        if !got.fits(want) {
                            self.err(
                                Diagnostic::error(
                                    arg.value.span,
                                    format!("`{name}` would put a value of type `{got}` into an `{}`", rt.0),
                                )
                                .with_label(format!("this is {got}")),
                            );
                        } else if got != want && host != HostMethod::Extend {
                            check = Some((i, RtType::from_ty(want)));
                        }
                    }
                    let ty = host_method_type(&rt.0, mref);
                    return (
                        H::MutMethod(Box::new(hir::MutMethod {
                            root,
                            path,
                            method: host,
                            args: hargs.into(),
                            check,
                        })),
                        ty,
                    );
                }
            }
        }
        let (rh, rty) = self.expr(receiver);
        if let Ty::Struct(def) = &rty {
            if def.field_index(name).is_none() {
                self.err(
                    Diagnostic::error(
                        method.span,
                        format!("struct `{}` has no field or method `{name}`", def.name),
                    )
                    .with_note(format!("its fields are: {}", def.fields.join(", "))),
                );
            }
        } else if matches!(rty, Ty::Tensor(_)) {
            let tensor_method = mref.op.is_some() || mref.host.is_some_and(|h| h.applies_to(Recv::Tensor));
            if !tensor_method {
                // `x.shape()`: a field, not a method.
                let help = if TensorField::from_name(name).is_some() {
                    Some(format!(
                        "`{name}` is a field: write `.{name}` without the parentheses"
                    ))
                } else if !self.showing() {
                    None
                } else {
                    let known: Vec<&str> = Op::ALL
                        .iter()
                        .map(|op| op.name())
                        .chain(
                            HostMethod::all()
                                .filter(|h| h.applies_to(Recv::Tensor))
                                .map(HostMethod::name),
                        )
                        .collect();
                    suggest::did_you_mean(name, known.iter().copied())
                };
                self.err(
                    Diagnostic::error(method.span, format!("unknown method `{name}` on `{rty}`"))
                        .with_label(format!("tensors have no method `{name}`"))
                        .with_help(help),
                );
            }
        } else if !matches!(rty, Ty::Unknown) {
            let host_ok = match recv_kind(&rty) {
                Some(r) => mref.host.is_some_and(|h| h.applies_to(r)),
                None => false,
            };
            let math_method = matches!(rty, Ty::Int | Ty::F64)
                && mref.op.is_some_and(|op| matches!(op.spec().host, Host::Unary(_)));
            if !host_ok && !math_method {
                let known = recv_kind(&rty)
                    .map(crate::builtins::host_method_names)
                    .unwrap_or_default();
                self.err(
                    Diagnostic::error(method.span, format!("unknown method `{name}` on `{rty}`"))
                        .with_label(format!("`{rty}` has no method `{name}`"))
                        .with_help(
                            self.showing()
                                .then(|| suggest::did_you_mean(name, known.iter().copied()))
                                .flatten(),
                        ),
                );
            }
        }
        let (raw, ptys) = self.args(args);
        if matches!(rty, Ty::Tensor(_)) {
            if let Some(op) = mref.op {
                // The receiver is the operation's first argument.
                self.check_op_keywords(op, &raw, ptys.len() + 1);
            }
        }
        let mut ty = host_method_type(&rty, mref);
        if let (Ty::Dict(..), Some(HostMethod::Get | HostMethod::Contains | HostMethod::Remove), Some(k)) =
            (&rty, mref.host, ptys.first())
        {
            let span = args
                .iter()
                .find(|a| a.name.is_none())
                .map_or(method.span, |a| a.value.span);
            self.dict_key(k, span);
        }
        if let (Ty::Dict(_, v), Some(HostMethod::Get)) = (&rty, mref.host) {
            // `d.get(k)` is an Opt of the value; `d.get(k, default)` is the
            // value, or the default when the key is missing: the value's
            // type when the default has exactly that type.
            ty = match ptys.as_slice() {
                [_] => Ty::Opt(v.clone()),
                [_, d] if d == &**v => (**v).clone(),
                _ => Ty::Unknown,
            };
        }
        if rty == Ty::Tape && mref.host == Some(HostMethod::Watch) {
            // A watched tensor is the same tensor, recorded (spec §8).
            if let Some(Ty::Tensor(d)) = ptys.first() {
                ty = Ty::Tensor(*d);
            }
        }
        if matches!(rty, Ty::Tensor(_) | Ty::Unknown) && mref.host == Some(HostMethod::To) {
            ty = Ty::Tensor(self.literal_dtype_arg(args, 0).filter(|_| !args.is_empty()));
        } else if let (Ty::Tensor(_), Some(op)) = (&rty, mref.op) {
            let mut inputs = vec![(rty.clone(), receiver.span)];
            let spans = args.iter().filter(|a| a.name.is_none()).map(|a| a.value.span);
            inputs.extend(ptys.iter().cloned().zip(spans));
            ty = self.op_type(op, &inputs, receiver.span.to(method.span));
        }
        let host_params = mref.host.and_then(HostMethod::params);
        let hargs = match (mref.op, host_params) {
            (Some(op), _) => bind_slots(raw, 1, |k| op.spec().param_index(k)),
            (None, Some((min, params))) => {
                self.check_host_keywords(name, method.span, &raw, min, params);
                bind_slots(raw, 1, |k| params.iter().position(|p| *p == k).map(|i| i + 1))
            }
            (None, None) => {
                for (k, ks) in raw.iter().filter_map(|a| a.name.as_ref()) {
                    self.err(
                        Diagnostic::error(*ks, format!("unexpected keyword argument `{k}`"))
                            .with_note(format!("`{name}` takes positional arguments only")),
                    );
                }
                bind_slots(raw, 1, |_| None)
            }
        };
        let sym = self.ck.intern(name);
        (
            H::Method(Box::new(hir::MethodCall {
                receiver: rh,
                method: mref,
                sym,
                args: hargs,
            })),
            ty,
        )
    }

    /// The static type of an lvalue expression and whether its root is a
    /// mutable, assignable variable — without reporting anything.
    // Only a name, an index or a field is a place; the `_` arm is every other expression.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn lvalue_type(&mut self, e: &ast::Expr) -> Option<(Ty, bool)> {
        match &e.kind {
            A::Name(n) => match self.lookup(n)? {
                Found::Var { var, ty, mutable } => Some((ty, mutable && !matches!(var, Var::Capture(_)))),
                Found::SelfFn(_) => None,
            },
            A::Index { base, .. } => {
                let (t, m) = self.lvalue_type(base)?;
                // An Arr's element or a Dict's value, as `lvalue` has it.
                Some((
                    match t {
                        Ty::Arr(el) | Ty::Dict(_, el) => *el,
                        _ => Ty::Unknown,
                    },
                    m,
                ))
            }
            A::Field { base, name } => {
                let (t, m) = self.lvalue_type(base)?;
                // Only a struct's field types are known statically.
                let field = if let Ty::Struct(def) = t {
                    def.field_index(&name.name).and_then(|i| {
                        self.ck
                            .structs
                            .get(&*def.name)
                            .and_then(|(_, tys)| tys.get(i).cloned())
                    })
                } else {
                    None
                };
                Some((field.unwrap_or(Ty::Unknown), m))
            }
            _ => None,
        }
    }

    fn struct_lit(&mut self, name: &ast::Ident, fields: &[(ast::Ident, ast::Expr)], span: Span) -> (H, Ty) {
        let key = self.struct_key(&name.name);
        let Some((def, tys)) = self.ck.structs.get(&key).cloned() else {
            self.err(
                Diagnostic::error(name.span, format!("unknown struct `{}`", name.name))
                    .with_label("not defined"),
            );
            for (_, e) in fields {
                self.expr(e);
            }
            return (H::Unit, Ty::Unknown);
        };
        let mut slots: Vec<Option<(hir::Expr, Option<RtType>)>> =
            (0..def.fields.len()).map(|_| None).collect();
        for (fname, fe) in fields {
            // The field's declared type is the value's context: a list
            // literal for an `Arr[Int]` field is an Arr (spec §11.1).
            let want = def.field_index(&fname.name).and_then(|i| tys.get(i)).cloned();
            let (h, t) = self.expr_expect(fe, want.as_ref());
            match def.field_index(&fname.name) {
                Some(i) => {
                    let mut check = None;
                    if slots[i].is_some() {
                        self.err(Diagnostic::error(
                            fname.span,
                            format!("field `{}` is given twice", fname.name),
                        ));
                    }
                    if let Some(want) = tys.get(i) {
                        if !t.fits(want) {
                            self.err(
                                Diagnostic::error(
                                    fe.span,
                                    format!("field `{}` is `{want}` but this value is `{t}`", fname.name),
                                )
                                .with_label(format!("this is {t}")),
                            );
                        }
                        if want.is_known() && t != *want {
                            check = Some(RtType::from_ty(want));
                        }
                    }
                    slots[i] = Some((h, check));
                }
                None => self.err(
                    Diagnostic::error(
                        fname.span,
                        format!("struct `{}` has no field `{}`", def.name, fname.name),
                    )
                    .with_note(format!("its fields are: {}", def.fields.join(", ")))
                    .with_help(
                        self.showing()
                            .then(|| suggest::did_you_mean(&fname.name, def.fields.iter().map(|f| &**f)))
                            .flatten(),
                    ),
                ),
            }
        }
        let missing: Vec<&str> = def
            .fields
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|(f, _)| &**f)
            .collect();
        if !missing.is_empty() {
            self.err(Diagnostic::error(
                span,
                format!(
                    "missing field{} {} in `{}`",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    def.name
                ),
            ));
            return (H::Unit, Ty::Unknown);
        }
        let fields = slots.into_iter().flatten().collect();
        (
            H::StructLit {
                def: def.clone(),
                fields,
            },
            Ty::Struct(def),
        )
    }

    fn pattern(&mut self, p: &ast::Pattern, ty: &Ty) -> hir::Pattern {
        use ast::PatternKind as P;
        let mismatch = |this: &mut Self, what: &str| {
            if ty.is_known() {
                this.err(
                    Diagnostic::error(
                        p.span,
                        format!("this pattern matches {what}, but the value is `{ty}`"),
                    )
                    .with_label(format!("the value is {ty}")),
                );
            }
        };
        match &p.kind {
            P::Name(n) if n.name == "_" => hir::Pattern::Wildcard,
            P::Name(n) if Constant::from_name(&n.name) == Some(Constant::None) => {
                if !matches!(ty, Ty::Opt(_) | Ty::Unknown) {
                    mismatch(self, "an `Opt`");
                }
                hir::Pattern::None
            }
            P::Name(n) => {
                self.record_binding(n.span, ty);
                match self.declare_local(&n.name, ty.clone()) {
                    Var::Local(s) => hir::Pattern::Bind(s),
                    Var::Capture(_) | Var::Global(_) => hir::Pattern::Wildcard,
                }
            }
            P::Ctor { name, args } => {
                let Some(ctor) = Ctor::from_name(&name.name) else {
                    self.err(
                        Diagnostic::error(name.span, format!("unknown pattern `{}(…)`", name.name))
                            .with_note(
                                "patterns are `Ok(p)`, `Err(p)`, `Some(p)`, `None`, literals, names and `_`",
                            ),
                    );
                    return hir::Pattern::Wildcard;
                };
                let (inner_ty, ok) = match (ctor, ty) {
                    (Ctor::Ok, Ty::Res(t, _)) | (Ctor::Err, Ty::Res(_, t)) | (Ctor::Some, Ty::Opt(t)) => {
                        ((**t).clone(), true)
                    }
                    (_, Ty::Unknown) => (Ty::Unknown, true),
                    _ => (Ty::Unknown, false),
                };
                if !ok {
                    mismatch(
                        self,
                        match ctor {
                            Ctor::Some => "an `Opt`",
                            Ctor::Ok | Ctor::Err => "a `Res`",
                        },
                    );
                }
                if args.len() != 1 {
                    self.err(Diagnostic::error(
                        p.span,
                        format!("`{}` takes exactly one pattern", name.name),
                    ));
                    return hir::Pattern::Wildcard;
                }
                let inner = Box::new(self.pattern(&args[0], &inner_ty));
                match ctor {
                    Ctor::Ok => hir::Pattern::Ok(inner),
                    Ctor::Err => hir::Pattern::Err(inner),
                    Ctor::Some => hir::Pattern::Some(inner),
                }
            }
            P::Int(v) => {
                if !matches!(ty, Ty::Int | Ty::F64 | Ty::Unknown) {
                    mismatch(self, "a number");
                }
                hir::Pattern::Int(*v)
            }
            P::Float(v) => {
                if !matches!(ty, Ty::Int | Ty::F64 | Ty::Unknown) {
                    mismatch(self, "a number");
                }
                hir::Pattern::Float(*v)
            }
            P::Str(s) => {
                if !matches!(ty, Ty::Str | Ty::Unknown) {
                    mismatch(self, "a `Str`");
                }
                hir::Pattern::Str(Rc::new(Text::new(s.clone())))
            }
            P::Bool(b) => {
                if !matches!(ty, Ty::Bool | Ty::Unknown) {
                    mismatch(self, "a `Bool`");
                }
                hir::Pattern::Bool(*b)
            }
            P::Tuple(items) if items.is_empty() => {
                if !matches!(ty, Ty::Unit | Ty::Unknown) {
                    mismatch(self, "`()`");
                }
                hir::Pattern::Tuple(Box::new([]))
            }
            P::Tuple(items) => {
                let n = items.len();
                let tys: Vec<Ty> = if let Some(ts) = ty.tuple_of(n) {
                    ts.to_vec()
                } else {
                    if ty.is_known() {
                        mismatch(self, &format!("a tuple of {n}"));
                    }
                    vec![Ty::Unknown; n]
                };
                hir::Pattern::Tuple(items.iter().zip(&tys).map(|(p, t)| self.pattern(p, t)).collect())
            }
        }
    }
}
