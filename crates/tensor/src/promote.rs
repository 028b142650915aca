//! The dtype rules of seed 000 ("Promotion", "Accumulation", "Autodiff") and
//! spec §5, in one place. The checker, the evaluator and every kernel call
//! these functions; there is no second copy of the table anywhere.

use crate::dtype::DType;

/// The kind of a dtype, for promotion: bool < i8 < i32 are integer kinds
/// (bool the narrowest), the rest floats.
fn int_rank(d: DType) -> Option<u8> {
    match d {
        DType::Bool => Some(0),
        DType::I8 => Some(1),
        DType::I32 => Some(2),
        DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => None,
    }
}

/// The dtype two operands are promoted to (seed 000, "Promotion"):
/// same → same; two integer kinds → the wider; an integer kind with a float
/// → the float unchanged; f16 with bf16 → f32; otherwise the wider float.
/// Promotion never narrows.
pub fn promote(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    match (int_rank(a), int_rank(b)) {
        (Some(x), Some(y)) => {
            if x >= y {
                a
            } else {
                b
            }
        }
        (Some(_), None) => b,
        (None, Some(_)) => a,
        (None, None) => match (a, b) {
            (DType::F64, _) | (_, DType::F64) => DType::F64,
            (DType::F32, _) | (_, DType::F32) => DType::F32,
            // The remaining pair is {bf16, f16}: neither contains the other.
            _ => DType::F32,
        },
    }
}

/// A host scalar's kind, for the weak-scalar rule (spec §5, extension 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
}

/// The dtype of an operation between a tensor of dtype `t` and a host
/// scalar of kind `k`: the scalar takes the tensor's dtype when its kind is
/// not higher (Int with any integer or float tensor, F64 with a float
/// tensor); an F64 with an integer or bool tensor gives f32; an Int with a
/// bool tensor gives i32; a Bool takes the tensor's dtype.
pub fn promote_weak(t: DType, k: ScalarKind) -> DType {
    match (k, t.is_float()) {
        (ScalarKind::Bool, _) => t,
        (ScalarKind::Int, true) => t,
        (ScalarKind::Int, false) => {
            if t == DType::Bool {
                DType::I32
            } else {
                t
            }
        }
        (ScalarKind::Float, true) => t,
        (ScalarKind::Float, false) => DType::F32,
    }
}

/// The dtype of an operation whose result cannot be an integer (mean,
/// median, var, std, softmax, log_softmax, logsumexp, `/`, the
/// transcendentals): an integer or bool input becomes f32.
pub fn float_result(d: DType) -> DType {
    if d.is_float() {
        d
    } else {
        DType::F32
    }
}

/// The dtype an operation accumulates in: anything narrower than f32 in
/// f32, f32 in f32, f64 in f64. Integer inputs of sum/prod/cumsum/cumprod
/// and integer contractions accumulate in i32 (spec §5, extension 2).
pub fn accumulation_dtype(d: DType) -> DType {
    match d {
        DType::Bool | DType::I8 | DType::I32 => DType::I32,
        DType::Bf16 | DType::F16 | DType::F32 => DType::F32,
        DType::F64 => DType::F64,
    }
}

/// The result dtype of `sum prod cumsum cumprod`: integers give i32,
/// floats keep their dtype.
pub fn sum_result(d: DType) -> DType {
    if d.is_float() {
        d
    } else {
        DType::I32
    }
}

/// A gradient is never narrower than f32: f64 for f64, f32 for every other
/// dtype (seed 000, "Autodiff").
pub fn grad_dtype(d: DType) -> DType {
    match d {
        DType::F64 => DType::F64,
        DType::Bool | DType::I8 | DType::I32 | DType::Bf16 | DType::F16 | DType::F32 => DType::F32,
    }
}

/// Whether promoting an integer tensor into `to` can lose values: i32 (and
/// i8/bool are fine) into bf16, f16 or f32 — the checker's lossy-widening
/// warning (spec §1).
pub fn is_lossy_widening(from: DType, to: DType) -> bool {
    from == DType::I32 && matches!(to, DType::Bf16 | DType::F16 | DType::F32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn promotion_table_of_the_seed() {
        assert_eq!(promote(Bool, I8), I8);
        assert_eq!(promote(I8, I32), I32);
        assert_eq!(promote(I32, Bf16), Bf16);
        assert_eq!(promote(Bool, F16), F16);
        assert_eq!(promote(F16, Bf16), F32);
        assert_eq!(promote(Bf16, F32), F32);
        assert_eq!(promote(F32, F64), F64);
        assert_eq!(promote(F16, F64), F64);
        // Symmetric, and never narrower than either operand.
        for a in DType::ALL {
            for b in DType::ALL {
                let p = promote(a, b);
                assert_eq!(p, promote(b, a));
                assert_eq!(promote(p, a), p);
                assert_eq!(promote(p, b), p);
            }
        }
    }

    #[test]
    fn weak_scalars() {
        assert_eq!(promote_weak(Bf16, ScalarKind::Float), Bf16);
        assert_eq!(promote_weak(I8, ScalarKind::Int), I8);
        assert_eq!(promote_weak(Bool, ScalarKind::Int), I32);
        assert_eq!(promote_weak(I32, ScalarKind::Float), F32);
        assert_eq!(promote_weak(Bool, ScalarKind::Float), F32);
        assert_eq!(promote_weak(F16, ScalarKind::Int), F16);
    }

    #[test]
    fn gradients_and_accumulators() {
        assert_eq!(grad_dtype(Bf16), F32);
        assert_eq!(grad_dtype(F64), F64);
        assert_eq!(grad_dtype(I8), F32);
        assert_eq!(accumulation_dtype(F16), F32);
        assert_eq!(accumulation_dtype(I8), I32);
        assert_eq!(float_result(I32), F32);
        assert_eq!(sum_result(Bool), I32);
    }
}
