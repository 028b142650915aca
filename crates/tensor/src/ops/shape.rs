//! The rearrangement operations of spec §4.1: `reshape transpose permute
//! flip roll squeeze unsqueeze broadcast_to concat stack split gather
//! index_select`.
//!
//! None of them computes a value: every element of a result is an element
//! of an input, so every dtype is supported and the result keeps the
//! input's dtype (`concat` and `stack` promote their pieces with
//! [`promote`], which never narrows a value except the documented lossy
//! widening of i32 into a narrow float, rounded once by the cast).
//! Whatever can be expressed as shape, strides and offset over the same
//! storage is a view that copies nothing — `transpose permute flip squeeze
//! unsqueeze broadcast_to`, `reshape` of a densely laid out tensor, and the
//! pieces of `split`; the rest (`roll concat stack gather index_select`,
//! `reshape` of a strided view) copy into a fresh row-major buffer.
//! Tensors have value semantics, so a view is never observable except by
//! its cost.

use super::args::{Arg, Args, Out};
use crate::dispatch;
use crate::dtype::DType;
use crate::format::format_number;
use crate::promote::promote;
use crate::storage::{try_collect, try_vec, Element};
use crate::tensor::{ensure_room, normalize_axis, numel_of, shape_str, Tensor, TensorError};

fn fail<T>(op: &str, msg: impl std::fmt::Display) -> Result<T, TensorError> {
    Err(TensorError(format!("`{op}`: {msg}")))
}

/// `axis` of a rank-`ndim` tensor as an index, with the operation named in
/// the error. A rank-0 tensor accepts axis 0 and -1 (as PyTorch does),
/// which name the tensor itself.
pub(crate) fn axis_of(op: &str, axis: i64, ndim: usize) -> Result<usize, TensorError> {
    if ndim == 0 && (axis == 0 || axis == -1) {
        return Ok(0);
    }
    normalize_axis(axis, ndim).map_err(|e| TensorError(format!("`{op}`: {}", e.0)))
}

/// A list of axes, each normalised, none given twice.
fn axes_of(op: &str, axes: &[i64], ndim: usize) -> Result<Vec<usize>, TensorError> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let ax = axis_of(op, a, ndim)?;
        if out.contains(&ax) {
            return fail(op, format!("axis {a} is given twice"));
        }
        out.push(ax);
    }
    Ok(out)
}

/// A shape argument whose sizes must all be non-negative.
fn dims_of(op: &str, dims: &[i64]) -> Result<Vec<usize>, TensorError> {
    dims.iter()
        .map(|&d| {
            usize::try_from(d).or_else(|_| fail(op, format!("a shape cannot have a negative size ({d})")))
        })
        .collect()
}

/// A shape written with Ints, which may include `-1`.
fn spec_str(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.saturating_mul(d as isize);
    }
    strides
}

/// Whether the elements lie row-major and without gaps from the offset on
/// (size-1 axes may have any stride), so that any shape of the same count
/// is a view.
fn is_dense(x: &Tensor) -> bool {
    if x.numel() == 0 {
        return true;
    }
    let mut expect = 1isize;
    for (&d, &s) in x.shape().iter().zip(x.strides()).rev() {
        if d != 1 {
            if s != expect {
                return false;
            }
            expect *= d as isize;
        }
    }
    true
}

/// `x` with a new shape of the same element count: a view when `x` is
/// dense, a row-major copy otherwise.
pub(super) fn reshaped(x: &Tensor, shape: Vec<usize>) -> Result<Tensor, TensorError> {
    let strides = row_major_strides(&shape);
    if is_dense(x) {
        x.with_layout(shape, strides, x.offset())
    } else {
        packed(x)?.with_layout(shape, strides, 0)
    }
}

// ---------------------------------------------------------------------------
// Views

pub(super) fn reshape(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let spec = a.ints("shape")?.unwrap_or_default();
    let n = x.numel();
    let mismatch = || {
        fail(
            a.op,
            format!(
                "cannot reshape a tensor of shape {} ({n} elements) into shape {}",
                shape_str(x.shape()),
                spec_str(&spec)
            ),
        )
    };
    let mut infer = None;
    let mut known = 1usize;
    for (i, &d) in spec.iter().enumerate() {
        if d == -1 {
            if infer.replace(i).is_some() {
                return fail(a.op, format!("only one size can be -1, in {}", spec_str(&spec)));
            }
        } else if d < 0 {
            return fail(a.op, format!("a shape cannot have a negative size ({d})"));
        } else {
            known = match known.checked_mul(d as usize) {
                Some(k) => k,
                None => return mismatch(),
            };
        }
    }
    let mut shape: Vec<usize> = spec.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = infer {
        // -1 stands for whatever size makes the counts agree; with the
        // other sizes multiplying to 0 no size does (NumPy agrees).
        if known == 0 || n % known != 0 {
            return mismatch();
        }
        shape[i] = n / known;
    } else if known != n {
        return mismatch();
    }
    reshaped(x, shape).map(Out::Tensor)
}

pub(super) fn transpose(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let i = a.about("a", axis_of(a.op, a.int("a")?.unwrap_or(0), x.ndim()))?;
    let j = a.about("b", axis_of(a.op, a.int("b")?.unwrap_or(0), x.ndim()))?;
    if x.ndim() == 0 {
        return Ok(Out::Tensor(x.clone()));
    }
    let mut perm: Vec<usize> = (0..x.ndim()).collect();
    perm.swap(i, j);
    x.permuted(&perm).map(Out::Tensor)
}

