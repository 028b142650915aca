//! NumPy indexing (spec §11.1): what a subscript selects from a tensor,
//! for reads and for the writes of assignment (§11.2, in `ops::assign`).
//!
//! A subscript is planned into a [`Selection`] — the basic items (Int,
//! slice, `None`, `...`) applied as a strided layout over the same
//! storage, and, when an integer or bool tensor makes it advanced
//! indexing, the broadcast index tensors folded into one offset per
//! combination, placed where NumPy places their axes (in the advanced
//! items' place when they are adjacent, first otherwise). A basic read is
//! a view; an advanced one gathers a copy. Writes walk the same
//! selection, so a read and a write of one subscript always mean the same
//! elements in the same (row-major) order.

use crate::dtype::DType;
use crate::error::TensorError;
use crate::storage::{try_vec, Element, Storage};
use crate::tensor::{broadcast_shapes, ensure_room, numel_of, shape_str, slice_bounds, Tensor};

/// One item of a subscript.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexItem {
    /// An integer: removes its axis (or, in advanced indexing, counts as a
    /// rank-0 index tensor).
    Single(i64),
    /// A Python slice `start:stop:step`.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// `None`: a new axis of size 1.
    NewAxis,
    /// `...`: as many whole axes as the other items leave.
    Ellipsis,
    /// An integer tensor (i8, i32, or f64 holding integers), or a bool
    /// mask over as many axes as its rank.
    Tensor(Tensor),
}

/// What a subscript selects: the elements at `offset` plus the strided
/// `outer` axes, then the advanced block (its broadcast shape and one
/// offset per combination), then the strided `inner` axes — row-major in
/// that order, which is the order of the result's elements.
pub(crate) struct Selection {
    offset: isize,
    outer: Vec<(usize, isize)>,
    adv: Option<(Vec<usize>, Vec<isize>)>,
    inner: Vec<(usize, isize)>,
}

impl Selection {
    /// The shape of what is selected (the shape of a read's result).
    pub(crate) fn shape(&self) -> Vec<usize> {
        let mut s: Vec<usize> = self.outer.iter().map(|a| a.0).collect();
        if let Some((b, _)) = &self.adv {
            s.extend_from_slice(b);
        }
        s.extend(self.inner.iter().map(|a| a.0));
        s
    }

    /// Whether the selection is basic (a strided view).
    pub(crate) fn is_basic(&self) -> bool {
        self.adv.is_none()
    }

    /// Calls `f` with the storage offset of every selected element, in
    /// row-major order of the selection's shape.
    pub(crate) fn for_each(&self, mut f: impl FnMut(usize)) {
        let inner = &self.inner;
        match &self.adv {
            None => walk(&self.outer, self.offset, |o| f(o as usize)),
            Some((_, boff)) if inner.is_empty() => walk(&self.outer, self.offset, |o| {
                for &b in boff {
                    f((o + b) as usize);
                }
            }),
            Some((_, boff)) => walk(&self.outer, self.offset, |o| {
                for &b in boff {
                    walk(inner, o + b, |p| f(p as usize));
                }
            }),
        }
    }

    /// The storage offsets of every selected element, in order.
    pub(crate) fn offsets(&self) -> Result<Vec<usize>, TensorError> {
        let n = numel_of(&self.shape())?;
        let mut out = try_vec(n).map_err(|e| e.for_tensor(DType::I32, &self.shape()))?;
        self.for_each(|o| out.push(o));
        Ok(out)
    }
}

