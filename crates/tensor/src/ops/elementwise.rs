//! The elementwise operations of spec §4.1: the binary operators on tensors
//! (`+ - * / // % ** == != < <= > >= & | ^ << >>`), `maximum`, `minimum`,
//! `where`, `clip`, and the unary functions. It owns the dtype of each
//! result (through `promote`, `promote_weak` and `float_result`, never a
//! private table), NumPy broadcasting, and the kernels.
//!
//! The numerics contract, which every kernel here keeps: both operands are
//! first converted to the dtype the operation computes in (a cast, so an
//! i32 operand of a bf16 operation is rounded once into bf16, and a weak
//! host scalar is rounded once into the tensor's dtype); then each result
//! element is the exact operation on those values, computed in f64 and
//! rounded once to the result dtype. Because f64 carries at least 2p+2
//! bits of every narrower float's p, that is bit-identical to doing the
//! operation in the narrow dtype itself (seed 000, "How the reference
//! implementation gets it exactly right"); where an f32 hardware operation
//! is itself correctly rounded (`+ - * /`, `sqrt`) it is used directly,
//! because it gives those same bits, and bf16's go through f32 for the same
//! reason (f32's 24 bits are 2p+2 for bf16's p = 8). Transcendentals are
//! `math`'s f64 functions rounded once; exp, sigmoid and tanh of f32,
//! bf16 and f16, and the logarithms, expm1, exp2, sinh and cosh of f32,
//! have vectorised kernels proved to give those same bits (`fast`); a
//! large bf16, f16, i8 or bool tensor reads its result from a table of
//! its kernel's results (`lookup`).
//! Integer arithmetic wraps.
//!
//! Every element of an elementwise result depends on its own inputs only,
//! so the kernels split large outputs into chunks across rayon's threads;
//! any split gives the same bits.

use std::mem::MaybeUninit;

use half::{bf16, f16};
use rayon::prelude::*;

use super::args::{Arg, Args, BinaryOp, Operand, Out};
use crate::convert::{self, Scalar};
use crate::convert::{bf16_to_f32, f32_to_bf16};
use crate::dtype::DType;
use crate::math;
use crate::promote::{float_result, promote, promote_weak, ScalarKind};
use crate::storage::{try_vec, Element};
use crate::tensor::{broadcast_shapes, numel_of, Tensor, TensorError};

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

// ---------------------------------------------------------------------------
// The operation table.

/// Defines one kernel function per unary operation (the registry in
/// `ops/mod.rs` names them).
macro_rules! elementwise_table {
    ($($name:literal => $kernel:ident = $u:expr),* $(,)?) => {
        $(
            pub(super) fn $kernel(args: &Args) -> Result<Out, TensorError> {
                unary($u, args.tensor("x")?).map(Out::Tensor)
            }
        )*

    };
}

elementwise_table! {
    "neg" => run_neg = Unary::Neg,
    "abs" => run_abs = Unary::Abs,
    "sign" => run_sign = Unary::Sign,
    "relu" => run_relu = Unary::Relu,
    "square" => run_square = Unary::Square,
    "exp" => run_exp = Unary::Exp,
    "log" => run_log = Unary::Log,
    "log1p" => run_log1p = Unary::Log1p,
    "expm1" => run_expm1 = Unary::Expm1,
    "sqrt" => run_sqrt = Unary::Sqrt,
    "rsqrt" => run_rsqrt = Unary::Rsqrt,
    "sin" => run_sin = Unary::Sin,
    "cos" => run_cos = Unary::Cos,
    "tan" => run_tan = Unary::Tan,
    "tanh" => run_tanh = Unary::Tanh,
    "sigmoid" => run_sigmoid = Unary::Sigmoid,
    "floor" => run_floor = Unary::Floor,
    "ceil" => run_ceil = Unary::Ceil,
    "isnan" => run_isnan = Unary::IsNan,
    "isinf" => run_isinf = Unary::IsInf,
    "isfinite" => run_isfinite = Unary::IsFinite,
    "exp2" => run_exp2 = Unary::Exp2,
    "log2" => run_log2 = Unary::Log2,
    "log10" => run_log10 = Unary::Log10,
    "cbrt" => run_cbrt = Unary::Cbrt,
    "sinh" => run_sinh = Unary::Sinh,
    "cosh" => run_cosh = Unary::Cosh,
    "asin" => run_asin = Unary::Asin,
    "acos" => run_acos = Unary::Acos,
    "atan" => run_atan = Unary::Atan,
    "asinh" => run_asinh = Unary::Asinh,
    "acosh" => run_acosh = Unary::Acosh,
    "atanh" => run_atanh = Unary::Atanh,
    "erf" => run_erf = Unary::Erf,
    "erfc" => run_erfc = Unary::Erfc,
    "reciprocal" => run_reciprocal = Unary::Reciprocal,
    "trunc" => run_trunc = Unary::Trunc,
    "signbit" => run_signbit = Unary::Signbit,
    "lgamma" => run_lgamma = Unary::Lgamma,
    "digamma" => run_digamma = Unary::Digamma,
}

/// An argument of `maximum`, `minimum`, `where` or `clip` as an operand:
/// a tensor, or a host number or Bool (a weak scalar).
fn operand<'a>(args: &'a Args, name: &str) -> Result<Operand<'a>, TensorError> {
    match args.get(name) {
        Some(Arg::Tensor(t)) => Ok(Operand::Tensor(t)),
        Some(Arg::Int(i)) => Ok(Operand::Int(*i)),
        Some(Arg::Float(x)) => Ok(Operand::Float(*x)),
        Some(Arg::Bool(b)) => Ok(Operand::Bool(*b)),
        Some(other) => err(format!(
            "`{}`: `{name}` must be a tensor or a number, not `{}`",
            args.op,
            other.kind()
        )),
        None => err(format!("`{}` needs its `{name}` argument", args.op)),
    }
}

pub(super) fn run_maximum(args: &Args) -> Result<Out, TensorError> {
    binary(BinaryOp::Maximum, operand(args, "a")?, operand(args, "b")?).map(Out::Tensor)
}

pub(super) fn run_minimum(args: &Args) -> Result<Out, TensorError> {
    binary(BinaryOp::Minimum, operand(args, "a")?, operand(args, "b")?).map(Out::Tensor)
}

/// `round(x, decimals=0)`: to nearest even at `decimals` digits after the
/// point (before it, for a negative count), NumPy's definition: p = 10^|d|
/// rounded to x's dtype; for d > 0 `round_even(x·p) / p`, for d < 0
/// `round_even(x / p)·p`, each operation rounded in x's dtype. An integer
/// tensor is kept for d ≥ 0 and rounded to a multiple of 10^|d|, ties to
/// even, exactly, for d < 0; bool is kept.
pub(super) fn run_round(args: &Args) -> Result<Out, TensorError> {
    let x = args.tensor("x")?;
    let d = args.int("decimals")?.unwrap_or(0);
    if d == 0 {
        return unary(Unary::Round, x).map(Out::Tensor);
    }
    let t = match x.dtype() {
        DType::Bool => x.clone(),
        DType::I8 => round_int::<i8>(x, d)?,
        DType::I32 => round_int::<i32>(x, d)?,
        DType::Bf16 => round_float::<bf16>(x, d)?,
        DType::F16 => round_float::<f16>(x, d)?,
        DType::F32 => round_float::<f32>(x, d)?,
        DType::F64 => round_float::<f64>(x, d)?,
    };
    Ok(Out::Tensor(t))
}

/// `polygamma(x, n)`: ψ⁽ⁿ⁾ of every element (`math::Polygamma`) in f64,
/// rounded once into float_result(x's dtype). `n` is an Int ≥ 0; the
/// tensor comes first, as in every operation (and in PyTorch's method form
/// `x.polygamma(n)`; its function form is `polygamma(n, x)`, which gets a
/// hint here).
pub(super) fn run_polygamma(args: &Args) -> Result<Out, TensorError> {
    if let (Some(Arg::Int(n)), Some(Arg::Tensor(_))) = (args.get("x"), args.get("n")) {
        return err(format!(
            "`polygamma(x, n)` takes the tensor first: PyTorch's `polygamma({n}, x)` is `polygamma(x, {n})` here"
        ));
    }
    let x = args.tensor("x")?;
    let n = match args.get("n") {
        Some(Arg::Int(n)) => *n,
        _ => {
            return err(
                "`polygamma(x, n)`: `n` must be an Int ≥ 0 — the tensor comes first \
                 (PyTorch's `polygamma(n, x)` is `polygamma(x, n)` here)"
                    .into(),
            )
        }
    };
    let Ok(n) = u64::try_from(n) else {
        return err(format!("`polygamma`: `n` must be ≥ 0, got {n}"));
    };
    let dt = float_result(x.dtype());
    let x = x.cast(dt)?;
    let t = match dt {
        DType::Bf16 => polygamma::<bf16>(&x, n)?,
        DType::F16 => polygamma::<f16>(&x, n)?,
        DType::F32 => polygamma::<f32>(&x, n)?,
        DType::F64 => polygamma::<f64>(&x, n)?,
        DType::Bool | DType::I8 | DType::I32 => return err(format!("internal error: `polygamma` of {dt}")),
    };
    Ok(Out::Tensor(t))
}

fn polygamma<T: Flt>(x: &Tensor, n: u64) -> Result<Tensor, TensorError> {
    let f = math::Polygamma::new(n);
    map1(x, move |a: T| T::round(f.at(a.wide())))
}

/// 10^|d| rounded once into T (inf when it overflows, as NumPy's is).
fn decimal_scale<T: Flt>(d: i64) -> T {
    let e = u32::try_from(d.unsigned_abs()).unwrap_or(u32::MAX).min(400);
    if T::DTYPE == DType::F64 {
        // Rust's decimal parsing rounds once, to nearest even.
        return T::round(format!("1e{e}").parse::<f64>().unwrap_or(f64::INFINITY));
    }
    if e > 38 {
        // Above every narrower dtype's largest finite value.
        return T::round(f64::INFINITY);
    }
    // 10^e = 5^e · 2^e with 5^e < 2^89: 5^e rounded to odd at 53 bits
    // keeps what a second rounding needs, so T::round rounds once.
    let m = 5u128.pow(e);
    let bits = 128 - m.leading_zeros();
    let kept = if bits <= 53 {
        m as f64
    } else {
        let shift = bits - 53;
        let k = (m >> shift) | u128::from(m & ((1u128 << shift) - 1) != 0);
        k as f64 * 2f64.powi(shift as i32)
    };
    T::round(kept * 2f64.powi(e as i32))
}

fn round_float<T: Flt>(x: &Tensor, d: i64) -> Result<Tensor, TensorError> {
    let p = decimal_scale::<T>(d);
    if d > 0 {
        map1(x, move |a: T| T::div(T::round_even(T::mul(a, p)), p))
    } else {
        map1(x, move |a: T| T::mul(T::round_even(T::div(a, p)), p))
    }
}

/// `round(x, decimals)` of a host number: the f64 kernel's formula.
pub fn host_round(x: f64, d: i64) -> f64 {
    if d == 0 {
        return x.round_ties_even();
    }
    let p = decimal_scale::<f64>(d);
    if d > 0 {
        (x * p).round_ties_even() / p
    } else {
        (x / p).round_ties_even() * p
    }
}

fn round_int<T: Int>(x: &Tensor, d: i64) -> Result<Tensor, TensorError> {
    if d > 0 {
        return Ok(x.clone());
    }
    let e = u32::try_from(d.unsigned_abs()).unwrap_or(u32::MAX);
    // A scale beyond i64 makes every element round to 0 (|x| < p / 2).
    let p = 10i128.checked_pow(e.min(38));
    map1(x, move |a: T| {
        let v = a.to_i64() as i128;
        let Some(p) = p.filter(|_| e <= 38) else {
            return T::ZERO;
        };
        let (q, r) = (v.div_euclid(p), v.rem_euclid(p));
        let up = 2 * r > p || (2 * r == p && q % 2 != 0);
        T::wrap_from_i128((q + i128::from(up)) * p)
    })
}

/// Defines the kernels of the binary functions of spec §11.3, on their
/// two parameters as operands (a tensor or a weak host scalar).
macro_rules! binary_table {
    ($($kernel:ident = $op:expr, $a:literal, $b:literal;)*) => {
        $(
            pub(super) fn $kernel(args: &Args) -> Result<Out, TensorError> {
                binary($op, operand(args, $a)?, operand(args, $b)?).map(Out::Tensor)
            }
        )*
    };
}

binary_table! {
    run_fmod = BinaryOp::Fmod, "a", "b";
    run_copysign = BinaryOp::Copysign, "a", "b";
    run_nextafter = BinaryOp::Nextafter, "a", "b";
    run_atan2 = BinaryOp::Atan2, "y", "x";
    run_hypot = BinaryOp::Hypot, "a", "b";
    run_logaddexp = BinaryOp::Logaddexp, "a", "b";
}

/// `logical_and/or/xor(a, b)`: both operands taken as truth values
/// (nonzero is true, NaN included, as NumPy), broadcast; a bool result.
fn logical(op: BinaryOp, args: &Args) -> Result<Out, TensorError> {
    let truth = |name: &str| -> Result<Tensor, TensorError> {
        match operand(args, name)? {
            Operand::Tensor(t) => t.cast(DType::Bool),
            Operand::Int(i) => Ok(Tensor::scalar(Scalar::Bool(i != 0))),
            Operand::Float(x) => Ok(Tensor::scalar(Scalar::Bool(x != 0.0))),
            Operand::Bool(b) => Ok(Tensor::scalar(Scalar::Bool(b))),
        }
    };
    if let (Some(Arg::Tensor(a)), Some(Arg::Tensor(b))) = (args.get("a"), args.get("b")) {
        if a.dtype() == b.dtype() {
            let shape = broadcast_shapes(a.shape(), b.shape())?;
            let fused = match a.dtype() {
                DType::Bool => truths::<bool>(op, a, b, &shape),
                DType::I8 => truths::<i8>(op, a, b, &shape),
                DType::I32 => truths::<i32>(op, a, b, &shape),
                DType::F32 => truths::<f32>(op, a, b, &shape),
                DType::F64 => truths::<f64>(op, a, b, &shape),
                // `half`'s comparisons are library code: the casts are
                // as fast.
                DType::Bf16 | DType::F16 => None,
            };
            if let Some(t) = fused {
                return t.map(Out::Tensor);
            }
        }
    }
    let (a, b) = (truth("a")?, truth("b")?);
    if !matches!(args.get("a"), Some(Arg::Tensor(_))) && !matches!(args.get("b"), Some(Arg::Tensor(_))) {
        return err(format!("`{}` needs at least one tensor operand", args.op));
    }
    binary(op, Operand::Tensor(&a), Operand::Tensor(&b)).map(Out::Tensor)
}

/// `x != 0`, the zero a constant: a zero captured by a kernel's closure
/// is read from memory for every element, since the bool stores might
/// alias it, and the loop does not vectorise.
#[inline(always)]
fn nonzero<T: Element>(x: T) -> bool {
    x != T::from_f64(0.0)
}

/// [`logical`] of two tensors of one dtype in one pass, each element taken
/// as `x != 0` where the operation meets it (the cast to bool, without
/// writing the two bool tensors first); `None` for an operation that is
/// not a logical one.
fn truths<T: Element>(
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    shape: &[usize],
) -> Option<Result<Tensor, TensorError>> {
    // Compared, not matched: only three operators have a one-pass form.
    Some(if op == BinaryOp::BitAnd {
        map2(a, b, shape, |x: T, y: T| nonzero(x) & nonzero(y))
    } else if op == BinaryOp::BitOr {
        map2(a, b, shape, |x: T, y: T| nonzero(x) | nonzero(y))
    } else if op == BinaryOp::BitXor {
        map2(a, b, shape, |x: T, y: T| nonzero(x) ^ nonzero(y))
    } else {
        return None;
    })
}

pub(super) fn run_logical_and(args: &Args) -> Result<Out, TensorError> {
    logical(BinaryOp::BitAnd, args)
}

pub(super) fn run_logical_or(args: &Args) -> Result<Out, TensorError> {
    logical(BinaryOp::BitOr, args)
}

pub(super) fn run_logical_xor(args: &Args) -> Result<Out, TensorError> {
    logical(BinaryOp::BitXor, args)
}

/// `logical_not(x)`: true where x is zero.
pub(super) fn run_logical_not(args: &Args) -> Result<Out, TensorError> {
    let x = args.tensor("x")?;
    // In one pass where the element's `==` is an instruction (see
    // `truths`); through the cast to bool for the halves.
    fn zero<T: Element>(x: &Tensor) -> Result<Tensor, TensorError> {
        map1(x, |a: T| !nonzero(a))
    }
    match x.dtype() {
        DType::Bool => zero::<bool>(x),
        DType::I8 => zero::<i8>(x),
        DType::I32 => zero::<i32>(x),
        DType::F32 => zero::<f32>(x),
        DType::F64 => zero::<f64>(x),
        DType::Bf16 | DType::F16 => map1(&x.cast(DType::Bool)?, |a: bool| !a),
    }
    .map(Out::Tensor)
}

// ---------------------------------------------------------------------------
// Operands and result dtypes.

pub(crate) fn symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::FloorDiv => "//",
        BinaryOp::Mod => "%",
        BinaryOp::Pow => "**",
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::Lt => "<",
        BinaryOp::Le => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::Ge => ">=",
        BinaryOp::BitAnd => "&",
        BinaryOp::BitOr => "|",
        BinaryOp::BitXor => "^",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::Maximum => "maximum",
        BinaryOp::Minimum => "minimum",
        BinaryOp::Fmod => "fmod",
        BinaryOp::Copysign => "copysign",
        BinaryOp::Nextafter => "nextafter",
        BinaryOp::Atan2 => "atan2",
        BinaryOp::Hypot => "hypot",
        BinaryOp::Logaddexp => "logaddexp",
    }
}

fn scalar_kind(o: &Operand) -> Option<ScalarKind> {
    match o {
        Operand::Tensor(_) => None,
        Operand::Int(_) => Some(ScalarKind::Int),
        Operand::Float(_) => Some(ScalarKind::Float),
        Operand::Bool(_) => Some(ScalarKind::Bool),
    }
}

