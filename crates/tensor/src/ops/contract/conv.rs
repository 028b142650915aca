//! `conv2d(x, w, stride, padding)`: x is NCHW (or CHW, one image), w is
//! OIHW, no bias, no groups, no dilation.
//!
//! Each output element `out[n, o, i, j]` is the contraction over
//! `(c, kh, kw)`, row-major, of `w[o, c, kh, kw] · xp[n, c, i·sh + kh,
//! j·sw + kw]`, where `xp` is x with `padding` zeros on every side. The
//! padding is an explicit +0 in that sum, exactly as if the zeros were
//! stored: each one is a product `+0 · w` rounded into the accumulator like
//! any other (it is ±0, so it leaves a nonzero accumulator unchanged, turns
//! a +0 accumulator into +0, and makes NaN when w is ±inf or NaN). A sum
//! over padding alone is therefore +0. The product is the matrix product
//! `W (O × C·KH·KW) · cols (C·KH·KW × OH·OW)` per image, with `cols` the
//! im2col matrix of x — which is never built: the packing step of `gemm`
//! reads it straight out of x.

use super::gemm::Panels;
use super::kernels::Kernels;
use super::operand::{dtypes, promoted, FromStorage, Mat, Visit};
use crate::dispatch;
use crate::dtype::DType;
use crate::storage::Element;
use crate::tensor::{shape_str, Tensor, TensorError};

/// The im2col matrix of one image as the right operand of the product:
/// element (t, p) = column t (output position i·OW + j), row p (c, kh, kw).
struct Im2col<'a, T> {
    data: &'a [T],
    geo: Geometry,
}

#[derive(Clone, Copy)]
struct Geometry {
    /// Storage offset of x[0, 0, 0, 0] and the strides of x's four axes.
    offset: isize,
    strides: [isize; 4],
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    ow: usize,
    stride: (usize, usize),
    pad: (usize, usize),
}

impl<T: Element<Acc = C>, C: Kernels> Panels<C> for Im2col<'_, T> {
    fn pack(&self, batch: usize, t0: usize, nt: usize, p0: usize, kc: usize, w: usize, out: &mut [C]) {
        let g = &self.geo;
        let base = g.offset + batch as isize * g.strides[0];
        let (h, wd) = (g.h as isize, g.w as isize);
        for (p, row) in out.chunks_exact_mut(w).enumerate().take(kc) {
            let q = p0 + p;
            let (c, r) = (q / (g.kh * g.kw), q % (g.kh * g.kw));
            let (dh, dw) = ((r / g.kw) as isize, (r % g.kw) as isize);
            let plane = base + c as isize * g.strides[1];
            // The panel's positions, one output row (fixed i) at a time.
            let (mut i, mut j) = (t0 / g.ow, t0 % g.ow);
            let mut t = 0;
            while t < nt {
                let run = (g.ow - j).min(nt - t);
                let seg = &mut row[t..t + run];
                let y = (i * g.stride.0) as isize + dh - g.pad.0 as isize;
                if y < 0 || y >= h {
                    // A row of padding: explicit +0s.
                    seg.fill(C::ZERO);
                } else {
                    let line = plane + y * g.strides[2];
                    // Input column of position j + u: x0 + u·sw.
                    let x0 = (j * g.stride.1) as isize + dw - g.pad.1 as isize;
                    if g.stride.1 == 1 && g.strides[3] == 1 {
                        // Contiguous: zeros, a copied run, zeros.
                        let n = run as isize;
                        let lo = (-x0).clamp(0, n) as usize;
                        let hi = ((wd - x0).clamp(0, n) as usize).max(lo);
                        seg[..lo].fill(C::ZERO);
                        seg[hi..].fill(C::ZERO);
                        if hi > lo {
                            let from = (line + x0 + lo as isize) as usize;
                            for (o, v) in seg[lo..hi].iter_mut().zip(&self.data[from..from + hi - lo]) {
                                *o = v.widen();
                            }
                        }
                    } else {
                        for (u, o) in seg.iter_mut().enumerate() {
                            let x = x0 + (u * g.stride.1) as isize;
                            *o = if x >= 0 && x < wd {
                                self.data[(line + x * g.strides[3]) as usize].widen()
                            } else {
                                C::ZERO
                            };
                        }
                    }
                }
                t += run;
                i += 1;
                j = 0;
            }
            row[nt..].fill(C::ZERO);
        }
    }
}