/// Calls `f` with `base` plus the offset of every position of the strided
/// axes `dims` (size, stride), row-major.
fn walk(dims: &[(usize, isize)], base: isize, mut f: impl FnMut(isize)) {
    if dims.iter().any(|d| d.0 == 0) {
        return;
    }
    let Some((&(last_n, last_s), rest)) = dims.split_last() else {
        f(base);
        return;
    };
    let mut idx = vec![0usize; rest.len()];
    let mut off = base;
    loop {
        let mut o = off;
        for _ in 0..last_n {
            f(o);
            o += last_s;
        }
        // Advance the odometer over the other axes, the last fastest.
        let mut a = rest.len();
        loop {
            if a == 0 {
                return;
            }
            a -= 1;
            idx[a] += 1;
            off += rest[a].1;
            if idx[a] < rest[a].0 {
                break;
            }
            off -= rest[a].1 * rest[a].0 as isize;
            idx[a] = 0;
        }
    }
}

/// Row-major strides of a shape, in elements.
fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (st, &d) in s.iter_mut().zip(shape).rev() {
        *st = acc;
        acc = acc.saturating_mul(d as isize);
    }
    s
}

/// One advanced index: its shape, its values (normalised, in range) and
/// the position of its axis among the view's axes.
struct Adv {
    shape: Vec<usize>,
    values: Vec<usize>,
    pos: usize,
}

fn out_of_range(i: i64, axis: usize, n: usize, shape: &[usize]) -> TensorError {
    TensorError(format!(
        "index {i} is out of range for axis {axis} of size {n} (shape {})",
        shape_str(shape)
    ))
}

fn normalise(i: i64, axis: usize, n: usize, shape: &[usize]) -> Result<usize, TensorError> {
    let j = if i < 0 { i.checked_add(n as i64) } else { Some(i) };
    match j {
        Some(j) if j >= 0 && (j as u64) < n as u64 => Ok(j as usize),
        _ => Err(out_of_range(i, axis, n, shape)),
    }
}

/// The values of an integer index tensor, normalised against an axis of
/// size `n`.
fn int_index(t: &Tensor, axis: usize, n: usize, shape: &[usize]) -> Result<Vec<usize>, TensorError> {
    let len = t.numel();
    let mut out = try_vec(len).map_err(|e| e.for_tensor(DType::I32, t.shape()))?;
    let mut push = |i: i64| -> Result<(), TensorError> {
        out.push(normalise(i, axis, n, shape)?);
        Ok(())
    };
    let f64_index = |x: f64| -> Result<i64, TensorError> {
        if x.fract() != 0.0 || !x.is_finite() || x.abs() > 9.007_199_254_740_992e15 {
            return Err(TensorError(format!(
                "an index tensor holds {x}, which is not an integer"
            )));
        }
        Ok(x as i64)
    };
    // A packed index tensor is read straight through; a view by offsets.
    match (t.storage(), t.is_contiguous()) {
        (Storage::I32(v), true) => v.iter().try_for_each(|&i| push(i64::from(i)))?,
        (Storage::F64(v), true) => v.iter().try_for_each(|&x| push(f64_index(x)?))?,
        (Storage::I8(v), _) => t.offsets().try_for_each(|o| push(i64::from(v[o])))?,
        (Storage::I32(v), false) => t.offsets().try_for_each(|o| push(i64::from(v[o])))?,
        (Storage::F64(v), false) => t.offsets().try_for_each(|o| push(f64_index(v[o])?))?,
        (Storage::Bool(_) | Storage::Bf16(_) | Storage::F16(_) | Storage::F32(_), _) => {
            return Err(TensorError(format!(
                "an index tensor must be i8, i32 or f64 holding integers (or a bool mask), not {}",
                t.dtype()
            )))
        }
    }
    Ok(out)
}

