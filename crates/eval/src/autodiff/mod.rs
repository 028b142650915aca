//! Reverse-mode automatic differentiation (spec §8): tapes, tracked
//! tensors, the recording of every differentiable operation, `backward`,
//! and the two places where the gradient-dtype rule lives.
//!
//! A tape has a *level*, a number that grows with every `tape()`. Watching
//! a tensor on a tape makes a leaf node of that level and wraps the tensor
//! in a [`Tracked`] value. An operation with a tracked operand finds the
//! highest level among its operands, computes the operation on their
//! primals (which may themselves be tracked by lower, outer tapes, so the
//! computation is recorded there too), and records one node at that level
//! holding its arguments and its primal output. `backward` walks the nodes
//! reachable from the root in reverse creation order and runs each node's
//! vjp rule ([`rules`]) — written with the same recording operations, so
//! the backward pass of an inner tape is itself recorded on the outer ones.
//! That is what makes `hessian` exact: it differentiates the gradient.
//!
//! The gradient-dtype rule is decided in exactly two places, as the seed
//! asks: [`backward`] allocates each node's cotangent at
//! `grad_dtype(node.dtype)` (f64 for f64, f32 for every other dtype), and
//! [`accumulate`] rounds each contribution to the cotangent's dtype as it
//! adds it. The rules never name a dtype: they compute at the cotangent's
//! width (narrow primals are widened first, see `rules::wide`).

pub(crate) mod functional;
mod rules;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_tensor::promote::grad_dtype;
use twill_tensor::tensor::IndexItem;
use twill_tensor::{DType, Tensor};

use twill_tensor::ops::{Grad, Op};

use crate::tensors::{plain_binary, plain_cast, plain_op, tensor_value, OpError};
use crate::value::Value;

thread_local! {
    static NEXT_NODE: Cell<u64> = const { Cell::new(1) };
    static NEXT_LEVEL: Cell<u64> = const { Cell::new(1) };
}

fn next_id(c: &'static std::thread::LocalKey<Cell<u64>>) -> u64 {
    c.with(|n| {
        let v = n.get();
        n.set(v + 1);
        v
    })
}

/// A tape: its level and the leaves watched on it, in watch order.
#[derive(Debug)]
pub struct TapeVal {
    pub level: u64,
    leaves: RefCell<Vec<Rc<Node>>>,
}

impl Default for TapeVal {
    fn default() -> Self {
        Self::new()
    }
}

impl TapeVal {
    pub fn new() -> TapeVal {
        TapeVal {
            level: next_id(&NEXT_LEVEL),
            leaves: RefCell::new(Vec::new()),
        }
    }
}

/// A tensor recorded on a tape: its node, and its value one level down
/// (a plain tensor, or a value tracked by an outer tape).
#[derive(Debug)]
pub struct Tracked {
    pub node: Rc<Node>,
    pub primal: Value,
}

/// An operation as the backward pass needs to know it.
#[derive(Clone, Debug)]
pub(crate) enum AdOp {
    /// An operation of the registry.
    Table(Op),
    Bin(BinOp),
    Cast,
    Index(Vec<IndexItem>),
    /// `x.T`.
    Reverse,
    /// The adjoint of `index_select` along an axis; args: src, idx.
    IndexAdd(usize),
    /// The adjoint of `gather` along an axis; args: src, idx.
    ScatterAdd(usize),
}

#[derive(Debug)]
pub(crate) enum Kind {
    Leaf,
    Op {
        op: AdOp,
        /// The arguments by parameter (primals one level down), then the
        /// extra positional ones of a variadic operation.
        args: Vec<Option<Value>>,
        out: Value,
    },
}

/// Where a parent sits among a node's arguments: the argument, and the
/// element for an `Arr[Tensor]` argument (0 otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub arg: usize,
    pub elem: usize,
}

#[derive(Debug)]
pub struct Node {
    id: u64,
    level: u64,
    pub(crate) kind: Kind,
    parents: Vec<(Slot, Rc<Node>)>,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
}

