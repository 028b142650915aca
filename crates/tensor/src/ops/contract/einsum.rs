//! `einsum(spec, a, …)`: NumPy's subscript language, with twill's fixed
//! order of accumulation.
//!
//! The spec is `"ij,jk->ik"` (explicit output) or `"ij,jk"` (implicit:
//! the output is the axes under `...`, then every letter that occurs
//! exactly once, in ASCII order, so upper case before lower case). Letters
//! `a-z`, `A-Z` name axes; spaces are ignored; one `...` per term stands for
//! the axes not named, which broadcast across operands as in NumPy. A letter
//! repeated within one operand takes that operand's diagonal; a letter that
//! is not in the output is summed over. Sizes of one letter in different
//! operands must agree, except that 1 broadcasts (NumPy's rule).
//!
//! Order of accumulation (spec §5.4, made precise for several operands):
//! the summed letters, ordered by their first occurrence in the spec read
//! left to right, are visited in row-major order of that list (the last
//! one fastest), starting from +0. For each visited index, the term of
//! operands v₁ … vₙ (in operand order, each widened exactly to the
//! accumulation type) is added as follows:
//!   * one operand: `acc = acc + v₁`, rounded;
//!   * two or more: `p = v₁ · v₂ ⋯ vₙ₋₁` left to right, each product
//!     rounded to the accumulation type, then `acc ⊕ p·vₙ`, the step of
//!     `Accumulate::mul_add` (a fused multiply-add in f32, a rounded
//!     product then a rounded add in f64, wrapping in i32).
//!
//! With two operands that is exactly the matmul step, and with three bf16 or
//! f16 operands every product is still exact. The result is rounded once
//! to the result dtype. A two-operand spec with no diagonal and no letter
//! summed within one operand alone is computed by `gemm` (the operands'
//! axes regrouped as batch, rows, contracted and columns, the contracted
//! letters in the order above — so the bits are the same); everything else
//! runs the reference loop below, in parallel over output elements.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::operand::{dtypes, product, promoted, FromStorage, Mat, Visit};
use crate::dispatch;
use crate::dtype::DType;
use crate::storage::Element;
use crate::tensor::{shape_str, Tensor, TensorError};

/// An axis name: a letter, or the i-th (from the left) of the broadcast
/// axes that `...` stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Label {
    Letter(u8),
    Ell(usize),
}

/// One term of the spec as written.
#[derive(Clone, Debug, PartialEq)]
enum Item {
    Letter(u8),
    Ellipsis,
}

fn fail<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(format!("`einsum`: {msg}")))
}

/// The input terms of a spec, and its output term when it has `->`.
type Terms = (Vec<Vec<Item>>, Option<Vec<Item>>);

/// Splits the spec into its input terms and, when it has `->`, the output
/// term.
fn parse(spec: &str) -> Result<Terms, TensorError> {
    let compact: String = spec.chars().filter(|c| *c != ' ').collect();
    let (inputs, output) = match compact.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (compact.as_str(), None),
    };
    let term = |t: &str, what: &str| -> Result<Vec<Item>, TensorError> {
        let mut items = Vec::new();
        let mut rest = t;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("...") {
                if items.contains(&Item::Ellipsis) {
                    return fail(format!("{what} '{t}' has more than one '...'"));
                }
                items.push(Item::Ellipsis);
                rest = &rest[3..];
            } else if c.is_ascii_alphabetic() {
                items.push(Item::Letter(c as u8));
                rest = &rest[1..];
            } else if c == '.' {
                return fail(format!("{what} '{t}' has a '.' that is not part of a '...'"));
            } else {
                return fail(format!(
                    "invalid subscript '{c}' in '{spec}': subscripts are letters, ',', '...' and '->'"
                ));
            }
        }
        Ok(items)
    };
    let mut terms = Vec::new();
    for (i, t) in inputs.split(',').enumerate() {
        terms.push(term(t, &format!("operand {i}'s subscripts"))?);
    }
    let out = match output {
        Some(o) => {
            if o.contains(',') {
                return fail(format!("the output subscripts '{o}' cannot contain ','"));
            }
            Some(term(o, "the output subscripts")?)
        }
        None => None,
    };
    Ok((terms, out))
}