/// The coordinates of a mask's true elements, one vector per mask axis,
/// in row-major order of the mask.
fn mask_coords(m: &Tensor) -> Result<Vec<Vec<usize>>, TensorError> {
    let Storage::Bool(v) = m.storage() else {
        return Err(TensorError("a mask must be a bool tensor".into()));
    };
    if let (1, Some(flat)) = (m.ndim(), m.as_slice::<bool>()) {
        // One packed axis: the coordinates are the positions.
        let count = flat.iter().filter(|&&b| b).count();
        let mut c = try_vec(count).map_err(|e| e.for_tensor(DType::I32, &[count]))?;
        c.extend(flat.iter().enumerate().filter(|(_, &b)| b).map(|(i, _)| i));
        return Ok(vec![c]);
    }
    let count = m.offsets().filter(|&o| v[o]).count();
    let k = m.ndim();
    let mut coords = Vec::with_capacity(k);
    for _ in 0..k {
        coords.push(try_vec(count).map_err(|e| e.for_tensor(DType::I32, &[count]))?);
    }
    let mut pos = vec![0usize; k];
    for o in m.offsets() {
        if v[o] {
            for (c, &p) in coords.iter_mut().zip(&pos) {
                c.push(p);
            }
        }
        for a in (0..k).rev() {
            pos[a] += 1;
            if pos[a] < m.shape()[a] {
                break;
            }
            pos[a] = 0;
        }
    }
    Ok(coords)
}