pub(super) fn permute(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let axes = a.ints("axes")?.unwrap_or_default();
    if axes.len() != x.ndim() {
        return fail(
            a.op,
            format!(
                "{} is not a permutation of the axes of a rank-{} tensor",
                spec_str(&axes),
                x.ndim()
            ),
        );
    }
    let perm = axes_of(a.op, &axes, x.ndim())?;
    x.permuted(&perm).map(Out::Tensor)
}

/// `flip(x)` reverses every axis (as `numpy.flip` without an axis);
/// `flip(x, axis)` the named ones. A view with negative strides.
pub(super) fn flip(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let axes = match a.ints("axis")? {
        Some(v) => axes_of(a.op, &v, x.ndim())?,
        None => (0..x.ndim()).collect(),
    };
    let mut strides = x.strides().to_vec();
    let mut offset = x.offset() as isize;
    for &ax in &axes {
        let (Some(&d), Some(s)) = (x.shape().get(ax), strides.get_mut(ax)) else {
            // Rank 0: axis 0 names the tensor itself, which has nothing to
            // reverse.
            continue;
        };
        if d > 0 {
            offset += (d as isize - 1) * *s;
        }
        *s = -*s;
    }
    x.with_layout(x.shape().to_vec(), strides, offset.max(0) as usize)
        .map(Out::Tensor)
}

/// `squeeze(x)` drops every size-1 axis; `squeeze(x, axis)` the named
/// ones, each of which must have size 1.
pub(super) fn squeeze(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let drop = match a.ints("axis")? {
        Some(v) => {
            let axes = axes_of(a.op, &v, x.ndim())?;
            for (&ax, &given) in axes.iter().zip(&v) {
                if let Some(&d) = x.shape().get(ax) {
                    if d != 1 {
                        return fail(
                            a.op,
                            format!(
                                "cannot squeeze axis {given} of size {d} (shape {}): only size-1 axes can be removed",
                                shape_str(x.shape())
                            ),
                        );
                    }
                }
            }
            axes
        }
        None => (0..x.ndim()).filter(|&i| x.shape()[i] == 1).collect(),
    };
    let (mut shape, mut strides) = (Vec::new(), Vec::new());
    for (i, (&d, &s)) in x.shape().iter().zip(x.strides()).enumerate() {
        if !drop.contains(&i) {
            shape.push(d);
            strides.push(s);
        }
    }
    x.with_layout(shape, strides, x.offset()).map(Out::Tensor)
}

/// `unsqueeze(x, axis)` inserts a size-1 axis at `axis` of the result;
/// an `Arr[Int]` inserts several (`numpy.expand_dims`).
pub(super) fn unsqueeze(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let given = a.ints("axis")?.unwrap_or_default();
    let rank = x.ndim() + given.len();
    let new_axes = axes_of(a.op, &given, rank)?;
    let (mut shape, mut strides) = (Vec::with_capacity(rank), Vec::with_capacity(rank));
    let mut old = x.shape().iter().zip(x.strides());
    for i in 0..rank {
        if new_axes.contains(&i) {
            shape.push(1);
            strides.push(0);
        } else if let Some((&d, &s)) = old.next() {
            shape.push(d);
            strides.push(s);
        }
    }
    // A new axis gets the stride a row-major layout would give it, so that
    // a contiguous tensor stays contiguous (and keeps its fast paths).
    let mut next = 1isize;
    for i in (0..rank).rev() {
        if new_axes.contains(&i) {
            strides[i] = next;
        } else {
            next = strides[i].saturating_mul(shape[i] as isize);
        }
    }
    x.with_layout(shape, strides, x.offset()).map(Out::Tensor)
}

pub(super) fn broadcast_to(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let shape = dims_of(a.op, &a.ints("shape")?.unwrap_or_default())?;
    numel_of(&shape)?;
    x.broadcast_view(&shape)
        .map(Out::Tensor)
        .map_err(|e| TensorError(format!("`{}`: {}", a.op, e.0)))
}