/// The spec resolved against the operands' shapes.
struct Plan {
    /// Each operand's axes, as labels.
    axes: Vec<Vec<Label>>,
    /// Size of every label.
    sizes: BTreeMap<Label, usize>,
    out: Vec<Label>,
    /// The summed labels, in order of first occurrence.
    summed: Vec<Label>,
}

impl Plan {
    fn size(&self, l: Label) -> usize {
        self.sizes.get(&l).copied().unwrap_or(1)
    }

    /// Operand `o`'s storage stride for label `l`: the sum over its axes so
    /// labelled (a diagonal when repeated), 0 for an axis of size 1 that
    /// broadcasts, and 0 when the operand lacks the label.
    fn stride(&self, o: usize, t: &Tensor, l: Label) -> isize {
        let full = self.size(l);
        self.axes[o]
            .iter()
            .zip(t.shape().iter().zip(t.strides()))
            .filter(|(a, (&d, _))| **a == l && d == full)
            .map(|(_, (_, &s))| s)
            .sum()
    }
}

fn label_name(l: Label) -> String {
    match l {
        Label::Letter(c) => format!("'{}'", c as char),
        Label::Ell(_) => "'...'".into(),
    }
}

fn plan(spec: &str, ops: &[&Tensor]) -> Result<Plan, TensorError> {
    let (terms, output) = parse(spec)?;
    if terms.len() != ops.len() {
        return fail(format!(
            "'{spec}' has subscripts for {} operand(s) but {} tensor(s) were given",
            terms.len(),
            ops.len()
        ));
    }
    // How many axes each '...' covers; they broadcast right-aligned.
    let mut ell_counts = Vec::with_capacity(ops.len());
    for (i, (term, t)) in terms.iter().zip(ops).enumerate() {
        let letters = term.iter().filter(|x| **x != Item::Ellipsis).count();
        let has_ell = term.contains(&Item::Ellipsis);
        if t.ndim() < letters || (!has_ell && t.ndim() != letters) {
            return fail(format!(
                "operand {i} has shape {} ({} axes) but its subscripts name {letters}{}",
                shape_str(t.shape()),
                t.ndim(),
                if has_ell { " plus '...'" } else { "" }
            ));
        }
        ell_counts.push(t.ndim() - letters);
    }
    let n_ell = ell_counts.iter().copied().max().unwrap_or(0);
    let mut axes = Vec::with_capacity(ops.len());
    for (term, &ne) in terms.iter().zip(&ell_counts) {
        let mut labels = Vec::new();
        for item in term {
            match item {
                Item::Letter(c) => labels.push(Label::Letter(*c)),
                Item::Ellipsis => labels.extend((n_ell - ne..n_ell).map(Label::Ell)),
            }
        }
        axes.push(labels);
    }
    // Sizes: equal within an operand (a diagonal), equal or 1 across.
    let mut sizes: BTreeMap<Label, usize> = BTreeMap::new();
    for (i, (labels, t)) in axes.iter().zip(ops).enumerate() {
        let mut own: BTreeMap<Label, usize> = BTreeMap::new();
        for (&l, &d) in labels.iter().zip(t.shape()) {
            if let Some(&prev) = own.get(&l) {
                if prev != d {
                    return fail(format!(
                        "subscript {} is repeated in operand {i} (shape {}) over axes of sizes {prev} and {d}",
                        label_name(l),
                        shape_str(t.shape())
                    ));
                }
            }
            own.insert(l, d);
        }
        for (l, d) in own {
            match sizes.get(&l).copied() {
                None => {
                    sizes.insert(l, d);
                }
                Some(s) if s == d || d == 1 => {}
                Some(1) => {
                    sizes.insert(l, d);
                }
                Some(s) => {
                    let shapes: Vec<String> = ops.iter().map(|t| shape_str(t.shape())).collect();
                    return fail(format!(
                        "subscript {} has sizes {s} and {d}, which do not broadcast (operand shapes {})",
                        label_name(l),
                        shapes.join(", ")
                    ));
                }
            }
        }
    }
    let out: Vec<Label> = match output {
        Some(items) => {
            let mut out = Vec::new();
            for item in &items {
                match item {
                    Item::Letter(c) => {
                        let l = Label::Letter(*c);
                        if out.contains(&l) {
                            return fail(format!("the output subscripts repeat '{}'", *c as char));
                        }
                        if !sizes.contains_key(&l) {
                            return fail(format!(
                                "the output subscript '{}' does not occur in any operand",
                                *c as char
                            ));
                        }
                        out.push(l);
                    }
                    Item::Ellipsis => out.extend((0..n_ell).map(Label::Ell)),
                }
            }
            if n_ell > 0 && !items.contains(&Item::Ellipsis) {
                return fail(format!(
                    "'{spec}': the operands have axes under '...' but the output has no '...' to keep them"
                ));
            }
            out
        }
        None => {
            let mut counts: BTreeMap<u8, usize> = BTreeMap::new();
            for l in axes.iter().flatten() {
                if let Label::Letter(c) = l {
                    *counts.entry(*c).or_default() += 1;
                }
            }
            // BTreeMap order is byte order: ASCII, upper case first.
            (0..n_ell)
                .map(Label::Ell)
                .chain(
                    counts
                        .into_iter()
                        .filter(|&(_, n)| n == 1)
                        .map(|(c, _)| Label::Letter(c)),
                )
                .collect()
        }
    };
    let mut summed = Vec::new();
    for &l in axes.iter().flatten() {
        if !out.contains(&l) && !summed.contains(&l) {
            summed.push(l);
        }
    }
    Ok(Plan {
        axes,
        sizes,
        out,
        summed,
    })
}

