//! The backward pass: walks the nodes reachable from a root in reverse
//! creation order, runs each node's vjp rule, and accumulates the
//! contributions. The gradient-dtype rule is applied here and only here:
//! each cotangent is allocated at `grad_dtype` of its node, and each
//! contribution is rounded to that dtype as it is added.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use std::collections::HashMap;
use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_tensor::promote::grad_dtype;
use twill_tensor::{DType, Tensor};

use twill_tensor::ops::Op;

use super::record::{binary, cast};
use super::rules;
use crate::bridge::{plain_op, tensor_value};
use crate::value::{base, Kind, Node, Slot, TapeVal, Value};

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