/// `split(x, sizes, axis)`: an Int is a chunk size (pieces of that size,
/// the last one shorter if the axis does not divide evenly, as
/// `torch.split`); an `Arr[Int]` lists the sizes of the pieces, which must
/// add up to the axis length. The pieces are views.
pub(super) fn split(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    if x.ndim() == 0 {
        return fail(a.op, "cannot split a rank-0 tensor");
    }
    let ax = a.about("axis", axis_of(a.op, a.int("axis")?.unwrap_or(0), x.ndim()))?;
    let n = x.shape()[ax];
    let chunk = match a.get("sizes") {
        Some(Arg::Int(_)) => a.int("sizes")?,
        Some(Arg::Tensor(t)) if t.ndim() == 0 => a.int("sizes")?,
        _ => None,
    };
    let sizes: Vec<usize> = match chunk {
        Some(c) if c <= 0 => return fail(a.op, format!("the chunk size must be positive, not {c}")),
        // An empty axis still splits into one (empty) piece.
        Some(_) if n == 0 => vec![0],
        Some(c) => {
            let c = c as usize;
            // The pieces are materialised, one view each: a count that
            // cannot be allocated is an error, not an abort.
            let count = n.div_ceil(c);
            let mut sizes = Vec::new();
            if sizes.try_reserve_exact(count).is_err() {
                return fail(
                    a.op,
                    format!("cannot make {count} pieces of {c} from an axis of {n} elements"),
                );
            }
            sizes.extend((0..count).map(|i| c.min(n - i * c)));
            sizes
        }
        None => {
            let given = a.ints("sizes")?.unwrap_or_default();
            let sizes = given
                .iter()
                .map(|&s| {
                    usize::try_from(s)
                        .or_else(|_| fail(a.op, format!("a piece cannot have a negative size ({s})")))
                })
                .collect::<Result<Vec<usize>, TensorError>>()?;
            let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
            if total != Some(n) {
                return fail(
                    a.op,
                    format!(
                        "sizes {} do not add up to the length {n} of axis {ax} (shape {})",
                        spec_str(&given),
                        shape_str(x.shape())
                    ),
                );
            }
            sizes
        }
    };
    let stride = x.strides()[ax];
    let mut pieces = Vec::with_capacity(sizes.len());
    let mut start = 0usize;
    for s in sizes {
        let mut shape = x.shape().to_vec();
        shape[ax] = s;
        let offset = x.offset() as isize + start as isize * stride;
        pieces.push(x.with_layout(shape, x.strides().to_vec(), offset.max(0) as usize)?);
        start += s;
    }
    Ok(Out::Tensors(pieces))
}

// ---------------------------------------------------------------------------
// Copies

/// Runs of consecutive source positions in an index map, as (first
/// position, length): a whole axis is one run, a rolled one two.
fn runs_of(map: &[usize]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &i in map {
        match runs.last_mut() {
            Some((start, len)) if *start + *len == i => *len += 1,
            _ => runs.push((i, 1)),
        }
    }
    runs
}

/// The tensor whose element at (i_0, …, i_k) is `x`'s element at
/// (maps[0][i_0], …, maps[k][i_k]): one selection per axis, each index
/// already validated against its axis. A row-major copy, walked with one
/// base offset per output row; along the last axis it copies runs of
/// consecutive elements as slices when the axis has a unit stride and the
/// runs are long, and gathers element by element otherwise.
fn take_axes(x: &Tensor, maps: &[Vec<usize>]) -> Result<Tensor, TensorError> {
    let shape: Vec<usize> = maps.iter().map(Vec::len).collect();
    let total = numel_of(&shape)?;
    // Offset contribution of each selected index, per axis.
    let tables = maps
        .iter()
        .zip(x.strides())
        .map(|(m, &s)| try_collect(m.len(), m.iter().map(|&i| i as isize * s)))
        .collect::<Result<Vec<Vec<isize>>, _>>()?;
    let (Some((last_map, outer_maps)), Some((last_table, outer_tables))) =
        (maps.split_last(), tables.split_last())
    else {
        return x.contiguous();
    };
    let last_stride = x.strides().last().copied().unwrap_or(1);
    let runs = if last_stride == 1 {
        runs_of(last_map)
    } else {
        Vec::new()
    };
    let by_runs = last_stride == 1 && runs.len() * 4 <= last_map.len();
    let outside = || Err(TensorError("internal: an index left its storage".into()));
    dispatch!(in x.storage(), v => {
        let mut out = try_vec(total).map_err(|e| e.for_tensor(x.dtype(), &shape))?;
        if total > 0 {
            let mut idx = vec![0usize; outer_maps.len()];
            loop {
                let base = x.offset() as isize
                    + idx.iter().zip(outer_tables).map(|(&i, t)| t[i]).sum::<isize>();
                if by_runs {
                    for &(start, len) in &runs {
                        let lo = (base + start as isize).max(0) as usize;
                        match v.get(lo..lo + len) {
                            Some(run) => out.extend_from_slice(run),
                            None => return outside(),
                        }
                    }
                } else {
                    for &o in last_table {
                        match v.get((base + o).max(0) as usize) {
                            Some(&e) => out.push(e),
                            None => return outside(),
                        }
                    }
                }
                // Advance the odometer over the outer axes.
                let mut axis = idx.len();
                loop {
                    if axis == 0 {
                        return Tensor::from_vec(out, shape);
                    }
                    axis -= 1;
                    idx[axis] += 1;
                    if idx[axis] < outer_maps[axis].len() {
                        break;
                    }
                    idx[axis] = 0;
                }
            }
        }
        Tensor::from_vec(out, shape)
    })
}

/// `x` packed row-major into its own storage: `x` itself when it already
/// is, otherwise `Tensor::contiguous`'s copy of the view (in tiles for
/// transposed axes, by rows otherwise; measured on a transposed 1e4 × 1e3
/// view against the per-axis tables of [`take_axes`] in
/// docs/performance.md).
pub(crate) fn packed(x: &Tensor) -> Result<Tensor, TensorError> {
    if x.is_contiguous() {
        return Ok(x.clone());
    }
    if x.numel() == 0 {
        // Nothing to copy, however long its other axes.
        return Tensor::zeros(x.shape().to_vec(), x.dtype());
    }
    // The view copy (in tiles for a transpose, by rows otherwise).
    x.contiguous()
}

