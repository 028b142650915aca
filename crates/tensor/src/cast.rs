//! Bulk casts of a tensor's elements (`x.to(dt)`). Every element goes
//! through the same single rounding as `Scalar::cast`; the common float
//! conversions have fast paths that are tested to give the same bits.

use half::bf16;

use crate::convert::{bf16_to_f32, f32_to_bf16, Scalar};
use crate::dtype::DType;
use crate::storage::{try_vec, Element, Storage};
use crate::tensor::{Tensor, TensorError};

/// The general path: every element through `Scalar::cast`.
fn generic<S: Element, D: Element>(t: &Tensor, src: &[S]) -> Result<Storage, TensorError> {
    let mut out = try_vec(t.numel()).map_err(|e| e.for_tensor(D::DTYPE, t.shape()))?;
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
                let mut out = try_vec(src.len()).map_err(|e| e.for_tensor(dtype, t.shape()))?;
                out.extend(src.iter().map(|&x| f32_to_bf16(x)));
                return Ok(Storage::Bf16(out));
            }
        }
        (Storage::Bf16(_), DType::F32) => {
            if let Some(src) = t.as_slice::<bf16>() {
                let mut out = try_vec(src.len()).map_err(|e| e.for_tensor(dtype, t.shape()))?;
                out.extend(src.iter().map(|&x| bf16_to_f32(x)));
                return Ok(Storage::F32(out));
            }
        }
        _ => {}
    }
    crate::dispatch!(in t.storage(), v => crate::dispatch!(dtype, D => generic::<_, D>(t, v)))
}