/// The dtype two operands are converted to: `promote` for two tensors,
/// `promote_weak` for a tensor and a host scalar (spec §5, extension 1).
pub(crate) fn common_dtype(what: &str, a: &Operand, b: &Operand) -> Result<DType, TensorError> {
    match (a, b) {
        (Operand::Tensor(x), Operand::Tensor(y)) => Ok(promote(x.dtype(), y.dtype())),
        (Operand::Tensor(t), s) | (s, Operand::Tensor(t)) => match scalar_kind(s) {
            Some(k) => Ok(promote_weak(t.dtype(), k)),
            None => Ok(t.dtype()),
        },
        _ => err(format!("`{what}` needs at least one tensor operand")),
    }
}

/// An f64 that rounds to the same value as the integer `i` in every format
/// of at most 51 significant bits: `i` itself when it is exact in f64, and
/// otherwise `i` rounded to odd at 53 bits, which keeps the "was it above
/// the halfway point" information that a second rounding needs (rounding
/// `i as f64` first would round twice).
fn int_as_sticky_f64(i: i64) -> f64 {
    let m = i.unsigned_abs();
    let bits = 64 - m.leading_zeros();
    let v = if bits <= 53 {
        m as f64
    } else {
        let shift = bits - 53;
        let kept = (m >> shift) | u64::from(m & ((1u64 << shift) - 1) != 0);
        // `kept` has at most 53 bits, so both steps are exact.
        kept as f64 * f64::from(1u32 << shift.min(11)) * f64::from(1u32 << shift.saturating_sub(11))
    };
    if i < 0 {
        -v
    } else {
        v
    }
}

/// A weak Int scalar as an element of `dt`: it must fit an integer dtype
/// (spec §5, extension 1), and is rounded once into a float dtype.
fn weak_int(i: i64, dt: DType) -> Result<Scalar, TensorError> {
    let no_fit = || {
        TensorError(format!(
            "the Int {i} does not fit in {dt}, the dtype of the tensor it meets"
        ))
    };
    match dt {
        DType::Bool => Err(no_fit()),
        DType::I8 => i8::try_from(i).map(Scalar::I8).map_err(|_| no_fit()),
        DType::I32 => i32::try_from(i).map(Scalar::I32).map_err(|_| no_fit()),
        // Rust's i64 → f64 conversion rounds once, to nearest even.
        DType::F64 => Ok(Scalar::F64(i as f64)),
        DType::Bf16 | DType::F16 | DType::F32 => Ok(Scalar::F64(int_as_sticky_f64(i)).cast(dt)?),
    }
}

/// An operand converted to `dt`: a tensor is cast (one rounding per
/// element), a host scalar becomes a rank-0 tensor of `dt`.
pub(crate) fn operand_as(o: &Operand, dt: DType) -> Result<Tensor, TensorError> {
    Ok(match o {
        Operand::Tensor(t) => t.cast(dt)?,
        Operand::Int(i) => Tensor::scalar(weak_int(*i, dt)?),
        Operand::Float(x) => Tensor::scalar(Scalar::F64(*x).cast(dt)?),
        Operand::Bool(b) => Tensor::scalar(Scalar::Bool(*b).cast(dt)?),
    })
}

fn operand_shape<'a>(o: &'a Operand) -> &'a [usize] {
    match o {
        Operand::Tensor(t) => t.shape(),
        Operand::Int(_) | Operand::Float(_) | Operand::Bool(_) => &[],
    }
}

/// `a op b` where at least one side is a tensor (the language's binary
/// operators on tensors, and `maximum`/`minimum`).
pub fn binary(op: BinaryOp, a: Operand, b: Operand) -> Result<Tensor, TensorError> {
    let sym = symbol(op);
    let dt = common_dtype(sym, &a, &b)?;
    let shape = broadcast_shapes(operand_shape(&a), operand_shape(&b))?;
    match op {
        BinaryOp::Sub
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Mod
        | BinaryOp::Pow
        | BinaryOp::Fmod
            if dt == DType::Bool =>
        {
            return err(format!(
                "`{sym}` is not defined for bool tensors (`+` is logical or, `*` logical and, `^` exclusive or)"
            ));
        }
        BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor if dt.is_float() => {
            return err(format!("`{sym}` needs bool or integer tensors, not {dt}"));
        }
        BinaryOp::Shl | BinaryOp::Shr if dt.is_float() || dt == DType::Bool => {
            return err(format!("`{sym}` needs integer tensors, not {dt}"));
        }
        // Every dtype is accepted (a new operator decides here).
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Mod
        | BinaryOp::Pow
        | BinaryOp::Eq
        | BinaryOp::Ne
        | BinaryOp::Lt
        | BinaryOp::Le
        | BinaryOp::Gt
        | BinaryOp::Ge
        | BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::Shl
        | BinaryOp::Shr
        | BinaryOp::Maximum
        | BinaryOp::Minimum
        | BinaryOp::Fmod
        | BinaryOp::Copysign
        | BinaryOp::Nextafter
        | BinaryOp::Atan2
        | BinaryOp::Hypot
        | BinaryOp::Logaddexp => {}
    }
    // `/` and the float functions cannot give an integer (seed 000:
    // integers promote to f32). Their operands meet in `dt` first, so a
    // weak Int must still fit there.
    let ct = if op.float_only() { float_result(dt) } else { dt };
    if op == BinaryOp::Div && matches!(dt, DType::I8 | DType::I32) {
        // An integer quotient in one pass: each operand's cast to f32 (exact
        // for i8, one rounding for i32) made where the division reads it,
        // without the two f32 tensors; f32's division is `a / b`.
        let (x, y) = (operand_as(&a, dt)?, operand_as(&b, dt)?);
        return if dt == DType::I8 {
            map2(&x, &y, &shape, |a: i8, b: i8| f32::from(a) / f32::from(b))
        } else {
            map2(&x, &y, &shape, |a: i32, b: i32| a as f32 / b as f32)
        };
    }
    let x = operand_as(&a, dt)?.cast(ct)?;
    let y = operand_as(&b, dt)?.cast(ct)?;
    match ct {
        DType::Bool => bool_binary(op, &x, &y, &shape),
        DType::I8 => int_binary::<i8>(op, &x, &y, &shape),
        DType::I32 => int_binary::<i32>(op, &x, &y, &shape),
        DType::Bf16 => float_binary::<bf16>(op, &x, &y, &shape),
        DType::F16 => float_binary::<f16>(op, &x, &y, &shape),
        DType::F32 => float_binary::<f32>(op, &x, &y, &shape),
        DType::F64 => float_binary::<f64>(op, &x, &y, &shape),
    }
}

// ---------------------------------------------------------------------------
// Element arithmetic.

/// A float element type: its exact widening to f64, the one rounding back,
/// and the operations whose hardware form is known to give the same bits
/// as "exact, then rounded once" (the defaults compute in f64 and round).
trait Flt: Element {
    fn wide(self) -> f64;
    fn round(x: f64) -> Self;
    #[inline(always)]
    fn add(a: Self, b: Self) -> Self {
        Self::round(a.wide() + b.wide())
    }
    #[inline(always)]
    fn sub(a: Self, b: Self) -> Self {
        Self::round(a.wide() - b.wide())
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        Self::round(a.wide() * b.wide())
    }
    #[inline(always)]
    fn div(a: Self, b: Self) -> Self {
        Self::round(a.wide() / b.wide())
    }
    #[inline(always)]
    fn sqrt(a: Self) -> Self {
        Self::round(math::sqrt(a.wide()))
    }
    /// `-a` and `|a|` only change the sign bit, NaN included.
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    fn floor(a: Self) -> Self {
        Self::round(a.wide().floor())
    }
    fn ceil(a: Self) -> Self {
        Self::round(a.wide().ceil())
    }
    fn round_even(a: Self) -> Self {
        Self::round(a.wide().round_ties_even())
    }
    /// The bit pattern, zero-extended (`nextafter` steps it).
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
    /// The sign bit of the pattern.
    const SIGN: u64;
    /// The pattern of +inf (a larger magnitude is a NaN).
    const INF: u64;
    /// The bit a NaN gains when its computation goes through f64 and back
    /// (the quiet bit, which the conversions set; none for f64 itself).
    const QUIET: u64;
    /// `copysign(a, b)` as the f64 computation rounded back gives it, on
    /// the bits: a's magnitude (a NaN quieted) with b's sign.
    #[inline(always)]
    fn copysign_bits(a: Self, b: Self) -> Self {
        let m = a.bits() & !Self::SIGN;
        let m = if m > Self::INF { m | Self::QUIET } else { m };
        Self::from_bits(m | (b.bits() & Self::SIGN))
    }
    /// The next value after `a` toward `b` in this dtype (C's
    /// `nextafter`): `b` when they are equal (so the sign of a zero `b`
    /// wins), NaN if either is NaN, the smallest subnormal of `b`'s sign
    /// after a zero.
    fn next_after(a: Self, b: Self) -> Self {
        let (x, y) = (a.wide(), b.wide());
        if x.is_nan() {
            return a;
        }
        if y.is_nan() {
            return b;
        }
        if x == y {
            return b;
        }
        let bits = a.bits();
        if x == 0.0 {
            return Self::from_bits(if y < 0.0 { Self::SIGN | 1 } else { 1 });
        }
        // Away from zero when stepping toward b moves |a| up.
        if (y > x) == (x > 0.0) {
            Self::from_bits(bits + 1)
        } else {
            Self::from_bits(bits - 1)
        }
    }
}