/// `roll` with NumPy's semantics: elements shifted `shift` places along
/// `axis` (wrapping around); several shifts and axes pair up (a single one
/// of either broadcasts), and shifts of the same axis add up. Without an
/// axis the flattened tensor is rolled and the shape restored.
pub(super) fn roll(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let shifts = a.ints("shift")?.unwrap_or_default();
    if x.numel() == 0 {
        // Nothing moves (the axes are still checked).
        if let Some(axes) = a.ints("axis")? {
            for &ax in &axes {
                a.about("axis", axis_of(a.op, ax, x.ndim()))?;
            }
        }
        return Ok(Out::Tensor(x.contiguous()?));
    }
    let Some(axes) = a.ints("axis")? else {
        // Without axes the flattened tensor rolls as one axis.
        let total = shifts.iter().fold(0i128, |acc, &s| acc + i128::from(s));
        let flat = reshaped(x, vec![x.numel()])?;
        let rolled = rotated(&flat.contiguous()?, 0, total)?;
        return reshaped(&rolled, x.shape().to_vec()).map(Out::Tensor);
    };
    let pairs: Vec<(i64, i64)> = match (shifts.len(), axes.len()) {
        (s, n) if s == n => shifts.iter().copied().zip(axes.iter().copied()).collect(),
        (1, _) => axes.iter().map(|&ax| (shifts[0], ax)).collect(),
        (_, 1) => shifts.iter().map(|&s| (s, axes[0])).collect(),
        _ => {
            return fail(
                a.op,
                format!(
                    "{} shifts and {} axes cannot be paired up",
                    shifts.len(),
                    axes.len()
                ),
            )
        }
    };
    let mut total = vec![0i128; x.ndim()];
    for (s, ax) in pairs {
        let ax = axis_of(a.op, ax, x.ndim())?;
        if let Some(t) = total.get_mut(ax) {
            *t += i128::from(s);
        }
    }
    let mut out = x.contiguous()?;
    for (ax, &s) in total.iter().enumerate() {
        out = rotated(&out, ax, s)?;
    }
    Ok(Out::Tensor(out))
}

/// A contiguous tensor rolled by `shift` along `axis`: each block of the
/// axis and everything after it becomes its last `shift` sub-blocks, then
/// the rest, two copies per block (no index tables). A shift that is a
/// multiple of the axis length gives the tensor itself.
fn rotated(c: &Tensor, axis: usize, shift: i128) -> Result<Tensor, TensorError> {
    let d = c.shape().get(axis).copied().unwrap_or(1);
    if d == 0 || shift.rem_euclid(d as i128) == 0 {
        return Ok(c.clone());
    }
    let s = shift.rem_euclid(d as i128) as usize;
    let inner: usize = c.shape().get(axis + 1..).unwrap_or(&[]).iter().product();
    let block = d * inner;
    let cut = (d - s) * inner;
    let data = dispatch!(in c.storage(), v => {
        let mut out = try_vec(v.len()).map_err(|e| e.for_tensor(c.dtype(), c.shape()))?;
        for blk in v.chunks_exact(block) {
            let (head, tail) = blk.split_at(cut);
            out.extend_from_slice(tail);
            out.extend_from_slice(head);
        }
        Element::into_storage(out)
    });
    Tensor::from_storage(data, c.shape().to_vec())
}

/// Index values as axis positions: integer tensors and integral float
/// tensors (spec §4); a negative index counts from the end, as in `x[i]`;
/// anything else, or out of range, is an error naming the value.
pub(crate) fn index_values(
    op: &str,
    idx: &Tensor,
    n: usize,
    axis: usize,
    shape: &[usize],
) -> Result<Vec<usize>, TensorError> {
    let place = |i: i64, shown: &dyn Fn() -> String| -> Result<usize, TensorError> {
        let j = if i < 0 { i.saturating_add(n as i64) } else { i };
        match usize::try_from(j) {
            Ok(j) if j < n => Ok(j),
            _ => fail(
                op,
                format!(
                    "index {} is out of range for axis {axis} of size {n} (shape {})",
                    shown(),
                    shape_str(shape)
                ),
            ),
        }
    };
    match idx.dtype() {
        DType::Bool => fail(op, "an index tensor must hold integers, not bool"),
        // The common case, read without a detour through f64.
        DType::I32 if idx.is_contiguous() => idx
            .as_slice::<i32>()
            .unwrap_or(&[])
            .iter()
            .map(|&i| place(i64::from(i), &|| i.to_string()))
            .collect(),
        DType::I8 | DType::I32 | DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => idx
            .to_f64_vec()?
            .into_iter()
            .map(|v| {
                if !v.is_finite() || v.fract() != 0.0 || v.abs() > 9.0e18 {
                    return fail(op, format!("index {} is not an integer", format_number(v)));
                }
                place(v as i64, &|| format_number(v))
            })
            .collect(),
    }
}

/// The index argument: a tensor, or an `Arr[Int]` taken as a rank-1 one.
fn index_arg(a: &Args, name: &str) -> Result<Tensor, TensorError> {
    match a.get(name) {
        Some(Arg::Ints(v)) => {
            let vals: Vec<f64> = v.iter().map(|&i| i as f64).collect();
            Tensor::from_vec(vals, vec![v.len()])
        }
        _ => a.tensor(name).cloned(),
    }
}

