//! The vjp rules of linear algebra (spec §11.4): `solve inv det slogdet
//! cholesky qr eigh svd lstsq pinv`, the formulas JAX implements, batched
//! over leading axes. A multi-result operation (`slogdet qr eigh svd`) is
//! recorded as one node per result ([`AdOp::Part`](crate::value::AdOp)),
//! each holding every primal result; its rule is the operation's vjp with
//! the other results' cotangents zero, which sums to the whole vjp because
//! a vjp is linear in the cotangents.
//!
//! The rules are written with recorded operations (`solve`, `inv`, `pinv`,
//! `matmul`, …), so they differentiate again (hessians). Where a function
//! is not differentiable they fail or follow JAX: `det`/`slogdet` need an
//! invertible matrix (their rules call `inv`), `cholesky` and `eigh` take
//! the perturbation symmetric (JAX symmetrises their input), `eigh`/`svd`
//! need distinct eigen/singular values (a repeated one gives inf or NaN, as
//! in JAX; `svd` gives the pair 0 where JAX does), the `qr` rule needs m ≥ n
//! (as JAX's), and `pinv`/`lstsq` hold where the rank is constant.

// Matches over `Value` reject other kinds of value as type errors.
#![allow(clippy::wildcard_enum_match_arm)]
#![allow(clippy::cloned_ref_to_slice_refs)]

use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_tensor::ops::Op;
use twill_tensor::DType;

use super::arith::{add, binary as bin, div, mul, o, sub, Res};
use super::record::cast;
use crate::bridge::tensor_value;
use crate::value::{base, Slot, Value};

fn mm(x: &Value, y: &Value) -> Res<Value> {
    o(Op::Matmul, &[x.clone(), y.clone()])
}
fn neg(x: &Value) -> Res<Value> {
    o(Op::Neg, &[x.clone()])
}
/// The last two axes swapped.
fn t(x: &Value) -> Res<Value> {
    o(Op::Transpose, &[x.clone(), Value::Int(-1), Value::Int(-2)])
}
fn unsq(x: &Value, axis: i64) -> Res<Value> {
    o(Op::Unsqueeze, &[x.clone(), Value::Int(axis)])
}
fn squeeze(x: &Value, axis: i64) -> Res<Value> {
    o(Op::Squeeze, &[x.clone(), Value::Int(axis)])
}
fn half(x: &Value) -> Res<Value> {
    mul(x, &Value::F64(0.5))
}
/// ½(x + xᵀ).
fn sym(x: &Value) -> Res<Value> {
    half(&add(x, &t(x)?)?)
}

fn shape(v: &Value) -> Vec<usize> {
    base(v).map_or_else(Vec::new, |t| t.shape().to_vec())
}

fn dtype(v: &Value) -> Option<DType> {
    base(v).map(|t| t.dtype())
}

/// `v` in the cotangent's dtype when it is narrower (as `rules::wide`).
fn wide(v: &Value, gdt: DType) -> Res<Value> {
    match dtype(v) {
        Some(d) if d != gdt && d != DType::F64 => cast(v, gdt),
        _ => Ok(v.clone()),
    }
}

/// An `n × n` constant of dtype `dt` whose element (i, j) is `f(i, j)`.
fn constant(n: usize, dt: DType, f: impl Fn(usize, usize) -> f64) -> Res<Value> {
    let v: Vec<f64> = (0..n * n).map(|k| f(k / n, k % n)).collect();
    let t = twill_tensor::Tensor::from_vec(v, vec![n, n]).map_err(|e| e.0)?;
    t.cast(dt).map(tensor_value).map_err(|e| e.0)
}

fn eye(n: usize, dt: DType) -> Res<Value> {
    constant(n, dt, |i, j| f64::from(u8::from(i == j)))
}

fn last2(v: &Value) -> (usize, usize) {
    let s = shape(v);
    let k = s.len();
    if k < 2 {
        (0, 0)
    } else {
        (s[k - 2], s[k - 1])
    }
}

/// `v` summed down to `target`'s shape over broadcast batch axes.
fn sum_to(v: &Value, target: &[usize]) -> Res<Value> {
    let s = shape(v);
    if s == target {
        return Ok(v.clone());
    }
    let lead = s.len().saturating_sub(target.len());
    let mut cur = v.clone();
    if lead > 0 {
        let axes = Value::Arr(Rc::new((0..lead).map(|i| Value::Int(i as i64)).collect()));
        cur = o(Op::Sum, &[cur, axes])?;
    }
    let stretched: Vec<Value> = target
        .iter()
        .enumerate()
        .filter(|&(i, &d)| d == 1 && s[lead + i] != 1)
        .map(|(i, _)| Value::Int(i as i64))
        .collect();
    if !stretched.is_empty() {
        cur = o(Op::Sum, &[cur, Value::Arr(Rc::new(stretched)), Value::Bool(true)])?;
    }
    Ok(cur)
}

