//! Bulk casts of a tensor's elements (`x.to(dt)`). Every element goes
//! through the same single rounding as `Scalar::cast`; the common float
//! conversions have fast paths that are tested to give the same bits.

use half::bf16;

use crate::convert::Scalar;
use crate::dtype::DType;
use crate::float_format::FloatFormat;
use crate::storage::{vec_with_capacity, Element, Storage};
use crate::tensor::{Tensor, TensorError};

/// The general path: every element through `Scalar::cast`.
fn generic<S: Element, D: Element>(t: &Tensor, src: &[S]) -> Result<Storage, TensorError> {
    let mut out = vec_with_capacity(t.numel());
    for o in t.offsets() {
        let s: Scalar = src[o].to_scalar();
        let d = s.cast(D::DTYPE)?;
        out.push(D::from_scalar(d).ok_or_else(|| {
            TensorError(format!(
                "internal error: casting to {} gave a {} element",
                D::DTYPE,
                d.dtype()
            ))
        })?);
    }
    Ok(D::into_storage(out))
}

/// bf16 is f32 with the low mantissa bits cut off: this many.
const BF16_DROPPED: u32 = FloatFormat::F32.man_bits() - FloatFormat::BF16.man_bits();
/// The quiet bit of a bf16 NaN.
const BF16_QUIET: u16 = FloatFormat::BF16.quiet_bit() as u16;

/// f32 → bf16 with one rounding to nearest even, on the f32's bits. Equal
/// to `narrow(f64::from(x), BF16)` because widening f32 to f64 is exact;
/// NaN keeps its sign and top payload bits and becomes quiet.
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> bf16 {
    let b = x.to_bits();
    if x.is_nan() {
        return bf16::from_bits(((b >> BF16_DROPPED) as u16) | BF16_QUIET);
    }
    let half = (1 << (BF16_DROPPED - 1)) - 1;
    let round = half + ((b >> BF16_DROPPED) & 1);
    bf16::from_bits((b.wrapping_add(round) >> BF16_DROPPED) as u16)
}

/// bf16 → f32 is exact: the bf16 bits are the top half of the f32's.
/// Written as a shift so that it vectorises.
#[inline(always)]
pub fn bf16_to_f32(x: bf16) -> f32 {
    f32::from_bits(u32::from(x.to_bits()) << BF16_DROPPED)
}

impl Tensor {
    /// The tensor converted to `dtype`, each element rounded once from its
    /// own value (spec §5.3). Defined here, not in `tensor`, so that the
    /// tensor type does not depend on the casts built on top of it.
    pub fn cast(&self, dtype: DType) -> Result<Tensor, TensorError> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        let data = cast_storage(self, dtype)?;
        Tensor::from_storage(data, self.shape().to_vec())
    }
}

/// The elements of `t`, in row-major order, cast to `dtype`.
pub fn cast_storage(t: &Tensor, dtype: DType) -> Result<Storage, TensorError> {
    match (t.storage(), dtype) {
        (Storage::F32(_), DType::Bf16) => {
            if let Some(src) = t.as_slice::<f32>() {
                let mut out = vec_with_capacity(src.len());
                out.extend(src.iter().map(|&x| f32_to_bf16(x)));
                return Ok(Storage::Bf16(out));
            }
        }
        (Storage::Bf16(_), DType::F32) => {
            if let Some(src) = t.as_slice::<bf16>() {
                let mut out = vec_with_capacity(src.len());
                out.extend(src.iter().map(|&x| bf16_to_f32(x)));
                return Ok(Storage::F32(out));
            }
        }
        _ => {}
    }
    crate::dispatch!(in t.storage(), v => crate::dispatch!(dtype, D => generic::<_, D>(t, v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::narrow;

    #[test]
    fn fast_f32_to_bf16_matches_the_one_rounding_routine() {
        // Every 2^12-th f32 pattern plus the neighbourhoods of ties.
        let mut n = 0;
        for hi in (0u32..=u32::MAX).step_by(4093) {
            for b in [
                hi,
                hi ^ 0x8000,
                hi | 0x7FFF,
                (hi & !0xFFFF) | 0x8000,
                (hi & !0xFFFF) | 0x8001,
            ] {
                let x = f32::from_bits(b);
                let fast = f32_to_bf16(x).to_bits();
                let slow = narrow(f64::from(x), FloatFormat::BF16) as u16;
                assert_eq!(fast, slow, "x = {x:e} ({b:#010x})");
                n += 1;
            }
        }
        assert!(n > 5_000_000);
    }

    #[test]
    fn bf16_widening_is_exact() {
        for b in 0..=u16::MAX {
            let x = bf16::from_bits(b);
            let w = bf16_to_f32(x);
            if w.is_nan() {
                continue;
            }
            assert_eq!(f64::from(w), crate::convert::bf16_bits_to_f64(b));
        }
    }
}