/// `gather(x, axis, idx)` as `torch.gather`: `idx` has `x`'s rank, no
/// axis of it is longer than `x`'s except `axis`, and the result has
/// `idx`'s shape with out[i…] = x[i… with axis replaced by idx[i…]].
pub(super) fn gather(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let idx = index_arg(a, "idx")?;
    if x.ndim() == 0 {
        return fail(a.op, "needs a tensor of rank 1 or more");
    }
    let ax = a.about("axis", axis_of(a.op, a.int("axis")?.unwrap_or(0), x.ndim()))?;
    let fits = idx.ndim() == x.ndim()
        && idx
            .shape()
            .iter()
            .zip(x.shape())
            .enumerate()
            .all(|(d, (&i, &s))| d == ax || i <= s);
    if !fits {
        return fail(
            a.op,
            format!(
                "an index of shape {} does not fit a tensor of shape {} along axis {ax} (same rank, no other axis longer)",
                shape_str(idx.shape()),
                shape_str(x.shape())
            ),
        );
    }
    let n = x.shape()[ax];
    if let Some(t) = gather_rows(x, &idx, ax)? {
        return Ok(Out::Tensor(t));
    }
    let values = index_values(a.op, &idx, n, ax, x.shape())?;
    // Walk the index row by row (its last axis innermost): a row's base
    // offset covers the axes before the last except `axis`, and each
    // element adds its position along the last axis (unless that is
    // `axis`) and its index value along `axis`.
    let xs = x.strides();
    let last = idx.ndim() - 1;
    let inner = idx.shape()[last];
    let outer = &idx.shape()[..last];
    let step = if ax == last { 0 } else { xs[last] };
    let along = xs[ax];
    dispatch!(in x.storage(), v => {
        let mut out = try_vec(values.len())?;
        let mut pos = vec![0usize; last];
        for row in values.chunks(inner.max(1)) {
            let base = x.offset() as isize
                + pos
                    .iter()
                    .zip(xs)
                    .enumerate()
                    .filter(|&(d, _)| d != ax)
                    .map(|(_, (&p, &s))| p as isize * s)
                    .sum::<isize>();
            for (c, &j) in row.iter().enumerate() {
                match v.get((base + c as isize * step + j as isize * along).max(0) as usize) {
                    Some(&e) => out.push(e),
                    None => return Err(TensorError("internal: an index left its storage".into())),
                }
            }
            for d in (0..last).rev() {
                pos[d] += 1;
                if pos[d] < outer[d] {
                    break;
                }
                pos[d] = 0;
            }
        }
        Tensor::from_vec(out, idx.shape().to_vec())
    })
    .map(Out::Tensor)
}

/// The smallest and largest of `v` in its own type (a vectorised min/max
/// fold), for range checks ([`gather_rows`], `derived::reinterpret`); `None`
/// when empty.
pub(super) fn extremes<T: Copy + PartialOrd>(v: &[T]) -> Option<(T, T)> {
    let &first = v.first()?;
    Some(crate::isa::wide(
        #[inline(always)]
        || {
            v.iter().fold((first, first), |(lo, hi), &e| {
                (if e < lo { e } else { lo }, if e > hi { e } else { hi })
            })
        },
    ))
}

/// [`gather`] along the last axis of a row-major `x` by a row-major i32
/// index with `x`'s other axes, every value in range: each output row
/// reads the same row of `x`, on several threads for a large index, with
/// no index list built first. `None` where any of that does not hold (a
/// negative or out-of-range value, whose wrap or error the general path
/// gives).
fn gather_rows(x: &Tensor, idx: &Tensor, ax: usize) -> Result<Option<Tensor>, TensorError> {
    let last = x.ndim() - 1;
    let (Some(ids), true) = (idx.as_slice::<i32>(), x.is_contiguous() && ax == last) else {
        return Ok(None);
    };
    if idx.shape()[..last] != x.shape()[..last] {
        return Ok(None);
    }
    let (c, k) = (x.shape()[last], idx.shape()[last]);
    let Some((lo, hi)) = extremes(ids) else {
        return Ok(None);
    };
    if lo < 0 || hi as i64 >= c as i64 || k == 0 {
        return Ok(None);
    }
    let data = dispatch!(in x.storage(), v => {
        let out = super::elementwise::build(idx.shape(), #[inline(always)] |s, chunk| {
            // The chunk's positions a row at a time.
            let mut p = s;
            let end = s + chunk.len();
            while p < end {
                let row = p / k;
                let j1 = ((row + 1) * k).min(end);
                let src = v.get(row * c..(row + 1) * c).unwrap_or_default();
                let dst = chunk.get_mut(p - s..j1 - s).unwrap_or_default();
                for (o, &i) in dst.iter_mut().zip(ids.get(p..j1).unwrap_or_default()) {
                    o.write(src.get(i as usize).copied().unwrap_or_default());
                }
                p = j1;
            }
        })?;
        Element::into_storage(out)
    });
    Tensor::from_storage(data, idx.shape().to_vec()).map(Some)
}

