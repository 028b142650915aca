//! The adjoint kernels the autodiff engine needs for the indexing
//! operations: [`index_add`], the vjp of `index_select`, and
//! [`scatter_add`], the vjp of `gather`. They are internal kernels, not
//! user operations, so they have no entry in the operation table.
//!
//! Both scatter a float cotangent into a zero tensor, where several source
//! elements may land on one output element. Each addition is computed in
//! f64 and rounded once to the result dtype as it is done (the same single
//! rounding as every kernel, through `Element::from_f64`), and the additions into an
//! output element happen in ascending row-major order of the source
//! position, so the result is deterministic bit for bit. Indices are read
//! and validated by the same routine as `index_select` and `gather`, so the
//! forward operation and its adjoint accept the same index tensors, count
//! negative indices from the end in the same way, and word their range
//! errors alike.

use half::{bf16, f16};

use super::shape::{index_values, packed};
use crate::dtype::DType;
use crate::storage::{try_filled, Element};
use crate::tensor::{numel_of, shape_str, Tensor, TensorError};

fn fail<T>(op: &str, msg: impl std::fmt::Display) -> Result<T, TensorError> {
    Err(TensorError(format!("`{op}`: {msg}")))
}

/// The adjoint of `index_select(x, axis, idx)`: a tensor of `src`'s shape
/// except that axis `axis` has length `size`, zero everywhere, with
/// `out[.., idx[i], ..] += src[.., i, ..]` for i ascending.
///
/// `idx` holds `src.shape[axis]` positions below `size` (negative ones
/// count from the end); like `index_select`'s, it may be rank 0 as one
/// position.
pub fn index_add(src: &Tensor, axis: usize, idx: &Tensor, size: usize) -> Result<Tensor, TensorError> {
    const OP: &str = "index_add";
    if src.ndim() == 0 {
        return fail(OP, "needs a tensor of rank 1 or more");
    }
    if axis >= src.ndim() {
        return fail(
            OP,
            format!("axis {axis} is out of range for a tensor of rank {}", src.ndim()),
        );
    }
    if idx.ndim() > 1 {
        return fail(
            OP,
            format!(
                "the index must have rank 0 or 1, not shape {}",
                shape_str(idx.shape())
            ),
        );
    }
    let m = src.shape()[axis];
    if idx.numel() != m {
        return fail(
            OP,
            format!(
                "an index of {} positions does not fit a tensor of shape {} with {m} along axis {axis}",
                idx.numel(),
                shape_str(src.shape())
            ),
        );
    }
    let mut shape = src.shape().to_vec();
    shape[axis] = size;
    let picked = index_values(OP, idx, size, axis, &shape)?;
    let outer: usize = src.shape()[..axis].iter().product();
    let inner: usize = src.shape()[axis + 1..].iter().product();
    // Source slice (o, i) is the contiguous run of `inner` elements at
    // (o·m + i)·inner; it lands on slice (o, idx[i]) of the output. Walking
    // o then i visits the source in row-major order.
    accumulate(OP, src, shape, |add| {
        if inner == 0 {
            return;
        }
        for o in 0..outer {
            for (i, &j) in picked.iter().enumerate() {
                add((o * m + i) * inner, (o * size + j) * inner, inner);
            }
        }
    })
}

