//! Assignment into tensors (spec §11.2): `x[s] = v` and `x[s] op= v` for
//! every subscript of §11.1, on the selection `index` plans.
//!
//! The dtype rule is checked first: the value's dtype must promote with
//! x's to x's (a host scalar is weak), and a compound assignment's result
//! must keep x's dtype. Without a repeated element, `x[s] op= v` is
//! exactly `x[s] = x[s] op v`. With one, `=` lets the last write win,
//! `+=`/`-=` add every occurrence in index order in the accumulation dtype
//! and round once at the end (`index_add`'s rule, not NumPy's buffered
//! one), and `*=`/`/=` are an error naming the element. The write happens
//! in place when x's storage is its own.

use crate::dtype::DType;
use crate::error::TensorError;
use crate::index::{first_repeat, last_writes, IndexItem};
use crate::promote::accumulation_dtype;
use crate::storage::{try_vec, Accumulate, Storage};
use crate::tensor::{shape_str, Tensor};

use super::elementwise::{binary, common_dtype, operand_as, symbol, unary, Unary};
use super::{BinaryOp, Operand};

fn operand_name(v: &Operand) -> String {
    match v {
        Operand::Tensor(t) => format!("a {} tensor", t.dtype()),
        Operand::Int(_) => "an Int".into(),
        Operand::Float(_) => "an F64".into(),
        Operand::Bool(_) => "a Bool".into(),
    }
}

/// `v` converted to x's dtype `dt`, after checking that assigning it does
/// not change that dtype.
fn value_as(v: &Operand, dt: DType) -> Result<Tensor, TensorError> {
    check_value(v, dt)?;
    operand_as(v, dt)
}

/// That assigning `v` into a `dt` tensor keeps its dtype: v's dtype must
/// promote with `dt` to `dt`, a host scalar weakly (spec §11.2).
pub fn check_value(v: &Operand, dt: DType) -> Result<(), TensorError> {
    let joined = common_dtype("=", &Operand::Tensor(&Tensor::zeros(Vec::new(), dt)?), v)?;
    if joined != dt {
        let help = match v {
            Operand::Tensor(_) => format!("cast the value with `.to({dt})`"),
            Operand::Int(_) | Operand::Float(_) | Operand::Bool(_) => {
                format!("write a value of the tensor's kind, or make it a {joined} tensor with `.to({joined})` first")
            }
        };
        return Err(TensorError(format!(
            "cannot assign {} into a {dt} tensor: that would make it {joined}; {help}",
            operand_name(v)
        )));
    }
    Ok(())
}

/// That `x[s] op= v`, whose `x[s] op v` has dtype `got`, keeps x's dtype.
pub fn check_compound(op: BinaryOp, got: DType, dt: DType) -> Result<(), TensorError> {
    if got == dt {
        return Ok(());
    }
    let sym = symbol(op);
    Err(TensorError(format!(
        "`{sym}=` would change the tensor's dtype from {dt} to {got}; write `x = x {sym} v` for a new tensor"
    )))
}

/// That `op=` selects no element twice, unless it is `+=` or `-=`.
pub fn check_repeat(op: BinaryOp, shape: &[usize], items: &[IndexItem]) -> Result<(), TensorError> {
    if matches!(op, BinaryOp::Add | BinaryOp::Sub) {
        return Ok(());
    }
    match first_repeat(shape, items)? {
        None => Ok(()),
        Some(at) => {
            let at: Vec<String> = at.iter().map(|i| i.to_string()).collect();
            Err(TensorError(format!(
                "`{}=` selects the element at [{}] more than once; only `=`, `+=` and `-=` take a repeated index",
                symbol(op),
                at.join(", ")
            )))
        }
    }
}