pub(crate) fn einsum(spec: &str, operands: &[&Tensor]) -> Result<Tensor, TensorError> {
    let plan = plan(spec, operands)?;
    let (d, r) = dtypes(&operands.iter().map(|t| t.dtype()).collect::<Vec<_>>());
    let ops: Vec<Tensor> = operands
        .iter()
        .map(|t| promoted(t, d))
        .collect::<Result<_, _>>()?;
    let shape: Vec<usize> = plan.out.iter().map(|&l| plan.size(l)).collect();
    let terms: usize = plan.summed.iter().map(|&l| plan.size(l)).product();
    if shape.contains(&0) || terms == 0 {
        // No elements, or every element an empty sum: +0.
        return Tensor::zeros(shape, r);
    }
    if let Some(t) = via_gemm(&plan, &ops, d, r)? {
        return Ok(t);
    }
    dispatch!(d, T => reference::<<T as Element>::Acc>(&plan, &ops, shape, r))
}

/// Merges axes (size, stride) into one when they are laid out like a
/// row-major block; `None` when they are not.
fn merge(dims: &[(usize, isize)]) -> Option<(usize, isize)> {
    let kept: Vec<(usize, isize)> = dims.iter().copied().filter(|&(d, _)| d != 1).collect();
    let size = dims.iter().map(|&(d, _)| d).product();
    for w in kept.windows(2) {
        if w[0].1 != w[1].1 * w[1].0 as isize {
            return None;
        }
    }
    Some((size, kept.last().map_or(1, |&(_, s)| s)))
}

/// The operand as a batch of matrices: axes regrouped as `batch`, `rows`
/// (merged), `cols` (merged); copied into row-major order when the rows or
/// columns cannot be merged in place.
fn as_matrices(
    plan: &Plan,
    o: usize,
    t: &Tensor,
    batch: &[Label],
    rows: &[Label],
    cols: &[Label],
) -> Result<Tensor, TensorError> {
    let all: Vec<Label> = batch.iter().chain(rows).chain(cols).copied().collect();
    let shape: Vec<usize> = all.iter().map(|&l| plan.size(l)).collect();
    let strides: Vec<isize> = all.iter().map(|&l| plan.stride(o, t, l)).collect();
    let view = t.with_layout(shape.clone(), strides.clone(), t.offset())?;
    let nb = batch.len();
    let dims: Vec<(usize, isize)> = shape.iter().copied().zip(strides.iter().copied()).collect();
    let (rs, cs) = (&dims[nb..nb + rows.len()], &dims[nb + rows.len()..]);
    let (view, dims) = match (merge(rs), merge(cs)) {
        (Some(r), Some(c)) => (view, vec![r, c]),
        _ => {
            let v = view.contiguous()?;
            let c: usize = cs.iter().map(|&(d, _)| d).product();
            let r: usize = rs.iter().map(|&(d, _)| d).product();
            let dims = vec![(r, c as isize), (c, 1)];
            (v, dims)
        }
    };
    let mut shape: Vec<usize> = view.shape()[..nb].to_vec();
    let mut strides: Vec<isize> = view.strides()[..nb].to_vec();
    for (d, s) in dims {
        shape.push(d);
        strides.push(s);
    }
    view.with_layout(shape, strides, view.offset())
}