/// `1 / (x_j − x_i)` off the diagonal (with `squares`, `1 / (x_j² − x_i²)`),
/// 0 on it and wherever the two are equal (JAX's guard for `svd`).
fn gaps(x: &Value, gdt: DType, squares: bool) -> Res<Value> {
    let x = if squares { mul(x, x)? } else { x.clone() };
    let d = sub(&unsq(&x, -2)?, &unsq(&x, -1)?)?;
    let zero = bin(BinOp::Eq, &d, &Value::F64(0.0))?;
    let zero = cast(&zero, gdt)?;
    let inv = div(&Value::F64(1.0), &add(&d, &zero)?)?;
    sub(&inv, &zero)
}

/// The contributions to a linear-algebra node: `parts` are the operation's
/// primal results, `which` the one whose cotangent `ct` is.
#[allow(clippy::too_many_arguments)]
pub(super) fn vjp(
    op: Op,
    args: &[Option<Value>],
    parts: &[Value],
    which: usize,
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
) -> Res<Vec<(Slot, Value)>> {
    let slot = |arg| Slot { arg, elem: 0 };
    let arg = |i: usize| -> Res<Value> {
        args.get(i)
            .cloned()
            .flatten()
            .ok_or_else(|| "internal error: a recorded argument is missing (a bug in twill)".to_string())
    };
    let part = |i: usize| -> Res<Value> {
        parts
            .get(i)
            .map(|p| wide(p, gdt))
            .transpose()?
            .ok_or_else(|| "internal error: a recorded result is missing (a bug in twill)".to_string())
    };
    let a0 = arg(0)?;
    let a_shape = shape(&a0);
    let a = wide(&a0, gdt)?;
    let mut c = Vec::new();
    let ga: Option<Value> = match op {
        Op::Solve | Op::Lstsq => {
            let b0 = arg(1)?;
            let b_shape = shape(&b0);
            let b = wide(&b0, gdt)?;
            let vector = b_shape.len() == 1;
            let g2 = if vector { unsq(ct, -1)? } else { ct.clone() };
            let x2 = if vector { unsq(&part(0)?, -1)? } else { part(0)? };
            let (gb2, ga) = if op == Op::Solve {
                // x = A⁻¹b: b̄ = A⁻ᵀ ḡ, Ā = −b̄ xᵀ.
                let gb2 = o(Op::Solve, &[t(&a)?, g2])?;
                let ga = neg(&mm(&gb2, &t(&x2)?)?)?;
                (gb2, ga)
            } else {
                // x = A⁺b: b̄ = A⁺ᵀ ḡ, and Ā through A⁺ with X̄ = ḡ bᵀ.
                let p = o(Op::Pinv, &[a.clone()])?;
                let bb = if vector { unsq(&b, -1)? } else { b };
                let gb2 = mm(&t(&p)?, &g2)?;
                let ga = pinv_vjp(&a, &p, &mm(&g2, &t(&bb)?)?)?;
                (gb2, ga)
            };
            if need(slot(1)) {
                let gb = if vector { squeeze(&gb2, -1)? } else { gb2 };
                c.push((slot(1), sum_to(&gb, &b_shape)?));
            }
            Some(ga)
        }
        // X = A⁻¹: Ā = −Xᵀ ḡ Xᵀ.
        Op::Inv => {
            let xt = t(&part(0)?)?;
            Some(neg(&mm(&mm(&xt, ct)?, &xt)?)?)
        }
        // Ā = ḡ · det · A⁻ᵀ.
        Op::Det => {
            let s = unsq(&unsq(&mul(ct, &part(0)?)?, -1)?, -1)?;
            Some(mul(&s, &t(&o(Op::Inv, &[a.clone()])?)?)?)
        }
        // sign is piecewise constant; log|det|: Ā = ḡ A⁻ᵀ.
        Op::Slogdet => match which {
            0 => None,
            _ => {
                let s = unsq(&unsq(ct, -1)?, -1)?;
                Some(mul(&s, &t(&o(Op::Inv, &[a.clone()])?)?)?)
            }
        },
        // L = chol(A): Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹), Φ the lower triangle with
        // its diagonal halved.
        Op::Cholesky => {
            let l = part(0)?;
            let n = last2(&l).0;
            let phi = mul(
                &mm(&t(&l)?, ct)?,
                &constant(n, gdt, |i, j| {
                    if i > j {
                        1.0
                    } else if i == j {
                        0.5
                    } else {
                        0.0
                    }
                })?,
            )?;
            let lt = t(&l)?;
            let y = t(&o(Op::Solve, &[lt.clone(), t(&phi)?])?)?;
            Some(sym(&o(Op::Solve, &[lt, y])?)?)
        }
        // A = QR (m ≥ n): M = R R̄ᵀ − Q̄ᵀ Q, Ā = (Q̄ + Q copyltu(M)) R⁻ᵀ.
        Op::Qr => {
            let (q, r) = (part(0)?, part(1)?);
            let (m, n) = last2(&a);
            if m < n {
                return Err(format!(
                    "the gradient of `qr` needs at least as many rows as columns (as JAX's), not {m}×{n}"
                ));
            }
            let (qbar, mm_) = if which == 0 {
                (ct.clone(), neg(&mm(&t(ct)?, &q)?)?)
            } else {
                (mul(&q, &Value::F64(0.0))?, mm(&r, &t(ct)?)?)
            };
            let lower = constant(n, gdt, |i, j| f64::from(u8::from(i >= j)))?;
            let strict = constant(n, gdt, |i, j| f64::from(u8::from(i > j)))?;
            let copyltu = add(&mul(&mm_, &lower)?, &t(&mul(&mm_, &strict)?)?)?;
            let x = add(&qbar, &mm(&q, &copyltu)?)?;
            // X R⁻ᵀ = (R⁻¹ Xᵀ)ᵀ.
            Some(t(&o(Op::Solve, &[r, t(&x)?])?)?)
        }
        // A = V diag(w) Vᵀ: Ā = sym(V (diag(w̄) + F ∘ VᵀV̄) Vᵀ), F_ij = 1/(w_j − w_i).
        Op::Eigh => {
            let (w, v) = (part(0)?, part(1)?);
            let n = last2(&v).0;
            let inner = if which == 0 {
                mul(&unsq(ct, -2)?, &eye(n, gdt)?)?
            } else {
                mul(&gaps(&w, gdt, false)?, &mm(&t(&v)?, ct)?)?
            };
            Some(sym(&mm(&mm(&v, &inner)?, &t(&v)?)?)?)
        }
        Op::Svd => {
            let (u, s, vh) = (part(0)?, part(1)?, part(2)?);
            let (m, n) = last2(&a);
            let s_cols = unsq(&s, -2)?;
            let s_rows = unsq(&s, -1)?;
            let inv_s = div(&Value::F64(1.0), &s_cols)?;
            Some(match which {
                // Ā = U diag(s̄) Vh.
                1 => mm(&mul(&u, &unsq(ct, -2)?)?, &vh)?,
                // J = F ∘ UᵀŪ: Ā = U (J + Jᵀ) S Vh [+ (I − UUᵀ) Ū S⁻¹ Vh if m > n].
                0 => {
                    let j = mul(&gaps(&s, gdt, true)?, &mm(&t(&u)?, ct)?)?;
                    let mut g = mm(&mm(&u, &mul(&add(&j, &t(&j)?)?, &s_cols)?)?, &vh)?;
                    if m > n {
                        let perp = sub(ct, &mm(&u, &mm(&t(&u)?, ct)?)?)?;
                        g = add(&g, &mm(&mul(&perp, &inv_s)?, &vh)?)?;
                    }
                    g
                }
                // K = F ∘ VᵀV̄ (V = Vhᵀ): Ā = U S (K + Kᵀ) Vh [+ U S⁻¹ V̄ᵀ(I − VVᵀ) if n > m].
                _ => {
                    let kk = mul(&gaps(&s, gdt, true)?, &mm(&vh, &t(ct)?)?)?;
                    let mut g = mm(&mm(&u, &mul(&s_rows, &add(&kk, &t(&kk)?)?)?)?, &vh)?;
                    if n > m {
                        let perp = sub(ct, &mm(&mm(ct, &t(&vh)?)?, &vh)?)?;
                        g = add(&g, &mm(&mul(&u, &inv_s)?, &perp)?)?;
                    }
                    g
                }
            })
        }
        Op::Pinv => Some(pinv_vjp(&a, &part(0)?, ct)?),
        other => return Err(format!("`{other}` is not a linear-algebra operation")),
    };
    if let (Some(g), true) = (ga, need(slot(0))) {
        c.push((slot(0), sum_to(&g, &a_shape)?));
    }
    Ok(c)
}

/// The vjp of X = A⁺ (where the rank is constant, Golub and Pereyra):
/// Ā = −Xᵀ X̄ Xᵀ + (I − A X) X̄ᵀ X Xᵀ + Xᵀ X X̄ᵀ (I − X A).
fn pinv_vjp(a: &Value, x: &Value, g: &Value) -> Res<Value> {
    let xt = t(x)?;
    let gt = t(g)?;
    let term1 = neg(&mm(&mm(&xt, g)?, &xt)?)?;
    let ax = mm(a, x)?;
    let xa = mm(x, a)?;
    let left = sub(&gt, &mm(&ax, &gt)?)?; // (I − AX) X̄ᵀ
    let term2 = mm(&mm(&left, x)?, &xt)?;
    let right = sub(&gt, &mm(&gt, &xa)?)?; // X̄ᵀ (I − XA)
    let term3 = mm(&mm(&xt, x)?, &right)?;
    add(&add(&term1, &term2)?, &term3)
}
