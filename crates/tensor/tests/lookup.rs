//! The unary functions read from lookup tables (`ops/lookup.rs`) give the
//! bits their kernels give, for every element of bf16, f16, i8 and bool.
//! A table is built per thread, and only for a tensor at least as large as
//! its dtype's domain; so the kernels' own results are taken on a fresh
//! thread, in pieces smaller than that (so no table is built there), and compared with the whole tensor's results on
//! another fresh thread (which builds and reads the tables), for a
//! contiguous input with every element three times over in a scrambled
//! order and for a strided view of one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code picks the dtypes with tables and treats the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]

use half::{bf16, f16};
use twill_tensor::ops::{self, Arg, Op, Out};
use twill_tensor::storage::Storage;
use twill_tensor::{DType, Tensor};

/// Every elementwise unary function of the registry.
const UNARY: &[&str] = &[
    "neg",
    "abs",
    "sign",
    "relu",
    "square",
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "floor",
    "ceil",
    "round",
    "isnan",
    "isinf",
    "isfinite",
    "exp2",
    "log2",
    "log10",
    "cbrt",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "reciprocal",
    "trunc",
    "signbit",
    "lgamma",
    "digamma",
];

/// `name(x)`, or the error's message.
fn call(name: &str, x: &Tensor) -> Result<Tensor, String> {
    let op = Op::from_name(name).unwrap_or_else(|| panic!("no operation `{name}`"));
    match ops::call(op, vec![Some(Arg::Tensor(x.clone()))]) {
        Ok(Out::Tensor(t)) => Ok(t),
        Ok(_) => panic!("`{name}` gave no tensor"),
        Err(e) => Err(e.message),
    }
}

/// A tensor's dtype, shape and elements as bit patterns.
fn bits(t: &Tensor) -> (DType, Vec<usize>, Vec<u64>) {
    let v: Vec<u64> = match &t.to_storage().unwrap() {
        Storage::Bool(v) => v.iter().map(|&b| u64::from(b)).collect(),
        Storage::I8(v) => v.iter().map(|&b| u64::from(b as u8)).collect(),
        Storage::I32(v) => v.iter().map(|&b| u64::from(b as u32)).collect(),
        Storage::Bf16(v) => v.iter().map(|b| u64::from(b.to_bits())).collect(),
        Storage::F16(v) => v.iter().map(|b| u64::from(b.to_bits())).collect(),
        Storage::F32(v) => v.iter().map(|b| u64::from(b.to_bits())).collect(),
        Storage::F64(v) => v.iter().map(|b| b.to_bits()).collect(),
    };
    (t.dtype(), t.shape().to_vec(), v)
}

/// Every value of the dtype (its bit patterns in order).
fn domain(dt: DType) -> Storage {
    match dt {
        DType::Bf16 => Storage::Bf16((0..=u16::MAX).map(bf16::from_bits).collect()),
        DType::F16 => Storage::F16((0..=u16::MAX).map(f16::from_bits).collect()),
        DType::I8 => Storage::I8((0..=u8::MAX).map(|b| b as i8).collect()),
        DType::Bool => Storage::Bool(vec![false, true]),
        DType::I32 | DType::F32 | DType::F64 => panic!("{dt} has no table"),
    }
}

/// Every value three times over, scrambled, as a [3, n] tensor; and a
/// strided [3, n] view (the transpose of an [n, 3] tensor).
fn inputs(dt: DType) -> [Tensor; 2] {
    fn pick<T: Copy>(v: &[T], a: usize, b: usize) -> Vec<T> {
        (0..3 * v.len()).map(|i| v[(i * a + b) % v.len()]).collect()
    }
    let (x, t) = match domain(dt) {
        Storage::Bf16(v) => (Storage::Bf16(pick(&v, 40_503, 17)), Storage::Bf16(pick(&v, 7, 3))),
        Storage::F16(v) => (Storage::F16(pick(&v, 40_503, 17)), Storage::F16(pick(&v, 7, 3))),
        Storage::I8(v) => (Storage::I8(pick(&v, 101, 17)), Storage::I8(pick(&v, 7, 3))),
        Storage::Bool(v) => (Storage::Bool(pick(&v, 1, 1)), Storage::Bool(pick(&v, 1, 0))),
        other => panic!("{:?}", other.dtype()),
    };
    let n = x.len() / 3;
    let x = Tensor::from_storage(x, vec![3, n]).unwrap();
    let t = Tensor::from_storage(t, vec![n, 3])
        .unwrap()
        .permuted(&[1, 0])
        .unwrap();
    assert!(!t.is_contiguous());
    [x, t]
}

/// `name(x)` in pieces smaller than the dtype's domain (and than 1,000
/// elements), on this thread.
fn piecewise(name: &str, x: &Tensor) -> Result<(DType, Vec<usize>, Vec<u64>), String> {
    let flat = x.contiguous().unwrap();
    let n = flat.numel();
    let piece = (domain(x.dtype()).len() - 1).min(1000);
    let mut out = Vec::with_capacity(n);
    let mut dt = None;
    let mut start = 0;
    while start < n {
        let len = piece.min(n - start);
        let piece = match flat.to_storage().unwrap() {
            Storage::Bf16(v) => Storage::Bf16(v[start..start + len].to_vec()),
            Storage::F16(v) => Storage::F16(v[start..start + len].to_vec()),
            Storage::I8(v) => Storage::I8(v[start..start + len].to_vec()),
            Storage::Bool(v) => Storage::Bool(v[start..start + len].to_vec()),
            other => panic!("{:?}", other.dtype()),
        };
        let (d, _, b) = bits(&call(name, &Tensor::from_storage(piece, vec![len]).unwrap())?);
        dt = Some(d);
        out.extend(b);
        start += len;
    }
    Ok((dt.expect("a piece"), x.shape().to_vec(), out))
}

fn check(dt: DType) {
    let want = std::thread::spawn(move || {
        let xs = inputs(dt);
        UNARY
            .iter()
            .map(|name| xs.iter().map(|x| piecewise(name, x)).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    })
    .join()
    .unwrap();
    let got = std::thread::spawn(move || {
        let xs = inputs(dt);
        UNARY
            .iter()
            .map(|name| {
                xs.iter()
                    .map(|x| call(name, x).map(|t| bits(&t)))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    })
    .join()
    .unwrap();
    let mut compared = 0;
    for ((name, w), g) in UNARY.iter().zip(want).zip(got) {
        for (w, g) in w.into_iter().zip(g) {
            match (w, g) {
                (Ok(w), Ok(g)) => {
                    assert_eq!(w.0, g.0, "`{name}` of {dt}: dtype");
                    assert_eq!(w.1, g.1, "`{name}` of {dt}: shape");
                    let diff = w.2.iter().zip(&g.2).position(|(a, b)| a != b);
                    assert!(diff.is_none(), "`{name}` of {dt}: element {diff:?} differs");
                    compared += 1;
                }
                (Err(w), Err(g)) => assert_eq!(w, g, "`{name}` of {dt}"),
                (w, g) => panic!("`{name}` of {dt}: {w:?} against {g:?}"),
            }
        }
    }
    assert!(compared >= 40, "only {compared} results of {dt} compared");
}

#[test]
fn tables_give_the_kernels_bits_bf16() {
    check(DType::Bf16);
}

#[test]
fn tables_give_the_kernels_bits_f16() {
    check(DType::F16);
}

#[test]
fn tables_give_the_kernels_bits_i8() {
    check(DType::I8);
}

#[test]
fn tables_give_the_kernels_bits_bool() {
    check(DType::Bool);
}
