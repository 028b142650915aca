//! The one description of a binary float format's field widths: the sign
//! bit, `exp_bits` of biased exponent and `man_bits` of stored mantissa (the
//! leading one of a normal number implicit), IEEE 754 style with
//! subnormals, infinities and NaNs. The casts of `convert` (narrowing from
//! and widening to f64), the shortest printing of `shortest` and the
//! elementwise kernels' rounding checks all read the widths from here, so
//! the three stored narrow formats (bf16, f16, f32) are written down once.
//! f64 is the wide format every value passes through; its widths are the
//! `F64_*` constants below rather than a `FloatFormat`, because its
//! encodings do not fit the `u32` patterns the narrow routines work on.

use crate::dtype::DType;

/// A binary interchange format narrower than f64. The fields are private so
/// that every value is one the algorithms have been validated on: the three
/// stored formats, or one made by [`FloatFormat::new`] (tiny formats make
/// exhaustive tests possible).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    exp_bits: u32,
    man_bits: u32,
}

/// Stored mantissa bits of f64.
pub(crate) const F64_MAN_BITS: u32 = 52;
/// f64's mantissa field.
pub(crate) const F64_MAN_MASK: u64 = (1 << F64_MAN_BITS) - 1;
/// f64's exponent field, all ones (infinities and NaNs).
pub(crate) const F64_EXP_ALL_ONES: u64 = 0x7ff;
/// f64's exponent bias.
pub(crate) const F64_BIAS: i32 = 1023;

impl FloatFormat {
    /// bfloat16: f32's exponent range with seven stored mantissa bits.
    pub const BF16: FloatFormat = FloatFormat {
        exp_bits: 8,
        man_bits: 7,
    };
    /// IEEE binary16.
    pub const F16: FloatFormat = FloatFormat {
        exp_bits: 5,
        man_bits: 10,
    };
    /// IEEE binary32.
    pub const F32: FloatFormat = FloatFormat {
        exp_bits: 8,
        man_bits: 23,
    };

    /// A format with the given field widths, if it fits in 32 bits, has room
    /// for normal numbers (at least two exponent bits) and at least one
    /// mantissa bit, and has at most 10 exponent bits. That cap keeps every
    /// value of the format, subnormals included, a normal f64 with room to
    /// spare, which is what the shifts of `convert::narrow` and
    /// `convert::widen` rely on; it also bounds the exact arithmetic of
    /// shortest printing, which grows with the exponent range.
    pub const fn new(exp_bits: u32, man_bits: u32) -> Option<FloatFormat> {
        if exp_bits >= 2 && exp_bits <= 10 && man_bits >= 1 && 1 + exp_bits + man_bits <= 32 {
            Some(FloatFormat { exp_bits, man_bits })
        } else {
            None
        }
    }

    /// The format a dtype stores its elements in, for the dtypes that narrow
    /// an f64. f64 itself is the wide format every value passes through, so
    /// it has none, and neither do the integer kinds.
    pub const fn of(dtype: DType) -> Option<FloatFormat> {
        match dtype {
            DType::Bf16 => Some(FloatFormat::BF16),
            DType::F16 => Some(FloatFormat::F16),
            DType::F32 => Some(FloatFormat::F32),
            DType::Bool | DType::I8 | DType::I32 | DType::F64 => None,
        }
    }

    pub const fn exp_bits(self) -> u32 {
        self.exp_bits
    }

    pub const fn man_bits(self) -> u32 {
        self.man_bits
    }

    /// Total width of an encoding, sign included.
    pub const fn width(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    /// The exponent bias.
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    /// The exponent field, all ones.
    pub const fn exp_all_ones(self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    /// The encoding of +inf: all exponent bits set, mantissa zero.
    pub const fn inf_bits(self) -> u32 {
        self.exp_all_ones() << self.man_bits
    }

    pub const fn sign_bit(self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }

    /// The top mantissa bit, which marks a NaN as quiet.
    pub const fn quiet_bit(self) -> u32 {
        1 << (self.man_bits - 1)
    }

    /// The low `width` bits of `bits`: the pattern, bits above it dropped.
    pub const fn mask(self, bits: u32) -> u32 {
        match self.width() {
            32 => bits,
            w => bits & ((1u32 << w) - 1),
        }
    }

    /// f64 mantissa bits below this format's last mantissa bit: how far an
    /// f64 is from this format's precision.
    pub const fn f64_low_bits(self) -> u32 {
        F64_MAN_BITS - self.man_bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_validated() {
        assert_eq!(FloatFormat::new(8, 23), Some(FloatFormat::F32));
        assert_eq!(FloatFormat::new(1, 10), None);
        assert_eq!(FloatFormat::new(8, 0), None);
        assert_eq!(FloatFormat::new(11, 4), None);
        assert_eq!(FloatFormat::new(10, 22), None);
        assert_eq!(FloatFormat::new(10, 21).map(FloatFormat::width), Some(32));
    }

    #[test]
    fn stored_formats_are_their_dtypes() {
        for d in DType::ALL {
            let f = FloatFormat::of(d);
            assert_eq!(f.is_some(), d.is_float() && d != DType::F64, "{d}");
            if let Some(f) = f {
                assert_eq!(f.width() as usize, 8 * d.size_in_bytes(), "{d}");
            }
        }
        assert_eq!(FloatFormat::F32.f64_low_bits(), 29);
        assert_eq!(FloatFormat::BF16.inf_bits(), 0x7f80);
        assert_eq!(FloatFormat::F16.quiet_bit(), 0x200);
    }
}