struct MakeIm2col(Geometry);

impl<'a, C: Kernels> Visit<'a, C> for MakeIm2col {
    type Out = Box<dyn Panels<C> + 'a>;
    fn visit<T: Element<Acc = C>>(self, data: &'a [T]) -> Self::Out {
        Box::new(Im2col { data, geo: self.0 })
    }
}

pub(crate) fn conv2d(
    x: &Tensor,
    w: &Tensor,
    stride: (usize, usize),
    pad: (usize, usize),
) -> Result<Tensor, TensorError> {
    if w.ndim() != 4 {
        return Err(TensorError(format!(
            "`conv2d`: the weight must have shape [out, in, kh, kw], not {}",
            shape_str(w.shape())
        )));
    }
    let unbatched = x.ndim() == 3;
    if x.ndim() != 4 && !unbatched {
        return Err(TensorError(format!(
            "`conv2d`: the input must have shape [n, c, h, w] or [c, h, w], not {}",
            shape_str(x.shape())
        )));
    }
    let x4 = if unbatched {
        let (s, o) = (x.strides(), x.offset());
        let mut shape = vec![1];
        shape.extend_from_slice(x.shape());
        x.with_layout(shape, vec![0, s[0], s[1], s[2]], o)?
    } else {
        x.clone()
    };
    let (n, c, h, wd) = (x4.shape()[0], x4.shape()[1], x4.shape()[2], x4.shape()[3]);
    let (o, ci, kh, kw) = (w.shape()[0], w.shape()[1], w.shape()[2], w.shape()[3]);
    if ci != c {
        return Err(TensorError(format!(
            "`conv2d`: input shape {} has {c} channels but weight shape {} expects {ci}",
            shape_str(x.shape()),
            shape_str(w.shape())
        )));
    }
    let (ph, pw) = (h + 2 * pad.0, wd + 2 * pad.1);
    if kh > ph || kw > pw || kh == 0 || kw == 0 {
        return Err(TensorError(format!(
            "`conv2d`: kernel size {kh}×{kw} does not fit the padded input size {ph}×{pw} (input shape {}, weight shape {})",
            shape_str(x.shape()),
            shape_str(w.shape())
        )));
    }
    let (oh, ow) = ((ph - kh) / stride.0 + 1, (pw - kw) / stride.1 + 1);
    let (d, r) = dtypes(&[x.dtype(), w.dtype()]);
    let xp = promoted(&x4, d)?;
    // The weights as an O × (C·KH·KW) matrix, the same for every image.
    let wm = promoted(w, d)?.contiguous()?.with_layout(
        vec![n, o, c * kh * kw],
        vec![0, (c * kh * kw) as isize, 1],
        0,
    )?;
    let s = xp.strides();
    let geo = Geometry {
        offset: xp.offset() as isize,
        strides: [s[0], s[1], s[2], s[3]],
        h,
        w: wd,
        kh,
        kw,
        ow,
        stride,
        pad,
    };
    let shape = if unbatched {
        vec![o, oh, ow]
    } else {
        vec![n, o, oh, ow]
    };
    dispatch!(d, T => run::<<T as Element>::Acc>(&Mat { t: &wm, nb: 1 }, &xp, geo, oh * ow, shape, r))
}

fn run<C: FromStorage>(
    wm: &Mat,
    xp: &Tensor,
    geo: Geometry,
    positions: usize,
    shape: Vec<usize>,
    result: DType,
) -> Result<Tensor, TensorError> {
    let batches = wm.t.shape()[0];
    let (o, k) = (wm.t.shape()[1], wm.t.shape()[2]);
    if batches == 0 || o == 0 || positions == 0 || k == 0 {
        return Tensor::zeros(shape, result);
    }
    let cols = C::visit(xp.storage(), MakeIm2col(geo))?;
    let acc = super::gemm::gemm::<C>(batches, o, positions, k, &*wm.left::<C>()?, &*cols)?;
    C::finish(acc, shape, result)
}