/// The adjoint of `gather(x, axis, idx)` (`torch.gather` semantics; `idx`
/// has `src`'s shape): a tensor of shape `shape`, zero, with
/// `out[p with axis replaced by idx[p]] += src[p]` for every position p in
/// row-major order.
///
/// As in `gather`, `shape` has `src`'s rank and no axis shorter than
/// `src`'s except `axis`, whose length bounds the index values.
pub fn scatter_add(src: &Tensor, axis: usize, idx: &Tensor, shape: &[usize]) -> Result<Tensor, TensorError> {
    const OP: &str = "scatter_add";
    if src.ndim() == 0 {
        return fail(OP, "needs a tensor of rank 1 or more");
    }
    if axis >= src.ndim() {
        return fail(
            OP,
            format!("axis {axis} is out of range for a tensor of rank {}", src.ndim()),
        );
    }
    if idx.shape() != src.shape() {
        return fail(
            OP,
            format!(
                "the index has shape {}, not the shape {} of the tensor it scatters",
                shape_str(idx.shape()),
                shape_str(src.shape())
            ),
        );
    }
    let fits = shape.len() == src.ndim()
        && src
            .shape()
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(d, (&s, &n))| d == axis || s <= n);
    if !fits {
        return fail(
            OP,
            format!(
                "a tensor of shape {} does not fit a result of shape {} along axis {axis} (same rank, no other axis longer)",
                shape_str(src.shape()),
                shape_str(shape)
            ),
        );
    }
    let values = index_values(OP, idx, shape[axis], axis, shape)?;
    // Output strides, row-major.
    let mut strides = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.saturating_mul(d);
    }
    let last = src.ndim() - 1;
    let row_len = src.shape()[last];
    let outer = src.shape()[..last].to_vec();
    let step = if axis == last { 0 } else { strides[last] };
    let along = strides[axis];
    // Walk the source row by row (its last axis innermost), as `gather`
    // walks its index: a row's base offset covers the axes before the last
    // except `axis`, and each element adds its position along the last axis
    // (unless that is `axis`) and its index value along `axis`.
    accumulate(OP, src, shape.to_vec(), |add| {
        let mut pos = vec![0usize; last];
        for (r, row) in values.chunks(row_len.max(1)).enumerate() {
            let base: usize = pos
                .iter()
                .zip(&strides)
                .enumerate()
                .filter(|&(d, _)| d != axis)
                .map(|(_, (&p, &s))| p * s)
                .sum();
            for (c, &j) in row.iter().enumerate() {
                add(r * row_len + c, base + c * step + j * along, 1);
            }
            for d in (0..last).rev() {
                pos[d] += 1;
                if pos[d] < outer[d] {
                    break;
                }
                pos[d] = 0;
            }
        }
    })
}

/// One visit of the source: `add(from, to, len)` adds the `len` source
/// elements from row-major position `from` into the output elements from
/// row-major position `to` on. A walk calls it in ascending order of
/// `from`, which fixes the order of the additions into every element.
type Walk<'a> = &'a dyn Fn(&mut dyn FnMut(usize, usize, usize));

/// A zero tensor of `shape` and `src`'s dtype with `src` added into it as
/// `walk` directs. Only float dtypes can be accumulated into.
fn accumulate(
    op: &str,
    src: &Tensor,
    shape: Vec<usize>,
    walk: impl Fn(&mut dyn FnMut(usize, usize, usize)),
) -> Result<Tensor, TensorError> {
    let n = numel_of(&shape)?;
    let src = packed(src)?;
    match src.dtype() {
        DType::Bool | DType::I8 | DType::I32 => fail(
            op,
            format!("accumulates a float tensor, not one of dtype {}", src.dtype()),
        ),
        DType::Bf16 => add_runs::<bf16>(&src, n, shape, &walk),
        DType::F16 => add_runs::<f16>(&src, n, shape, &walk),
        DType::F32 => add_runs::<f32>(&src, n, shape, &walk),
        DType::F64 => add_runs::<f64>(&src, n, shape, &walk),
    }
}

