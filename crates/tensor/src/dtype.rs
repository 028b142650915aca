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