impl Drop for Node {
    /// Long chains of nodes (a training loop that keeps a tracked value
    /// across many steps) would otherwise drop recursively.
    fn drop(&mut self) {
        let mut stack: Vec<Rc<Node>> = self.parents.drain(..).map(|(_, n)| n).collect();
        while let Some(n) = stack.pop() {
            if let Ok(mut inner) = Rc::try_unwrap(n) {
                stack.extend(inner.parents.drain(..).map(|(_, n)| n));
            }
        }
    }
}

/// The plain tensor under any number of tapes.
pub(crate) fn base(v: &Value) -> Option<&Tensor> {
    let mut v = v;
    loop {
        match v {
            Value::Tensor(t) => return Some(t),
            Value::Tracked(tr) => v = &tr.primal,
            _ => return None,
        }
    }
}

/// The highest tape level among the tracked values in `v`.
fn level(v: &Value) -> Option<u64> {
    match v {
        Value::Tracked(t) => Some(t.node.level),
        Value::Arr(items) => items.iter().filter_map(level).max(),
        _ => None,
    }
}

fn max_level<'a>(vs: impl IntoIterator<Item = &'a Value>) -> Option<u64> {
    vs.into_iter().filter_map(level).max()
}

/// `v` with its level-`lv` tracking removed; a float-valued level-`lv`
/// tensor becomes a parent of the node being recorded, in `slot`.
fn strip(v: &Value, lv: u64, arg: usize, parents: &mut Vec<(Slot, Rc<Node>)>) -> Value {
    match v {
        Value::Tracked(t) if t.node.level == lv => {
            if t.node.dtype.is_float() {
                parents.push((Slot { arg, elem: 0 }, t.node.clone()));
            }
            t.primal.clone()
        }
        Value::Arr(items) if items.iter().any(|x| level(x) == Some(lv)) => {
            let mut out = Vec::with_capacity(items.len());
            for (elem, x) in items.iter().enumerate() {
                match x {
                    Value::Tracked(t) if t.node.level == lv => {
                        if t.node.dtype.is_float() {
                            parents.push((Slot { arg, elem }, t.node.clone()));
                        }
                        out.push(t.primal.clone());
                    }
                    other => out.push(other.clone()),
                }
            }
            Value::Arr(Rc::new(out))
        }
        other => other.clone(),
    }
}

/// Records a node of level `lv` whose primal output is `out`, if it has a
/// parent and a float output; otherwise `out` is the result as it is.
fn record(lv: u64, op: AdOp, args: Vec<Option<Value>>, parents: Vec<(Slot, Rc<Node>)>, out: Value) -> Value {
    let Some(t) = base(&out) else { return out };
    if parents.is_empty() || !t.dtype().is_float() {
        return out;
    }
    let node = Node {
        id: next_id(&NEXT_NODE),
        level: lv,
        dtype: t.dtype(),
        shape: t.shape().to_vec(),
        kind: Kind::Op {
            op,
            args,
            out: out.clone(),
        },
        parents,
    };
    Value::Tracked(Rc::new(Tracked {
        node: Rc::new(node),
        primal: out,
    }))
}

/// Runs registry operation `op` on arguments bound to its slots,
/// recording it if an operand is tracked. Operations the registry marks
/// non-differentiable run on the primals and are not recorded.
pub(crate) fn op(op: Op, slots: &[Option<Value>]) -> Result<Value, OpError> {
    let n = op.spec().params.len();
    let padded: Vec<Option<Value>>;
    let slots = if slots.len() < n {
        padded = slots
            .iter()
            .cloned()
            .chain(std::iter::repeat(None))
            .take(n)
            .collect();
        &padded[..]
    } else {
        slots
    };
    let Some(lv) = max_level(slots.iter().flatten()) else {
        return plain_op(op, slots);
    };
    match op.spec().grad {
        Grad::None => return plain_op(op, &strip_slots(slots)),
        Grad::Rule => {}
    }
    match op {
        Op::Split => return split(slots).map_err(OpError::from),
        Op::Sort | Op::Topk => return select_sorted(op, slots).map_err(OpError::from),
        _ => {}
    }
    let mut parents = Vec::new();
    let stripped: Vec<Option<Value>> = slots
        .iter()
        .enumerate()
        .map(|(i, a)| a.as_ref().map(|v| strip(v, lv, i, &mut parents)))
        .collect();
    let out = self::op(op, &stripped)?;
    Ok(record(lv, AdOp::Table(op), stripped, parents, out))
}