/// Plans subscript `items` over a tensor of `shape` laid out with
/// `strides` from `offset` (spec §11.1), checking every index.
pub(crate) fn plan(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    items: &[IndexItem],
) -> Result<Selection, TensorError> {
    let ndim = shape.len();
    let ellipses = items.iter().filter(|i| matches!(i, IndexItem::Ellipsis)).count();
    if ellipses > 1 {
        return Err(TensorError("a subscript can have only one `...`".into()));
    }
    let mut consumed = 0usize;
    let mut advanced = false;
    for it in items {
        match it {
            IndexItem::Single(_) | IndexItem::Slice(..) => consumed += 1,
            IndexItem::NewAxis | IndexItem::Ellipsis => {}
            IndexItem::Tensor(t) => {
                advanced = true;
                if t.dtype() == DType::Bool {
                    if t.ndim() == 0 {
                        return Err(TensorError(
                            "a rank-0 bool tensor is not a mask: index with a bool tensor of the indexed axes' shape".into(),
                        ));
                    }
                    consumed += t.ndim();
                } else {
                    consumed += 1;
                }
            }
        }
    }
    if consumed > ndim {
        return Err(TensorError(format!(
            "too many indices: {consumed} for a tensor of rank {ndim} (shape {})",
            shape_str(shape)
        )));
    }
    let mut off = offset as isize;
    let mut layout: Vec<(usize, isize)> = Vec::with_capacity(ndim + items.len());
    let mut advs: Vec<Adv> = Vec::new();
    let mut axis = 0usize;
    for it in items {
        match it {
            IndexItem::Ellipsis => {
                for _ in 0..ndim - consumed {
                    layout.push((shape[axis], strides[axis]));
                    axis += 1;
                }
            }
            IndexItem::NewAxis => layout.push((1, 0)),
            IndexItem::Single(i) => {
                let j = normalise(*i, axis, shape[axis], shape)?;
                if advanced {
                    advs.push(Adv {
                        shape: Vec::new(),
                        values: vec![j],
                        pos: layout.len(),
                    });
                    layout.push((shape[axis], strides[axis]));
                } else {
                    off += j as isize * strides[axis];
                }
                axis += 1;
            }
            IndexItem::Slice(start, stop, step) => {
                let (dim, stride) = (shape[axis], strides[axis]);
                let (first, len, step) = slice_bounds(*start, *stop, *step, dim as i64)?;
                off += first as isize * stride;
                // With at most one element the stride is never used, and
                // a huge step times it need not fit.
                let new_stride = if len <= 1 {
                    Some(stride)
                } else {
                    isize::try_from(step).ok().and_then(|s| stride.checked_mul(s))
                };
                let Some(s) = new_stride else {
                    return Err(TensorError(format!(
                        "slice step {step} is too large for axis {axis} (shape {})",
                        shape_str(shape)
                    )));
                };
                layout.push((len as usize, s));
                axis += 1;
            }
            IndexItem::Tensor(t) if t.dtype() == DType::Bool => {
                let k = t.ndim();
                let want = &shape[axis..axis + k];
                if t.shape() != want {
                    let axes = if k == 1 {
                        format!("axis {axis} of shape {}, of size {}", shape_str(shape), want[0])
                    } else {
                        format!(
                            "axes {axis} to {} of shape {}, of sizes {}",
                            axis + k - 1,
                            shape_str(shape),
                            shape_str(want)
                        )
                    };
                    return Err(TensorError(format!(
                        "a mask of shape {} does not match {axes}",
                        shape_str(t.shape())
                    )));
                }
                for c in mask_coords(t)? {
                    advs.push(Adv {
                        shape: vec![c.len()],
                        values: c,
                        pos: layout.len(),
                    });
                    layout.push((shape[axis], strides[axis]));
                    axis += 1;
                }
            }
            IndexItem::Tensor(t) => {
                let values = int_index(t, axis, shape[axis], shape)?;
                advs.push(Adv {
                    shape: t.shape().to_vec(),
                    values,
                    pos: layout.len(),
                });
                layout.push((shape[axis], strides[axis]));
                axis += 1;
            }
        }
    }
    while axis < ndim {
        layout.push((shape[axis], strides[axis]));
        axis += 1;
    }
    if advs.is_empty() {
        return Ok(Selection {
            offset: off,
            outer: layout,
            adv: None,
            inner: Vec::new(),
        });
    }
    let mut bshape: Vec<usize> = Vec::new();
    for a in &advs {
        bshape = broadcast_shapes(&bshape, &a.shape).map_err(|_| {
            let shapes: Vec<String> = advs.iter().map(|a| shape_str(&a.shape)).collect();
            TensorError(format!(
                "the index tensors' shapes {} cannot be broadcast together",
                shapes.join(", ")
            ))
        })?;
    }
    let nb = numel_of(&bshape)?;
    let mut boff: Vec<isize> = try_vec(nb).map_err(|e| e.for_tensor(DType::I32, &bshape))?;
    boff.resize(nb, 0);
    for a in &advs {
        let stride = layout[a.pos].1;
        if a.shape == bshape {
            // Not broadcast: its values are in the broadcast order already.
            for (b, &v) in boff.iter_mut().zip(&a.values) {
                *b += v as isize * stride;
            }
            continue;
        }
        // The index's own row-major strides, 0 along the axes it is
        // broadcast over, so walking the broadcast shape reads its values.
        let own = row_major(&a.shape);
        let lead = bshape.len() - a.shape.len();
        let dims: Vec<(usize, isize)> = bshape
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                let s = if i < lead || a.shape[i - lead] == 1 {
                    0
                } else {
                    own[i - lead]
                };
                (d, s)
            })
            .collect();
        let mut k = 0usize;
        walk(&dims, 0, |src| {
            if let (Some(b), Some(&v)) = (boff.get_mut(k), a.values.get(src as usize)) {
                *b += v as isize * stride;
            }
            k += 1;
        });
    }
    let positions: Vec<usize> = advs.iter().map(|a| a.pos).collect();
    let adjacent = positions.windows(2).all(|w| w[1] == w[0] + 1);
    let first = positions[0];
    let rest = |range: std::ops::Range<usize>| -> Vec<(usize, isize)> {
        range
            .filter(|p| !positions.contains(p))
            .map(|p| layout[p])
            .collect()
    };
    let (outer, inner) = if adjacent {
        (rest(0..first), rest(first..layout.len()))
    } else {
        (Vec::new(), rest(0..layout.len()))
    };
    Ok(Selection {
        offset: off,
        outer,
        adv: Some((bshape, boff)),
        inner,
    })
}