impl Flt for f64 {
    const SIGN: u64 = 1 << 63;
    const INF: u64 = 0x7ff0_0000_0000_0000;
    const QUIET: u64 = 0;
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_bits(b: u64) -> f64 {
        f64::from_bits(b)
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
    #[inline(always)]
    fn round(x: f64) -> f64 {
        x
    }
    fn neg(a: f64) -> f64 {
        -a
    }
    fn abs(a: f64) -> f64 {
        a.abs()
    }
}

impl Flt for f32 {
    const SIGN: u64 = 1 << 31;
    const INF: u64 = 0x7f80_0000;
    const QUIET: u64 = 1 << 22;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_bits(b: u64) -> f32 {
        f32::from_bits(b as u32)
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn round(x: f64) -> f32 {
        // `as` rounds to nearest even like `narrow`; only a NaN's payload
        // is left to the platform by `as`, so NaN takes the defined path.
        if x.is_nan() {
            convert::f64_to_f32(x)
        } else {
            x as f32
        }
    }
    // IEEE 754 makes these correctly rounded in f32, which is the bits of
    // the f64 result rounded once (53 >= 2·24 + 2).
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn sub(a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    fn mul(a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    fn div(a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    fn sqrt(a: f32) -> f32 {
        a.sqrt()
    }
    fn neg(a: f32) -> f32 {
        -a
    }
    fn abs(a: f32) -> f32 {
        a.abs()
    }
    fn floor(a: f32) -> f32 {
        a.floor()
    }
    fn ceil(a: f32) -> f32 {
        a.ceil()
    }
    fn round_even(a: f32) -> f32 {
        a.round_ties_even()
    }
}

impl Flt for bf16 {
    const SIGN: u64 = 1 << 15;
    const INF: u64 = 0x7f80;
    const QUIET: u64 = 1 << 6;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_bits(b: u64) -> bf16 {
        bf16::from_bits(b as u16)
    }
    /// Exact: a bf16 is the top half of an f32 (NaN stays NaN, quiet).
    #[inline(always)]
    fn wide(self) -> f64 {
        f64::from(bf16_to_f32(self))
    }
    #[inline(always)]
    fn round(x: f64) -> bf16 {
        bf16::from_bits(convert::f64_to_bf16_bits(x))
    }
    // f32 also carries 2p+2 bits of bf16's p = 8, over the same exponent
    // range, so the correctly rounded f32 operation rounded again to bf16
    // is the f64 result rounded once (checked on every pair of bf16 values
    // by `bf16_through_f32_is_exact`); unlike the f64 path it vectorises.
    #[inline(always)]
    fn add(a: bf16, b: bf16) -> bf16 {
        f32_to_bf16(bf16_to_f32(a) + bf16_to_f32(b))
    }
    #[inline(always)]
    fn sub(a: bf16, b: bf16) -> bf16 {
        f32_to_bf16(bf16_to_f32(a) - bf16_to_f32(b))
    }
    #[inline(always)]
    fn mul(a: bf16, b: bf16) -> bf16 {
        f32_to_bf16(bf16_to_f32(a) * bf16_to_f32(b))
    }
    #[inline(always)]
    fn div(a: bf16, b: bf16) -> bf16 {
        f32_to_bf16(bf16_to_f32(a) / bf16_to_f32(b))
    }
    #[inline(always)]
    fn sqrt(a: bf16) -> bf16 {
        f32_to_bf16(bf16_to_f32(a).sqrt())
    }
    fn neg(a: bf16) -> bf16 {
        bf16::from_bits(a.to_bits() ^ 0x8000)
    }
    fn abs(a: bf16) -> bf16 {
        bf16::from_bits(a.to_bits() & 0x7fff)
    }
}

impl Flt for f16 {
    const SIGN: u64 = 1 << 15;
    const INF: u64 = 0x7c00;
    const QUIET: u64 = 1 << 9;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_bits(b: u64) -> f16 {
        f16::from_bits(b as u16)
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self.to_f64()
    }
    #[inline(always)]
    fn round(x: f64) -> f16 {
        f16::from_bits(convert::f64_to_f16_bits(x))
    }
    fn neg(a: f16) -> f16 {
        f16::from_bits(a.to_bits() ^ 0x8000)
    }
    fn abs(a: f16) -> f16 {
        f16::from_bits(a.to_bits() & 0x7fff)
    }
}

/// A binary function of the registry applied to two host numbers (spec
/// §3: `atan2(1.0, 2.0)`), with the same f64 functions as the kernels;
/// `None` for the language's operators, which the evaluator does itself.
pub fn host_binary(op: BinaryOp, x: f64, y: f64) -> Option<f64> {
    Some(match op {
        BinaryOp::Maximum => float_max(x, y),
        BinaryOp::Minimum => float_min(x, y),
        BinaryOp::Fmod => math::fmod(x, y),
        BinaryOp::Copysign => math::copysign(x, y),
        BinaryOp::Nextafter => f64::next_after(x, y),
        BinaryOp::Atan2 => math::atan2(x, y),
        BinaryOp::Hypot => math::hypot(x, y),
        BinaryOp::Logaddexp => math::logaddexp(x, y),
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Mod
        | BinaryOp::Pow
        | BinaryOp::Eq
        | BinaryOp::Ne
        | BinaryOp::Lt
        | BinaryOp::Le
        | BinaryOp::Gt
        | BinaryOp::Ge
        | BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::Shl
        | BinaryOp::Shr => return None,
    })
}

/// NumPy's floor division and Python-style remainder of two f64 values
/// (`npy_divmod`, as NumPy's `floor_divide` and `remainder` compute them):
/// the remainder takes the divisor's sign (a zero remainder gets the
/// divisor's sign too), a zero quotient gets the sign of `a / b`, and a
/// zero divisor gives `a / b` and NaN.
pub fn float_floor_divmod(a: f64, b: f64) -> (f64, f64) {
    let m = a % b;
    if b == 0.0 {
        return (a / b, m);
    }
    // a - m is very nearly an integer multiple of b.
    let mut div = (a - m) / b;
    let mut m = m;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(b);
    }
    let q = if div != 0.0 {
        // Snap the quotient to the nearest integer (NaN passes through).
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0.0f64.copysign(a / b)
    };
    (q, m)
}

/// IEEE 754-2019 `maximum`: NaN if either operand is NaN (PyTorch), and
/// +0 above -0, so the result never depends on the operand order.
#[inline(always)]
fn float_max<T: Flt>(a: T, b: T) -> T {
    let (x, y) = (a.wide(), b.wide());
    if x.is_nan() {
        a
    } else if y.is_nan() || y > x || (y == x && x.is_sign_negative()) {
        b
    } else {
        a
    }
}

/// IEEE 754-2019 `minimum`: NaN if either is NaN, -0 below +0.
#[inline(always)]
fn float_min<T: Flt>(a: T, b: T) -> T {
    let (x, y) = (a.wide(), b.wide());
    if x.is_nan() {
        a
    } else if y.is_nan() || y < x || (y == x && y.is_sign_negative()) {
        b
    } else {
        a
    }
}

/// A signed two's-complement element type (i8, i32): every operation wraps.
trait Int: Element + Ord {
    const ZERO: Self;
    fn wadd(a: Self, b: Self) -> Self;
    fn wsub(a: Self, b: Self) -> Self;
    fn wmul(a: Self, b: Self) -> Self;
    fn wneg(a: Self) -> Self;
    fn wabs(a: Self) -> Self;
    fn signum(a: Self) -> Self;
    /// Floor division; `b` is not zero (the caller checked).
    fn floor_div(a: Self, b: Self) -> Self;
    /// The remainder with the divisor's sign; `b` is not zero.
    fn floor_mod(a: Self, b: Self) -> Self;
    /// The remainder with the dividend's sign (C's `%`, `fmod`); `b` is
    /// not zero, and MIN % -1 is 0.
    fn trunc_mod(a: Self, b: Self) -> Self;
    fn to_i64(self) -> i64;
    /// `v` wrapped into the type (two's complement).
    fn wrap_from_i128(v: i128) -> Self;
    /// `a ** e`, wrapping; `e` is not negative (the caller checked).
    fn wpow(a: Self, e: Self) -> Self;
    /// Shifts by a non-negative count; a count of at least the width gives
    /// 0 (left) or the sign fill (right), as NumPy does.
    fn shl(a: Self, s: Self) -> Self;
    fn shr(a: Self, s: Self) -> Self;
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
}

/// The f64 quotient a / b of two integers of at most 2^31 in magnitude
/// (b not 0), whose floor and truncation are the exact quotient's: where
/// a / b is an integer the f64 is it, and otherwise a / b lies at least
/// 1/|b| from every integer while the rounding moves it by at most
/// |a / b|·2^-53 ≤ 2^-22/|b|, so it stays between the same two integers.
#[inline(always)]
fn exact_quotient(a: f64, b: f64) -> f64 {
    a / b
}

/// An integral quotient of [`exact_quotient`], in −2^31 … 2^31, wrapped
/// into i8 or i32 as the wrapping division wraps MIN / −1 (2^31, the one
/// value beyond i32, saturates to MAX and the added 1 wraps it to MIN).
#[inline(always)]
fn from_quotient<T: WrapFrom>(q: f64) -> T {
    T::wrap((q as i32).wrapping_add(i32::from(q >= 2_147_483_648.0)))
}

/// An i32 wrapped into a narrower or equal integer type.
trait WrapFrom {
    fn wrap(v: i32) -> Self;
}
impl WrapFrom for i8 {
    #[inline(always)]
    fn wrap(v: i32) -> i8 {
        v as i8
    }
}
impl WrapFrom for i32 {
    #[inline(always)]
    fn wrap(v: i32) -> i32 {
        v
    }
}

macro_rules! int_impl {
    ($t:ty) => {
        impl Int for $t {
            const ZERO: $t = 0;
            #[inline(always)]
            fn wadd(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn wsub(a: $t, b: $t) -> $t {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn wmul(a: $t, b: $t) -> $t {
                a.wrapping_mul(b)
            }
            #[inline(always)]
            fn wneg(a: $t) -> $t {
                a.wrapping_neg()
            }
            #[inline(always)]
            fn wabs(a: $t) -> $t {
                a.wrapping_abs()
            }
            #[inline(always)]
            fn signum(a: $t) -> $t {
                a.signum()
            }
            // Through the f64 quotient, which vectorises where the integer
            // division instruction does not: see [`exact_quotient`].
            #[inline(always)]
            fn floor_div(a: $t, b: $t) -> $t {
                from_quotient(exact_quotient(a.into(), b.into()).floor())
            }
            #[inline(always)]
            fn floor_mod(a: $t, b: $t) -> $t {
                let (a, b) = (f64::from(a), f64::from(b));
                // Exact: q·b (at most 2^32 in magnitude) and a − q·b (less
                // than |b|) are integers an f64 holds.
                (a - exact_quotient(a, b).floor() * b) as $t
            }
            #[inline(always)]
            fn trunc_mod(a: $t, b: $t) -> $t {
                let (a, b) = (f64::from(a), f64::from(b));
                (a - exact_quotient(a, b).trunc() * b) as $t
            }
            fn to_i64(self) -> i64 {
                i64::from(self)
            }
            fn wrap_from_i128(v: i128) -> $t {
                v as $t
            }
            #[inline(always)]
            fn wpow(a: $t, e: $t) -> $t {
                a.wrapping_pow(e as u32)
            }
            #[inline(always)]
            fn shl(a: $t, s: $t) -> $t {
                if (s as u32) < <$t>::BITS {
                    a.wrapping_shl(s as u32)
                } else {
                    0
                }
            }
            #[inline(always)]
            fn shr(a: $t, s: $t) -> $t {
                a >> (s as u32).min(<$t>::BITS - 1)
            }
            #[inline(always)]
            fn and(a: $t, b: $t) -> $t {
                a & b
            }
            #[inline(always)]
            fn or(a: $t, b: $t) -> $t {
                a | b
            }
            #[inline(always)]
            fn xor(a: $t, b: $t) -> $t {
                a ^ b
            }
        }
    };
}
int_impl!(i8);
int_impl!(i32);

// ---------------------------------------------------------------------------
// Building outputs.

/// Outputs at least this large are filled by several threads.
const PAR_MIN: usize = 1 << 15;
/// Elements per parallel task: big enough to amortise scheduling, small
/// enough to balance two to a few dozen threads.
const CHUNK: usize = 1 << 14;

/// A vector of the elements of `shape` whose chunks are filled by
/// `fill(start, chunk)`, in parallel for large `n`. Every `fill` in this module writes
/// each element of its chunk exactly once (it zips the chunk with equally
/// long inputs, or walks exactly `chunk.len()` positions). Each chunk is
/// filled under `isa::wide`, so the loops of `fill` are compiled for the
/// widest instructions the CPU has.
pub(super) fn build<O: Element>(
    shape: &[usize],
    fill: impl Fn(usize, &mut [MaybeUninit<O>]) + Sync,
) -> Result<Vec<O>, TensorError> {
    let n = numel_of(shape)?;
    let mut out: Vec<O> = try_vec(n).map_err(|e| e.for_tensor(O::DTYPE, shape))?;
    {
        let spare = &mut out.spare_capacity_mut()[..n];
        if n >= PAR_MIN {
            spare.par_chunks_mut(CHUNK).enumerate().for_each(|(i, c)| {
                crate::isa::wide(
                    #[inline(always)]
                    || fill(i * CHUNK, c),
                )
            });
        } else {
            crate::isa::wide(
                #[inline(always)]
                || fill(0, spare),
            );
        }
    }
    // SAFETY: the capacity is at least `n`, and every one of the first `n`
    // elements was initialised by `fill` (see above); a panic inside `fill`
    // unwinds before this line, leaving the vector empty.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// Visits the output positions `start .. start + len` of a row-major walk
/// over `shape`, in runs along the last axis: `run(pos, offsets, n)` gets
/// the position relative to `start`, the storage offset of each of the K
/// operands at that position, and the run's length; element `t` of the run
/// is at `offsets[k] + t · last_stride[k]`.
fn walk<const K: usize>(
    shape: &[usize],
    bases: [isize; K],
    strides: [&[isize]; K],
    start: usize,
    len: usize,
    mut run: impl FnMut(usize, [isize; K], usize),
) {
    let nd = shape.len();
    if len == 0 {
        return;
    }
    if nd == 0 {
        run(0, bases, 1);
        return;
    }
    let mut idx = vec![0usize; nd];
    let mut rem = start;
    for a in (0..nd).rev() {
        idx[a] = rem % shape[a];
        rem /= shape[a];
    }
    let mut offs = bases;
    for k in 0..K {
        for a in 0..nd {
            offs[k] += idx[a] as isize * strides[k][a];
        }
    }
    let last = nd - 1;
    let mut pos = 0;
    loop {
        let n = (shape[last] - idx[last]).min(len - pos);
        run(pos, offs, n);
        pos += n;
        if pos >= len {
            return;
        }
        // Step past the run, then carry into the outer axes.
        idx[last] += n;
        for k in 0..K {
            offs[k] += n as isize * strides[k][last];
        }
        let mut a = last;
        while a > 0 && idx[a] == shape[a] {
            for k in 0..K {
                offs[k] -= shape[a] as isize * strides[k][a];
            }
            idx[a] = 0;
            a -= 1;
            idx[a] += 1;
            for k in 0..K {
                offs[k] += strides[k][a];
            }
        }
    }
}

fn typed<T: Element>(t: &Tensor) -> Result<&[T], TensorError> {
    T::slice(t.storage()).ok_or_else(|| {
        TensorError(format!(
            "internal error: a {} tensor where {} was expected",
            t.dtype(),
            T::DTYPE
        ))
    })
}

/// The single element of a one-element tensor of type `T`.
fn only<T: Element>(t: &Tensor) -> Result<T, TensorError> {
    let s = typed::<T>(t)?;
    t.offsets()
        .next()
        .and_then(|o| s.get(o).copied())
        .ok_or_else(|| TensorError("internal error: an empty operand".into()))
}

/// `f` applied to every element of `x`, in row-major order.
fn map1<A: Element, O: Element>(x: &Tensor, f: impl Fn(A) -> O + Sync) -> Result<Tensor, TensorError> {
    let x = x.contiguous()?;
    let xs = typed::<A>(&x)?;
    let out = build(
        x.shape(),
        #[inline(always)]
        |s, c| {
            for (o, &a) in c.iter_mut().zip(&xs[s..]) {
                o.write(f(a));
            }
        },
    )?;
    Tensor::from_vec(out, x.shape().to_vec())
}

/// `f` applied to the broadcast pairs of `x` and `y` (both of type `A`),
/// giving a tensor of `shape`. Same-shape contiguous operands and a
/// one-element operand take straight loops over slices, which the compiler
/// vectorises; anything else walks the strides.
fn map2<A: Element, O: Element>(
    x: &Tensor,
    y: &Tensor,
    shape: &[usize],
    f: impl Fn(A, A) -> O + Sync,
) -> Result<Tensor, TensorError> {
    let n = numel_of(shape)?;
    let (xs, ys) = (typed::<A>(x)?, typed::<A>(y)?);
    // A contiguous operand with as many elements as the output holds them
    // in the output's order: broadcasting only added axes of size 1.
    let whole = |t: &Tensor| t.is_contiguous() && t.numel() == n;
    let out: Vec<O> = if n == 0 {
        Vec::new()
    } else if whole(x) && whole(y) {
        build(
            shape,
            #[inline(always)]
            |s, c| {
                let e = s + c.len();
                for (o, (&a, &b)) in c.iter_mut().zip(xs[s..e].iter().zip(&ys[s..e])) {
                    o.write(f(a, b));
                }
            },
        )?
    } else if whole(x) && y.numel() == 1 {
        let b = only::<A>(y)?;
        build(
            shape,
            #[inline(always)]
            |s, c| {
                for (o, &a) in c.iter_mut().zip(&xs[s..]) {
                    o.write(f(a, b));
                }
            },
        )?
    } else if x.numel() == 1 && whole(y) {
        let a = only::<A>(x)?;
        build(
            shape,
            #[inline(always)]
            |s, c| {
                for (o, &b) in c.iter_mut().zip(&ys[s..]) {
                    o.write(f(a, b));
                }
            },
        )?
    } else {
        let (xv, yv) = (x.broadcast_view(shape)?, y.broadcast_view(shape)?);
        let bases = [xv.offset() as isize, yv.offset() as isize];
        let last = shape.len().saturating_sub(1);
        let (sx, sy) = (
            xv.strides().get(last).copied().unwrap_or(0),
            yv.strides().get(last).copied().unwrap_or(0),
        );
        let strides = [xv.strides(), yv.strides()];
        build(
            shape,
            #[inline(always)]
            |s, c| {
                walk(shape, bases, strides, s, c.len(), |p, [ox, oy], m| {
                    let (ox, oy) = (ox as usize, oy as usize);
                    let dst = &mut c[p..p + m];
                    // The common broadcasts (a row against a matrix, a column,
                    // a scalar) get slice loops; other strides index.
                    match (sx, sy) {
                        (1, 1) => {
                            for (o, (&a, &b)) in
                                dst.iter_mut().zip(xs[ox..ox + m].iter().zip(&ys[oy..oy + m]))
                            {
                                o.write(f(a, b));
                            }
                        }
                        (1, 0) => {
                            let b = ys[oy];
                            for (o, &a) in dst.iter_mut().zip(&xs[ox..ox + m]) {
                                o.write(f(a, b));
                            }
                        }
                        (0, 1) => {
                            let a = xs[ox];
                            for (o, &b) in dst.iter_mut().zip(&ys[oy..oy + m]) {
                                o.write(f(a, b));
                            }
                        }
                        _ => {
                            for (t, o) in dst.iter_mut().enumerate() {
                                let i = (ox as isize + t as isize * sx) as usize;
                                let j = (oy as isize + t as isize * sy) as usize;
                                o.write(f(xs[i], ys[j]));
                            }
                        }
                    }
                })
            },
        )?
    };
    Tensor::from_vec(out, shape.to_vec())
}

// ---------------------------------------------------------------------------
// Binary kernels, one per kind of computing dtype.

fn bool_binary(op: BinaryOp, x: &Tensor, y: &Tensor, shape: &[usize]) -> Result<Tensor, TensorError> {
    type B = bool;
    match op {
        // On bools `+` is logical or, `*` logical and (spec §4.1); maximum
        // and minimum are the same functions of false < true.
        BinaryOp::Add | BinaryOp::BitOr | BinaryOp::Maximum => map2(x, y, shape, |a: B, b: B| a | b),
        BinaryOp::Mul | BinaryOp::BitAnd | BinaryOp::Minimum => map2(x, y, shape, |a: B, b: B| a & b),
        BinaryOp::BitXor | BinaryOp::Ne => map2(x, y, shape, |a: B, b: B| a ^ b),
        BinaryOp::Eq => map2(x, y, shape, |a: B, b: B| a == b),
        BinaryOp::Lt => map2(x, y, shape, |a: B, b: B| !a & b),
        BinaryOp::Le => map2(x, y, shape, |a: B, b: B| !a | b),
        BinaryOp::Gt => map2(x, y, shape, |a: B, b: B| a & !b),
        BinaryOp::Ge => map2(x, y, shape, |a: B, b: B| a | !b),
        BinaryOp::Sub
        | BinaryOp::Div
        | BinaryOp::FloorDiv
        | BinaryOp::Mod
        | BinaryOp::Pow
        | BinaryOp::Shl
        | BinaryOp::Shr
        | BinaryOp::Fmod => err(format!("`{}` is not defined for bool tensors", symbol(op))),
        BinaryOp::Copysign
        | BinaryOp::Nextafter
        | BinaryOp::Atan2
        | BinaryOp::Hypot
        | BinaryOp::Logaddexp => err(format!("internal error: bool `{}`", symbol(op))),
    }
}

/// Whether any element of the (already converted) tensor satisfies `p`:
/// the checks that make integer `//`, `%`, `**` and shifts errors rather
/// than wrong answers.
fn any_element<T: Element>(t: &Tensor, p: impl Fn(T) -> bool) -> Result<bool, TensorError> {
    if let Some(v) = t.as_slice::<T>() {
        // Blocks tested in full, branch-free, so that the test vectorises.
        return Ok(v.chunks(4096).any(|block| {
            crate::isa::wide(
                #[inline(always)]
                || block.iter().fold(false, |a, &e| a | p(e)),
            )
        }));
    }
    let s = typed::<T>(t)?;
    Ok(t.offsets().any(|o| s.get(o).is_some_and(|&v| p(v))))
}

fn int_binary<T: Int>(op: BinaryOp, x: &Tensor, y: &Tensor, shape: &[usize]) -> Result<Tensor, TensorError> {
    // A divisor, exponent or shift count that is never used (an empty
    // result) cannot make the operation fail.
    let used = numel_of(shape)? > 0;
    // A closure of its own type per check, so that the block test inlines it.
    fn guard<T: Element>(
        used: bool,
        y: &Tensor,
        what: &str,
        p: impl Fn(T) -> bool,
    ) -> Result<(), TensorError> {
        if used && any_element::<T>(y, p)? {
            return err(what.to_string());
        }
        Ok(())
    }
    match op {
        BinaryOp::Add => map2(x, y, shape, T::wadd),
        BinaryOp::Sub => map2(x, y, shape, T::wsub),
        BinaryOp::Mul => map2(x, y, shape, T::wmul),
        BinaryOp::FloorDiv => {
            guard(used, y, "integer division by zero", |v: T| v == T::ZERO)?;
            map2(x, y, shape, T::floor_div)
        }
        BinaryOp::Mod => {
            guard(used, y, "integer modulo by zero", |v: T| v == T::ZERO)?;
            map2(x, y, shape, T::floor_mod)
        }
        BinaryOp::Fmod => {
            guard(used, y, "integer `fmod` by zero", |v: T| v == T::ZERO)?;
            map2(x, y, shape, T::trunc_mod)
        }
        BinaryOp::Pow => {
            guard(
                used,
                y,
                "integers to negative integer powers are not allowed",
                |v: T| v < T::ZERO,
            )?;
            if x.shape() == shape && y.numel() == 1 {
                // One exponent for every element: wrapping products are
                // those of the integers mod 2^bits, associative, so any
                // chain of them is `wrapping_pow`'s result; the common
                // small exponents as straight-line products vectorise.
                let e = only::<T>(y)?;
                let one = T::wpow(T::ZERO, T::ZERO);
                return match T::to_i64(e) {
                    0 => map1(x, |_: T| one),
                    1 => map1(x, |a: T| a),
                    2 => map1(x, |a: T| T::wmul(a, a)),
                    3 => map1(x, |a: T| T::wmul(T::wmul(a, a), a)),
                    4 => map1(x, |a: T| {
                        let s = T::wmul(a, a);
                        T::wmul(s, s)
                    }),
                    _ => map1(x, |a: T| T::wpow(a, e)),
                };
            }
            map2(x, y, shape, T::wpow)
        }
        BinaryOp::Shl | BinaryOp::Shr => {
            guard(used, y, "negative shift count", |v: T| v < T::ZERO)?;
            if op == BinaryOp::Shl {
                map2(x, y, shape, T::shl)
            } else {
                map2(x, y, shape, T::shr)
            }
        }
        BinaryOp::BitAnd => map2(x, y, shape, T::and),
        BinaryOp::BitOr => map2(x, y, shape, T::or),
        BinaryOp::BitXor => map2(x, y, shape, T::xor),
        BinaryOp::Maximum => map2(x, y, shape, |a: T, b: T| a.max(b)),
        BinaryOp::Minimum => map2(x, y, shape, |a: T, b: T| a.min(b)),
        BinaryOp::Eq => map2(x, y, shape, |a: T, b: T| a == b),
        BinaryOp::Ne => map2(x, y, shape, |a: T, b: T| a != b),
        BinaryOp::Lt => map2(x, y, shape, |a: T, b: T| a < b),
        BinaryOp::Le => map2(x, y, shape, |a: T, b: T| a <= b),
        BinaryOp::Gt => map2(x, y, shape, |a: T, b: T| a > b),
        BinaryOp::Ge => map2(x, y, shape, |a: T, b: T| a >= b),
        // `binary` turned an integer `/` and the float functions into
        // float operations.
        BinaryOp::Div
        | BinaryOp::Copysign
        | BinaryOp::Nextafter
        | BinaryOp::Atan2
        | BinaryOp::Hypot
        | BinaryOp::Logaddexp => err(format!(
            "internal error: integer `{}` on {}",
            symbol(op),
            T::DTYPE
        )),
    }
}

/// Whether `y` is one element equal to 2.
fn is_exponent<T: Flt>(y: &Tensor, k: f64) -> bool {
    y.numel() == 1 && only::<T>(y).is_ok_and(|b| b.wide() == k)
}

fn float_binary<T: Flt>(
    op: BinaryOp,
    x: &Tensor,
    y: &Tensor,
    shape: &[usize],
) -> Result<Tensor, TensorError> {
    match op {
        BinaryOp::Add => map2(x, y, shape, T::add),
        BinaryOp::Sub => map2(x, y, shape, T::sub),
        BinaryOp::Mul => map2(x, y, shape, T::mul),
        BinaryOp::Div => map2(x, y, shape, T::div),
        BinaryOp::FloorDiv => map2(x, y, shape, |a: T, b: T| {
            T::round(float_floor_divmod(a.wide(), b.wide()).0)
        }),
        BinaryOp::Mod => map2(x, y, shape, |a: T, b: T| {
            T::round(float_floor_divmod(a.wide(), b.wide()).1)
        }),
        // `x ** 2` is what `pow` computes for an exponent of 2 (libm's pow
        // returns x·x for it): the f64 square rounded once, which `mul`
        // gives without the call (exact in f64 for the narrower dtypes,
        // whose `mul` is proved equal to it). For a NaN x, pow returns
        // x + 2, the same quiet NaN as x·x; the test
        // `squaring_is_pow_of_two_bit_for_bit` holds every NaN pattern of
        // bf16, f16 and f32 and a sample of f64's to that, so the loop
        // needs no NaN branch and vectorises.
        BinaryOp::Pow if x.shape() == shape && is_exponent::<T>(y, 2.0) => map1(x, |a: T| T::mul(a, a)),
        // `x ** 3` and `x ** 4` of bf16, f16 and f32 as f64 products: the
        // square of such an element is exact in f64 (at most 48 significant
        // bits, and no finite element's fourth power leaves f64's normal
        // range), so (x·x)·x and (x·x)·(x·x) are x³ and x⁴ rounded once,
        // within half an f64 ulp of the exact power, where libm's pow is
        // within one; rounded to the dtype the two agree on every input:
        // `examples/pow_chains.rs` compares them on all 2^32 f32 patterns,
        // and `small_powers_are_pow_bit_for_bit` on every bf16 and f16
        // pattern and a sample of f32's, NaNs and infinities included.
        BinaryOp::Pow if T::DTYPE != DType::F64 && x.shape() == shape && is_exponent::<T>(y, 3.0) => {
            map1(x, |a: T| {
                let w = a.wide();
                T::round(w * w * w)
            })
        }
        BinaryOp::Pow if T::DTYPE != DType::F64 && x.shape() == shape && is_exponent::<T>(y, 4.0) => {
            map1(x, |a: T| {
                let w = a.wide();
                let s = w * w;
                T::round(s * s)
            })
        }
        BinaryOp::Pow => map2(x, y, shape, |a: T, b: T| T::round(math::pow(a.wide(), b.wide()))),
        BinaryOp::Maximum => map2(x, y, shape, float_max::<T>),
        BinaryOp::Minimum => map2(x, y, shape, float_min::<T>),
        // fmod and copysign are exact in the operands' dtype; the others
        // are computed in f64 and rounded once (spec §5.6).
        BinaryOp::Fmod => map2(x, y, shape, |a: T, b: T| T::round(math::fmod(a.wide(), b.wide()))),
        // Exact: the magnitude of one and the sign of the other, as the
        // f64 computation rounded back gives them (the test
        // `copysign_on_bits_is_the_f64_definition` holds every bf16 and f16
        // pair pattern class to it).
        BinaryOp::Copysign => map2(x, y, shape, T::copysign_bits),
        BinaryOp::Nextafter => map2(x, y, shape, T::next_after),
        BinaryOp::Atan2 => map2(x, y, shape, |a: T, b: T| {
            T::round(math::atan2(a.wide(), b.wide()))
        }),
        BinaryOp::Hypot => map2(x, y, shape, |a: T, b: T| {
            T::round(math::hypot(a.wide(), b.wide()))
        }),
        BinaryOp::Logaddexp => map2(x, y, shape, |a: T, b: T| {
            T::round(math::logaddexp(a.wide(), b.wide()))
        }),
        // Widening is exact, so comparing in f64 is comparing the values.
        BinaryOp::Eq => map2(x, y, shape, |a: T, b: T| a.wide() == b.wide()),
        BinaryOp::Ne => map2(x, y, shape, |a: T, b: T| a.wide() != b.wide()),
        BinaryOp::Lt => map2(x, y, shape, |a: T, b: T| a.wide() < b.wide()),
        BinaryOp::Le => map2(x, y, shape, |a: T, b: T| a.wide() <= b.wide()),
        BinaryOp::Gt => map2(x, y, shape, |a: T, b: T| a.wide() > b.wide()),
        BinaryOp::Ge => map2(x, y, shape, |a: T, b: T| a.wide() >= b.wide()),
        BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr => err(
            format!("`{}` is not defined for {} tensors", symbol(op), T::DTYPE),
        ),
    }
}

// ---------------------------------------------------------------------------
// where and clip.

/// `where(cond, a, b)`: `a` where `cond` is true, else `b`, broadcast
/// together. `a` and `b` are promoted together (a host scalar is weak);
/// two host scalars give f64 (bool for two Bools), as a list literal of
/// them would.
pub(super) fn run_where(args: &Args) -> Result<Out, TensorError> {
    let cond = args.tensor("cond")?;
    if cond.dtype() != DType::Bool {
        return err(format!("`where` needs a bool condition, not {}", cond.dtype()));
    }
    let (a, b) = (operand(args, "a")?, operand(args, "b")?);
    let dt = match (&a, &b) {
        (Operand::Tensor(_), _) | (_, Operand::Tensor(_)) => common_dtype("where", &a, &b)?,
        (Operand::Bool(_), Operand::Bool(_)) => DType::Bool,
        _ => DType::F64,
    };
    let branches = broadcast_shapes(operand_shape(&a), operand_shape(&b))?;
    let shape = broadcast_shapes(cond.shape(), &branches)?;
    let (x, y) = (operand_as(&a, dt)?, operand_as(&b, dt)?);
    let t = crate::dispatch!(dt, T => select::<T>(cond, &x, &y, &shape))?;
    Ok(Out::Tensor(t))
}

/// `a` where `k`, else `b`, without a branch: a random mask would make a
/// branch mispredict half the time (ten times slower on 16M elements).
#[inline(always)]
fn pick<T: Copy>(k: bool, a: T, b: T) -> T {
    [b, a][usize::from(k)]
}

/// A branch of `where` as its kernel reads it: all of the output's
/// elements in order, or one element for all.
#[derive(Clone, Copy)]
enum Branch<'a, T> {
    Whole(&'a [T]),
    One(T),
}

impl<'a, T: Element> Branch<'a, T> {
    /// `t` (whose elements are `s`) as a branch of an `n`-element result,
    /// if it is one of the two simple kinds.
    fn of(t: &Tensor, s: &'a [T], n: usize) -> Result<Option<Self>, TensorError> {
        Ok(if t.is_contiguous() && t.numel() == n {
            Some(Branch::Whole(s))
        } else if t.numel() == 1 {
            Some(Branch::One(only::<T>(t)?))
        } else {
            None
        })
    }
}

fn select<T: Element>(cond: &Tensor, x: &Tensor, y: &Tensor, shape: &[usize]) -> Result<Tensor, TensorError> {
    let n = numel_of(shape)?;
    let (cs, xs, ys) = (typed::<bool>(cond)?, typed::<T>(x)?, typed::<T>(y)?);
    let whole = |t: &Tensor| t.is_contiguous() && t.numel() == n;
    let (bx, by) = (Branch::of(x, xs, n)?, Branch::of(y, ys, n)?);
    let out: Vec<T> = match (n > 0 && whole(cond), bx, by) {
        (true, Some(bx), Some(by)) => build(
            shape,
            #[inline(always)]
            |s, c| {
                let ks = &cs[s..s + c.len()];
                // One loop per combination, so each is a straight vectorisable
                // loop over slices.
                match (bx, by) {
                    (Branch::Whole(a), Branch::Whole(b)) => {
                        for (o, ((&k, &a), &b)) in c.iter_mut().zip(ks.iter().zip(&a[s..]).zip(&b[s..])) {
                            o.write(pick(k, a, b));
                        }
                    }
                    (Branch::Whole(a), Branch::One(b)) => {
                        for (o, (&k, &a)) in c.iter_mut().zip(ks.iter().zip(&a[s..])) {
                            o.write(pick(k, a, b));
                        }
                    }
                    (Branch::One(a), Branch::Whole(b)) => {
                        for (o, (&k, &b)) in c.iter_mut().zip(ks.iter().zip(&b[s..])) {
                            o.write(pick(k, a, b));
                        }
                    }
                    (Branch::One(a), Branch::One(b)) => {
                        for (o, &k) in c.iter_mut().zip(ks) {
                            o.write(pick(k, a, b));
                        }
                    }
                }
            },
        )?,
        _ => {
            let (cv, xv, yv) = (
                cond.broadcast_view(shape)?,
                x.broadcast_view(shape)?,
                y.broadcast_view(shape)?,
            );
            let bases = [cv.offset() as isize, xv.offset() as isize, yv.offset() as isize];
            let strides = [cv.strides(), xv.strides(), yv.strides()];
            let last: [isize; 3] = strides.map(|s| s.last().copied().unwrap_or(0));
            build(
                shape,
                #[inline(always)]
                |s, c| {
                    walk(shape, bases, strides, s, c.len(), |p, offs, m| {
                        for (t, o) in c[p..p + m].iter_mut().enumerate() {
                            let at = |k: usize| (offs[k] + t as isize * last[k]) as usize;
                            o.write(pick(cs[at(0)], xs[at(1)], ys[at(2)]));
                        }
                    })
                },
            )?
        }
    };
    Tensor::from_vec(out, shape.to_vec())
}

/// `clip(x, lo, hi)` = minimum(maximum(x, lo), hi), as NumPy and PyTorch
/// define it (so `lo > hi` gives `hi`, and a NaN bound propagates). The
/// result keeps x's dtype, so a bound must promote into it: a weak Int
/// bound must fit an integer x, and an F64 bound needs a float x.
pub(super) fn run_clip(args: &Args) -> Result<Out, TensorError> {
    let x = args.tensor("x")?;
    let number = |name| matches!(args.get(name), Some(Arg::Int(_) | Arg::Float(_) | Arg::Bool(_)));
    let mut out = x.clone();
    let mut bounds = Vec::with_capacity(2);
    for (name, op) in [("lo", BinaryOp::Maximum), ("hi", BinaryOp::Minimum)] {
        if args.get(name).is_none() {
            continue;
        }
        let bound = operand(args, name)?;
        let dt = common_dtype("clip", &Operand::Tensor(x), &bound)?;
        if dt != x.dtype() {
            let what = match bound {
                Operand::Tensor(t) => format!("a {} tensor", t.dtype()),
                Operand::Int(_) => "an Int".to_string(),
                Operand::Float(_) => "an F64".to_string(),
                Operand::Bool(_) => "a Bool".to_string(),
            };
            return err(format!(
                "`clip` keeps the dtype of x ({}), so its `{name}` cannot be {what}",
                x.dtype()
            ));
        }
        bounds.push((op, bound));
    }
    if let [(_, lo), (_, hi)] = &bounds[..] {
        if number("lo") && number("hi") {
            let dt = x.dtype();
            return clip_both(x, &operand_as(lo, dt)?, &operand_as(hi, dt)?).map(Out::Tensor);
        }
    }
    for (op, bound) in bounds {
        out = binary(op, Operand::Tensor(&out), bound)?;
    }
    Ok(Out::Tensor(out))
}

/// `clip` between two number bounds (one-element tensors of x's dtype) in
/// one pass: each element's `maximum` with `lo`, then that one's `minimum`
/// with `hi`, the functions the two passes of the general path apply.
fn clip_both(x: &Tensor, lo: &Tensor, hi: &Tensor) -> Result<Tensor, TensorError> {
    fn int<T: Int>(x: &Tensor, lo: &Tensor, hi: &Tensor) -> Result<Tensor, TensorError> {
        let (lo, hi) = (only::<T>(lo)?, only::<T>(hi)?);
        map1(x, move |a: T| a.max(lo).min(hi))
    }
    fn float<T: Flt>(x: &Tensor, lo: &Tensor, hi: &Tensor) -> Result<Tensor, TensorError> {
        let (lo, hi) = (only::<T>(lo)?, only::<T>(hi)?);
        map1(x, move |a: T| float_min(float_max(a, lo), hi))
    }
    match x.dtype() {
        DType::Bool => {
            let (lo, hi) = (only::<bool>(lo)?, only::<bool>(hi)?);
            map1(x, move |a: bool| (a | lo) & hi)
        }
        DType::I8 => int::<i8>(x, lo, hi),
        DType::I32 => int::<i32>(x, lo, hi),
        DType::Bf16 => float::<bf16>(x, lo, hi),
        DType::F16 => float::<f16>(x, lo, hi),
        DType::F32 => float::<f32>(x, lo, hi),
        DType::F64 => float::<f64>(x, lo, hi),
    }
}

// ---------------------------------------------------------------------------
// Unary operations.

/// The unary elementwise functions; each also applies to a host number
/// (spec §3), which is how the evaluator's host math knows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Neg,
    Abs,
    Sign,
    Relu,
    Square,
    Exp,
    Log,
    Log1p,
    Expm1,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Floor,
    Ceil,
    Round,
    IsNan,
    IsInf,
    IsFinite,
    Exp2,
    Log2,
    Log10,
    Cbrt,
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
    Asinh,
    Acosh,
    Atanh,
    Erf,
    Erfc,
    Reciprocal,
    Trunc,
    Signbit,
    Lgamma,
    Digamma,
}

impl Unary {
    /// The f64 function of an operation whose result cannot be an integer
    /// (seed 000: it promotes an integer input to f32).
    pub fn transcendental(self) -> Option<fn(f64) -> f64> {
        Some(match self {
            Unary::Exp => math::exp,
            Unary::Log => math::log,
            Unary::Log1p => math::log1p,
            Unary::Expm1 => math::expm1,
            Unary::Sqrt => math::sqrt,
            Unary::Rsqrt => math::rsqrt,
            Unary::Sin => math::sin,
            Unary::Cos => math::cos,
            Unary::Tan => math::tan,
            Unary::Tanh => math::tanh,
            Unary::Sigmoid => math::sigmoid,
            Unary::Exp2 => math::exp2,
            Unary::Log2 => math::log2,
            Unary::Log10 => math::log10,
            Unary::Cbrt => math::cbrt,
            Unary::Sinh => math::sinh,
            Unary::Cosh => math::cosh,
            Unary::Asin => math::asin,
            Unary::Acos => math::acos,
            Unary::Atan => math::atan,
            Unary::Asinh => math::asinh,
            Unary::Acosh => math::acosh,
            Unary::Atanh => math::atanh,
            Unary::Erf => math::erf,
            Unary::Erfc => math::erfc,
            Unary::Reciprocal => math::reciprocal,
            Unary::Lgamma => math::lgamma,
            Unary::Digamma => math::digamma,
            Unary::Neg
            | Unary::Abs
            | Unary::Sign
            | Unary::Relu
            | Unary::Square
            | Unary::Floor
            | Unary::Ceil
            | Unary::Round
            | Unary::IsNan
            | Unary::IsInf
            | Unary::IsFinite
            | Unary::Trunc
            | Unary::Signbit => return None,
        })
    }
}

pub(crate) fn unary(u: Unary, x: &Tensor) -> Result<Tensor, TensorError> {
    if worth_a_table(u, x.dtype()) {
        if let Some(t) = super::lookup::apply(u as u32, x, |d| unary_direct(u, d))? {
            return Ok(t);
        }
    }
    unary_direct(u, x)
}

/// Whether `u` of a large `dt` tensor is read from a table of its results
/// on every element (`lookup`; measured on 1e7 elements in
/// docs/performance.md): every function computed in f64 (the
/// transcendentals, whose f32 result an i8 or bool input gets too) and the
/// roundings; for f16, whose elements the kernels convert one by one,
/// everything but `neg` and `abs` (a sign-bit operation each). bf16's
/// other kernels work on its bits or through f32 and are faster than a
/// table read, and so is bf16's `sqrt`.
fn worth_a_table(u: Unary, dt: DType) -> bool {
    let rounding = matches!(u, Unary::Floor | Unary::Ceil | Unary::Round | Unary::Trunc);
    match dt {
        DType::F16 => !matches!(u, Unary::Neg | Unary::Abs),
        DType::Bf16 => (u.transcendental().is_some() && u != Unary::Sqrt) || rounding,
        DType::I8 | DType::Bool => u.transcendental().is_some(),
        DType::I32 | DType::F32 | DType::F64 => false,
    }
}

/// `u(x)` by its kernel, element by element (`unary` reads a large narrow
/// tensor's result from a table of this function's results instead).
fn unary_direct(u: Unary, x: &Tensor) -> Result<Tensor, TensorError> {
    if let Some(f) = u.transcendental() {
        let dt = float_result(x.dtype());
        let x = x.cast(dt)?;
        return match dt {
            DType::Bf16 => transcendental::<bf16>(u, f, &x),
            DType::F16 => transcendental::<f16>(u, f, &x),
            DType::F32 => transcendental::<f32>(u, f, &x),
            DType::F64 => transcendental::<f64>(u, f, &x),
            DType::Bool | DType::I8 | DType::I32 => err(format!("internal error: `{u:?}` of {dt}")),
        };
    }
    match x.dtype() {
        DType::Bool => bool_unary(u, x),
        DType::I8 => int_unary::<i8>(u, x),
        DType::I32 => int_unary::<i32>(u, x),
        DType::Bf16 => float_unary::<bf16>(u, x),
        DType::F16 => float_unary::<f16>(u, x),
        DType::F32 => float_unary::<f32>(u, x),
        DType::F64 => float_unary::<f64>(u, x),
    }
}

fn transcendental<T: Flt>(u: Unary, f: fn(f64) -> f64, x: &Tensor) -> Result<Tensor, TensorError> {
    match (u, T::DTYPE) {
        (Unary::Sqrt, _) => map1(x, T::sqrt),
        // `math`'s own two-operation functions, called directly rather
        // than through `f` so that the loop inlines and vectorises them
        // (the same f64 operations, so the same bits).
        (Unary::Rsqrt, _) => map1(x, |a: T| T::round(math::rsqrt(a.wide()))),
        // 1 / x rounded once is the division kernel's `1 / x` (`Flt::div`:
        // f32's own division, correctly rounded, gives the same bits).
        (Unary::Reciprocal, _) => {
            let one = T::round(1.0);
            map1(x, move |a: T| T::div(one, a))
        }
        (Unary::Exp, DType::F32) => fast_map::<fast::Exp, f32>(x),
        (Unary::Exp, DType::Bf16) => fast_map::<fast::Exp, bf16>(x),
        (Unary::Sigmoid, DType::F32) => fast_map::<fast::Sigmoid, f32>(x),
        (Unary::Sigmoid, DType::Bf16) => fast_map::<fast::Sigmoid, bf16>(x),
        (Unary::Tanh, DType::F32) => fast_map::<fast::Tanh, f32>(x),
        (Unary::Tanh, DType::Bf16) => fast_map::<fast::Tanh, bf16>(x),
        (Unary::Exp, DType::F16) => fast_map::<fast::Exp, f16>(x),
        (Unary::Sigmoid, DType::F16) => fast_map::<fast::Sigmoid, f16>(x),
        (Unary::Tanh, DType::F16) => fast_map::<fast::Tanh, f16>(x),
        (Unary::Log, DType::F32) => fast_map::<fast::Log, f32>(x),
        (Unary::Log2, DType::F32) => fast_map::<fast::Log2, f32>(x),
        (Unary::Log10, DType::F32) => fast_map::<fast::Log10, f32>(x),
        (Unary::Log1p, DType::F32) => fast_map::<fast::Log1p, f32>(x),
        (Unary::Expm1, DType::F32) => fast_map::<fast::Expm1, f32>(x),
        (Unary::Exp2, DType::F32) => fast_map::<fast::Exp2, f32>(x),
        (Unary::Sinh, DType::F32) => fast_map::<fast::Sinh, f32>(x),
        (Unary::Cosh, DType::F32) => fast_map::<fast::Cosh, f32>(x),
        (Unary::Sin, DType::F32) => fast_map::<fast::Sin, f32>(x),
        (Unary::Cos, DType::F32) => fast_map::<fast::Cos, f32>(x),
        (Unary::Tan, DType::F32) => fast_map::<fast::Tan, f32>(x),
        (Unary::Atan, DType::F32) => fast_map::<fast::Atan, f32>(x),
        (Unary::Asin, DType::F32) => fast_map::<fast::Asin, f32>(x),
        (Unary::Acos, DType::F32) => fast_map::<fast::Acos, f32>(x),
        _ => map1(x, move |a: T| T::round(f(a.wide()))),
    }
}

/// A function with a fast kernel (see `fast`) applied to an f32, bf16 or
/// f16 tensor, giving the same dtype.
fn fast_map<F: fast::Approx, T: fast::Lane + fast::ApproxOut>(x: &Tensor) -> Result<Tensor, TensorError> {
    let x = x.contiguous()?;
    let xs = typed::<T>(&x)?;
    let out = build(
        x.shape(),
        #[inline(always)]
        |s, c| fast::apply::<F, T, T>(&xs[s..s + c.len()], c),
    )?;
    Tensor::from_vec(out, x.shape().to_vec())
}

fn float_unary<T: Flt>(u: Unary, x: &Tensor) -> Result<Tensor, TensorError> {
    match u {
        Unary::Neg => map1(x, T::neg),
        Unary::Abs => map1(x, T::abs),
        // As PyTorch: (0 < x) - (x < 0), so sign(nan) and sign(-0) are +0.
        Unary::Sign => map1(x, |a: T| {
            let v = a.wide();
            T::round(f64::from(i8::from(0.0 < v) - i8::from(v < 0.0)))
        }),
        // `x <= 0 ? 0 : x` keeps a NaN (seed 004: every comparison with
        // NaN is false, so the NaN falls through to x).
        Unary::Relu => map1(x, |a: T| if a.wide() <= 0.0 { T::round(0.0) } else { a }),
        Unary::Square => map1(x, |a: T| T::mul(a, a)),
        Unary::Floor => map1(x, T::floor),
        Unary::Ceil => map1(x, T::ceil),
        Unary::Round => map1(x, T::round_even),
        Unary::IsNan => map1(x, |a: T| a.wide().is_nan()),
        Unary::IsInf => map1(x, |a: T| a.wide().is_infinite()),
        Unary::IsFinite => map1(x, |a: T| a.wide().is_finite()),
        Unary::Trunc => map1(x, |a: T| T::round(a.wide().trunc())),
        // The sign bit itself: true for -0 and for a NaN whose sign is set.
        Unary::Signbit => map1(x, |a: T| a.wide().is_sign_negative()),
        // The transcendentals take the `transcendental` path.
        Unary::Exp
        | Unary::Log
        | Unary::Log1p
        | Unary::Expm1
        | Unary::Sqrt
        | Unary::Rsqrt
        | Unary::Sin
        | Unary::Cos
        | Unary::Tan
        | Unary::Tanh
        | Unary::Sigmoid
        | Unary::Exp2
        | Unary::Log2
        | Unary::Log10
        | Unary::Cbrt
        | Unary::Sinh
        | Unary::Cosh
        | Unary::Asin
        | Unary::Acos
        | Unary::Atan
        | Unary::Asinh
        | Unary::Acosh
        | Unary::Atanh
        | Unary::Erf
        | Unary::Erfc
        | Unary::Reciprocal
        | Unary::Lgamma
        | Unary::Digamma => err(format!("internal error: `{u:?}` reached the float kernels")),
    }
}

fn int_unary<T: Int>(u: Unary, x: &Tensor) -> Result<Tensor, TensorError> {
    match u {
        Unary::Neg => map1(x, T::wneg),
        Unary::Abs => map1(x, T::wabs),
        Unary::Sign => map1(x, T::signum),
        Unary::Relu => map1(x, |a: T| a.max(T::ZERO)),
        Unary::Square => map1(x, |a: T| T::wmul(a, a)),
        Unary::Floor | Unary::Ceil | Unary::Round => x.contiguous(),
        Unary::IsNan | Unary::IsInf => map1(x, |_: T| false),
        Unary::IsFinite => map1(x, |_: T| true),
        Unary::Trunc => x.contiguous(),
        Unary::Signbit => map1(x, |a: T| a < T::ZERO),
        // An integer input of a transcendental is promoted first.
        Unary::Exp
        | Unary::Log
        | Unary::Log1p
        | Unary::Expm1
        | Unary::Sqrt
        | Unary::Rsqrt
        | Unary::Sin
        | Unary::Cos
        | Unary::Tan
        | Unary::Tanh
        | Unary::Sigmoid
        | Unary::Exp2
        | Unary::Log2
        | Unary::Log10
        | Unary::Cbrt
        | Unary::Sinh
        | Unary::Cosh
        | Unary::Asin
        | Unary::Acos
        | Unary::Atan
        | Unary::Asinh
        | Unary::Acosh
        | Unary::Atanh
        | Unary::Erf
        | Unary::Erfc
        | Unary::Reciprocal
        | Unary::Lgamma
        | Unary::Digamma => err(format!("internal error: `{u:?}` reached the integer kernels")),
    }
}

fn bool_unary(u: Unary, x: &Tensor) -> Result<Tensor, TensorError> {
    match u {
        Unary::Neg => err("`neg` is not defined for bool tensors (`x == false` is the logical not)".into()),
        // On false < true, abs, sign, relu, square, floor, ceil and round
        // are all the identity.
        Unary::Abs
        | Unary::Sign
        | Unary::Relu
        | Unary::Square
        | Unary::Floor
        | Unary::Ceil
        | Unary::Round => x.contiguous(),
        Unary::IsNan | Unary::IsInf => map1(x, |_: bool| false),
        Unary::IsFinite => map1(x, |_: bool| true),
        Unary::Trunc => x.contiguous(),
        Unary::Signbit => map1(x, |_: bool| false),
        Unary::Exp
        | Unary::Log
        | Unary::Log1p
        | Unary::Expm1
        | Unary::Sqrt
        | Unary::Rsqrt
        | Unary::Sin
        | Unary::Cos
        | Unary::Tan
        | Unary::Tanh
        | Unary::Sigmoid
        | Unary::Exp2
        | Unary::Log2
        | Unary::Log10
        | Unary::Cbrt
        | Unary::Sinh
        | Unary::Cosh
        | Unary::Asin
        | Unary::Acos
        | Unary::Atan
        | Unary::Asinh
        | Unary::Acosh
        | Unary::Atanh
        | Unary::Erf
        | Unary::Erfc
        | Unary::Reciprocal
        | Unary::Lgamma
        | Unary::Digamma => err(format!("internal error: `{u:?}` reached the bool kernels")),
    }
}

// ---------------------------------------------------------------------------
// Vectorised transcendental functions for f32, bf16 and f16 that give exactly the
// bits of the reference `round(math::f(x))`.

mod fast {
    //! `exp`, `sigmoid` and `tanh` of f32, bf16 and f16 elements, and `log`,
    //! `log2`, `log10`, `log1p`, `expm1`, `exp2`, `sinh`, `cosh`, `sin`,
    //! `cos`, `tan`, `atan`, `asin` and `acos` of f32 elements,
    //! bit-identical to rounding `math`'s f64 function once to the
    //! result dtype, at SIMD speed.
    //!
    //! Why it is exact: a cheap f64 approximation `y` of f(x), whose error
    //! is measured (by the tests below) to stay far below a margin of M f64
    //! ulps, and the reference `z = math::f(x)`, within a few ulps of f(x),
    //! differ by less than M ulps. Two f64 values round to different values
    //! of the result format only if a rounding boundary of that format — a
    //! midpoint between two adjacent values, whose f64 bits below the
    //! format's last mantissa bit are exactly 100…0 — lies between them.
    //! So when `y`'s low bits are more than M away from that midpoint
    //! pattern, `y` and `z` round to the same value and rounding `y` gives
    //! the reference result. Otherwise (a few inputs in a million), and
    //! wherever the result would not be a normal number of the format (and
    //! for NaN and infinities), the element is recomputed by the reference
    //! formula. A bf16 result is rounded through f32, which moves `y` by at
    //! most 2^28 f64 ulps, so its margin is widened by 2^29; so is an f16
    //! result's, which also goes through f32, and an f16 result outside
    //! f16's normal range (2^-14 to 65504, much narrower than f32's) is
    //! recomputed too. The
    //! approximation's own bits may differ between the FMA and plain builds
    //! below; the results cannot.

    use std::mem::MaybeUninit;

    use half::{bf16, f16};

    use crate::convert::{bf16_to_f32, f16_bits_to_f64, f32_to_bf16, f32_to_f16_bits};
    use crate::float_format::FloatFormat;
    use crate::math;
    use crate::ops::elementwise::Flt;

    const INV_LN2: f64 = std::f64::consts::LOG2_E;
    /// ln 2 split as in fdlibm: the high part has 21 trailing zero bits, so
    /// k · LN2_HI is exact for every k used here.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    /// 1.5 · 2^52: adding it rounds to an integer held in the low bits.
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    /// Taylor coefficients 1/n!, n = 12 down to 0.
    const C: [f64; 13] = [
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ];

    #[inline(always)]
    fn madd<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
        if FMA {
            a.mul_add(b, c)
        } else {
            a * b + c
        }
    }

    /// e^x for -87.5 ≤ x ≤ 88.5: x = k ln2 + r with |r| ≤ ln2/2 (plus
    /// rounding slop), e^r by its Taylor series to degree 11 (truncation
    /// below 2^-47), times 2^k built from k's bits.
    #[inline(always)]
    fn exp_approx<const FMA: bool>(x: f64) -> f64 {
        let kd = madd::<FMA>(x, INV_LN2, SHIFTER);
        let k = kd - SHIFTER;
        let r = madd::<FMA>(-k, LN2_LO, madd::<FMA>(-k, LN2_HI, x));
        let mut p = C[1];
        for &c in &C[2..] {
            p = madd::<FMA>(p, r, c);
        }
        // kd's bits are 0x4338_0000_0000_0000 + k; the shift drops all
        // but k + 1023, the biased exponent of 2^k.
        let scale = f64::from_bits(kd.to_bits().wrapping_add(1023) << 52);
        p * scale
    }

    /// e^r - 1 for -87 ≤ r ≤ 88: its own series where |r| < 0.35, where
    /// e^r - 1 would cancel, and e^r - 1 elsewhere (cancellation at most
    /// 3.4×).
    #[inline(always)]
    fn expm1_approx<const FMA: bool>(r: f64) -> f64 {
        let mut q = C[0];
        for &c in &C[1..12] {
            q = madd::<FMA>(q, r, c);
        }
        let series = q * r;
        let big = exp_approx::<FMA>(r) - 1.0;
        if r.abs() < 0.35 {
            series
        } else {
            big
        }
    }

    /// atanh(s) / s - 1 = z/3 + z²/5 + … + z¹¹/23 with z = s², for
    /// |s| ≤ 0.172 (truncation below 2^-60 of the whole).
    #[inline(always)]
    fn atanh_tail<const FMA: bool>(z: f64) -> f64 {
        let mut p = 1.0 / 23.0;
        for d in [21.0, 19.0, 17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0] {
            p = madd::<FMA>(p, z, 1.0 / d);
        }
        p * z
    }

    /// (k, ln m) with x = 2^k m and √½ ≤ m < √2, for a positive normal
    /// f64 x: ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| ≤ 0.172 (m - 1
    /// is exact; the relative error of ln m is a few ulps).
    #[inline(always)]
    fn log_parts<const FMA: bool>(x: f64) -> (f64, f64) {
        let bits = x.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
        let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
        let big = m > std::f64::consts::SQRT_2;
        let m = if big { m * 0.5 } else { m };
        let k = (e + i64::from(big)) as f64;
        let s = (m - 1.0) / (m + 1.0);
        let t = atanh_tail::<FMA>(s * s);
        (k, madd::<FMA>(2.0 * s, t, 2.0 * s))
    }

    /// ln x for a positive normal f64 x: k ln 2 + ln m, with ln 2 in two
    /// parts (k · LN2_HI is exact); the sum cancels at most twofold.
    #[inline(always)]
    fn log_approx<const FMA: bool>(x: f64) -> f64 {
        let (k, lm) = log_parts::<FMA>(x);
        madd::<FMA>(k, LN2_HI, madd::<FMA>(k, LN2_LO, lm))
    }

    /// One function with a fast approximation.
    pub(super) trait Approx {
        /// How far, in f64 ulps, the approximation may be trusted to round
        /// like the reference.
        const MARGIN: u64;
        /// Whether x is in the range where the approximation holds and the
        /// result is a normal f32/bf16 (false for NaN).
        fn in_range(x: f64) -> bool;
        fn approx<const FMA: bool>(x: f64) -> f64;
        fn reference(x: f64) -> f64;
    }

    pub(super) struct Exp;
    pub(super) struct Sigmoid;
    pub(super) struct Tanh;

    impl Approx for Exp {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            // e^-87 ≈ 1.6e-38 is above f32's smallest normal, e^88 ≈ 1.7e38
            // below its largest.
            (-87.0..=88.0).contains(&x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            exp_approx::<FMA>(x)
        }
        fn reference(x: f64) -> f64 {
            math::exp(x)
        }
    }

    impl Approx for Sigmoid {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            (-87.0..=87.0).contains(&x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // The same split as math::sigmoid: e^-|x| never overflows.
            let e = exp_approx::<FMA>(-x.abs());
            let num = if x < 0.0 { e } else { 1.0 };
            num / (1.0 + e)
        }
        fn reference(x: f64) -> f64 {
            math::sigmoid(x)
        }
    }

    impl Approx for Tanh {
        const MARGIN: u64 = 1 << 12;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            // Below 1e-30, tanh x is x to far beyond f64 precision (and
            // may be subnormal); above 40 it is ±1 in every format.
            (1e-30..=40.0).contains(&x.abs())
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // tanh |x| = t / (t + 2) with t = e^(2|x|) - 1.
            let t = expm1_approx::<FMA>(2.0 * x.abs());
            (t / (t + 2.0)).copysign(x)
        }
        fn reference(x: f64) -> f64 {
            math::tanh(x)
        }
    }

    pub(super) struct Log;
    pub(super) struct Log2;
    pub(super) struct Log10;
    pub(super) struct Log1p;
    pub(super) struct Expm1;
    pub(super) struct Exp2;
    pub(super) struct Sinh;
    pub(super) struct Cosh;

    /// A positive finite x other than 1: the logarithms' result is then a
    /// normal number of every format here (ln x, |ln x| ≥ 2^-25 for an f32
    /// x ≠ 1, and below 745 in magnitude); an f32 input is a normal f64.
    #[inline(always)]
    fn log_domain(x: f64) -> bool {
        x > 0.0 && x < f64::INFINITY && x != 1.0
    }

    impl Approx for Log {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            log_domain(x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            log_approx::<FMA>(x)
        }
        fn reference(x: f64) -> f64 {
            math::log(x)
        }
    }

    impl Approx for Log2 {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            log_domain(x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // k + ln m · log2(e): exact for a power of two (ln m = 0).
            let (k, lm) = log_parts::<FMA>(x);
            madd::<FMA>(lm, std::f64::consts::LOG2_E, k)
        }
        fn reference(x: f64) -> f64 {
            math::log2(x)
        }
    }

    impl Approx for Log10 {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            log_domain(x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            let (k, lm) = log_parts::<FMA>(x);
            madd::<FMA>(k, std::f64::consts::LOG10_2, lm * std::f64::consts::LOG10_E)
        }
        fn reference(x: f64) -> f64 {
            math::log10(x)
        }
    }

    impl Approx for Log1p {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            // Above -1 and finite; at least f32's smallest normal in
            // magnitude, so the result (about x) is normal. 1 + x is exact
            // for an f32 x of magnitude 2^-29 or more.
            x > -1.0 && x < f64::INFINITY && x.abs() >= 1.1754943508222875e-38
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // ln(1 + x), 1 + x exact, where |x| ≥ 2^-29; the series
            // x - x²/2 + x³/3 - x⁴/4 below (the next term under 2^-116 x).
            let series = x * madd::<FMA>(madd::<FMA>(madd::<FMA>(x, -0.25, 1.0 / 3.0), x, -0.5), x, 1.0);
            let logged = log_approx::<FMA>(1.0 + x);
            if x.abs() < 1.862645149230957e-9 {
                series
            } else {
                logged
            }
        }
        fn reference(x: f64) -> f64 {
            math::log1p(x)
        }
    }

    impl Approx for Expm1 {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            // At least f32's smallest normal in magnitude (the result is
            // about x), and e^x below f32's largest.
            (-87.0..=88.0).contains(&x) && x.abs() >= 1.1754943508222875e-38
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            expm1_approx::<FMA>(x)
        }
        fn reference(x: f64) -> f64 {
            math::expm1(x)
        }
    }

    impl Approx for Exp2 {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            // 2^-125 and 2^126 are normal f32s.
            (-125.0..=126.0).contains(&x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // e^(x ln 2): the product's rounding moves the result by at
            // most 88 · 2^-53 relative, about 90 ulps.
            exp_approx::<FMA>(x * std::f64::consts::LN_2)
        }
        fn reference(x: f64) -> f64 {
            math::exp2(x)
        }
    }

    impl Approx for Sinh {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            (1e-30..=88.0).contains(&x.abs())
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // sinh |x| = (t + t / (t + 1)) / 2 with t = e^|x| - 1: no
            // cancellation.
            let t = expm1_approx::<FMA>(x.abs());
            (0.5 * (t + t / (t + 1.0))).copysign(x)
        }
        fn reference(x: f64) -> f64 {
            math::sinh(x)
        }
    }