/// `op` on positional arguments (the vjp rules' and the functional
/// transforms' shorthand).
pub(crate) fn op_pos(o: Op, pos: &[Value]) -> Result<Value, String> {
    let slots: Vec<Option<Value>> = pos.iter().cloned().map(Some).collect();
    op(o, &slots).map_err(|e| e.message)
}

/// `v` with every level of tracking removed.
fn strip_all(v: &Value) -> Value {
    match v {
        Value::Tracked(_) => base(v).map_or(Value::Unit, |t| Value::Tensor(Rc::new(t.clone()))),
        Value::Arr(items) if items.iter().any(|x| matches!(x, Value::Tracked(_))) => {
            Value::Arr(Rc::new(items.iter().map(strip_all).collect()))
        }
        other => other.clone(),
    }
}

fn strip_slots(vs: &[Option<Value>]) -> Vec<Option<Value>> {
    vs.iter().map(|v| v.as_ref().map(strip_all)).collect()
}

fn int_value(v: &Option<Value>) -> Option<i64> {
    match v {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// `split` of a tracked tensor, as slices along the axis (the same values,
/// each piece recorded as an index).
fn split(args: &[Option<Value>]) -> Result<Value, String> {
    let x = args[0].clone().unwrap_or(Value::Unit);
    let axis = args.get(2).cloned().flatten();
    // Let the kernel validate everything and tell the sizes.
    let pieces = plain_op(Op::Split, &strip_slots(args)).map_err(|e| e.message)?;
    let Value::Arr(pieces) = pieces else {
        return Err("`split` gave no pieces".into());
    };
    let t = base(&x).ok_or("`split` needs a tensor")?;
    let ax = match axis {
        Some(a) => int_value(&Some(a)).ok_or("`split`: axis must be an Int")?,
        None => 0,
    };
    let ax = twill_tensor::tensor::normalize_axis(ax, t.ndim()).map_err(|e| e.0)?;
    let mut out = Vec::with_capacity(pieces.len());
    let mut start = 0i64;
    for p in pieces.iter() {
        let len = base(p).map_or(0, |t| t.shape()[ax]) as i64;
        let mut items = vec![IndexItem::Slice(None, None, None); ax];
        items.push(IndexItem::Slice(Some(start), Some(start + len), None));
        out.push(index(&x, &items)?);
        start += len;
    }
    Ok(Value::Arr(Rc::new(out)))
}

/// `sort`/`topk` of a tracked tensor: the order is found on the plain
/// values, and the result is a `gather` of the tracked ones (the same bits).
fn select_sorted(which: Op, args: &[Option<Value>]) -> Result<Value, String> {
    let x = args.first().cloned().flatten().unwrap_or(Value::Unit);
    let arg_op = if which == Op::Sort {
        Op::Argsort
    } else {
        Op::Argtopk
    };
    let idx = plain_op(arg_op, &strip_slots(args)).map_err(|e| e.message)?;
    let t = base(&x).ok_or("needs a tensor")?;
    let axis_arg = if which == Op::Sort {
        args.get(1)
    } else {
        args.get(2)
    };
    let ax = match axis_arg.cloned().flatten() {
        Some(Value::Int(a)) => a,
        _ => -1,
    };
    let ax = twill_tensor::tensor::normalize_axis(ax, t.ndim().max(1)).map_err(|e| e.0)?;
    if t.ndim() == 0 {
        return Ok(x);
    }
    op_pos(Op::Gather, &[x, Value::Int(ax as i64), idx])
}

/// `a op b` with a tensor on at least one side, recorded if one is tracked.
pub(crate) fn binary(bop: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    let Some(lv) = max_level([a, b]) else {
        return plain_binary(bop, a, b);
    };
    if bop == BinOp::MatMul {
        return op_pos(Op::Matmul, &[a.clone(), b.clone()]);
    }
    let differentiable = matches!(
        bop,
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow
    );
    if !differentiable {
        return binary(bop, &strip_all(a), &strip_all(b));
    }
    let mut parents = Vec::new();
    let a = strip(a, lv, 0, &mut parents);
    let b = strip(b, lv, 1, &mut parents);
    let out = binary(bop, &a, &b)?;
    Ok(record(lv, AdOp::Bin(bop), vec![Some(a), Some(b)], parents, out))
}

/// A one-tensor operation on `x`, tracked at level `lv`: `again` runs it
/// on x's primal (recording on outer tapes through the same entry point),
/// and the result is recorded as `op` with arguments `[x's primal, extra…]`.
fn through(
    x: &Value,
    lv: u64,
    op: AdOp,
    extra: &[&Value],
    again: impl FnOnce(&Value) -> Result<Value, String>,
) -> Result<Value, String> {
    let mut parents = Vec::new();
    let p = strip(x, lv, 0, &mut parents);
    let out = again(&p)?;
    let mut args = vec![Some(p)];
    args.extend(extra.iter().map(|v| Some((*v).clone())));
    Ok(record(lv, op, args, parents, out))
}

/// `x.to(dt)`, recorded between float dtypes.
pub(crate) fn cast(x: &Value, dt: DType) -> Result<Value, String> {
    match level(x) {
        None => plain_cast(x, dt),
        Some(lv) => through(x, lv, AdOp::Cast, &[], |p| cast(p, dt)),
    }
}

/// `x[items]`, recorded.
pub(crate) fn index(x: &Value, items: &[IndexItem]) -> Result<Value, String> {
    match level(x) {
        None => {
            let t = base(x).ok_or("only a tensor can be indexed here")?;
            t.index(items).map(tensor_value).map_err(|e| e.0)
        }
        Some(lv) => through(x, lv, AdOp::Index(items.to_vec()), &[], |p| index(p, items)),
    }
}

/// `x.T`, recorded.
pub(crate) fn reverse(x: &Value) -> Result<Value, String> {
    match level(x) {
        None => {
            let t = base(x).ok_or("`.T` needs a tensor")?;
            Ok(tensor_value(t.reversed_axes()))
        }
        Some(lv) => through(x, lv, AdOp::Reverse, &[], reverse),
    }
}

/// The adjoint of `index_select`, recorded (its own vjp is `index_select`).
pub(crate) fn index_add(src: &Value, axis: usize, idx: &Value, size: usize) -> Result<Value, String> {
    match level(src) {
        None => {
            let (s, i) = (
                base(src).ok_or("index_add: src")?,
                base(idx).ok_or("index_add: idx")?,
            );
            twill_tensor::ops::adjoint::index_add(s, axis, i, size)
                .map(tensor_value)
                .map_err(|e| e.0)
        }
        Some(lv) => through(src, lv, AdOp::IndexAdd(axis), &[idx], |p| {
            index_add(p, axis, idx, size)
        }),
    }
}

/// The adjoint of `gather`, recorded (its own vjp is `gather`).
pub(crate) fn scatter_add(src: &Value, axis: usize, idx: &Value, shape: &[usize]) -> Result<Value, String> {
    match level(src) {
        None => {
            let (s, i) = (
                base(src).ok_or("scatter_add: src")?,
                base(idx).ok_or("scatter_add: idx")?,
            );
            twill_tensor::ops::adjoint::scatter_add(s, axis, i, shape)
                .map(tensor_value)
                .map_err(|e| e.0)
        }
        Some(lv) => through(src, lv, AdOp::ScatterAdd(axis), &[idx], |p| {
            scatter_add(p, axis, idx, shape)
        }),
    }
}

/// `tp.watch(t)`: a leaf of the tape's level around `t`.
pub(crate) fn watch(tape: &TapeVal, v: &Value) -> Result<Value, String> {
    let t = base(v).ok_or_else(|| format!("only a tensor can be watched, not `{}`", v.type_name()))?;
    if let Some(l) = level(v) {
        if l >= tape.level {
            return Err(if l == tape.level {
                "this tensor is already watched by this tape".to_string()
            } else {
                "this tensor is already watched by a tape made after this one; \
                 watch it on the outer (earlier) tape first"
                    .to_string()
            });
        }
    }
    let node = Rc::new(Node {
        id: next_id(&NEXT_NODE),
        level: tape.level,
        kind: Kind::Leaf,
        parents: Vec::new(),
        dtype: t.dtype(),
        shape: t.shape().to_vec(),
    });
    tape.leaves.borrow_mut().push(node.clone());
    Ok(Value::Tracked(Rc::new(Tracked {
        node,
        primal: v.clone(),
    })))
}

/// The only function that stores a gradient: `acc + contribution`, with the
/// contribution rounded to the cotangent's dtype `gdt` first and the sum
/// rounded to it (one rounding each, both at `gdt`).
pub(crate) fn accumulate(acc: Option<Value>, contribution: Value, gdt: DType) -> Result<Value, String> {
    let c = match base(&contribution) {
        Some(t) if t.dtype() != gdt => cast(&contribution, gdt)?,
        Some(_) => contribution,
        None => return Err("a gradient contribution is not a tensor (a bug in twill)".into()),
    };
    match acc {
        None => Ok(c),
        Some(a) => binary(BinOp::Add, &a, &c),
    }
}

fn zeros(shape: &[usize], dt: DType) -> Result<Value, String> {
    Tensor::zeros(shape.to_vec(), dt)
        .map(tensor_value)
        .map_err(|e| e.0)
}

/// The seed of a backward pass from `root`, checked and taken at the
/// root's gradient dtype (a host number fills the root's shape). `what`
/// names the caller in messages.
fn seed_at(root: &Value, seed: &Value, what: &str) -> Result<Value, String> {
    let Some(rt) = base(root) else {
        return Err(format!(
            "{what}: the root must be a tensor, not `{}`",
            root.type_name()
        ));
    };
    if !rt.dtype().is_float() {
        return Err(format!(
            "backward: the root is a tensor of dtype {}; only a float root has a gradient",
            rt.dtype()
        ));
    }
    let gdt = grad_dtype(rt.dtype());
    match seed {
        Value::Int(_) | Value::F64(_) => {
            let s = binary(BinOp::Add, &zeros(rt.shape(), gdt)?, seed)?;
            accumulate(None, s, gdt)
        }
        s => {
            let st = base(s)
                .ok_or_else(|| format!("backward: the seed must be a tensor, not `{}`", s.type_name()))?;
            if st.shape() != rt.shape() {
                return Err(format!(
                    "backward: the seed has shape {} but the root has shape {}",
                    twill_tensor::tensor::shape_str(st.shape()),
                    twill_tensor::tensor::shape_str(rt.shape())
                ));
            }
            if !st.dtype().is_float() {
                return Err(format!(
                    "backward: the seed is a {} tensor; it must be a float tensor",
                    st.dtype()
                ));
            }
            accumulate(None, s.clone(), gdt)
        }
    }
}

/// `backward(tp, root, seed)`: one gradient per watched tensor of `tape`,
/// in watch order. `Err` for a root that has no gradient.
pub(crate) fn backward(tape: &TapeVal, root: &Value, seed: &Value) -> Result<Vec<Value>, String> {
    let seed = seed_at(root, seed, "backward")?;
    backward_from(tape, root, seed)
}

/// The backward pass from `root`, seeded with `seed` (already checked and
/// at the root's gradient dtype).
fn backward_from(tape: &TapeVal, root: &Value, seed: Value) -> Result<Vec<Value>, String> {
    // The root's node at this tape's level, if it depends on the tape.
    let mut r = root;
    let root_node = loop {
        match r {
            Value::Tracked(t) if t.node.level > tape.level => r = &t.primal,
            Value::Tracked(t) if t.node.level == tape.level => break Some(t.node.clone()),
            _ => break None,
        }
    };
    let mut grads: HashMap<u64, Value> = HashMap::new();
    if let Some(root_node) = root_node {
        // Every node reachable from the root; creation order is a
        // topological order, so the reverse of it visits a node after
        // everything that uses it.
        let mut seen: HashMap<u64, Rc<Node>> = HashMap::new();
        let mut stack = vec![root_node.clone()];
        while let Some(n) = stack.pop() {
            if seen.contains_key(&n.id) {
                continue;
            }
            for (_, p) in &n.parents {
                if !seen.contains_key(&p.id) {
                    stack.push(p.clone());
                }
            }
            seen.insert(n.id, n);
        }
        let mut order: Vec<Rc<Node>> = seen.into_values().collect();
        order.sort_by_key(|n| std::cmp::Reverse(n.id));
        let mut cts: HashMap<u64, Value> = HashMap::new();
        cts.insert(root_node.id, seed);
        for n in order {
            let Some(ct) = cts.remove(&n.id) else { continue };
            match &n.kind {
                Kind::Leaf => {
                    grads.insert(n.id, ct);
                }
                Kind::Op { op, args, out } => {
                    let need = |s: Slot| n.parents.iter().any(|(p, _)| *p == s);
                    let contributions = rules::vjp(op, args, out, &ct, &need)?;
                    for (slot, c) in contributions {
                        let Some((_, parent)) = n.parents.iter().find(|(s, _)| *s == slot) else {
                            continue;
                        };
                        let shape_ok = base(&c).is_some_and(|t| t.shape() == parent.shape.as_slice());
                        if !shape_ok {
                            return Err(format!(
                                "internal error: a gradient of shape {} for a value of shape {} (a bug in twill)",
                                base(&c).map_or("?".into(), |t| twill_tensor::tensor::shape_str(t.shape())),
                                twill_tensor::tensor::shape_str(&parent.shape)
                            ));
                        }
                        let acc = cts.remove(&parent.id);
                        let sum = accumulate(acc, c, grad_dtype(parent.dtype))?;
                        cts.insert(parent.id, sum);
                    }
                }
            }
        }
    }
    let leaves = tape.leaves.borrow();
    let mut out = Vec::with_capacity(leaves.len());
    for leaf in leaves.iter() {
        match grads.remove(&leaf.id) {
            Some(g) => out.push(g),
            None => out.push(zeros(&leaf.shape, grad_dtype(leaf.dtype))?),
        }
    }
    Ok(out)
}

/// `backward_scaled(tp, root, seed, scale)`: the seed (at the gradient
/// dtype) times `scale`, and every gradient divided by `scale`.
pub(crate) fn backward_scaled(
    tape: &TapeVal,
    root: &Value,
    seed: &Value,
    scale: f64,
) -> Result<Vec<Value>, String> {
    let seed = seed_at(root, seed, "backward_scaled")?;
    let scaled = binary(BinOp::Mul, &seed, &Value::F64(scale))?;
    let grads = backward_from(tape, root, scaled)?;
    grads
        .iter()
        .map(|g| binary(BinOp::Div, g, &Value::F64(scale)))
        .collect()
}

/// `grads_finite(gs)`: every element of every gradient is finite.
pub(crate) fn grads_finite(gs: &Value) -> Result<bool, String> {
    let items: Vec<Value> = match gs {
        Value::Arr(items) => items.iter().cloned().collect(),
        v if base(v).is_some() => vec![v.clone()],
        other => {
            return Err(format!(
                "`grads_finite` needs an Arr of tensors, not `{}`",
                other.type_name()
            ))
        }
    };
    for g in &items {
        let t = base(g).ok_or_else(|| format!("`grads_finite` needs tensors, not `{}`", g.type_name()))?;
        if !t.dtype().is_float() {
            continue;
        }
        let finite = plain_op(Op::IsFinite, &[Some(tensor_value(t.clone()))]).map_err(|e| e.message)?;
        let all = plain_op(Op::All, &[Some(finite)]).map_err(|e| e.message)?;
        if let Some(a) = base(&all) {
            if a.item().map(|s| s.to_f64() == 0.0).unwrap_or(true) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
