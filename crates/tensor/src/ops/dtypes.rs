//! The result dtype of every tensor operation, stated once, from the rules
//! of `promote`. The static checker asks it before the program runs; the
//! oracle harness asserts that every kernel's output has exactly this dtype,
//! so the checker and the runtime cannot drift apart.

use crate::dtype::DType;
use crate::promote::{float_result, promote, promote_weak, sum_result, ScalarKind};

use super::args::BinaryOp;
use super::{Op, Rule};

/// What the checker knows about one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A tensor, with its dtype when known.
    Tensor(Option<DType>),
    /// A host number or Bool (a weak scalar).
    Scalar(ScalarKind),
    /// Anything else (an axis, a shape, a dtype, a list…), or unknown.
    Other,
}

/// The dtype of `a op b` (at least one side a tensor), or `None` when it
/// depends on something unknown.
pub fn binary(op: BinaryOp, a: Input, b: Input) -> Option<DType> {
    let joined = join(a, b)?;
    let compare = matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    );
    // `/` and the float functions give a float: `float_only` is the list
    // the kernels use too.
    Some(if compare {
        DType::Bool
    } else if op.float_only() {
        float_result(joined)
    } else {
        joined
    })
}

/// The promoted dtype of two operands, weak scalars included.
pub fn join(a: Input, b: Input) -> Option<DType> {
    match (a, b) {
        (Input::Tensor(Some(x)), Input::Tensor(Some(y))) => Some(promote(x, y)),
        (Input::Tensor(Some(x)), Input::Scalar(k)) | (Input::Scalar(k), Input::Tensor(Some(x))) => {
            Some(promote_weak(x, k))
        }
        _ => None,
    }
}

/// Which arguments of operation `op` (positional, `n` of them, the
/// receiver first) have dtypes that promote into its result, from the
/// registry's `promotes` column. The checker's widening warnings look only
/// at these.
pub fn promoted(op: Op, n: usize) -> std::ops::Range<usize> {
    let p = op.spec().promotes;
    let end = p.end.unwrap_or(n);
    p.start.min(n)..end.min(n)
}

/// The result dtype of `op` given its arguments in positional order (the
/// receiver first), or `None` when unknown: the registry's `rule` column
/// applied.
pub fn result(op: Op, args: &[Input]) -> Option<DType> {
    let first = match args.first() {
        Some(Input::Tensor(d)) => *d,
        _ => None,
    };
    let promote_all = |inputs: &[Input]| -> Option<DType> {
        let mut d: Option<DType> = None;
        for a in inputs {
            match a {
                Input::Tensor(Some(x)) => d = Some(d.map_or(*x, |y| promote(y, *x))),
                Input::Tensor(None) | Input::Scalar(_) | Input::Other => return None,
            }
        }
        d.map(|d| if d.is_float() { d } else { DType::I32 })
    };
    match op.spec().rule {
        Rule::Same => first,
        Rule::Float => first.map(float_result),
        Rule::Bool => Some(DType::Bool),
        Rule::Sum => first.map(sum_result),
        Rule::Index => Some(DType::I32),
        Rule::Join01 => join(*args.first()?, *args.get(1)?),
        Rule::Join12 => join(*args.get(1)?, *args.get(2)?),
        Rule::Binary(bop) => binary(bop, *args.first()?, *args.get(1)?),
        Rule::Contract(n) => {
            first?;
            let given = &args[..n.min(args.len())];
            // Optional operands (`linear`'s bias) that are absent do not count.
            promote_all(given)
        }
        Rule::Einsum => promote_all(args.get(1..).unwrap_or(&[])),
        // The checker handles list element types itself.
        Rule::Lists | Rule::Given => None,
        Rule::Bits => first.and_then(super::derived::bits_dtype),
        Rule::Linalg(_) => {
            let given = &args[..op.spec().params.len().min(args.len())];
            promote_all(given).map(super::linalg::compute_dtype)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_follow_the_seed() {
        let t = |d| Input::Tensor(Some(d));
        assert_eq!(
            binary(BinaryOp::Add, t(DType::F16), t(DType::Bf16)),
            Some(DType::F32)
        );
        assert_eq!(
            binary(BinaryOp::Mul, t(DType::Bf16), Input::Scalar(ScalarKind::Float)),
            Some(DType::Bf16)
        );
        assert_eq!(
            binary(BinaryOp::Div, t(DType::I32), t(DType::I8)),
            Some(DType::F32)
        );
        assert_eq!(
            binary(BinaryOp::Lt, t(DType::F32), t(DType::F64)),
            Some(DType::Bool)
        );
        assert_eq!(result(Op::Mean, &[t(DType::I32)]), Some(DType::F32));
        assert_eq!(result(Op::Sum, &[t(DType::I8)]), Some(DType::I32));
        assert_eq!(result(Op::Argmax, &[t(DType::Bf16)]), Some(DType::I32));
        assert_eq!(
            result(Op::Matmul, &[t(DType::Bf16), t(DType::Bf16)]),
            Some(DType::Bf16)
        );
        assert_eq!(
            result(Op::Matmul, &[t(DType::I8), t(DType::I8)]),
            Some(DType::I32)
        );
        assert_eq!(
            result(
                Op::Where,
                &[t(DType::Bool), t(DType::F16), Input::Scalar(ScalarKind::Float)]
            ),
            Some(DType::F16)
        );
        assert_eq!(result(Op::Exp, &[Input::Tensor(None)]), None);
    }

    #[test]
    fn index_and_condition_operands_do_not_promote() {
        assert_eq!(promoted(Op::Gather, 3), 0..1);
        assert_eq!(promoted(Op::IndexSelect, 3), 0..1);
        assert_eq!(promoted(Op::Where, 3), 1..3);
        assert_eq!(promoted(Op::Linear, 2), 0..2);
        assert_eq!(promoted(Op::Einsum, 3), 1..3);
        assert_eq!(promoted(Op::Sum, 0), 0..0);
    }
}