/// `index_select(x, axis, idx)`: the slices of `x` along `axis` at the
/// positions of the rank-1 (or rank-0, as one position) `idx`, in order.
pub(super) fn index_select(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let idx = index_arg(a, "idx")?;
    if x.ndim() == 0 {
        return fail(a.op, "needs a tensor of rank 1 or more");
    }
    if idx.ndim() > 1 {
        return fail(
            a.op,
            format!(
                "the index must have rank 0 or 1, not shape {}",
                shape_str(idx.shape())
            ),
        );
    }
    let ax = a.about("axis", axis_of(a.op, a.int("axis")?.unwrap_or(0), x.ndim()))?;
    let picked = index_values(a.op, &idx, x.shape()[ax], ax, x.shape())?;
    // The result must exist before its index tables are made: an empty
    // one needs none, and a huge axis of a broadcast view would make a
    // table as long as the axis.
    let mut shape = x.shape().to_vec();
    shape[ax] = picked.len();
    if ensure_room(x.dtype(), &shape)? == 0 {
        return Tensor::zeros(shape, x.dtype()).map(Out::Tensor);
    }
    if ax == 0 && x.is_contiguous() {
        // Whole rows of a row-major x, copied in order (several threads
        // for a large result) without the index tables.
        let inner = x.numel() / x.shape()[0].max(1);
        let data = dispatch!(in x.storage(), v => {
            let out = super::elementwise::build(&shape, #[inline(always)] |s, chunk| {
                let mut p = s;
                let end = s + chunk.len();
                while p < end {
                    let q = p / inner;
                    let (j0, j1) = (p - q * inner, ((q + 1) * inner).min(end) - q * inner);
                    let row = picked.get(q).and_then(|&r| v.get(r * inner..(r + 1) * inner)).unwrap_or_default();
                    let dst = chunk.get_mut(p - s..p - s + (j1 - j0)).unwrap_or_default();
                    for (o, &e) in dst.iter_mut().zip(row.get(j0..j1).unwrap_or_default()) {
                        o.write(e);
                    }
                    p += j1 - j0;
                }
            })?;
            Element::into_storage(out)
        });
        return Tensor::from_storage(data, shape).map(Out::Tensor);
    }
    let maps = x
        .shape()
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            if d == ax {
                Ok(picked.clone())
            } else {
                try_collect(n, 0..n)
            }
        })
        .collect::<Result<Vec<Vec<usize>>, _>>()?;
    take_axes(x, &maps).map(Out::Tensor)
}