impl Tensor {
    /// `self[items]` (spec §11.1): a view for a basic subscript, a copy
    /// for an advanced one.
    pub fn index(&self, items: &[IndexItem]) -> Result<Tensor, TensorError> {
        let sel = plan(self.shape(), self.strides(), self.offset(), items)?;
        if sel.is_basic() {
            let shape = sel.shape();
            let strides = sel.outer.iter().map(|a| a.1).collect();
            return self.with_layout(shape, strides, sel.offset.max(0) as usize);
        }
        let shape = sel.shape();
        let n = ensure_room(self.dtype(), &shape)?;
        let oom = |e: crate::error::AllocError| TensorError::from(e.for_tensor(self.dtype(), &shape));
        let data = crate::dispatch!(in self.storage(), v => {
            let mut out = try_vec(n).map_err(oom)?;
            sel.for_each(|o| out.push(v[o]));
            Element::into_storage(out)
        });
        Tensor::from_storage(data, shape)
    }

    /// Writes `values` (of this tensor's dtype, broadcast to the selected
    /// shape) into the elements `items` selects, in order, so with a
    /// repeated index the last write wins. In place when the storage is
    /// this tensor's alone; otherwise on a fresh copy first.
    pub fn set_index(&mut self, items: &[IndexItem], values: &Tensor) -> Result<(), TensorError> {
        if values.dtype() != self.dtype() {
            return Err(TensorError(format!(
                "internal error: writing {} values into a {} tensor (a bug in twill)",
                values.dtype(),
                self.dtype()
            )));
        }
        let sel = self.plan_owned(items)?;
        let values = fit_to(values, &sel.shape())?;
        let src = values.offsets();
        let Some(dst) = self.owned_storage() else {
            return Err(TensorError(
                "internal error: storage not owned after copying (a bug in twill)".into(),
            ));
        };
        // The value's elements in order: one repeated (a broadcast scalar),
        // a packed run, or through its strides.
        let single = values.strides().iter().all(|&st| st == 0);
        let packed = values.is_contiguous();
        crate::dispatch!(in dst, d => {
            match Element::slice(values.storage()) {
                Some(s) if single => {
                    if let Some(&c) = s.get(values.offset()) {
                        sel.for_each(|o| d[o] = c);
                    }
                }
                Some(s) if packed => {
                    let mut k = 0;
                    sel.for_each(|o| {
                        if let Some(&c) = s.get(k) {
                            d[o] = c;
                        }
                        k += 1;
                    });
                }
                Some(s) => {
                    let mut src = src;
                    sel.for_each(|o| {
                        if let Some(k) = src.next() {
                            d[o] = s[k];
                        }
                    });
                }
                None => return Err(TensorError("internal error: dtype mismatch (a bug in twill)".into())),
            }
        });
        Ok(())
    }
}

impl Tensor {
    /// Plans `items` for a write: checks every index first (so nothing is
    /// copied for a subscript that fails), makes the storage this tensor's
    /// own, and plans over the layout the write will see.
    fn plan_owned(&mut self, items: &[IndexItem]) -> Result<Selection, TensorError> {
        let sel = plan(self.shape(), self.strides(), self.offset(), items)?;
        if self.is_owned() {
            return Ok(sel);
        }
        self.make_owned()?;
        plan(self.shape(), self.strides(), self.offset(), items)
    }

    /// Adds `values` (of this tensor's dtype, which must be its own
    /// accumulation dtype: i32, f32 or f64) into the elements `items`
    /// selects, one occurrence after another in order, each step rounded
    /// in that dtype — so a repeated element gets every occurrence. In
    /// place when the storage is this tensor's alone.
    pub fn add_index(&mut self, items: &[IndexItem], values: &Tensor) -> Result<(), TensorError> {
        let sel = self.plan_owned(items)?;
        let shape = sel.shape();
        if values.ndim() > shape.len() {
            // As `x[s] = x[s] + v`, whose result would have more axes.
            return Err(TensorError(format!(
                "a value of shape {} cannot be assigned to a selection of shape {}",
                shape_str(values.shape()),
                shape_str(&shape)
            )));
        }
        let values = fit_to(values, &shape)?.contiguous()?;
        let bug =
            || TensorError("internal error: add_index on a dtype it does not take (a bug in twill)".into());
        let Some(dst) = self.owned_storage() else {
            return Err(bug());
        };
        match (dst, values.storage()) {
            (Storage::I32(d), Storage::I32(v)) => add_each(d, &sel, v),
            (Storage::F32(d), Storage::F32(v)) => add_each(d, &sel, v),
            (Storage::F64(d), Storage::F64(v)) => add_each(d, &sel, v),
            _ => return Err(bug()),
        }
        Ok(())
    }
}