fn add_runs<T: Element>(
    src: &Tensor,
    n: usize,
    shape: Vec<usize>,
    walk: Walk,
) -> Result<Tensor, TensorError> {
    let internal = || TensorError("internal: an adjoint index left its storage".into());
    let from = src.as_slice::<T>().ok_or_else(internal)?;
    let mut out = try_filled(n, T::from_f64(0.0)).map_err(|e| e.for_tensor(T::DTYPE, &shape))?;
    let mut outside = false;
    walk(&mut |f, t, len| {
        match (from.get(f..f + len), out.get_mut(t..t + len)) {
            (Some(a), Some(b)) => {
                for (o, &x) in b.iter_mut().zip(a) {
                    // Exact in f64 (both are values of a narrower or equal
                    // format), then one rounding to the dtype: the per-add
                    // rounding of an accumulation in the dtype itself.
                    *o = T::from_f64(o.to_f64() + x.to_f64());
                }
            }
            _ => outside = true,
        }
    });
    if outside {
        return Err(internal());
    }
    Tensor::from_vec(out, shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{call_named, Arg, Out};

    fn t(v: Vec<f64>, shape: Vec<usize>) -> Tensor {
        Tensor::from_vec(v, shape).expect("valid")
    }

    fn i32s(v: &[i32]) -> Tensor {
        Tensor::from_vec(v.to_vec(), vec![v.len()]).expect("valid")
    }

    /// Small integers in −4..=4 from a fixed linear congruential sequence,
    /// so every sum and product in the tests is exact in f64.
    fn ints(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) % 9) as f64 - 4.0
            })
            .collect()
    }

    fn run(op: &str, args: Vec<Arg>) -> Tensor {
        match call_named(op, args) {
            Ok(Out::Tensor(t)) => t,
            other => panic!("{op}: {other:?}"),
        }
    }

    fn dot(a: &Tensor, b: &Tensor) -> f64 {
        assert_eq!(a.shape(), b.shape());
        a.to_f64_vec()
            .expect("f64s")
            .iter()
            .zip(b.to_f64_vec().expect("f64s"))
            .map(|(x, y)| x * y)
            .sum()
    }

    fn unravel(mut p: usize, shape: &[usize]) -> Vec<usize> {
        let mut mi = vec![0; shape.len()];
        for (m, &d) in mi.iter_mut().zip(shape).rev() {
            *m = p % d;
            p /= d;
        }
        mi
    }

    fn ravel(mi: &[usize], shape: &[usize]) -> usize {
        mi.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
    }

    fn resolve(i: i64, n: usize) -> usize {
        if i < 0 {
            (i + n as i64) as usize
        } else {
            i as usize
        }
    }

    /// index_add by its definition, element by element on multi-indices.
    fn ref_index_add(src: &Tensor, axis: usize, idx: &[i64], size: usize) -> Vec<f64> {
        let mut shape = src.shape().to_vec();
        shape[axis] = size;
        let mut out = vec![0.0; shape.iter().product()];
        for (p, v) in src.to_f64_vec().expect("f64s").into_iter().enumerate() {
            let mut mi = unravel(p, src.shape());
            mi[axis] = resolve(idx[mi[axis]], size);
            out[ravel(&mi, &shape)] += v;
        }
        out
    }

    /// scatter_add by its definition; `idx` is row-major over src's shape.
    fn ref_scatter_add(src: &Tensor, axis: usize, idx: &[i64], shape: &[usize]) -> Vec<f64> {
        let mut out = vec![0.0; shape.iter().product()];
        for (p, v) in src.to_f64_vec().expect("f64s").into_iter().enumerate() {
            let mut mi = unravel(p, src.shape());
            mi[axis] = resolve(idx[p], shape[axis]);
            out[ravel(&mi, shape)] += v;
        }
        out
    }

    #[test]
    fn index_add_matches_reference() {
        let idx: Vec<i64> = vec![2, 0, -1, 2, -3, 1];
        for axis in 0..3 {
            let mut shape = vec![3, 4, 5];
            shape[axis] = idx.len();
            let n: usize = shape.iter().product();
            let src = t(ints(n, axis as u64), shape.clone());
            let size = 4;
            let idx_t =
                Tensor::from_vec(idx.iter().map(|&i| i as i32).collect::<Vec<_>>(), vec![6]).expect("valid");
            let got = index_add(&src, axis, &idx_t, size).expect("index_add");
            let mut want_shape = shape.clone();
            want_shape[axis] = size;
            assert_eq!(got.shape(), &want_shape[..]);
            assert_eq!(got.dtype(), DType::F64);
            assert_eq!(
                got.to_f64_vec().expect("f64s"),
                ref_index_add(&src, axis, &idx, size),
                "axis {axis}"
            );
            // The same from a strided view of the same values.
            let perm = [2, 0, 1];
            let inverse = [1, 2, 0];
            let base = src.permuted(&perm).expect("perm").contiguous().expect("copy");
            let view = base.permuted(&inverse).expect("view");
            assert!(!view.is_contiguous());
            assert_eq!(index_add(&view, axis, &idx_t, size).expect("view"), got);
        }
    }

    #[test]
    fn scatter_add_matches_reference() {
        // The source (and index) is shorter than the result along the
        // non-gathered axes and longer along the gathered one.
        for axis in 0..3 {
            let out_shape = vec![3, 4, 5];
            let mut shape = vec![2, 3, 4];
            shape[axis] = 7;
            let n: usize = shape.iter().product();
            let src = t(ints(n, 10 + axis as u64), shape.clone());
            let idx: Vec<i64> = ints(n, 20 + axis as u64)
                .iter()
                .map(|&v| (v as i64).clamp(-(out_shape[axis] as i64), out_shape[axis] as i64 - 1))
                .collect();
            let idx_t = t(idx.iter().map(|&i| i as f64).collect(), shape.clone());
            let got = scatter_add(&src, axis, &idx_t, &out_shape).expect("scatter_add");
            assert_eq!(got.shape(), &out_shape[..]);
            assert_eq!(
                got.to_f64_vec().expect("f64s"),
                ref_scatter_add(&src, axis, &idx, &out_shape),
                "axis {axis}"
            );
            let view = src
                .permuted(&[2, 1, 0])
                .expect("p")
                .contiguous()
                .expect("copy")
                .permuted(&[2, 1, 0])
                .expect("v");
            assert!(!view.is_contiguous());
            assert_eq!(scatter_add(&view, axis, &idx_t, &out_shape).expect("view"), got);
        }
    }

    #[test]
    fn index_add_is_the_adjoint_of_index_select() {
        let x_shape = vec![3, 4, 5];
        let x = t(ints(60, 1), x_shape.clone());
        let lists: [&[i32]; 4] = [&[0, 2, 2, -1, 1, -3, 0], &[1], &[-1, -1, -1], &[]];
        for axis in 0..3 {
            for (k, list) in lists.iter().enumerate() {
                let idx = i32s(list);
                let sel = run(
                    "index_select",
                    vec![
                        Arg::Tensor(x.clone()),
                        Arg::Int(axis as i64),
                        Arg::Tensor(idx.clone()),
                    ],
                );
                let y = t(ints(sel.numel(), 100 + k as u64), sel.shape().to_vec());
                let back = index_add(&y, axis, &idx, x_shape[axis]).expect("index_add");
                assert_eq!(back.shape(), x.shape());
                assert_eq!(dot(&sel, &y), dot(&x, &back), "axis {axis}, idx {list:?}");
            }
            // An i8 and a float index give the same result as an i32 one.
            let sel_shape = {
                let mut s = x_shape.clone();
                s[axis] = 3;
                s
            };
            let y = t(ints(sel_shape.iter().product(), 7), sel_shape);
            let want = index_add(&y, axis, &i32s(&[1, -1, 1]), x_shape[axis]).expect("i32");
            let i8_idx = Tensor::from_vec(vec![1i8, -1, 1], vec![3]).expect("valid");
            let f_idx = t(vec![1.0, -1.0, 1.0], vec![3]);
            assert_eq!(index_add(&y, axis, &i8_idx, x_shape[axis]).expect("i8"), want);
            assert_eq!(index_add(&y, axis, &f_idx, x_shape[axis]).expect("f64"), want);
        }
    }

    #[test]
    fn scatter_add_is_the_adjoint_of_gather() {
        let x_shape = vec![3, 4, 5];
        let x = t(ints(60, 2), x_shape.clone());
        for axis in 0..3 {
            for (k, idx_shape) in [vec![3, 4, 5], vec![2, 3, 4], vec![1, 1, 1], vec![3, 0, 5]]
                .into_iter()
                .enumerate()
            {
                let mut idx_shape = idx_shape;
                // Longer than x along the gathered axis, so values repeat.
                if idx_shape[axis] != 0 {
                    idx_shape[axis] = 9;
                }
                let n: usize = idx_shape.iter().product();
                let m = x_shape[axis] as i64;
                // Every position, negative ones included, many repeated.
                let vals: Vec<i32> = (0..n as i64).map(|p| ((p * 7) % (2 * m) - m) as i32).collect();
                let idx = Tensor::from_vec(vals, idx_shape.clone()).expect("valid");
                let g = run(
                    "gather",
                    vec![
                        Arg::Tensor(x.clone()),
                        Arg::Int(axis as i64),
                        Arg::Tensor(idx.clone()),
                    ],
                );
                let y = t(ints(g.numel(), 200 + k as u64), g.shape().to_vec());
                let back = scatter_add(&y, axis, &idx, &x_shape).expect("scatter_add");
                assert_eq!(back.shape(), x.shape());
                assert_eq!(
                    dot(&g, &y),
                    dot(&x, &back),
                    "axis {axis}, idx shape {idx_shape:?}"
                );
            }
        }
    }

    #[test]
    fn empty_tensors() {
        // Nothing selected: all zeros of the full size.
        let src = t(vec![], vec![2, 0, 3]);
        let out = index_add(&src, 1, &i32s(&[]), 4).expect("empty idx");
        assert_eq!(out.shape(), &[2, 4, 3]);
        assert!(out.to_f64_vec().expect("f64s").iter().all(|&v| v == 0.0));
        // An empty result axis with an empty index.
        let out = index_add(&src, 1, &i32s(&[]), 0).expect("size 0");
        assert_eq!(out.shape(), &[2, 0, 3]);
        // Zero-length axes other than `axis`.
        let src = t(vec![], vec![0, 2]);
        let out = index_add(&src, 1, &i32s(&[1, 1]), 3).expect("outer 0");
        assert_eq!(out.shape(), &[0, 3]);
        let out = scatter_add(&src, 1, &t(vec![], vec![0, 2]), &[2, 5]).expect("scatter empty");
        assert_eq!(out.shape(), &[2, 5]);
        assert!(out.to_f64_vec().expect("f64s").iter().all(|&v| v == 0.0));
        // An index into an empty axis is out of range as soon as it exists.
        let src = t(vec![1.0], vec![1]);
        assert!(index_add(&src, 0, &i32s(&[0]), 0).is_err());
    }

    #[test]
    fn keeps_the_dtype_and_rounds_every_add() {
        let all_to_zero = |src: Tensor| {
            let n = src.numel();
            let idx = i32s(&vec![0; n]);
            let a = index_add(&src, 0, &idx, 1).expect("index_add");
            let s = scatter_add(&src, 0, &idx, &[1]).expect("scatter_add");
            assert_eq!(a, s);
            assert_eq!(a.dtype(), src.dtype());
            a.to_f64_vec().expect("f64s")[0]
        };
        let tiny = 2f64.powi(-9);
        // bf16 has 8 significant bits: 1 + 2^-9 is a quarter ulp above 1 and
        // rounds back to 1 at every add, though the eight of them together
        // (2^-6) are representable next to 1.
        let mut v = vec![bf16::from_f64(1.0)];
        v.extend(vec![bf16::from_f64(tiny); 8]);
        assert_eq!(
            all_to_zero(Tensor::from_vec(v.clone(), vec![9]).expect("bf16")),
            1.0
        );
        // In ascending source order the small ones come first here, add up
        // exactly, and then survive the add of 1.
        v.rotate_left(1);
        assert_eq!(
            all_to_zero(Tensor::from_vec(v, vec![9]).expect("bf16")),
            1.0 + 8.0 * tiny
        );
        // f16 (11 bits) the same way one binade further down.
        let mut v = vec![f16::from_f64(1.0)];
        v.extend(vec![f16::from_f64(2f64.powi(-12)); 8]);
        assert_eq!(all_to_zero(Tensor::from_vec(v, vec![9]).expect("f16")), 1.0);
        // f32: per-add rounding is f32 addition itself, in source order.
        let xs: Vec<f32> = (0..64)
            .map(|i| 1.0 / (i as f32 + 1.0) * if i % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        let mut want = 0f32;
        for &x in &xs {
            want += x;
        }
        let got = all_to_zero(Tensor::from_vec(xs, vec![64]).expect("f32"));
        assert_eq!(got, f64::from(want));
        // A large f32 index_add along axis 0 agrees with f32 sums too.
        let rows = 300;
        let src: Vec<f32> = (0..rows * 4).map(|i| (i as f32).sin()).collect();
        let idx: Vec<i32> = (0..rows as i32).map(|r| r % 3).collect();
        let got = index_add(
            &Tensor::from_vec(src.clone(), vec![rows, 4]).expect("f32"),
            0,
            &i32s(&idx),
            3,
        )
        .expect("index_add");
        let mut want = [0f32; 12];
        for r in 0..rows {
            for c in 0..4 {
                want[idx[r] as usize * 4 + c] += src[r * 4 + c];
            }
        }
        assert_eq!(got.as_slice::<f32>().expect("f32"), &want[..]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let msg = |r: Result<Tensor, TensorError>| r.expect_err("must fail").0;
        let src = t(ints(6, 3), vec![2, 3]);
        let e = msg(index_add(&src, 1, &i32s(&[0, 5, 1]), 4));
        assert!(
            e.contains("`index_add`") && e.contains("index 5 is out of range"),
            "{e}"
        );
        let e = msg(index_add(&src, 1, &i32s(&[0, -5, 1]), 4));
        assert!(e.contains("index -5 is out of range"), "{e}");
        let e = msg(index_add(&src, 1, &t(vec![0.0, 2.5, 1.0], vec![3]), 4));
        assert!(e.contains("index 2.5 is not an integer"), "{e}");
        let e = msg(index_add(
            &src,
            1,
            &Tensor::from_vec(vec![true; 3], vec![3]).expect("b"),
            4,
        ));
        assert!(e.contains("not bool"), "{e}");
        let e = msg(index_add(&src, 1, &t(vec![0.0, 1.0, 2.0], vec![1, 3]), 4));
        assert!(e.contains("rank 0 or 1"), "{e}");
        let e = msg(index_add(&src, 1, &i32s(&[0, 1]), 4));
        assert!(e.contains("2 positions"), "{e}");
        let e = msg(index_add(&src, 2, &i32s(&[0, 1]), 4));
        assert!(e.contains("axis 2 is out of range"), "{e}");
        let e = msg(index_add(&t(vec![1.0], vec![]), 0, &i32s(&[0]), 1));
        assert!(e.contains("rank 1 or more"), "{e}");
        let ints_src = Tensor::from_vec(vec![1i32; 6], vec![2, 3]).expect("i32");
        let e = msg(index_add(&ints_src, 1, &i32s(&[0, 1, 2]), 3));
        assert!(e.contains("not one of dtype i32"), "{e}");
        let bool_src = Tensor::from_vec(vec![true; 6], vec![2, 3]).expect("bool");
        let e = msg(scatter_add(&bool_src, 1, &t(vec![0.0; 6], vec![2, 3]), &[2, 3]));
        assert!(e.contains("not one of dtype bool"), "{e}");

        let idx = t(vec![0.0, 1.0, 3.0, 0.0, 1.0, 2.0], vec![2, 3]);
        let e = msg(scatter_add(&src, 1, &idx, &[2, 3]));
        assert!(
            e.contains("`scatter_add`") && e.contains("index 3 is out of range for axis 1 of size 3"),
            "{e}"
        );
        let e = msg(scatter_add(&src, 1, &t(vec![0.0; 3], vec![3]), &[2, 3]));
        assert!(e.contains("the index has shape [3]"), "{e}");
        let e = msg(scatter_add(&src, 1, &t(vec![0.0; 6], vec![2, 3]), &[2, 3, 1]));
        assert!(e.contains("does not fit"), "{e}");
        let e = msg(scatter_add(&src, 1, &t(vec![0.0; 6], vec![2, 3]), &[1, 3]));
        assert!(e.contains("does not fit"), "{e}");
        let e = msg(scatter_add(&src, 3, &t(vec![0.0; 6], vec![2, 3]), &[2, 3]));
        assert!(e.contains("axis 3 is out of range"), "{e}");
        let e = msg(index_add(&src, 1, &i32s(&[0, 1, 2]), usize::MAX));
        assert!(e.contains("too many elements"), "{e}");
    }
}