    impl Approx for Cosh {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            x.abs() <= 88.0
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            let e = exp_approx::<FMA>(x.abs());
            0.5 * (e + 1.0 / e)
        }
        fn reference(x: f64) -> f64 {
            math::cosh(x)
        }
    }

    pub(super) struct Sin;
    pub(super) struct Cos;
    pub(super) struct Tan;

    /// 2/π, and π/2 in three parts as in fdlibm's `__rem_pio2`: the first
    /// two have 33 significant bits, so k · part is exact for |k| < 2^20,
    /// and the parts sum to π/2 within 2^-120.
    const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
    const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
    const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
    const PIO2_2T: f64 = f64::from_bits(0x3ba3_198a_2e03_7073);

    /// sin r, cos r and the quadrant n (mod 4) of x = n π/2 + r, for
    /// |x| ≤ 2^20, where |r| ≤ π/4 (plus rounding slop). x - n · PIO2_1 is
    /// exact (the product is, and the difference by Sterbenz's lemma, x
    /// lying within a factor of two of n π/2 when n ≠ 0); the rest of the
    /// reduction errs by about 2^-120 n in absolute terms, far below an ulp
    /// of r for every f32 x (whose distance from the nearest multiple of
    /// π/2 is above 2^-40 in this range). Then the Taylor series: sin to
    /// r^17 and cos to r^16 (truncation below 2^-60 of the result).
    #[inline(always)]
    fn sincos_parts<const FMA: bool>(x: f64) -> (f64, f64, u64) {
        let kd = madd::<FMA>(x, FRAC_2_PI, SHIFTER);
        let k = kd - SHIFTER;
        let t = madd::<FMA>(-k, PIO2_1, x);
        let r = madd::<FMA>(-k, PIO2_2T, madd::<FMA>(-k, PIO2_2, t));
        let z = r * r;
        let mut ps = 1.0 / 355_687_428_096_000.0;
        for c in [
            -1.0 / 1_307_674_368_000.0,
            1.0 / 6_227_020_800.0,
            -1.0 / 39_916_800.0,
            1.0 / 362_880.0,
            -1.0 / 5_040.0,
            1.0 / 120.0,
            -1.0 / 6.0,
        ] {
            ps = madd::<FMA>(ps, z, c);
        }
        let sin = madd::<FMA>(r * z, ps, r);
        let mut pc = 1.0 / 20_922_789_888_000.0;
        for c in [
            -1.0 / 87_178_291_200.0,
            1.0 / 479_001_600.0,
            -1.0 / 3_628_800.0,
            1.0 / 40_320.0,
            -1.0 / 720.0,
            1.0 / 24.0,
            -0.5,
        ] {
            pc = madd::<FMA>(pc, z, c);
        }
        let cos = madd::<FMA>(z, pc, 1.0);
        // kd's low bits hold k (two's complement, plus 2^51 ≡ 0 mod 4).
        (sin, cos, kd.to_bits() & 3)
    }