/// A two-operand spec without diagonals, whose every summed letter is in
/// both operands, as one batched matrix product; `None` otherwise.
fn via_gemm(plan: &Plan, ops: &[Tensor], d: DType, r: DType) -> Result<Option<Tensor>, TensorError> {
    let [a, b] = ops else { return Ok(None) };
    let (la, lb) = (&plan.axes[0], &plan.axes[1]);
    let distinct = |ls: &[Label]| ls.iter().enumerate().all(|(i, l)| !ls[..i].contains(l));
    if !distinct(la) || !distinct(lb) || plan.summed.iter().any(|l| !la.contains(l) || !lb.contains(l)) {
        return Ok(None);
    }
    let batch: Vec<Label> = plan
        .out
        .iter()
        .copied()
        .filter(|l| la.contains(l) && lb.contains(l))
        .collect();
    let rows: Vec<Label> = plan
        .out
        .iter()
        .copied()
        .filter(|l| la.contains(l) && !lb.contains(l))
        .collect();
    let cols: Vec<Label> = plan
        .out
        .iter()
        .copied()
        .filter(|l| !la.contains(l) && lb.contains(l))
        .collect();
    if rows.is_empty() && cols.is_empty() {
        // Each product of the batch would be one dot product (or one
        // multiply): the reference loop costs less than setting up a
        // blocked product per output element.
        return Ok(None);
    }
    let ma = as_matrices(plan, 0, a, &batch, &rows, &plan.summed)?;
    let mb = as_matrices(plan, 1, b, &batch, &plan.summed, &cols)?;
    let natural: Vec<Label> = batch.iter().chain(&rows).chain(&cols).copied().collect();
    let shape: Vec<usize> = natural.iter().map(|&l| plan.size(l)).collect();
    let nb = batch.len();
    let (ma, mb) = (Mat { t: &ma, nb }, Mat { t: &mb, nb });
    let t = dispatch!(d, T => product::<<T as Element>::Acc>(&ma, &mb, shape, r))?;
    let perm: Vec<usize> = plan
        .out
        .iter()
        .map(|l| natural.iter().position(|n| n == l).unwrap_or(0))
        .collect();
    Ok(Some(t.permuted(&perm)?.contiguous()?))
}

/// The reference loop of the module documentation, in parallel over
/// output elements (each computed by one task, so any thread count gives
/// the same bits).
fn reference<C: FromStorage>(
    plan: &Plan,
    ops: &[Tensor],
    shape: Vec<usize>,
    r: DType,
) -> Result<Tensor, TensorError> {
    let first = ops
        .first()
        .ok_or_else(|| TensorError("`einsum` needs at least one operand".into()))?;
    let acc = C::visit(first.storage(), Reference { plan, ops })??;
    C::finish(acc, shape, r)
}

struct Reference<'p> {
    plan: &'p Plan,
    ops: &'p [Tensor],
}

