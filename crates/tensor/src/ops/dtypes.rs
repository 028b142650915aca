//! The result dtype of every tensor operation, stated once, from the rules
//! of `promote`. The static checker asks it before the program runs; the
//! oracle harness asserts that every kernel's output has exactly this dtype,
//! so the checker and the runtime cannot drift apart.

use crate::dtype::DType;
use crate::promote::{float_result, promote, promote_weak, sum_result, ScalarKind};

use super::BinaryOp;

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
    Some(match op {
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            DType::Bool
        }
        BinaryOp::Div => float_result(joined),
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::FloorDiv
        | BinaryOp::Mod
        | BinaryOp::Pow
        | BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::Shl
        | BinaryOp::Shr
        | BinaryOp::Maximum
        | BinaryOp::Minimum => joined,
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
/// receiver first) have dtypes that promote into its result: not an index
/// tensor, a condition, a shape or an einsum spec. The checker's widening
/// warnings look only at these.
pub fn promoted(op: &str, n: usize) -> std::ops::Range<usize> {
    let r = match op {
        "maximum" | "minimum" | "matmul" | "conv2d" => 0..2,
        "linear" => 0..3,
        "where" => 1..3,
        "einsum" => 1..n,
        _ => 0..1,
    };
    r.start.min(n)..r.end.min(n)
}

/// The result dtype of operation `op` of the table given its arguments in
/// positional order (the receiver first), or `None` when unknown.
pub fn result(op: &str, args: &[Input]) -> Option<DType> {
    let first = match args.first() {
        Some(Input::Tensor(d)) => *d,
        _ => None,
    };
    match op {
        "neg" | "abs" | "sign" | "relu" | "square" | "floor" | "ceil" | "round" | "clip" | "max" | "min"
        | "sort" | "topk" | "reshape" | "transpose" | "permute" | "flip" | "roll" | "squeeze"
        | "unsqueeze" | "broadcast_to" | "gather" | "index_select" => first,
        "exp" | "log" | "log1p" | "expm1" | "sqrt" | "rsqrt" | "sin" | "cos" | "tan" | "tanh" | "sigmoid"
        | "mean" | "median" | "var" | "std" | "logsumexp" | "softmax" | "log_softmax" => {
            first.map(float_result)
        }
        "isnan" | "isinf" | "isfinite" | "all" | "any" => Some(DType::Bool),
        "sum" | "prod" | "cumsum" | "cumprod" => first.map(sum_result),
        "argmax" | "argmin" | "argsort" | "argtopk" => Some(DType::I32),
        "maximum" | "minimum" => join(*args.first()?, *args.get(1)?),
        "where" => join(*args.get(1)?, *args.get(2)?),
        "matmul" | "linear" | "conv2d" => {
            let mut d = first?;
            for a in args.iter().skip(1).take(if op == "linear" { 2 } else { 1 }) {
                match a {
                    Input::Tensor(Some(x)) => d = promote(d, *x),
                    _ => return None,
                }
            }
            Some(if d.is_float() { d } else { DType::I32 })
        }
        "einsum" => {
            let mut d: Option<DType> = None;
            for a in args.iter().skip(1) {
                match a {
                    Input::Tensor(Some(x)) => d = Some(d.map_or(*x, |y| promote(y, *x))),
                    _ => return None,
                }
            }
            d.map(|d| if d.is_float() { d } else { DType::I32 })
        }
        // concat, stack and split take or give lists: the checker handles
        // their element types itself.
        _ => None,
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
        assert_eq!(result("mean", &[t(DType::I32)]), Some(DType::F32));
        assert_eq!(result("sum", &[t(DType::I8)]), Some(DType::I32));
        assert_eq!(result("argmax", &[t(DType::Bf16)]), Some(DType::I32));
        assert_eq!(
            result("matmul", &[t(DType::Bf16), t(DType::Bf16)]),
            Some(DType::Bf16)
        );
        assert_eq!(result("matmul", &[t(DType::I8), t(DType::I8)]), Some(DType::I32));
        assert_eq!(
            result(
                "where",
                &[t(DType::Bool), t(DType::F16), Input::Scalar(ScalarKind::Float)]
            ),
            Some(DType::F16)
        );
        assert_eq!(result("exp", &[Input::Tensor(None)]), None);
    }

    #[test]
    fn index_and_condition_operands_do_not_promote() {
        assert_eq!(promoted("gather", 3), 0..1);
        assert_eq!(promoted("index_select", 3), 0..1);
        assert_eq!(promoted("where", 3), 1..3);
        assert_eq!(promoted("linear", 2), 0..2);
        assert_eq!(promoted("einsum", 3), 1..3);
        assert_eq!(promoted("sum", 0), 0..0);
    }
}