    /// sin(n π/2 + r) from sin r, cos r and n mod 4 (cos x is the sine a
    /// quadrant on: n + 1).
    #[inline(always)]
    fn sin_in_quadrant(s: f64, c: f64, n: u64) -> f64 {
        let v = if n & 1 == 0 { s } else { c };
        if n & 2 == 0 {
            v
        } else {
            -v
        }
    }

    /// The range of the sin/cos/tan fast path: |x| ≤ 2^20; at least f32's
    /// smallest normal for sin and tan, whose result is then about x.
    #[inline(always)]
    fn trig_domain(x: f64, tiny_ok: bool) -> bool {
        let a = x.abs();
        a <= 1_048_576.0 && (tiny_ok || a >= 1.1754943508222875e-38)
    }

    impl Approx for Sin {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            trig_domain(x, false)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            let (s, c, n) = sincos_parts::<FMA>(x);
            sin_in_quadrant(s, c, n)
        }
        fn reference(x: f64) -> f64 {
            math::sin(x)
        }
    }

    impl Approx for Cos {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            trig_domain(x, true)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            let (s, c, n) = sincos_parts::<FMA>(x);
            sin_in_quadrant(s, c, n + 1)
        }
        fn reference(x: f64) -> f64 {
            math::cos(x)
        }
    }

    impl Approx for Tan {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            trig_domain(x, false)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            // tan = sin r / cos r in even quadrants, -cos r / sin r in odd.
            let (s, c, n) = sincos_parts::<FMA>(x);
            let odd = n & 1 == 1;
            let num = if odd { -c } else { s };
            let den = if odd { s } else { c };
            num / den
        }
        fn reference(x: f64) -> f64 {
            math::tan(x)
        }
    }

    pub(super) struct Atan;
    pub(super) struct Asin;
    pub(super) struct Acos;

    /// tan(π/8) = √2 - 1.
    const TAN_PI_8: f64 = 0.41421356237309503;

    /// atan t for 0 ≤ t ≤ 1: above tan(π/8), π/4 + atan u with u =
    /// (t - 1)/(t + 1), |u| ≤ tan(π/8) (the sum cancels at most twofold);
    /// atan u by its series to u^39 (truncation below 2^-52 of u). No
    /// table and no branch, so the loop vectorises.
    #[inline(always)]
    fn atan_unit<const FMA: bool>(t: f64) -> f64 {
        let big = t > TAN_PI_8;
        let q = (t - 1.0) / (t + 1.0);
        let u = if big { q } else { t };
        let z = u * u;
        let mut p = -1.0 / 39.0;
        for d in [
            37.0, -35.0, 33.0, -31.0, 29.0, -27.0, 25.0, -23.0, 21.0, -19.0, 17.0, -15.0, 13.0, -11.0, 9.0,
            -7.0, 5.0, -3.0,
        ] {
            p = madd::<FMA>(p, z, 1.0 / d);
        }
        let a = madd::<FMA>(u * z, p, u);
        if big {
            std::f64::consts::FRAC_PI_4 + a
        } else {
            a
        }
    }

    /// The angle of the point (x, y) for x, y ≥ 0, not both 0: atan of
    /// the smaller over the larger, from π/2 when y is the larger.
    #[inline(always)]
    fn angle<const FMA: bool>(y: f64, x: f64) -> f64 {
        let a = atan_unit::<FMA>(y.min(x) / y.max(x));
        if y <= x {
            a
        } else {
            std::f64::consts::FRAC_PI_2 - a
        }
    }

    /// √(1 - x²) as √((1 - |x|)(1 + |x|)) for |x| ≤ 1: for an f32 x both
    /// factors are exact, so near ±1 nothing cancels.
    #[inline(always)]
    fn cos_of_asin(x: f64) -> f64 {
        let a = x.abs();
        ((1.0 - a) * (1.0 + a)).sqrt()
    }

    /// f32's smallest normal: below it, asin and atan (about x) would not
    /// be normal.
    const F32_TINY: f64 = 1.1754943508222875e-38;

    impl Approx for Atan {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            let a = x.abs();
            (F32_TINY..f64::INFINITY).contains(&a)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            angle::<FMA>(x.abs(), 1.0).copysign(x)
        }
        fn reference(x: f64) -> f64 {
            math::atan(x)
        }
    }

    impl Approx for Asin {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            (F32_TINY..=1.0).contains(&x.abs())
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            angle::<FMA>(x.abs(), cos_of_asin(x)).copysign(x)
        }
        fn reference(x: f64) -> f64 {
            math::asin(x)
        }
    }

    impl Approx for Acos {
        const MARGIN: u64 = 1 << 10;
        #[inline(always)]
        fn in_range(x: f64) -> bool {
            // acos 1 = 0 is not normal.
            (-1.0..1.0).contains(&x)
        }
        #[inline(always)]
        fn approx<const FMA: bool>(x: f64) -> f64 {
            let a = angle::<FMA>(cos_of_asin(x), x.abs());
            if x < 0.0 {
                std::f64::consts::PI - a
            } else {
                a
            }
        }
        fn reference(x: f64) -> f64 {
            math::acos(x)
        }
    }

    /// An input element type.
    pub(super) trait Lane: Copy + Send + Sync {
        fn load(self) -> f64;
    }

    impl Lane for f32 {
        #[inline(always)]
        fn load(self) -> f64 {
            f64::from(self)
        }
    }

    impl Lane for bf16 {
        #[inline(always)]
        fn load(self) -> f64 {
            f64::from(bf16_to_f32(self))
        }
    }

    impl Lane for f16 {
        #[inline(always)]
        fn load(self) -> f64 {
            // NaN-safe: a NaN loads as a NaN, which no fast range holds.
            f16_bits_to_f64(self.to_bits())
        }
    }

    /// A result element type of the fast kernels: how many f64 mantissa
    /// bits lie below its last bit (from its `FloatFormat`), the extra margin
    /// its fast rounding path needs, and that path, which may round twice;
    /// the margin sends every element it could get wrong to the reference.
    pub(super) trait ApproxOut: Flt {
        const LOW_BITS: u32;
        const EXTRA: u64;
        fn store(y: f64) -> Self;
        /// Whether `y` lies where the format's values are normal (the
        /// midpoint test holds only there); the fast ranges already keep
        /// f32 and bf16 results normal.
        #[inline(always)]
        fn normal(_y: f64) -> bool {
            true
        }
    }

    impl ApproxOut for f32 {
        const LOW_BITS: u32 = FloatFormat::F32.f64_low_bits();
        const EXTRA: u64 = 0;
        #[inline(always)]
        fn store(y: f64) -> f32 {
            y as f32
        }
    }

    impl ApproxOut for bf16 {
        const LOW_BITS: u32 = FloatFormat::BF16.f64_low_bits();
        const EXTRA: u64 = 1 << 29;
        #[inline(always)]
        fn store(y: f64) -> bf16 {
            f32_to_bf16(y as f32)
        }
    }

    impl ApproxOut for f16 {
        const LOW_BITS: u32 = FloatFormat::F16.f64_low_bits();
        const EXTRA: u64 = 1 << 29;
        #[inline(always)]
        fn store(y: f64) -> f16 {
            f16::from_bits(f32_to_f16_bits(y as f32))
        }
        #[inline(always)]
        fn normal(y: f64) -> bool {
            let a = y.abs();
            (6.103515625e-5..=65504.0).contains(&a)
        }
    }

    /// Whether the approximation `y` of f(x) may round differently from
    /// the reference, or x lies outside the fast range.
    #[inline(always)]
    pub(super) fn needs_reference<F: Approx, O: ApproxOut>(x: f64, y: f64) -> bool {
        let low = y.to_bits() & ((1u64 << O::LOW_BITS) - 1);
        let mid = 1u64 << (O::LOW_BITS - 1);
        let m = F::MARGIN + O::EXTRA;
        let near_midpoint = low.wrapping_sub(mid - m) <= 2 * m;
        near_midpoint | !F::in_range(x) | !O::normal(y)
    }

    /// The reference result: the f64 function rounded once.
    pub(super) fn reference<F: Approx, I: Lane, O: ApproxOut>(x: I) -> O {
        O::round(F::reference(x.load()))
    }

    const BLOCK: usize = 256;

    #[inline(always)]
    fn kernel<F: Approx, I: Lane, O: ApproxOut, const FMA: bool>(xs: &[I], out: &mut [MaybeUninit<O>]) {
        for (xb, ob) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let mut redo = false;
            for (o, &x) in ob.iter_mut().zip(xb) {
                let xd = x.load();
                let y = F::approx::<FMA>(xd);
                redo |= needs_reference::<F, O>(xd, y);
                o.write(O::store(y));
            }
            if redo {
                // The same arithmetic again finds the same elements.
                for (o, &x) in ob.iter_mut().zip(xb) {
                    let xd = x.load();
                    if needs_reference::<F, O>(xd, F::approx::<FMA>(xd)) {
                        o.write(reference::<F, I, O>(x));
                    }
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,fma")]
    fn kernel_avx512<F: Approx, I: Lane, O: ApproxOut>(xs: &[I], out: &mut [MaybeUninit<O>]) {
        kernel::<F, I, O, true>(xs, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn kernel_avx2<F: Approx, I: Lane, O: ApproxOut>(xs: &[I], out: &mut [MaybeUninit<O>]) {
        kernel::<F, I, O, true>(xs, out)
    }

    /// Writes f of each of `xs` into `out` (of the same length).
    pub(super) fn apply<F: Approx, I: Lane, O: ApproxOut>(xs: &[I], out: &mut [MaybeUninit<O>]) {
        #[cfg(target_arch = "x86_64")]
        {
            if crate::isa::allows(crate::isa::Level::Avx512)
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU has every feature the function enables.
                return unsafe { kernel_avx512::<F, I, O>(xs, out) };
            }
            if crate::isa::allows(crate::isa::Level::Avx2)
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: as above.
                return unsafe { kernel_avx2::<F, I, O>(xs, out) };
            }
        }
        kernel::<F, I, O, false>(xs, out)
    }

    #[cfg(test)]
    pub(super) fn approx_both<F: Approx>(x: f64) -> [f64; 2] {
        [F::approx::<false>(x), F::approx::<true>(x)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Tensor {
        Tensor::from_vec(v.to_vec(), vec![v.len()]).expect("tensor")
    }

    fn values(t: &Tensor) -> Vec<f64> {
        t.to_f64_vec().expect("f64s")
    }

    /// Runs the fast kernel of F on `xs` at every instruction-set level
    /// the CPU has and checks every element against the reference, bit
    /// for bit.
    fn check_fast<F: fast::Approx, I: fast::Lane + std::fmt::Debug, O: fast::ApproxOut>(xs: &[I]) {
        crate::isa::tests::at_each_level(|level| {
            let mut got = vec![MaybeUninit::<O>::uninit(); xs.len()];
            fast::apply::<F, I, O>(xs, &mut got);
            for (i, &x) in xs.iter().enumerate() {
                // SAFETY: `apply` wrote every element.
                let a = unsafe { got[i].assume_init() };
                let want = fast::reference::<F, I, O>(x);
                let same = a.to_scalar().to_bits() == want.to_scalar().to_bits()
                    || (a.wide().is_nan() && want.wide().is_nan());
                assert!(same, "{x:?} at {level:?}: {:e}, want {:e}", a.wide(), want.wide());
            }
        });
    }

    fn f32_sweep() -> Vec<f32> {
        // Every 97th f32 pattern of magnitude below 120 (where the fast
        // ranges lie), plus NaN, the infinities and the range edges.
        let mut xs: Vec<f32> = (0..=u32::MAX)
            .step_by(97)
            .map(f32::from_bits)
            .filter(|x| x.abs() < 120.0 || !x.is_finite())
            .collect();
        xs.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -87.0,
            87.0,
            88.0,
            88.7,
            -103.9,
            40.0,
            1e-30,
            0.0,
            -0.0,
        ]);
        xs
    }

    #[test]
    fn fast_kernels_match_the_reference_bit_for_bit() {
        let xs = f32_sweep();
        assert!(xs.len() > 5_000_000);
        let hs: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
        check_fast::<fast::Exp, f32, f32>(&xs);
        check_fast::<fast::Sigmoid, f32, f32>(&xs);
        check_fast::<fast::Tanh, f32, f32>(&xs);
        check_fast::<fast::Expm1, f32, f32>(&xs);
        check_fast::<fast::Exp2, f32, f32>(&xs);
        check_fast::<fast::Sinh, f32, f32>(&xs);
        check_fast::<fast::Cosh, f32, f32>(&xs);
        check_fast::<fast::Sin, f32, f32>(&xs);
        check_fast::<fast::Cos, f32, f32>(&xs);
        check_fast::<fast::Tan, f32, f32>(&xs);
        check_fast::<fast::Atan, f32, f32>(&xs);
        check_fast::<fast::Asin, f32, f32>(&xs);
        check_fast::<fast::Acos, f32, f32>(&xs);
        // The logarithms over every magnitude: every 97th positive f32
        // pattern, the neighbours of 1 and the specials.
        let mut ls: Vec<f32> = (0..=0x7f80_0000u32).step_by(97).map(f32::from_bits).collect();
        ls.extend((-64..=64).map(|d: i32| f32::from_bits(1.0f32.to_bits().wrapping_add_signed(d))));
        ls.extend([
            0.0,
            -0.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            1e-45,
        ]);
        check_fast::<fast::Log, f32, f32>(&ls);
        check_fast::<fast::Log2, f32, f32>(&ls);
        check_fast::<fast::Log10, f32, f32>(&ls);
        // log1p from just above -1 to the largest f32.
        let mut l1: Vec<f32> = ls.iter().map(|x| x - 1.0).collect();
        l1.extend(xs.iter().copied());
        check_fast::<fast::Log1p, f32, f32>(&l1);
        for (i, chunk) in xs.chunks(4096).enumerate() {
            // A sample of the f32 sweep is plenty for the bf16 rounding.
            if i % 8 == 0 {
                check_fast::<fast::Exp, f32, bf16>(chunk);
            }
        }
        check_fast::<fast::Exp, bf16, bf16>(&hs);
        check_fast::<fast::Sigmoid, bf16, bf16>(&hs);
        check_fast::<fast::Tanh, bf16, bf16>(&hs);
    }

    /// Every 256th f32 bit pattern (16.7 million inputs, all exponents and
    /// signs), for each fast function. (The same loop over all 2^32 inputs
    /// passed when the kernels were written; it takes minutes, so the suite
    /// samples.)
    #[test]
    fn fast_kernels_are_exact_on_sampled_f32() {
        fn all<F: fast::Approx>() -> usize {
            (0u32..1 << 12)
                .into_par_iter()
                .map(|hi| {
                    let xs: Vec<f32> = (0u32..1 << 20)
                        .step_by(1 << 8)
                        .map(|lo| f32::from_bits(hi << 20 | lo | (hi & 0xFF)))
                        .collect();
                    let mut got = vec![MaybeUninit::<f32>::uninit(); xs.len()];
                    fast::apply::<F, f32, f32>(&xs, &mut got);
                    let mut bad = 0;
                    for (&x, g) in xs.iter().zip(&got) {
                        // SAFETY: `apply` wrote every element.
                        let g = unsafe { g.assume_init() };
                        let w = fast::reference::<F, f32, f32>(x);
                        if g.to_bits() != w.to_bits() && !(g.is_nan() && w.is_nan()) {
                            bad += 1;
                        }
                    }
                    bad
                })
                .sum()
        }
        assert_eq!(all::<fast::Exp>(), 0, "exp");
        assert_eq!(all::<fast::Sigmoid>(), 0, "sigmoid");
        assert_eq!(all::<fast::Tanh>(), 0, "tanh");
        assert_eq!(all::<fast::Log>(), 0, "log");
        assert_eq!(all::<fast::Log2>(), 0, "log2");
        assert_eq!(all::<fast::Log10>(), 0, "log10");
        assert_eq!(all::<fast::Log1p>(), 0, "log1p");
        assert_eq!(all::<fast::Expm1>(), 0, "expm1");
        assert_eq!(all::<fast::Exp2>(), 0, "exp2");
        assert_eq!(all::<fast::Sinh>(), 0, "sinh");
        assert_eq!(all::<fast::Cosh>(), 0, "cosh");
        assert_eq!(all::<fast::Sin>(), 0, "sin");
        assert_eq!(all::<fast::Cos>(), 0, "cos");
        assert_eq!(all::<fast::Tan>(), 0, "tan");
        assert_eq!(all::<fast::Atan>(), 0, "atan");
        assert_eq!(all::<fast::Asin>(), 0, "asin");
        assert_eq!(all::<fast::Acos>(), 0, "acos");
    }

    /// bf16 `+ - * /` through f32 against the f64 path: every bf16 value
    /// against every 257th one (16.8 million pairs; all pairs passed when the
    /// kernels were written, which takes minutes, so the suite samples).
    #[test]
    fn squaring_is_pow_of_two_bit_for_bit() {
        // Every bf16 and f16 pattern, and f32/f64 sweeps with the specials,
        // squared by `x ** 2` (the shortcut) and by `x ** y` with a tensor
        // of 2s (the general path through libm's pow).
        let wide: Vec<f64> = f32_sweep().into_iter().step_by(3).map(f64::from).collect();
        let mut f64s: Vec<f64> = wide.iter().map(|x| x * 1.000_000_1).collect();
        f64s.extend([
            1e154,
            1.3407807929942596e154,
            1e-162,
            5e-324,
            f64::MAX,
            f64::NAN,
            -0.0,
        ]);
        let tensors = [
            Tensor::from_vec((0..=u16::MAX).map(bf16::from_bits).collect(), vec![1 << 16]).unwrap(),
            Tensor::from_vec((0..=u16::MAX).map(f16::from_bits).collect(), vec![1 << 16]).unwrap(),
            Tensor::from_vec(f32_sweep(), vec![f32_sweep().len()]).unwrap(),
            Tensor::from_vec(f64s.clone(), vec![f64s.len()]).unwrap(),
            // Every f32 NaN: both signs, quiet and signalling, every payload.
            Tensor::from_vec(
                (0x7f80_0001u32..=0x7fff_ffff)
                    .chain(0xff80_0001..=0xffff_ffff)
                    .map(f32::from_bits)
                    .collect::<Vec<f32>>(),
                vec![2 * ((1 << 23) - 1)],
            )
            .unwrap(),
            // f64 NaNs of both signs, quiet and signalling, with payloads
            // over all 51 bits.
            Tensor::from_vec(
                (1..=51u32)
                    .flat_map(|b| {
                        [
                            1u64 << (b - 1),
                            (1u64 << b) - 1,
                            0x5555_5555_5555_5555 & ((1u64 << b) - 1),
                        ]
                    })
                    .flat_map(|p| [p, p | (1 << 51)])
                    .flat_map(|p| [0x7ff0_0000_0000_0000 | p, 0xfff0_0000_0000_0000 | p])
                    .map(f64::from_bits)
                    .collect::<Vec<f64>>(),
                vec![51 * 3 * 2 * 2],
            )
            .unwrap(),
        ];
        for x in &tensors {
            let twos = Tensor::full(x.shape().to_vec(), Scalar::F64(2.0), x.dtype())
                .unwrap()
                .cast(x.dtype())
                .unwrap();
            let fast = binary(BinaryOp::Pow, Operand::Tensor(x), Operand::Int(2)).unwrap();
            let general = binary(BinaryOp::Pow, Operand::Tensor(x), Operand::Tensor(&twos)).unwrap();
            let bits = |t: &Tensor| t.scalars().map(|s| s.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&general), "{}", x.dtype());
        }
    }

    /// `x ** 3` and `x ** 4` as f64 products against `x ** y` with a tensor
    /// of 3s or 4s (the general path through libm's pow), bit for bit: every
    /// bf16 and f16 pattern, the f32 sweep, every f32 NaN and a million
    /// random f32 patterns (`examples/pow_chains.rs` runs all 2^32); f64
    /// keeps pow for both.
    #[test]
    fn small_powers_are_pow_bit_for_bit() {
        let mut bits32 = crate::ops::order::tests::xorshift(0x2545_f491_4f6c_dd1d);
        let random: Vec<f32> = (0..1 << 20).map(|_| f32::from_bits(bits32() as u32)).collect();
        let nans: Vec<f32> = (0x7f80_0001u32..=0x7fff_ffff)
            .chain(0xff80_0001..=0xffff_ffff)
            .step_by(7)
            .map(f32::from_bits)
            .collect();
        let tensors = [
            Tensor::from_vec((0..=u16::MAX).map(bf16::from_bits).collect(), vec![1 << 16]).unwrap(),
            Tensor::from_vec((0..=u16::MAX).map(f16::from_bits).collect(), vec![1 << 16]).unwrap(),
            Tensor::from_vec(f32_sweep(), vec![f32_sweep().len()]).unwrap(),
            Tensor::from_vec(random.clone(), vec![random.len()]).unwrap(),
            Tensor::from_vec(nans.clone(), vec![nans.len()]).unwrap(),
            Tensor::from_vec(vec![f64::NAN, -0.0, 1.5, -3.25, 1e100, f64::INFINITY], vec![6]).unwrap(),
        ];
        let bits = |t: &Tensor| t.scalars().map(|s| s.to_bits()).collect::<Vec<_>>();
        for x in &tensors {
            for k in [3i64, 4] {
                let ks = Tensor::full(x.shape().to_vec(), Scalar::F64(k as f64), x.dtype())
                    .unwrap()
                    .cast(x.dtype())
                    .unwrap();
                let fast = binary(BinaryOp::Pow, Operand::Tensor(x), Operand::Int(k)).unwrap();
                let general = binary(BinaryOp::Pow, Operand::Tensor(x), Operand::Tensor(&ks)).unwrap();
                assert_eq!(bits(&fast), bits(&general), "{} ** {k}", x.dtype());
            }
        }
    }

    /// `copysign` on the bits against its definition (the f64 copysign of
    /// the exact values, rounded back): every bf16 and f16 pattern against
    /// signs of every class (zeros, subnormals, infinities, quiet and
    /// signalling NaNs), f32 over a sweep and every NaN class, f64 with its
    /// signalling NaNs kept.
    #[test]
    fn copysign_on_bits_is_the_f64_definition() {
        fn check<T: Flt>(xs: &[T], ys: &[T]) {
            for &a in xs {
                for &b in ys {
                    let want = T::round(math::copysign(a.wide(), b.wide())).bits();
                    assert_eq!(
                        T::copysign_bits(a, b).bits(),
                        want,
                        "{} {:#x} {:#x}",
                        T::DTYPE,
                        a.bits(),
                        b.bits()
                    );
                }
            }
        }
        let signs16 = [
            0x0000u16, 0x8000, 0x0001, 0x8001, 0x7f80, 0xff80, 0x7c00, 0xfc00, 0x7fc0, 0xffc1, 0x7f81,
            0xfe01, 0x7c01, 0x3c00, 0xbc00,
        ];
        let all_bf16: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
        let all_f16: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        check(&all_bf16, &signs16.map(bf16::from_bits));
        check(&all_f16, &signs16.map(f16::from_bits));
        let mut f32s = f32_sweep();
        f32s.extend(
            [
                0x7f80_0001u32,
                0xff80_0001,
                0x7fbf_ffff,
                0x7fc0_0000,
                0xffff_ffff,
                0x7fff_ffff,
            ]
            .map(f32::from_bits),
        );
        check(
            &f32s,
            &[
                0.0,
                -0.0,
                1.0,
                -1.0,
                f32::NAN,
                -f32::NAN,
                f32::from_bits(0xff80_0001),
                f32::from_bits(1),
            ],
        );
        let f64s: Vec<f64> = f32s
            .iter()
            .map(|&x| f64::from(x) * 1.5)
            .chain([
                f64::from_bits(0x7ff0_0000_0000_0001),
                f64::from_bits(0xfff0_0000_0000_0001),
                f64::from_bits(0x7ff8_0000_0000_0000),
                f64::from_bits(1),
            ])
            .collect();
        check(
            &f64s,
            &[
                0.0,
                -0.0,
                -1.0,
                f64::from_bits(0xfff0_0000_0000_0001),
                f64::from_bits(0x7ff0_0000_0000_0001),
            ],
        );
    }

    /// `clip` between two number bounds in one pass against its two passes
    /// (`maximum` with lo, then `minimum` with hi) for every dtype: bounds
    /// in and out of order, signed zeros, NaN elements and NaN bounds,
    /// integer extremes, on contiguous and transposed inputs.
    #[test]
    fn one_pass_clip_is_the_two_passes() {
        let specials = [
            f64::NAN,
            -0.0,
            0.0,
            1.0,
            -2.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.5,
            -0.5,
            127.0,
            -128.0,
            1e-40,
        ];
        let bounds = [
            (Arg::Float(-0.5), Arg::Float(0.5)),
            (Arg::Float(0.5), Arg::Float(-0.5)),
            (Arg::Float(-0.0), Arg::Float(0.0)),
            (Arg::Float(0.0), Arg::Float(-0.0)),
            (Arg::Float(f64::NAN), Arg::Float(1.0)),
            (Arg::Float(-1.0), Arg::Float(f64::NAN)),
            (Arg::Int(-50), Arg::Int(50)),
            (Arg::Int(-128), Arg::Int(127)),
            (Arg::Int(3), Arg::Int(-3)),
            (Arg::Bool(false), Arg::Bool(true)),
            (Arg::Bool(true), Arg::Bool(false)),
        ];
        let bits = |t: &Tensor| t.scalars().map(|v| v.to_bits()).collect::<Vec<_>>();
        for dt in DType::ALL {
            let vals: Vec<f64> = (0..3 * 70)
                .map(|i| specials[i % specials.len()] * (1 + i / 40) as f64)
                .collect();
            let x = crate::dispatch!(dt, T => Tensor::from_vec(vals.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![3, 70]).unwrap());
            for x in [x.clone(), x.permuted(&[1, 0]).unwrap()] {
                for (lo, hi) in &bounds {
                    let fused =
                        crate::ops::call_named("clip", vec![Arg::Tensor(x.clone()), lo.clone(), hi.clone()]);
                    let lo_only = crate::ops::call_named("clip", vec![Arg::Tensor(x.clone()), lo.clone()]);
                    let two = lo_only.and_then(|o| match o {
                        Out::Tensor(t) => {
                            let op = crate::ops::Op::from_name("clip").unwrap();
                            let kw = vec![("hi".to_string(), hi.clone())];
                            crate::ops::call(op, crate::ops::bind(op, vec![Arg::Tensor(t)], kw).unwrap())
                                .map_err(|e| TensorError(e.message))
                        }
                        Out::Tensors(_) | Out::Bool(_) | Out::Tuple(_) => panic!("clip gave no tensor"),
                    });
                    match (fused, two) {
                        (Ok(Out::Tensor(f)), Ok(Out::Tensor(t))) => {
                            assert_eq!(f.shape(), t.shape());
                            assert_eq!(bits(&f), bits(&t), "clip {dt} {lo:?} {hi:?}");
                        }
                        (Err(a), Err(b)) => assert_eq!(a.0, b.0),
                        (f, t) => panic!("clip {dt} {lo:?} {hi:?}: {:?} against {:?}", f.err(), t.err()),
                    }
                }
            }
        }
    }

    /// An integer `/` in one pass against the operands cast to f32 and then
    /// divided: i8 and i32 extremes, zeros (the infinities and NaN of a
    /// zero divisor), i32 values that round in the cast, and a scalar Int
    /// operand on either side.
    #[test]
    fn integer_true_division_is_the_f32_casts_divided() {
        let i32s = [
            i32::MIN,
            -16_777_217,
            -3,
            -1,
            0,
            1,
            2,
            7,
            16_777_217,
            123_456_789,
            i32::MAX,
        ];
        let n = i32s.len();
        let xs: Vec<i32> = (0..n * n).map(|k| i32s[k / n]).collect();
        let ys: Vec<i32> = (0..n * n).map(|k| i32s[k % n]).collect();
        let i8s: Vec<i8> = (i8::MIN..=i8::MAX).collect();
        let tensors = [
            (
                Tensor::from_vec(xs, vec![n * n]).unwrap(),
                Tensor::from_vec(ys, vec![n * n]).unwrap(),
            ),
            (
                Tensor::from_vec(i8s.clone(), vec![256]).unwrap(),
                Tensor::from_vec(i8s.iter().rev().copied().collect::<Vec<i8>>(), vec![256]).unwrap(),
            ),
        ];
        let bits = |t: Tensor| t.scalars().map(|v| v.to_bits()).collect::<Vec<_>>();
        for (x, y) in &tensors {
            let f = |t: &Tensor| t.cast(DType::F32).unwrap();
            let (fx, fy) = (f(x), f(y));
            let cases = [
                (
                    Operand::Tensor(x),
                    Operand::Tensor(y),
                    Operand::Tensor(&fx),
                    Operand::Tensor(&fy),
                ),
                (
                    Operand::Tensor(x),
                    Operand::Int(-7),
                    Operand::Tensor(&fx),
                    Operand::Float(-7.0),
                ),
                (
                    Operand::Int(100),
                    Operand::Tensor(y),
                    Operand::Float(100.0),
                    Operand::Tensor(&fy),
                ),
            ];
            for (a, b, fa, fb) in cases {
                let got = binary(BinaryOp::Div, a, b).unwrap();
                assert_eq!(got.dtype(), DType::F32);
                assert_eq!(
                    bits(got),
                    bits(binary(BinaryOp::Div, fa, fb).unwrap()),
                    "{}",
                    x.dtype()
                );
            }
        }
    }

    /// The integer `//`, `%` and `fmod` through the f64 quotient against
    /// the wrapping integer division they replace: every i8 pair, and i32
    /// pairs of the extremes, the small values and a million random ones.
    #[test]
    fn integer_division_through_f64_is_the_wrapping_division() {
        fn check<T: Int + std::fmt::Debug>(a: T, b: T, div: T, rem: T) {
            let (fd, fm) = if rem != T::ZERO && ((rem < T::ZERO) != (b < T::ZERO)) {
                (T::wsub(div, T::wrap_from_i128(1)), T::wadd(rem, b))
            } else {
                (div, rem)
            };
            assert_eq!(T::floor_div(a, b), fd, "{a:?} // {b:?}");
            assert_eq!(T::floor_mod(a, b), fm, "{a:?} % {b:?}");
            assert_eq!(T::trunc_mod(a, b), rem, "fmod({a:?}, {b:?})");
        }
        for a in i8::MIN..=i8::MAX {
            for b in (i8::MIN..=i8::MAX).filter(|&b| b != 0) {
                check(a, b, a.wrapping_div(b), a.wrapping_rem(b));
            }
        }
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -65537,
            -3,
            -2,
            -1,
            0,
            1,
            2,
            3,
            7,
            65536,
            i32::MAX - 1,
            i32::MAX,
        ];
        let mut bits = crate::ops::order::tests::xorshift(77);
        let random = (0..1_000_000).map(|_| {
            let w = bits();
            // Divisors of every magnitude: shift the word's low half.
            (w as i32, ((w >> 32) as i32) >> (w % 31))
        });
        let pairs = edges
            .iter()
            .flat_map(|&a| edges.iter().map(move |&b| (a, b)))
            .chain(random);
        for (a, b) in pairs.filter(|&(_, b)| b != 0) {
            check(a, b, a.wrapping_div(b), a.wrapping_rem(b));
        }
    }

    /// An integer tensor to one Int exponent (the straight-line products
    /// for 0 to 4, `wrapping_pow` above) against the general path, an
    /// exponent tensor of the same values: every i8, and i32 around the
    /// extremes and the wrapping points, for exponents 0 to 9 and 31.
    #[test]
    fn one_integer_exponent_is_the_elementwise_power() {
        let i8s: Vec<i8> = (i8::MIN..=i8::MAX).collect();
        let mut i32s: Vec<i32> = (-300..=300).collect();
        for m in [
            i32::MIN,
            i32::MAX,
            46340,
            46341,
            -46341,
            1290,
            1291,
            65536,
            215,
            216,
        ] {
            i32s.extend([m, m.wrapping_add(1), m.wrapping_sub(1), m.wrapping_neg()]);
        }
        let tensors = [
            Tensor::from_vec(i8s.clone(), vec![i8s.len()]).unwrap(),
            Tensor::from_vec(i32s.clone(), vec![i32s.len()]).unwrap(),
            Tensor::from_vec(vec![true, false, true], vec![3]).unwrap(),
        ];
        for x in &tensors {
            for e in (0..=9).chain([31]) {
                let es = Tensor::full(x.shape().to_vec(), Scalar::F64(f64::from(e)), DType::I32)
                    .unwrap()
                    .cast(if x.dtype() == DType::Bool {
                        DType::I32
                    } else {
                        x.dtype()
                    })
                    .unwrap();
                let one = binary(BinaryOp::Pow, Operand::Tensor(x), Operand::Int(i64::from(e))).unwrap();
                let each = binary(BinaryOp::Pow, Operand::Tensor(x), Operand::Tensor(&es)).unwrap();
                assert_eq!(one.dtype(), each.dtype(), "{} ** {e}", x.dtype());
                let bits = |t: &Tensor| t.scalars().map(|s| s.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&one), bits(&each), "{} ** {e}", x.dtype());
                // And the definition, element by element, in i128.
                for (s, &v) in one.scalars().zip(&x.to_f64_vec().unwrap()) {
                    let mut p = 1i128;
                    for _ in 0..e {
                        p *= v as i128;
                        p = if one.dtype() == DType::I8 {
                            p as i8 as i128
                        } else {
                            p as i32 as i128
                        };
                    }
                    assert_eq!(s.to_f64(), p as f64, "{} ** {e} at {v}", x.dtype());
                }
            }
        }
    }

    /// `logical_and/or/xor/not` of tensors of one dtype in one pass
    /// against the casts to bool followed by the bool operations, for
    /// every dtype, with NaN, ±0, infinities and the integer extremes,
    /// contiguous, broadcast both ways and through a transposed view.
    #[test]
    fn one_pass_logical_ops_are_the_casts_then_the_bool_ops() {
        use crate::ops::{call, Op};
        let vals = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            0.5,
            127.0,
            -128.0,
            3.0,
            0.0,
            2.0,
        ];
        let run = |op: Op, args: Vec<&Tensor>| -> Tensor {
            match call(
                op,
                args.into_iter().map(|t| Some(Arg::Tensor(t.clone()))).collect(),
            ) {
                Ok(Out::Tensor(t)) => t,
                _ => panic!("{op} did not give a tensor"),
            }
        };
        let bits = |t: &Tensor| {
            (
                t.shape().to_vec(),
                t.scalars().map(|s| s.to_bits()).collect::<Vec<_>>(),
            )
        };
        for dt in DType::ALL {
            let x = crate::dispatch!(dt, T => Tensor::from_vec(vals.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![3, 4]).unwrap());
            let y = crate::dispatch!(dt, T => Tensor::from_vec(vals.iter().rev().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![3, 4]).unwrap());
            let row = crate::dispatch!(dt, T => Tensor::from_vec(vals[4..8].iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![4]).unwrap());
            let col = crate::dispatch!(dt, T => Tensor::from_vec(vals[..3].iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![3, 1]).unwrap());
            let xt = crate::dispatch!(dt, T => Tensor::from_vec(vals.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![4, 3]).unwrap())
                .permuted(&[1, 0])
                .unwrap();
            let truth = |t: &Tensor| t.cast(DType::Bool).unwrap();
            for (a, b) in [
                (&x, &y),
                (&x, &row),
                (&row, &x),
                (&col, &row),
                (&xt, &y),
                (&xt, &col),
            ] {
                for (op, bop) in [
                    (Op::LogicalAnd, BinaryOp::BitAnd),
                    (Op::LogicalOr, BinaryOp::BitOr),
                    (Op::LogicalXor, BinaryOp::BitXor),
                ] {
                    let want = binary(bop, Operand::Tensor(&truth(a)), Operand::Tensor(&truth(b))).unwrap();
                    assert_eq!(bits(&run(op, vec![a, b])), bits(&want), "{op} {dt}");
                }
            }
            for a in [&x, &xt, &row] {
                let want = map1(&truth(a), |v: bool| !v).unwrap();
                assert_eq!(
                    bits(&run(Op::LogicalNot, vec![a])),
                    bits(&want),
                    "logical_not {dt}"
                );
            }
        }
    }

    #[test]
    fn f16_fast_kernels_match_the_reference_on_every_pattern() {
        let xs: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        check_fast::<fast::Exp, f16, f16>(&xs);
        check_fast::<fast::Sigmoid, f16, f16>(&xs);
        check_fast::<fast::Tanh, f16, f16>(&xs);
    }

    #[test]
    fn bf16_through_f32_is_exact() {
        let bad: usize = (0u32..1 << 16)
            .into_par_iter()
            .map(|a| {
                let a = bf16::from_bits(a as u16);
                let (x, mut bad) = (a.wide(), 0);
                if <bf16 as Flt>::sqrt(a).to_bits() != bf16::round(x.sqrt()).to_bits() && !x.is_nan() {
                    bad += 1;
                }
                for b in (0..=u16::MAX).step_by(257) {
                    let b = bf16::from_bits(b);
                    let y = b.wide();
                    let pairs = [
                        (<bf16 as Flt>::add(a, b), x + y),
                        (<bf16 as Flt>::sub(a, b), x - y),
                        (<bf16 as Flt>::mul(a, b), x * y),
                        (<bf16 as Flt>::div(a, b), x / y),
                    ];
                    for (fast, wide) in pairs {
                        if fast.to_bits() != bf16::round(wide).to_bits() && !wide.is_nan() {
                            bad += 1;
                        }
                    }
                }
                bad
            })
            .sum();
        assert_eq!(bad, 0);
    }

    #[test]
    fn fast_approximations_stay_well_inside_their_margins() {
        // The exactness argument needs |approx - reference| far below the
        // margin; measure the worst case over a dense sweep of each range.
        fn worst<F: fast::Approx>(lo: f64, hi: f64) -> u64 {
            let mut worst = 0u64;
            let n = 2_000_000;
            for i in 0..=n {
                let x = lo + (hi - lo) * (i as f64 / n as f64);
                if !F::in_range(x) {
                    continue;
                }
                let z = F::reference(x);
                for y in fast::approx_both::<F>(x) {
                    worst = worst.max(y.to_bits().abs_diff(z.to_bits()));
                }
            }
            worst
        }
        use fast::Approx;
        let e = worst::<fast::Exp>(-87.0, 88.0);
        let s = worst::<fast::Sigmoid>(-87.0, 87.0);
        let t = worst::<fast::Tanh>(-40.0, 40.0).max(worst::<fast::Tanh>(-1e-3, 1e-3));
        assert!(e < fast::Exp::MARGIN / 4, "exp: {e} ulps");
        assert!(s < fast::Sigmoid::MARGIN / 4, "sigmoid: {s} ulps");
        assert!(t < fast::Tanh::MARGIN / 4, "tanh: {t} ulps");
        eprintln!("worst distances in f64 ulps: exp {e}, sigmoid {s}, tanh {t}");
        // The logarithms on a logarithmic sweep of every magnitude (a
        // linear one would miss the small ones), and near 1, where ln
        // itself is small.
        fn at<F: fast::Approx>(x: f64) -> u64 {
            if !F::in_range(x) {
                return 0;
            }
            let z = F::reference(x);
            fast::approx_both::<F>(x)
                .iter()
                .map(|y| y.to_bits().abs_diff(z.to_bits()))
                .max()
                .unwrap_or(0)
        }
        fn trig_worst<F: fast::Approx>() -> u64 {
            let mut w = worst::<F>(-1_048_576.0, 1_048_576.0).max(worst::<F>(-4.0, 4.0));
            // Every multiple n π/2 below 2^20, by the f32s nearest it.
            for n in 0..667_544u32 {
                let m = f64::from(n) * std::f64::consts::FRAC_PI_2;
                let c = m as f32;
                for d in -2i32..=2 {
                    let x = f64::from(f32::from_bits(c.to_bits().wrapping_add_signed(d)));
                    w = w.max(at::<F>(x)).max(at::<F>(-x));
                }
            }
            w
        }
        fn inverse_worst<F: fast::Approx>() -> u64 {
            let mut w = worst::<F>(-1.0, 1.0);
            for d in 0..100_000u32 {
                for c in [1.0f32, -1.0, 0.5, -0.5] {
                    let x = f32::from_bits(c.to_bits() - d);
                    w = w.max(at::<F>(f64::from(x)));
                }
                // Small inputs: every 10,240th f32 pattern up to 0.03.
                let x = f64::from(f32::from_bits(d * 64 * 160));
                w = w.max(at::<F>(x)).max(at::<F>(-x));
            }
            w
        }
        fn worst_log<F: fast::Approx>() -> u64 {
            let n = 2_000_000;
            let mut w = 0;
            for i in 0..=n {
                let t = i as f64 / n as f64;
                let x = (-149.0 + 277.0 * t).exp2();
                w = w.max(at::<F>(x)).max(at::<F>(1.0 + (t - 0.5) * 1e-5));
            }
            w.max(worst::<F>(0.5, 2.0))
        }
        for (name, w, m) in [
            ("log", worst_log::<fast::Log>(), fast::Log::MARGIN),
            ("log2", worst_log::<fast::Log2>(), fast::Log2::MARGIN),
            ("log10", worst_log::<fast::Log10>(), fast::Log10::MARGIN),
            // log1p's approximation needs 1 + x exact, which it is for the
            // f32 inputs it is given: the sweep is rounded to f32.
            (
                "log1p",
                (0..=2_000_000)
                    .map(|i| {
                        let t = i as f64 / 2e6;
                        let a = at::<fast::Log1p>(f64::from((-0.999_999 + 1e6 * t) as f32));
                        let b = at::<fast::Log1p>(f64::from((1e-3 * (2.0 * t - 1.0)) as f32));
                        let c = at::<fast::Log1p>(f64::from((-60.0 + 80.0 * t).exp2() as f32));
                        a.max(b).max(c)
                    })
                    .max()
                    .unwrap_or(0),
                fast::Log1p::MARGIN,
            ),
            (
                "expm1",
                worst::<fast::Expm1>(-87.0, 88.0).max(worst::<fast::Expm1>(-1.0, 1.0)),
                fast::Expm1::MARGIN,
            ),
            ("exp2", worst::<fast::Exp2>(-125.0, 126.0), fast::Exp2::MARGIN),
            (
                "sinh",
                worst::<fast::Sinh>(-88.0, 88.0).max(worst::<fast::Sinh>(-1e-3, 1e-3)),
                fast::Sinh::MARGIN,
            ),
            ("cosh", worst::<fast::Cosh>(-88.0, 88.0), fast::Cosh::MARGIN),
            // The trigonometric functions over the whole fast range, and
            // near the multiples of π/2 (where sin, cos or tan is small) up
            // to 2^20: the f32 neighbours of each multiple.
            ("sin", trig_worst::<fast::Sin>(), fast::Sin::MARGIN),
            ("cos", trig_worst::<fast::Cos>(), fast::Cos::MARGIN),
            ("tan", trig_worst::<fast::Tan>(), fast::Tan::MARGIN),
            // atan over every magnitude; asin and acos over [-1, 1] and
            // the f32 neighbours of ±1 and 0, where they are steepest or
            // smallest.
            (
                "atan",
                worst_log::<fast::Atan>().max(worst::<fast::Atan>(-20.0, 20.0)),
                fast::Atan::MARGIN,
            ),
            ("asin", inverse_worst::<fast::Asin>(), fast::Asin::MARGIN),
            ("acos", inverse_worst::<fast::Acos>(), fast::Acos::MARGIN),
        ] {
            assert!(w < m / 4, "{name}: {w} ulps");
            eprintln!("worst distance in f64 ulps: {name} {w}");
        }
    }

    #[test]
    fn sticky_int_conversion_rounds_once() {
        // 2^60 + 2^52 + 1 is just above the bf16/f32 tie at 2^60 + 2^52
        // only because of the final 1, which `as f64` would drop.
        let i = (1i64 << 60) + (1 << 36) + 1;
        let s = weak_int(i, DType::F32).expect("fits");
        assert_eq!(s, Scalar::F32(((1u64 << 60) + (1 << 37)) as f32));
        assert_eq!(int_as_sticky_f64(-5), -5.0);
        assert_eq!(int_as_sticky_f64(i64::MIN), -(2f64.powi(63)));
    }

    #[test]
    fn divmod_follows_numpy() {
        assert_eq!(float_floor_divmod(7.0, -2.0), (-4.0, -1.0));
        assert_eq!(float_floor_divmod(-7.0, 2.0), (-4.0, 1.0));
        let (q, m) = float_floor_divmod(-0.0, 5.0);
        assert!(q == 0.0 && q.is_sign_negative() && m == 0.0 && !m.is_sign_negative());
        let (q, m) = float_floor_divmod(1.0, 0.0);
        assert!(q.is_infinite() && m.is_nan());
        assert_eq!(float_floor_divmod(-1.0, f64::INFINITY), (-1.0, f64::INFINITY));
    }

    #[test]
    fn broadcasting_walks_rows_and_columns() {
        let m = Tensor::from_vec((0..6).map(f64::from).collect::<Vec<_>>(), vec![2, 3]).expect("m");
        let col = Tensor::from_vec(vec![10.0, 20.0], vec![2, 1]).expect("col");
        let r = binary(BinaryOp::Add, Operand::Tensor(&m), Operand::Tensor(&col)).expect("add");
        assert_eq!(values(&r), vec![10.0, 11.0, 12.0, 23.0, 24.0, 25.0]);
        let t = m.reversed_axes();
        let r = binary(BinaryOp::Sub, Operand::Tensor(&t), Operand::Float(1.0)).expect("sub");
        assert_eq!(r.shape(), &[3, 2]);
        assert_eq!(values(&r), vec![-1.0, 2.0, 0.0, 3.0, 1.0, 4.0]);
        let bad = Tensor::from_vec(vec![1.0; 4], vec![4]).expect("bad");
        let e = binary(BinaryOp::Add, Operand::Tensor(&m), Operand::Tensor(&bad)).expect_err("mismatch");
        assert!(e.0.contains("[2, 3]") && e.0.contains("[4]"), "{}", e.0);
    }

    #[test]
    fn chunked_walks_match_an_element_by_element_reference() {
        // Outputs above PAR_MIN are cut into CHUNK-sized pieces that start
        // in the middle of a row; every broadcast must still line up, on
        // any number of threads.
        let (m, n) = (300usize, 217usize);
        let mk = |len: usize, shape: Vec<usize>, k: f64| {
            Tensor::from_vec(
                (0..len).map(|i| (i as f64 * k).sin()).collect::<Vec<f64>>(),
                shape,
            )
            .expect("t")
        };
        let run = || -> Vec<Vec<f64>> {
            let a = mk(m * n, vec![m, n], 0.01);
            let row = mk(n, vec![n], 0.3);
            let col = mk(m, vec![m, 1], 0.7);
            let t = a.reversed_axes();
            let row_t = mk(m, vec![m], 0.11);
            let cond =
                Tensor::from_vec((0..m).map(|i| i % 3 == 0).collect::<Vec<bool>>(), vec![m, 1]).expect("c");
            let mut got = Vec::new();
            for (x, y) in [
                (&a, &row),
                (&col, &row),
                (&t, &row_t),
                (&a, &a),
                (&t, &t),
                (&row, &col),
            ] {
                let r = binary(BinaryOp::Sub, Operand::Tensor(x), Operand::Tensor(y)).expect("sub");
                let shape = r.shape().to_vec();
                let xs = x.broadcast_view(&shape).expect("x").to_f64_vec().expect("f64s");
                let ys = y.broadcast_view(&shape).expect("y").to_f64_vec().expect("f64s");
                let want: Vec<f64> = xs.iter().zip(&ys).map(|(p, q)| p - q).collect();
                assert_eq!(
                    r.to_f64_vec().expect("f64s"),
                    want,
                    "{:?} - {:?}",
                    x.shape(),
                    y.shape()
                );
                got.push(r.to_f64_vec().expect("f64s"));
            }
            let args = vec![
                Arg::Tensor(cond.clone()),
                Arg::Tensor(a.clone()),
                Arg::Float(-1.0),
            ];
            let Ok(Out::Tensor(w)) = super::super::call_named("where", args) else {
                panic!("where failed")
            };
            let c = cond
                .broadcast_view(&[m, n])
                .expect("c")
                .scalars()
                .collect::<Vec<_>>();
            let want: Vec<f64> = a
                .to_f64_vec()
                .expect("f64s")
                .iter()
                .zip(&c)
                .map(|(v, k)| if *k == Scalar::Bool(true) { *v } else { -1.0 })
                .collect();
            assert_eq!(w.to_f64_vec().expect("f64s"), want);
            got.push(w.to_f64_vec().expect("f64s"));
            got
        };
        let mut results = Vec::new();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            results.push(pool.install(run));
        }
        assert_eq!(results[0], results[1]);
    }

    #[test]
    fn large_outputs_match_the_small_path_and_every_thread_count() {
        let n = 3 * CHUNK + 17;
        let xs: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 50.0).collect();
        let want: Vec<f32> = xs
            .iter()
            .map(|&v| fast::reference::<fast::Exp, f32, f32>(v))
            .collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let got: Vec<f32> = pool.install(|| {
                let y = unary(Unary::Exp, &f32s(&xs)).expect("exp");
                y.as_slice::<f32>().expect("contiguous").to_vec()
            });
            assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }
}