fn add_each<A: crate::storage::Accumulate>(d: &mut [A], sel: &Selection, v: &[A]) {
    let mut k = 0;
    sel.for_each(|o| {
        if let (Some(t), Some(&a)) = (d.get_mut(o), v.get(k)) {
            *t = t.add(a);
        }
        k += 1;
    });
}

/// `v` as a view broadcast to the selected shape `shape` (NumPy also lets
/// a value have extra leading axes of size 1).
pub(crate) fn fit_to(v: &Tensor, shape: &[usize]) -> Result<Tensor, TensorError> {
    let mut v = v.clone();
    while v.ndim() > shape.len() && v.shape().first() == Some(&1) {
        v = v.with_layout(v.shape()[1..].to_vec(), v.strides()[1..].to_vec(), v.offset())?;
    }
    v.broadcast_view(shape).map_err(|_| {
        TensorError(format!(
            "a value of shape {} cannot be assigned to a selection of shape {}",
            shape_str(v.shape()),
            shape_str(shape)
        ))
    })
}

/// For each element `items` selects from a tensor of `shape`, whether it
/// is the last write to its element — `None` when no element is selected
/// twice. Positions are the tensor's logical ones, whatever its layout.
pub fn last_writes(shape: &[usize], items: &[IndexItem]) -> Result<Option<Vec<bool>>, TensorError> {
    let sel = plan(shape, &row_major(shape), 0, items)?;
    if sel.is_basic() {
        return Ok(None);
    }
    let offs = sel.offsets()?;
    let n = offs.len();
    let mut order: Vec<usize> = try_vec(n).map_err(|e| e.for_tensor(DType::I32, &[n]))?;
    order.extend(0..n);
    order.sort_by_key(|&k| (offs[k], k));
    if order.windows(2).all(|w| offs[w[0]] != offs[w[1]]) {
        return Ok(None);
    }
    let mut last = vec![false; n];
    for (i, &k) in order.iter().enumerate() {
        if order.get(i + 1).is_none_or(|&next| offs[next] != offs[k]) {
            last[k] = true;
        }
    }
    Ok(Some(last))
}

/// The logical (row-major) offsets, in a tensor of `shape`, of every
/// element `items` selects, in order.
pub(crate) fn plan_offsets(shape: &[usize], items: &[IndexItem]) -> Result<Vec<usize>, TensorError> {
    plan(shape, &row_major(shape), 0, items)?.offsets()
}

/// The first element `items` selects twice from a tensor of `shape`, as
/// its coordinates.
pub fn first_repeat(shape: &[usize], items: &[IndexItem]) -> Result<Option<Vec<usize>>, TensorError> {
    let sel = plan(shape, &row_major(shape), 0, items)?;
    if sel.is_basic() {
        return Ok(None);
    }
    let mut seen = std::collections::HashSet::new();
    let mut found = None;
    sel.for_each(|o| {
        if found.is_none() && !seen.insert(o) {
            found = Some(o);
        }
    });
    Ok(found.map(|mut o| {
        let mut c = vec![0; shape.len()];
        for (a, &d) in shape.iter().enumerate().rev() {
            if d > 0 {
                c[a] = o % d;
                o /= d;
            }
        }
        c
    }))
}
