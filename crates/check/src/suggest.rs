//! "Did you mean" (spec §10.9): for a name the checker does not know, the
//! twill name a NumPy, PyTorch or JAX user means ([`alias`]: `dim` is
//! `axis`, `float32` is `f32`, `astype` is `to`, …), else the closest known
//! name within edit distance 2 ([`closest`], optimal string alignment, so a
//! swap of two neighbouring letters is one edit). The checker calls
//! [`did_you_mean`] with the names that fit where the unknown one stands
//! (names in scope, methods of the receiver's type, a call's keywords).

/// What a NumPy/PyTorch/JAX user types for a twill name, and that name.
const ALIASES: &[(&str, &str)] = &[
    ("dim", "axis"),
    ("keepdims", "keepdim"),
    ("dtype", "dt"),
    ("astype", "to"),
    ("float32", "f32"),
    ("float16", "f16"),
    ("bfloat16", "bf16"),
    ("float64", "f64"),
    ("double", "f64"),
    ("int32", "i32"),
    ("int8", "i8"),
    ("bool_", "bool"),
    ("size", "numel"),
    ("clamp", "clip"),
    ("concatenate", "concat"),
    ("cat", "concat"),
    ("PI", "pi"),
];

/// The twill name for a NumPy/PyTorch/JAX one, if `name` is one of those.
pub fn alias(name: &str) -> Option<&'static str> {
    ALIASES.iter().find(|(a, _)| *a == name).map(|(_, t)| *t)
}

/// The edit distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of neighbours), or `None` once it exceeds 2.
/// Three rolling rows, on the stack for names up to 64 characters: it runs
/// against every name in scope, so it allocates nothing per candidate.
fn distance(a: &str, b: &str) -> Option<usize> {
    const MAX: usize = 64;
    // Lengths in characters differ by at least this much in bytes / 4.
    if a.len().abs_diff(b.len()) > 8 {
        return None;
    }
    let mut ab = ['\0'; MAX];
    let mut bb = ['\0'; MAX];
    let (mut n, mut m) = (0, 0);
    for c in a.chars() {
        if n == MAX {
            return None;
        }
        ab[n] = c;
        n += 1;
    }
    for c in b.chars() {
        if m == MAX {
            return None;
        }
        bb[m] = c;
        m += 1;
    }
    if n.abs_diff(m) > 2 {
        return None;
    }
    let (a, b) = (&ab[..n], &bb[..m]);
    let mut prev2 = [0usize; MAX + 1];
    let mut prev = [0usize; MAX + 1];
    let mut cur = [0usize; MAX + 1];
    for (j, p) in prev.iter_mut().enumerate().take(m + 1) {
        *p = j;
    }
    for i in 1..=n {
        cur[0] = i;
        let mut best = cur[0];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            best = best.min(v);
        }
        // Every later row is at least this row's best.
        if best > 2 {
            return None;
        }
        prev2 = prev;
        prev = cur;
    }
    let d = prev[m];
    (d <= 2).then_some(d)
}

/// The known name closest to `name`: at most two edits (spec §10.9), and
/// fewer edits than `name` has characters (so `x` does not suggest `y`,
/// nor `ab` `cd`); of equally close ones, the first in alphabetical order.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = 2;
    known
        .into_iter()
        .filter(|k| *k != name)
        .filter_map(|k| {
            distance(name, k)
                .filter(|&n| n < len && n <= limit)
                .map(|n| (n, k))
        })
        .min()
        .map(|(_, k)| k)
}

/// Spec §10.9's help for a tensor where a Bool must be: `.item()` for
/// one element, `.all()`/`.any()` for a bool tensor. `one` says whether it
/// holds one element and `bool` whether its dtype is bool, each `None`
/// where not known (the checker knows at most the dtype).
pub fn tensor_truth_help(one: Option<bool>, bool: Option<bool>) -> Option<&'static str> {
    match (one, bool) {
        (Some(true), Some(true)) => {
            Some("use .item() to read the value (or .all()/.any() for a bool tensor)")
        }
        (Some(true) | None, Some(false)) => Some("use .item() to read the value"),
        (Some(false), Some(true)) => Some("use .all() or .any() to reduce a bool tensor to one value"),
        (None, Some(true) | None) => {
            Some("use .item() to read the value of a one-element tensor, or .all()/.any() for a bool tensor")
        }
        (Some(true), None) => Some("use .item() to read the value"),
        (Some(false), Some(false) | None) => None,
    }
}

/// `did you mean `x`?` for an unknown `name` among `known`, or `None`.
/// An alias is offered only where its twill name is one of the known
/// names (`dim` means `axis` only where `axis` is a keyword).
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str> + Clone) -> Option<String> {
    if let Some(t) = alias(name) {
        if known.clone().into_iter().any(|k| k == t) {
            return Some(format!(
                "did you mean `{t}`? (`{name}` is its NumPy/PyTorch name)"
            ));
        }
    }
    closest(name, known).map(|k| format!("did you mean `{k}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_and_aliases() {
        let names = ["reshape", "zeros", "sum", "axis", "keepdim", "f32", "print"];
        assert_eq!(closest("resahpe", names), Some("reshape"));
        assert_eq!(closest("zero", names), Some("zeros"));
        assert_eq!(closest("pritn", names), Some("print"));
        assert_eq!(closest("summ", names), Some("sum"));
        assert_eq!(closest("totally_else", names), None);
        assert_eq!(closest("x", ["y"]), None);
        assert_eq!(closest("ab", ["cd"]), None);
        assert_eq!(closest("rxtx", ["rate"]), Some("rate"));
        assert_eq!(closest("reshpae", ["reshape"]), Some("reshape"));
        assert_eq!(closest("rshpe", ["reshape"]), Some("reshape"));
        assert_eq!(
            did_you_mean("dim", names).as_deref(),
            Some("did you mean `axis`? (`dim` is its NumPy/PyTorch name)")
        );
        assert!(did_you_mean("float32", names).is_some_and(|h| h.contains("`f32`")));
        assert!(did_you_mean("keepdims", names).is_some_and(|h| h.contains("`keepdim`")));
        // An alias whose twill name does not fit here is not offered.
        assert_eq!(did_you_mean("astype", names), None);
        assert_eq!(distance("ab", "ba"), Some(1));
        assert_eq!(distance("abc", "abcdef"), None);
    }
}