/// `x[items] = v` (`op` `None`) or `x[items] op= v`.
pub fn assign(
    x: &mut Tensor,
    items: &[IndexItem],
    v: Operand,
    op: Option<BinaryOp>,
) -> Result<(), TensorError> {
    let dt = x.dtype();
    let Some(op) = op else {
        let vals = value_as(&v, dt)?;
        return x.set_index(items, &vals);
    };
    if matches!(op, BinaryOp::Add | BinaryOp::Sub) && accumulation_dtype(dt) == dt {
        // i32, f32, f64: adding in x's own dtype, occurrence by occurrence
        // in place, is both `x[s] = x[s] + v` and the repeated-index rule.
        let joined = common_dtype(symbol(op), &Operand::Tensor(&Tensor::zeros(Vec::new(), dt)?), &v)?;
        check_compound(op, joined, dt)?;
        let vals = operand_as(&v, dt)?;
        let vals = if op == BinaryOp::Sub {
            unary(Unary::Neg, &vals)?
        } else {
            vals
        };
        return x.add_index(items, &vals);
    }
    let cur = x.index(items)?;
    let new = binary(op, Operand::Tensor(&cur), v)?;
    check_compound(op, new.dtype(), dt)?;
    if new.shape() != cur.shape() {
        return Err(TensorError(format!(
            "a value of shape {} cannot be assigned to a selection of shape {}",
            shape_str(new.shape()),
            shape_str(cur.shape())
        )));
    }
    if matches!(op, BinaryOp::Add | BinaryOp::Sub) {
        if last_writes(x.shape(), items)?.is_some() {
            let vals = value_as(&v, dt)?;
            let vals = if op == BinaryOp::Sub {
                unary(Unary::Neg, &vals)?
            } else {
                vals
            };
            return accumulate(x, items, &vals);
        }
    } else {
        check_repeat(op, x.shape(), items)?;
    }
    x.set_index(items, &new)
}

/// `x[items] += v` with `v` already of x's dtype, adding every occurrence
/// of a repeated element in index order in the accumulation dtype and
/// rounding once at the end (also the adjoint of indexing, where no
/// element may be repeated and this is plain addition).
pub fn accumulate(x: &mut Tensor, items: &[IndexItem], v: &Tensor) -> Result<(), TensorError> {
    let dt = x.dtype();
    let acc = accumulation_dtype(dt);
    if acc == dt {
        return x.add_index(items, &v.cast(dt)?);
    }
    let cur = x.index(items)?.cast(acc)?;
    let shape = cur.shape().to_vec();
    let vals = crate::index::fit_to(&v.cast(dt)?.cast(acc)?, &shape)?.contiguous()?;
    let offs = crate::index::plan_offsets(x.shape(), items)?;
    let sums = match (cur.contiguous()?.storage(), vals.storage()) {
        (Storage::I32(c), Storage::I32(w)) => Tensor::from_vec(run_sums(c, w, &offs)?, shape)?,
        (Storage::F32(c), Storage::F32(w)) => Tensor::from_vec(run_sums(c, w, &offs)?, shape)?,
        (Storage::F64(c), Storage::F64(w)) => Tensor::from_vec(run_sums(c, w, &offs)?, shape)?,
        _ => {
            return Err(TensorError(
                "internal error: accumulation dtype (a bug in twill)".into(),
            ))
        }
    };
    x.set_index(items, &sums.cast(dt)?)
}

/// Each occurrence's final sum: the element's old value plus every
/// occurrence's value, in index order, one rounding per step in `A`.
fn run_sums<A: Accumulate>(cur: &[A], vals: &[A], offs: &[usize]) -> Result<Vec<A>, TensorError> {
    let n = offs.len();
    let mut out: Vec<A> = try_vec(n).map_err(|e| e.for_tensor(A::DTYPE, &[n]))?;
    let mut order: Vec<usize> = try_vec(n).map_err(|e| e.for_tensor(DType::I32, &[n]))?;
    order.extend(0..n);
    order.sort_by_key(|&k| (offs[k], k));
    out.extend(cur.iter().copied());
    let mut i = 0;
    while i < n {
        let mut j = i;
        let mut s = cur[order[i]];
        while j < n && offs[order[j]] == offs[order[i]] {
            s = s.add(vals[order[j]]);
            j += 1;
        }
        for &k in &order[i..j] {
            out[k] = s;
        }
        i = j;
    }
    Ok(out)
}