impl<'a, C: FromStorage> Visit<'a, C> for Reference<'_> {
    type Out = Result<Vec<C>, TensorError>;
    fn visit<T: Element<Acc = C>>(self, _first: &'a [T]) -> Self::Out {
        let (plan, ops) = (self.plan, self.ops);
        // Every operand has the promoted dtype, so the same element type.
        let data: Vec<&[T]> = ops
            .iter()
            .map(|t| T::slice(t.storage()))
            .collect::<Option<_>>()
            .ok_or_else(|| TensorError("internal error: einsum operands of mixed dtypes".into()))?;
        let out_sizes: Vec<usize> = plan.out.iter().map(|&l| plan.size(l)).collect();
        let sum_sizes: Vec<usize> = plan.summed.iter().map(|&l| plan.size(l)).collect();
        let out_strides: Vec<Vec<isize>> = ops
            .iter()
            .enumerate()
            .map(|(o, t)| plan.out.iter().map(|&l| plan.stride(o, t, l)).collect())
            .collect();
        let sum_strides: Vec<Vec<isize>> = ops
            .iter()
            .enumerate()
            .map(|(o, t)| plan.summed.iter().map(|&l| plan.stride(o, t, l)).collect())
            .collect();
        let bases: Vec<isize> = ops.iter().map(|t| t.offset() as isize).collect();
        let total: usize = out_sizes.iter().product();
        let terms: usize = sum_sizes.iter().product();
        let mut out = C::zeros(total)?;
        let chunk = (total / (8 * rayon::current_num_threads())).clamp(1, 4096);
        let n = ops.len();
        // Small contractions stay on the calling thread (one chunk).
        let chunk = if total.saturating_mul(terms.max(1)) < 1 << 16 {
            total.max(1)
        } else {
            chunk
        };
        let run_chunk = |(ci, dst): (usize, &mut [C])| {
            let mut vals: Vec<C> = vec![C::ZERO; n];
            // The chunk's first output element and its operand offsets.
            let mut out_pos = Odometer::at(&out_sizes, ci * chunk);
            let mut offs = bases.clone();
            for (ax, &i) in out_pos.idx.iter().enumerate() {
                for (off, st) in offs.iter_mut().zip(&out_strides) {
                    *off += i as isize * st[ax];
                }
            }
            let mut sum_pos = Odometer::at(&sum_sizes, 0);
            for slot in dst.iter_mut() {
                let mut acc = C::ZERO;
                for _ in 0..terms {
                    for ((v, off), d) in vals.iter_mut().zip(&offs).zip(&data) {
                        *v = d[*off as usize].widen();
                    }
                    acc = match vals.split_last() {
                        Some((&last, [])) => C::add(acc, last),
                        Some((&last, [head, mid @ ..])) => {
                            let p = mid.iter().fold(*head, |p, &v| C::mul(p, v));
                            C::mul_add(acc, p, last)
                        }
                        None => acc,
                    };
                    // After `terms` steps the summed index is back at zero
                    // and the offsets where they started.
                    sum_pos.step(&mut offs, &sum_strides);
                }
                *slot = acc;
                out_pos.step(&mut offs, &out_strides);
            }
        };
        if chunk >= total {
            out.chunks_mut(chunk.max(1)).enumerate().for_each(run_chunk);
        } else {
            out.par_chunks_mut(chunk).enumerate().for_each(run_chunk);
        }
        Ok(out)
    }
}

/// A row-major multi-index that moves every operand's storage offset
/// along with it.
struct Odometer<'s> {
    sizes: &'s [usize],
    idx: Vec<usize>,
}

impl<'s> Odometer<'s> {
    /// The multi-index of flat position `flat`.
    fn at(sizes: &'s [usize], mut flat: usize) -> Self {
        let mut idx = vec![0; sizes.len()];
        for (i, &d) in idx.iter_mut().zip(sizes).rev() {
            *i = flat % d.max(1);
            flat /= d.max(1);
        }
        Odometer { sizes, idx }
    }

    /// One step, the last axis fastest; `strides[o][ax]` is operand o's
    /// stride along axis ax. Past the last position it wraps to zero.
    fn step(&mut self, offs: &mut [isize], strides: &[Vec<isize>]) {
        for ax in (0..self.sizes.len()).rev() {
            self.idx[ax] += 1;
            for (off, st) in offs.iter_mut().zip(strides) {
                *off += st[ax];
            }
            if self.idx[ax] < self.sizes[ax] {
                return;
            }
            for (off, st) in offs.iter_mut().zip(strides) {
                *off -= st[ax] * self.sizes[ax] as isize;
            }
            self.idx[ax] = 0;
        }
    }
}

/// `einsum` forced through the reference loop (tests compare the fast
/// path with it).
#[cfg(test)]
pub(crate) fn einsum_reference(spec: &str, operands: &[&Tensor]) -> Result<Tensor, TensorError> {
    let plan = plan(spec, operands)?;
    let (d, r) = dtypes(&operands.iter().map(|t| t.dtype()).collect::<Vec<_>>());
    let ops: Vec<Tensor> = operands
        .iter()
        .map(|t| promoted(t, d))
        .collect::<Result<_, _>>()?;
    let shape: Vec<usize> = plan.out.iter().map(|&l| plan.size(l)).collect();
    dispatch!(d, T => reference::<<T as Element>::Acc>(&plan, &ops, shape, r))
}
