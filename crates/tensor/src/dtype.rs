//! The seven element types of a tensor, and the facts about each that every
//! other layer (checker, evaluator, kernels) asks for. The enum is matched
//! exhaustively everywhere, so adding a dtype breaks every place that must
//! change.

use std::fmt;

/// An element type. Exactly these seven exist (seed 000, "The dtype set").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I32,
    Bf16,
    F16,
    F32,
    F64,
}

impl DType {
    /// All dtypes, in the order the spec lists them.
    pub const ALL: [DType; 7] = [
        DType::Bool,
        DType::I8,
        DType::I32,
        DType::Bf16,
        DType::F16,
        DType::F32,
        DType::F64,
    ];

    /// The name a program spells the dtype with, and the one printing uses.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I32 => "i32",
            DType::Bf16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Looks a dtype up by the name a program uses for it.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes one element occupies in packed storage.
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 => 1,
            DType::Bf16 | DType::F16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        match self {
            DType::Bool | DType::I8 | DType::I32 => false,
            DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => true,
        }
    }

    /// NumPy's `finfo` of a float dtype (spec §11.3); `None` for bool and
    /// the integers. Every value is exact in f64.
    pub fn float_info(self) -> Option<FloatInfo> {
        use half::{bf16, f16};
        let (eps, max, tiny, smallest_subnormal) = match self {
            DType::Bool | DType::I8 | DType::I32 => return None,
            DType::Bf16 => (
                bf16::EPSILON.to_f64(),
                bf16::MAX.to_f64(),
                bf16::MIN_POSITIVE.to_f64(),
                bf16::from_bits(1).to_f64(),
            ),
            DType::F16 => (
                f16::EPSILON.to_f64(),
                f16::MAX.to_f64(),
                f16::MIN_POSITIVE.to_f64(),
                f16::from_bits(1).to_f64(),
            ),
            DType::F32 => (
                f64::from(f32::EPSILON),
                f64::from(f32::MAX),
                f64::from(f32::MIN_POSITIVE),
                f64::from(f32::from_bits(1)),
            ),
            DType::F64 => (f64::EPSILON, f64::MAX, f64::MIN_POSITIVE, f64::from_bits(1)),
        };
        Some(FloatInfo {
            eps,
            max,
            min: -max,
            tiny,
            smallest_subnormal,
            bits: 8 * self.size_in_bytes() as i64,
        })
    }

    /// NumPy's `iinfo` of an integer dtype (spec §11.3); `None` for bool
    /// and the floats.
    pub fn int_info(self) -> Option<IntInfo> {
        let (min, max) = match self {
            DType::I8 => (i64::from(i8::MIN), i64::from(i8::MAX)),
            DType::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            DType::Bool | DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => return None,
        };
        Some(IntInfo {
            min,
            max,
            bits: 8 * self.size_in_bytes() as i64,
        })
    }
}

/// The limits of a float dtype, with NumPy's `finfo` meanings: `eps` the
/// gap from 1 to the next value, `max` the largest finite value and `min`
/// its negation, `tiny` the smallest positive normal, `smallest_subnormal`
/// the smallest positive value, `bits` the width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatInfo {
    pub eps: f64,
    pub max: f64,
    pub min: f64,
    pub tiny: f64,
    pub smallest_subnormal: f64,
    pub bits: i64,
}

/// The range of an integer dtype (NumPy's `iinfo`) and its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntInfo {
    pub min: i64,
    pub max: i64,
    pub bits: i64,
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        assert_eq!(DType::from_name("f8"), None);
    }
}