/// The tensors of an `Arr[Tensor]` argument promoted to one dtype
/// ([`promote`] over all of them) and packed row-major.
fn promoted(op: &str, ts: &[Tensor]) -> Result<(DType, Vec<Tensor>), TensorError> {
    let Some(first) = ts.first() else {
        return fail(op, "needs at least one tensor");
    };
    let dt = ts.iter().fold(first.dtype(), |d, t| promote(d, t.dtype()));
    let pieces = ts
        .iter()
        .map(|t| t.cast(dt).and_then(|c| packed(&c)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((dt, pieces))
}

/// Joins row-major pieces of one dtype along `ax`: for each index of the
/// axes before `ax`, each piece contributes one contiguous block.
fn join(pieces: &[Tensor], ax: usize, shape: Vec<usize>) -> Result<Tensor, TensorError> {
    let Some(first) = pieces.first() else {
        return Tensor::zeros(shape, DType::F64);
    };
    // The storage variant of the first piece fixes the element type.
    dispatch!(in first.storage(), w => join_typed(w.as_slice(), pieces, ax, shape))
}

fn join_typed<T: Element>(
    _: &[T],
    pieces: &[Tensor],
    ax: usize,
    shape: Vec<usize>,
) -> Result<Tensor, TensorError> {
    let total = numel_of(&shape)?;
    // Nothing to copy: the loop below would still count through the outer
    // positions, which an empty axis does not bound ([2^62, 0] stacked).
    if total == 0 {
        return Tensor::from_vec(Vec::<T>::new(), shape);
    }
    let outer: usize = shape[..ax].iter().product();
    let mut slices: Vec<(&[T], usize)> = Vec::with_capacity(pieces.len());
    for p in pieces {
        let block: usize = p.shape()[ax..].iter().product();
        match p.as_slice::<T>() {
            Some(s) => slices.push((s, block)),
            None => return Err(TensorError("internal: joined pieces are not packed".into())),
        }
    }
    let mut out: Vec<T> = try_vec(total).map_err(|e| e.for_tensor(T::DTYPE, &shape))?;
    for o in 0..outer {
        for &(s, block) in &slices {
            out.extend_from_slice(&s[o * block..(o + 1) * block]);
        }
    }
    Tensor::from_vec(out, shape)
}

/// `concat(arr, axis)`: the tensors joined along an existing axis; they
/// must have one rank (at least 1) and agree on every other axis.
pub(super) fn concat(a: &Args) -> Result<Out, TensorError> {
    let ts = a.tensors("arr")?;
    let (_, pieces) = promoted(a.op, ts)?;
    let first = &pieces[0];
    if first.ndim() == 0 {
        return fail(a.op, "cannot concatenate rank-0 tensors (use `stack`)");
    }
    let ax = a.about("axis", axis_of(a.op, a.int("axis")?.unwrap_or(0), first.ndim()))?;
    let mut shape = first.shape().to_vec();
    shape[ax] = 0;
    for p in &pieces {
        let agrees = p.ndim() == first.ndim()
            && p.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(d, (x, y))| d == ax || x == y);
        if !agrees {
            return fail(
                a.op,
                format!(
                    "shapes {} and {} do not agree off axis {ax}",
                    shape_str(first.shape()),
                    shape_str(p.shape())
                ),
            );
        }
        // A size must fit in an Int (shapes are Arr[Int]); a wrapped or
        // saturated sum would be a wrong shape, not an error.
        match shape[ax]
            .checked_add(p.shape()[ax])
            .filter(|&d| i64::try_from(d).is_ok())
        {
            Some(d) => shape[ax] = d,
            None => {
                return fail(
                    a.op,
                    format!(
                        "the result would have {} + {} elements along axis {ax}, more than an Int can count",
                        shape[ax],
                        p.shape()[ax]
                    ),
                )
            }
        }
    }
    join(&pieces, ax, shape).map(Out::Tensor)
}

/// `stack(arr, axis)`: tensors of one shape joined along a new axis.
pub(super) fn stack(a: &Args) -> Result<Out, TensorError> {
    let ts = a.tensors("arr")?;
    let (_, pieces) = promoted(a.op, ts)?;
    let first = &pieces[0];
    for p in &pieces {
        if p.shape() != first.shape() {
            return fail(
                a.op,
                format!(
                    "all tensors must have one shape, not {} and {}",
                    shape_str(first.shape()),
                    shape_str(p.shape())
                ),
            );
        }
    }
    let ax = a.about(
        "axis",
        axis_of(a.op, a.int("axis")?.unwrap_or(0), first.ndim() + 1),
    )?;
    let mut piece_shape = first.shape().to_vec();
    piece_shape.insert(ax, 1);
    let pieces = pieces
        .iter()
        .map(|p| reshaped(p, piece_shape.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut shape = piece_shape;
    shape[ax] = pieces.len();
    join(&pieces, ax, shape).map(Out::Tensor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::call_named;

    /// `gather` along the last axis by the row path (a row-major x) against
    /// the general walk (the same x as a transposed view), for indices in
    /// range, negative ones (which the general path wraps) and an index
    /// narrower than x's rows, on outputs large enough for parallel chunks
    /// that start inside rows; of a float and a one-byte dtype.
    #[test]
    fn gathering_rows_is_the_general_walk() {
        let (r, c, k) = (300usize, 257usize, 131usize);
        let vals: Vec<f64> = (0..r * c).map(|i| (i % 97) as f64 - 48.0).collect();
        let mut next = 7u64;
        let mut rand = move || {
            next ^= next << 13;
            next ^= next >> 7;
            next ^= next << 17;
            next
        };
        for dt in [DType::F32, DType::I8] {
            let x = t(vals.clone(), vec![r, c]).cast(dt).unwrap();
            let xt = t(vals.clone(), vec![r, c])
                .cast(dt)
                .unwrap()
                .reversed_axes()
                .contiguous()
                .unwrap()
                .reversed_axes();
            assert!(!xt.is_contiguous());
            for negative in [false, true] {
                let ids: Vec<i32> = (0..r * k)
                    .map(|_| {
                        let i = (rand() % c as u64) as i32;
                        if negative && i % 3 == 0 {
                            i - c as i32
                        } else {
                            i
                        }
                    })
                    .collect();
                let idx = Tensor::from_vec(ids, vec![r, k]).unwrap();
                let run = |x: &Tensor| match call_named(
                    "gather",
                    vec![Arg::Tensor(x.clone()), Arg::Int(1), Arg::Tensor(idx.clone())],
                ) {
                    Ok(Out::Tensor(t)) => t.scalars().map(|s| s.to_bits()).collect::<Vec<u64>>(),
                    other => panic!("gather: {other:?}"),
                };
                assert!(run(&x) == run(&xt), "{dt}, negative indices {negative}");
                // `index_select` of whole rows (the row copy) against the
                // general path, with repeats and negative positions.
                let rows = Tensor::from_vec(
                    idx.scalars()
                        .take(2 * r)
                        .map(|s| s.to_f64() as i32 % r as i32)
                        .collect::<Vec<i32>>(),
                    vec![2 * r],
                )
                .unwrap();
                let pick = |x: &Tensor| match call_named(
                    "index_select",
                    vec![Arg::Tensor(x.clone()), Arg::Int(0), Arg::Tensor(rows.clone())],
                ) {
                    Ok(Out::Tensor(t)) => (
                        t.shape().to_vec(),
                        t.scalars().map(|s| s.to_bits()).collect::<Vec<u64>>(),
                    ),
                    other => panic!("index_select: {other:?}"),
                };
                assert!(
                    pick(&x) == pick(&xt),
                    "index_select {dt}, negative positions {negative}"
                );
            }
        }
    }

    fn t(v: Vec<f64>, shape: Vec<usize>) -> Tensor {
        Tensor::from_vec(v, shape).expect("valid")
    }

    fn run(op: &str, args: Vec<Arg>) -> Tensor {
        match call_named(op, args) {
            Ok(Out::Tensor(t)) => t,
            other => panic!("{op}: {other:?}"),
        }
    }

    fn vals(t: &Tensor) -> Vec<f64> {
        t.to_f64_vec().expect("f64s")
    }

    #[test]
    fn views_share_storage() {
        let x = t((0..6).map(f64::from).collect(), vec![2, 3]);
        let r = run("reshape", vec![Arg::Tensor(x.clone()), Arg::Ints(vec![3, -1])]);
        assert_eq!(r.shape(), &[3, 2]);
        assert!(std::ptr::eq(r.storage(), x.storage()));
        let f = run("flip", vec![Arg::Tensor(x.clone()), Arg::Int(1)]);
        assert!(std::ptr::eq(f.storage(), x.storage()));
        assert_eq!(vals(&f), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
        let u = run("unsqueeze", vec![Arg::Tensor(x.clone()), Arg::Int(1)]);
        assert_eq!(u.shape(), &[2, 1, 3]);
        assert!(u.is_contiguous());
        // A reshape of a transposed tensor has to copy.
        let tr = run(
            "transpose",
            vec![Arg::Tensor(x.clone()), Arg::Int(0), Arg::Int(1)],
        );
        let flat = run("reshape", vec![Arg::Tensor(tr), Arg::Int(-1)]);
        assert_eq!(vals(&flat), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }

    /// Every operation gives the same result on a strided view (permuted,
    /// flipped, stepped, broadcast) as on a packed copy of it: the kernels
    /// read through strides and offsets correctly.
    #[test]
    fn views_and_copies_agree() {
        use crate::index::IndexItem::{Single, Slice};
        // Values with ties and signed zeros, so sorting is exercised too.
        let base = t(
            (0..120).map(|i| f64::from((i * 37) % 23) - 11.0).collect(),
            vec![4, 5, 6],
        );
        let flipped = run("flip", vec![Arg::Tensor(base.clone()), Arg::Ints(vec![0, 2])]);
        let views = vec![
            base.permuted(&[2, 0, 1]).expect("perm"),
            flipped,
            base.index(&[
                Slice(None, None, Some(2)),
                Slice(Some(4), None, Some(-2)),
                Slice(Some(5), Some(0), Some(-1)),
            ])
            .expect("slice"),
            base.index(&[Single(1)])
                .expect("row")
                .broadcast_view(&[3, 5, 6])
                .expect("bcast"),
        ];
        for v in views {
            assert!(!v.is_contiguous());
            let packed = v.contiguous().expect("copy");
            let sh = v.shape().to_vec();
            let idx = Tensor::from_vec(
                (0..v.numel()).map(|i| (i % sh[2]) as i32).collect::<Vec<i32>>(),
                sh.clone(),
            )
            .expect("idx");
            let cases: Vec<(&str, Vec<Arg>)> = vec![
                ("reshape", vec![Arg::Int(-1)]),
                ("transpose", vec![Arg::Int(0), Arg::Int(2)]),
                ("permute", vec![Arg::Ints(vec![1, 2, 0])]),
                ("flip", vec![Arg::Int(1)]),
                ("roll", vec![Arg::Int(2), Arg::Ints(vec![0, 2])]),
                ("roll", vec![Arg::Int(-7)]),
                ("squeeze", vec![]),
                ("unsqueeze", vec![Arg::Int(1)]),
                (
                    "broadcast_to",
                    vec![Arg::Ints(vec![2, sh[0] as i64, sh[1] as i64, sh[2] as i64])],
                ),
                ("gather", vec![Arg::Int(2), Arg::Tensor(idx)]),
                ("index_select", vec![Arg::Int(1), Arg::Ints(vec![0, -1, 0])]),
                ("sort", vec![Arg::Int(1)]),
                ("argsort", vec![Arg::Int(0), Arg::Bool(true)]),
                ("topk", vec![Arg::Int(2), Arg::Int(2)]),
                ("argtopk", vec![Arg::Int(3), Arg::Int(1)]),
            ];
            for (op, rest) in cases {
                let with = |x: &Tensor| {
                    let mut args = vec![Arg::Tensor(x.clone())];
                    args.extend(rest.iter().cloned());
                    run(op, args)
                };
                let (a, b) = (with(&v), with(&packed));
                assert_eq!(
                    (a.shape(), a.dtype(), vals(&a)),
                    (b.shape(), b.dtype(), vals(&b)),
                    "{op}"
                );
            }
            for op in ["concat", "stack"] {
                let a = run(
                    op,
                    vec![Arg::Tensors(vec![v.clone(), packed.clone()]), Arg::Int(1)],
                );
                let b = run(
                    op,
                    vec![Arg::Tensors(vec![packed.clone(), packed.clone()]), Arg::Int(1)],
                );
                assert_eq!((a.shape(), vals(&a)), (b.shape(), vals(&b)), "{op}");
            }
            let pieces = |x: &Tensor| match call_named(
                "split",
                vec![Arg::Tensor(x.clone()), Arg::Int(2), Arg::Int(2)],
            ) {
                Ok(Out::Tensors(ts)) => ts.iter().map(vals).collect::<Vec<_>>(),
                other => panic!("split: {other:?}"),
            };
            assert_eq!(pieces(&v), pieces(&packed));
        }
    }

    #[test]
    fn roll_and_select_copy_right() {
        let x = t((0..6).map(f64::from).collect(), vec![2, 3]);
        let r = run("roll", vec![Arg::Tensor(x.clone()), Arg::Int(1), Arg::Int(1)]);
        assert_eq!(vals(&r), vec![2.0, 0.0, 1.0, 5.0, 3.0, 4.0]);
        let r = run("roll", vec![Arg::Tensor(x.clone()), Arg::Int(-1)]);
        assert_eq!(vals(&r), vec![1.0, 2.0, 3.0, 4.0, 5.0, 0.0]);
        let i = t(vec![2.0, 0.0], vec![2]);
        let s = run("index_select", vec![Arg::Tensor(x), Arg::Int(1), Arg::Tensor(i)]);
        assert_eq!(vals(&s), vec![2.0, 0.0, 5.0, 3.0]);
    }
}
