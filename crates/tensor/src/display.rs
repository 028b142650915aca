//! The text of a tensor (spec §6): each element as its dtype prints it
//! (f64 through `format_number`, bf16/f16/f32 as the shortest decimal that
//! rounds back to the stored value in that dtype), nested brackets with one
//! row per line, blank lines between blocks of rank ≥ 2 as NumPy prints
//! them, elision of long axes above 1000 elements, and a dtype suffix for
//! every dtype but f64.

use crate::convert::Scalar;
use crate::dtype::DType;
use crate::format::format_number;
use crate::shortest::{format_bf16, format_f16, format_f32};
use crate::tensor::Tensor;

/// Tensors with more elements than this are summarised.
pub const SUMMARY_THRESHOLD: usize = 1000;
/// A summarised axis longer than this shows its first and last `EDGE_ITEMS`.
const SUMMARY_AXIS: usize = 6;
const EDGE_ITEMS: usize = 3;

/// The text of one element.
pub fn format_scalar(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => (if b { "true" } else { "false" }).to_string(),
        Scalar::I8(i) => i.to_string(),
        Scalar::I32(i) => i.to_string(),
        Scalar::Bf16(bits) => format_bf16(bits),
        Scalar::F16(bits) => format_f16(bits),
        Scalar::F32(x) => format_f32(x),
        Scalar::F64(x) => format_number(x),
    }
}

/// What `print` writes for a tensor.
pub fn format_tensor(t: &Tensor) -> String {
    format_tensor_with(t, &mut |s| Ok::<_, std::convert::Infallible>(format_scalar(s))).unwrap_or_default()
}

/// A tensor's text with each element's text from `elem` (a format spec
/// applied to each, spec §10.7), in `print`'s layout and with its dtype
/// suffix; the first error `elem` gives ends it.
pub fn format_tensor_with<E>(
    t: &Tensor,
    elem: &mut dyn FnMut(Scalar) -> Result<String, E>,
) -> Result<String, E> {
    let mut out = String::new();
    // An empty tensor counts the positions its non-empty axes would print
    // (rows of `[]`), so `zeros([2000, 0])` is summarised too.
    let positions = t
        .shape()
        .iter()
        .filter(|&&d| d > 0)
        .fold(1usize, |n, &d| n.saturating_mul(d));
    let summarize = t.numel() > SUMMARY_THRESHOLD || positions > SUMMARY_THRESHOLD;
    let mut index = Vec::with_capacity(t.ndim());
    write_axis(t, &mut index, summarize, &mut out, elem)?;
    match t.dtype() {
        DType::F64 => {}
        DType::Bool | DType::I8 | DType::I32 | DType::Bf16 | DType::F16 | DType::F32 => {
            out.push(' ');
            out.push_str(t.dtype().name());
        }
    }
    Ok(out)
}

/// Which indices of an axis of length `n` are shown; `None` is the `...`.
fn shown(n: usize, summarize: bool) -> Vec<Option<usize>> {
    if summarize && n > SUMMARY_AXIS {
        (0..EDGE_ITEMS)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE_ITEMS..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    }
}

fn write_axis<E>(
    t: &Tensor,
    index: &mut Vec<usize>,
    summarize: bool,
    out: &mut String,
    elem: &mut dyn FnMut(Scalar) -> Result<String, E>,
) -> Result<(), E> {
    let axis = index.len();
    if axis == t.ndim() {
        let items: Vec<_> = index
            .iter()
            .map(|&i| crate::index::IndexItem::Single(i as i64))
            .collect();
        let s = t
            .index(&items)
            .ok()
            .and_then(|e| e.item().ok())
            .unwrap_or(Scalar::F64(f64::NAN));
        out.push_str(&elem(s)?);
        return Ok(());
    }
    let remaining = t.ndim() - axis;
    out.push('[');
    for (k, i) in shown(t.shape()[axis], summarize).into_iter().enumerate() {
        if k > 0 {
            out.push(',');
            if remaining == 1 {
                out.push(' ');
            } else {
                for _ in 0..remaining - 1 {
                    out.push('\n');
                }
                for _ in 0..=axis {
                    out.push(' ');
                }
            }
        }
        match i {
            None => out.push_str("..."),
            Some(i) => {
                index.push(i);
                write_axis(t, index, summarize, out, elem)?;
                index.pop();
            }
        }
    }
    out.push(']');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(n: usize, shape: Vec<usize>) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f64).collect::<Vec<_>>(), shape).expect("valid")
    }

    #[test]
    fn layout_follows_spec() {
        assert_eq!(format_tensor(&f64s(4, vec![2, 2])), "[[0, 1],\n [2, 3]]");
        assert_eq!(
            format_tensor(&f64s(8, vec![2, 2, 2])),
            "[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]"
        );
        assert_eq!(format_tensor(&f64s(0, vec![0])), "[]");
        assert_eq!(format_tensor(&f64s(0, vec![2, 0])), "[[],\n []]");
        assert_eq!(format_tensor(&Tensor::scalar(Scalar::I32(3))), "3 i32");
        assert_eq!(
            format_tensor(&f64s(2000, vec![2000])),
            "[0, 1, 2, ..., 1997, 1998, 1999]"
        );
    }

    #[test]
    fn outer_ellipsis_stands_on_its_own_line() {
        let s = format_tensor(&f64s(1100, vec![110, 10]));
        assert!(
            s.starts_with("[[0, 1, 2, ..., 7, 8, 9],\n [10, 11, 12, ..., 17, 18, 19],\n"),
            "{s}"
        );
        assert!(s.contains(",\n ...,\n [1070, "), "{s}");
    }
}
