//! Builtin functions, methods of host values, field access and indexing.
//! Each `Builtin` variant of the checker's table has its arm here.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use std::rc::Rc;

use smallvec::SmallVec;

use twill_check::builtins::{Builtin, FormatField, HostFn, HostMethod, Make, MethodRef, TensorField};
use twill_check::hir::{self, Member, Sym};
use twill_check::text::Text;
use twill_syntax::Span;
use twill_tensor::ops::{BinaryOp, Host, Op, Unary};

use twill_tensor::construct;
use twill_tensor::convert::Scalar;
use twill_tensor::fmtspec::Spec;
use twill_tensor::index::IndexItem;
use twill_tensor::lab::{Format, Special};
use twill_tensor::{Tensor, TensorError};

use crate::bridge::{
    dtype_arg, int_arg, number_arg, scalar_value, shape_arg, tensor_value, terr, value_scalar,
};
use crate::error::{fail, fail_as, fail_with, Cx, ErrorKind, Failure, R};
use crate::ops;
use crate::print::{display, repr};
use crate::value::{int_like, DictKey, IndexKey, RangeVal, StructVal, Value};

/// Largest array `arr(range(…))` builds, to fail cleanly instead of
/// exhausting memory.
const MAX_ARR_LEN: u64 = 1 << 28;

pub(crate) fn norm_index(idx: &Value, len: usize) -> Result<usize, Failure> {
    let Value::Int(i) = idx else {
        return Err(format!("an index must be an Int, not `{}`", idx.type_name()).into());
    };
    let n = len as i64;
    let j = if *i < 0 { i + n } else { *i };
    if j < 0 || j >= n {
        return Err(Failure::new(
            ErrorKind::Index,
            format!("index {i} is out of range for length {len}"),
        ));
    }
    Ok(j as usize)
}

/// Python slice bounds: clamps, negative indices from the end, step ≠ 0.
pub(crate) fn slice_indices(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> Result<Vec<usize>, String> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err("slice step cannot be zero".into());
    }
    let n = len as i64;
    let norm = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let start = start
        .map(|v| norm(v, lo, hi))
        .unwrap_or(if step > 0 { 0 } else { n - 1 });
    let stop = stop
        .map(|v| norm(v, lo, hi))
        .unwrap_or(if step > 0 { n } else { -1 });
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        // A step that leaves the i64 range has left the sequence too.
        match i.checked_add(step) {
            Some(next) => i = next,
            None => break,
        }
    }
    Ok(out)
}

pub(crate) fn as_int(v: &Option<(Value, Span)>) -> R<Option<i64>> {
    match v {
        None => Ok(None),
        Some((Value::Int(i), _)) => Ok(Some(*i)),
        Some((other, s)) => fail(
            *s,
            format!("a slice bound must be an Int, not `{}`", other.type_name()),
        ),
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::F64(x) => Some(*x),
        _ => None,
    }
}

/// `b(v)` when `b` is a registry operation with a host form of one
/// argument (`sqrt`, `exp`, `abs`, …) and `v` is an Int or F64: what
/// `call_builtin` gives for it, without the argument vector (the compiled
/// engine's fast path). `None` for anything else.
#[inline]
pub(crate) fn unary_number(b: Builtin, v: &Value) -> Option<Result<Value, Failure>> {
    let Builtin::Op(op) = b else {
        return None;
    };
    match (op.spec().host, v) {
        (Host::Unary(u), Value::Int(_) | Value::F64(_)) => Some(host_math(u, op.name(), v)),
        _ => None,
    }
}

pub(crate) fn host_math(m: Unary, name: &str, v: &Value) -> Result<Value, Failure> {
    // `abs` and `neg` of an Int stay Int (checked); every other function of
    // an Int is taken of it as an F64.
    let overflow =
        |what: &str, i: i64| Failure::new(ErrorKind::Overflow, format!("Int overflow: {what}({i})"));
    match (v, m) {
        (Value::Int(i), Unary::Abs) => {
            return i.checked_abs().map(Value::Int).ok_or_else(|| overflow("abs", *i))
        }
        (Value::Int(i), Unary::Neg) => {
            return i.checked_neg().map(Value::Int).ok_or_else(|| overflow("neg", *i))
        }
        _ => {}
    }
    let Some(x) = number(v) else {
        return Err(format!("`{name}` needs a number or a tensor, not `{}`", v.type_name()).into());
    };
    Ok(match m {
        Unary::IsNan => Value::Bool(x.is_nan()),
        Unary::IsInf => Value::Bool(x.is_infinite()),
        Unary::IsFinite => Value::Bool(x.is_finite()),
        Unary::Neg => Value::F64(-x),
        Unary::Abs => Value::F64(x.abs()),
        // As PyTorch: (0 < x) - (x < 0), so sign(nan) and sign(-0) are 0.
        Unary::Sign => Value::F64(((0.0 < x) as i32 - (x < 0.0) as i32) as f64),
        // `x <= 0 ? 0 : x` keeps NaN, as PyTorch's relu does.
        Unary::Relu => Value::F64(if x <= 0.0 { 0.0 } else { x }),
        Unary::Square => Value::F64(x * x),
        Unary::Floor => Value::F64(x.floor()),
        Unary::Ceil => Value::F64(x.ceil()),
        Unary::Round => Value::F64(x.round_ties_even()),
        Unary::Trunc => Value::F64(x.trunc()),
        Unary::Signbit => Value::Bool(x.is_sign_negative()),
        // The tensor kernels' own f64 function of each (`Unary::transcendental`).
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
        | Unary::Digamma => Value::F64(m.transcendental().map_or(f64::NAN, |f| f(x))),
    })
}

/// The larger of two numbers; NaN if either is NaN (PyTorch), and +0 over
/// -0: the kernels' own `maximum`.
fn nan_maximum(x: f64, y: f64) -> f64 {
    twill_tensor::ops::elementwise::host_binary(BinaryOp::Maximum, x, y).unwrap_or(f64::NAN)
}

/// The smaller of two numbers; NaN if either is NaN, and -0 under +0.
fn nan_minimum(x: f64, y: f64) -> f64 {
    twill_tensor::ops::elementwise::host_binary(BinaryOp::Minimum, x, y).unwrap_or(f64::NAN)
}

/// A method that takes `k` arguments, given `given`.
fn arity(name: &str, k: usize, given: usize) -> Result<(), Failure> {
    if given == k {
        return Ok(());
    }
    Err(Failure::from(format!(
        "`{name}` takes {k} argument{}, but {given} were given",
        if k == 1 { "" } else { "s" }
    )))
}

/// Methods that change an array in place (on a `var`).
/// `remove(k)` on a Dict in a `var`: its value as an Opt.
pub(crate) fn dict_mut_method(
    d: &mut crate::value::DictVal,
    m: HostMethod,
    args: ArgVec,
) -> Result<Value, Failure> {
    if m != HostMethod::Remove {
        return Err(format!("unknown method `{}` on `Dict`", m.name()).into());
    }
    arity("remove", 1, args.len())?;
    let k = DictKey::of(&args[0])?;
    Ok(match d.remove(&k) {
        Some(v) => Value::Some(Rc::new(v)),
        None => Value::None,
    })
}

pub(crate) fn arr_mut_method(items: &mut Vec<Value>, m: HostMethod, args: ArgVec) -> Result<Value, Failure> {
    let name = m.name();
    let want = |k: usize| arity(name, k, args.len());
    match m {
        HostMethod::Push => {
            want(1)?;
            // Room first: an Arr grown until memory runs out is an error
            // at the push, never an abort.
            ops::reserve_arr(items, items.len() + 1)?;
            items.extend(args);
            Ok(Value::Unit)
        }
        HostMethod::Pop => {
            want(0)?;
            items
                .pop()
                .ok_or_else(|| Failure::new(ErrorKind::Index, "pop from an empty Arr"))
        }
        HostMethod::Insert => {
            want(2)?;
            let Value::Int(i) = args[0] else {
                return Err(format!("an index must be an Int, not `{}`", args[0].type_name()).into());
            };
            let n = items.len() as i64;
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j > n {
                return Err(Failure::new(
                    ErrorKind::Index,
                    format!("insert position {i} is out of range for length {n}"),
                ));
            }
            ops::reserve_arr(items, items.len() + 1)?;
            items.insert(j as usize, args[1].clone());
            Ok(Value::Unit)
        }
        HostMethod::Remove => {
            want(1)?;
            let i = norm_index(&args[0], items.len())?;
            Ok(items.remove(i))
        }
        HostMethod::Sort => {
            want(0)?;
            ops::sortable(items)?;
            items.sort_by(ops::sort_order);
            Ok(Value::Unit)
        }
        HostMethod::Extend => {
            want(1)?;
            let Value::Arr(more) = &args[0] else {
                return Err(format!("`extend` needs an Arr, not `{}`", args[0].type_name()).into());
            };
            ops::reserve_arr(items, items.len() + more.len())?;
            items.extend(more.iter().cloned());
            Ok(Value::Unit)
        }
        HostMethod::Len
        | HostMethod::Upper
        | HostMethod::Lower
        | HostMethod::Trim
        | HostMethod::Split
        | HostMethod::Contains
        | HostMethod::StartsWith
        | HostMethod::EndsWith
        | HostMethod::Replace
        | HostMethod::Find
        | HostMethod::Chars
        | HostMethod::Join
        | HostMethod::Reversed
        | HostMethod::Watch
        | HostMethod::Encode
        | HostMethod::Decode
        | HostMethod::Underflows
        | HostMethod::Overflows
        | HostMethod::To
        | HostMethod::Numel
        | HostMethod::Item
        | HostMethod::Unwrap
        | HostMethod::Expect
        | HostMethod::UnwrapOr
        | HostMethod::IsOk
        | HostMethod::IsErr
        | HostMethod::IsSome
        | HostMethod::IsNone
        | HostMethod::IndexOf
        | HostMethod::Get
        | HostMethod::Keys
        | HostMethod::Values
        | HostMethod::Items
        | HostMethod::PadLeft
        | HostMethod::PadRight
        | HostMethod::Repeat
        | HostMethod::Ord
        | HostMethod::IsDigit
        | HostMethod::IsAlpha
        | HostMethod::IsSpace
        | HostMethod::Line
        | HostMethod::Scatter
        | HostMethod::Hist
        | HostMethod::Image
        | HostMethod::Title
        | HostMethod::Xlabel
        | HostMethod::Ylabel
        | HostMethod::LogY
        | HostMethod::Legend
        | HostMethod::Save
        | HostMethod::Grid
        | HostMethod::Panel
        | HostMethod::Lines => Err(format!("unknown method `{name}` on `Arr`").into()),
    }
}

/// A builtin function on its evaluated arguments, by parameter slot.
pub(crate) fn call_builtin(
    cx: &mut dyn Cx,
    b: Builtin,
    slots: Vec<Option<Value>>,
    at: ArgSpans,
    span: Span,
) -> R<Value> {
    match b {
        Builtin::Op(op) => builtin_op(op, slots, at, span),
        Builtin::Make(
            m @ (Make::Rand | Make::Randn | Make::Uniform | Make::Normal | Make::Randint | Make::Permutation),
        ) => {
            // Without `seed=`, the seed is the program generator's next
            // number (spec §11.5).
            let mut slots = slots;
            if let Some(at) = b.signature().params.iter().position(|p| *p == "seed") {
                if slots.len() <= at {
                    slots.resize(at + 1, None);
                }
                // `seed=None` is the default written out (spec §4.4's
                // `seed=none`).
                if let Some(s @ (None | Some(Value::None))) = slots.get_mut(at) {
                    *s = Some(Value::Int(cx.next_seed() as i64));
                }
            }
            tensor_builtin(m, slots, span)
        }
        Builtin::Make(m) => tensor_builtin(m, slots, span),
        // The others take positional arguments only.
        Builtin::Autodiff(a) => {
            crate::autodiff::functional::autodiff_builtin(cx, a, slots.into_iter().flatten().collect(), span)
        }
        Builtin::Host(HostFn::Print) => print(cx, slots, at, span),
        Builtin::Host(HostFn::FloatFormat) => float_format(slots, span),
        Builtin::Host(HostFn::Figure) => crate::figure::new(slots, span),
        // Keywords may leave a gap (`progress(it, label="…")`).
        Builtin::Host(HostFn::Progress) => {
            let mut slots = slots.into_iter().map(|v| v.unwrap_or(Value::Unit));
            let mut next = || slots.next().unwrap_or(Value::Unit);
            let (it, total, label) = (next(), next(), next());
            progress(cx, it, total, label, span)
        }
        Builtin::Host(h) => {
            let mut argv = ArgVec::new();
            for v in slots.into_iter().flatten() {
                argv.push(v);
            }
            host_builtin(cx, h, argv, span)
        }
    }
}

/// `finfo(dt)` and `iinfo(dt)`: the struct `twill_check::builtins`
/// describes (`info_fields`, `info_values`).
fn dtype_info(cx: &mut dyn Cx, h: HostFn, dt: Value, span: Span) -> R<Value> {
    use twill_check::builtins::{info_fields, info_struct, info_values, InfoValue};
    let Value::DType(d) = dt else {
        let name = info_fields(h).map_or("", |f| f.0);
        return fail(span, format!("`{name}` needs a dtype, not `{}`", dt.type_name()));
    };
    let fields = info_values(h, d)
        .or_else(|m| fail(span, m))?
        .into_iter()
        .map(|v| match v {
            InfoValue::F64(x) => Value::F64(x),
            InfoValue::Int(i) => Value::Int(i),
        })
        .collect();
    let Some(def) = info_struct(h, |f| cx.sym_of(f)) else {
        return fail(span, "no such struct");
    };
    Ok(Value::Struct(Rc::new(StructVal {
        def: Rc::new(def),
        fields,
    })))
}

/// `print(values…, sep=" ", end="\n")`: the slots hold `sep` and `end`
/// (keyword-only, `Builtin::keyword_only`), then the values.
fn print(cx: &mut dyn Cx, slots: Vec<Option<Value>>, at: ArgSpans, span: Span) -> R<Value> {
    let mut slots = slots.into_iter();
    let mut text = |slot: usize, name: &str, default: &str| match slots.next().flatten() {
        None => Ok(default.to_string()),
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(other) => fail(
            at.of(slot).unwrap_or(span),
            format!("`print`'s `{name}` must be a Str, not `{}`", other.type_name()),
        ),
    };
    let sep = text(0, "sep", " ")?;
    let end = text(1, "end", "\n")?;
    write_values(cx, slots.flatten(), &sep, &end, span)
}

/// Writes the values' text separated by `sep`, then `end`, to stdout.
fn write_values(
    cx: &mut dyn Cx,
    values: impl Iterator<Item = Value>,
    sep: &str,
    end: &str,
    span: Span,
) -> R<Value> {
    let mut line = String::new();
    for (i, a) in values.enumerate() {
        if i > 0 {
            line.push_str(sep);
        }
        line.push_str(&display(&a));
    }
    line.push_str(end);
    if cx.host().stdout().write_all(line.as_bytes()).is_err() {
        return fail(span, "cannot write to standard output");
    }
    Ok(Value::Unit)
}

/// A host builtin's positional arguments: up to four without a heap
/// allocation.
pub(crate) type ArgVec = SmallVec<[Value; 4]>;

/// A builtin of host values on its positional arguments.
/// `min`, `max` or `sum` of an Arr of numbers: an Int when every element
/// is an Int (the sum checked for overflow), else an F64 (a NaN makes
/// `min`/`max` NaN, as the tensor forms do). `sum` of an empty Arr is 0;
/// `min` and `max` of one are errors.
fn arr_reduce(op: Op, items: &[Value], span: Span) -> R<Value> {
    let name = op.spec().name;
    let mut all_int = true;
    for v in items {
        match v {
            Value::Int(_) => {}
            Value::F64(_) => all_int = false,
            other => {
                return fail(
                    span,
                    format!("`{name}` of an Arr needs numbers, not a `{}`", other.type_name()),
                )
            }
        }
    }
    if items.is_empty() && op != Op::Sum {
        return fail(span, format!("`{name}` of an empty Arr"));
    }
    let num = |v: &Value| match v {
        Value::Int(i) => *i as f64,
        Value::F64(x) => *x,
        _ => 0.0,
    };
    if all_int {
        let ints = items.iter().map(|v| if let Value::Int(i) = v { *i } else { 0 });
        return match op {
            Op::Min => Ok(Value::Int(ints.min().unwrap_or(0))),
            Op::Max => Ok(Value::Int(ints.max().unwrap_or(0))),
            _ => {
                let mut acc: i64 = 0;
                for i in ints {
                    acc = acc.checked_add(i).ok_or(()).or_else(|_| {
                        fail_as(
                            ErrorKind::Overflow,
                            span,
                            "Int overflow: the sum does not fit in 64 bits",
                        )
                    })?;
                }
                Ok(Value::Int(acc))
            }
        };
    }
    let xs = items.iter().map(num);
    Ok(Value::F64(match op {
        Op::Min => xs.fold(f64::INFINITY, |a, x| {
            if x.is_nan() || a.is_nan() {
                f64::NAN
            } else {
                a.min(x)
            }
        }),
        Op::Max => xs.fold(f64::NEG_INFINITY, |a, x| {
            if x.is_nan() || a.is_nan() {
                f64::NAN
            } else {
                a.max(x)
            }
        }),
        _ => xs.sum(),
    }))
}

/// An I/O result as a twill `Res`: the value, or the message as a Str.
fn res(r: Result<Value, String>) -> Value {
    match r {
        Ok(v) => Value::Ok(Rc::new(v)),
        Err(m) => Value::Err(Rc::new(Value::str(m))),
    }
}

/// `progress(it, total=none, label="")` (spec §12.2): `it` itself, after
/// checking the arguments (the same errors whether or not a bar is drawn);
/// on a host that draws bars, `it` is marked for the loop that runs over
/// it. The total is `it`'s length unless given.
fn progress(cx: &mut dyn Cx, it: Value, total: Value, label: Value, span: Span) -> R<Value> {
    let len = match &it {
        Value::Arr(items) => Some(items.len() as u64),
        Value::Range(r) => Some(r.len()),
        Value::Dict(d) => Some(d.len() as u64),
        Value::Str(_) => None,
        t @ (Value::Tensor(_) | Value::Tracked(_)) => match t.as_tensor().map(|t| t.shape().first().copied())
        {
            Some(Some(n)) => Some(n as u64),
            _ => {
                return fail(
                    span,
                    "`progress` cannot go over a rank-0 tensor (it holds one value, not a sequence)",
                )
            }
        },
        other => {
            return fail(
                span,
                format!(
                    "`progress` needs an Arr, a range, a tensor, a Dict or a Str to go over, not `{}`",
                    other.type_name()
                ),
            )
        }
    };
    let total = match total {
        Value::Unit | Value::None => len,
        Value::Int(n) if n >= 0 => Some(n as u64),
        Value::Int(n) => return fail(span, format!("`progress`'s `total` must be ≥ 0, got {n}")),
        other => {
            return fail(
                span,
                format!(
                    "`progress`'s `total` must be an Int or none, not `{}`",
                    other.type_name()
                ),
            )
        }
    };
    let label = match label {
        Value::Unit => String::new(),
        Value::Str(s) => s.to_string(),
        other => {
            return fail(
                span,
                format!("`progress`'s `label` must be a Str, not `{}`", other.type_name()),
            )
        }
    };
    if cx.host().draws_progress() {
        // A Str's length in characters is counted only when it is drawn.
        let total = total.or_else(|| match &it {
            Value::Str(s) => Some(s.char_len() as u64),
            _ => None,
        });
        cx.mark_progress(&it, total, label);
    }
    Ok(it)
}

/// `range`'s start, stop and step from its one to three Int arguments
/// (`range(n)`, `range(a, b)`, `range(a, b, step)`); `None` for another
/// count. A zero step is the caller's to refuse.
pub(crate) fn range_bounds(ints: &[i64]) -> Option<(i64, i64, i64)> {
    match ints {
        [n] => Some((0, *n, 1)),
        [a, b] => Some((*a, *b, 1)),
        [a, b, s] => Some((*a, *b, *s)),
        _ => None,
    }
}

pub(crate) fn host_builtin(cx: &mut dyn Cx, h: HostFn, mut argv: ArgVec, span: Span) -> R<Value> {
    // An Int parameter also takes a rank-0 tensor holding an integral
    // value (spec §10.3): `for n in [10, 100] { range(n) }`.
    if matches!(h, HostFn::Range | HostFn::Chr | HostFn::Seed | HostFn::Exit) {
        argv.iter_mut().for_each(int_like);
    }
    // Each argument is read once: it moves out of the list.
    let mut arg = |i: usize| {
        argv.get_mut(i)
            .map_or(Value::Unit, |v| std::mem::replace(v, Value::Unit))
    };
    match h {
        // Positional values only (`call_builtin` sends a call with its
        // keyword slots to `print`).
        HostFn::Print => write_values(cx, argv.into_iter(), " ", "\n", span),
        HostFn::Str => Ok(Value::str(display(&arg(0)))),
        HostFn::TypeName => Ok(Value::str(arg(0).type_name())),
        HostFn::Args => Ok(Value::Arr(Rc::new(
            cx.host().args().iter().map(|a| Value::str(a.clone())).collect(),
        ))),
        HostFn::Range => {
            let mut ints = Vec::new();
            for (i, a) in argv.iter().enumerate() {
                match a {
                    Value::Int(v) => ints.push(*v),
                    other => {
                        return fail(
                            span,
                            format!(
                                "argument {} of `range` must be an Int, not `{}`",
                                i + 1,
                                other.type_name()
                            ),
                        )
                    }
                }
            }
            let Some((start, stop, step)) = range_bounds(&ints) else {
                return fail(span, "`range` takes 1 to 3 arguments");
            };
            if step == 0 {
                return fail(span, "`range` step cannot be zero");
            }
            Ok(Value::Range(Rc::new(RangeVal { start, stop, step })))
        }
        HostFn::Arr => match arg(0) {
            Value::Range(r) => {
                let n = r.len();
                if n > MAX_ARR_LEN {
                    return fail(span, format!("`arr` of a range of {n} elements is too large"));
                }
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, n as usize).or_else(|f| fail_with(span, f))?;
                out.extend((0..n).map(|i| Value::Int(r.get(i))));
                Ok(Value::Arr(Rc::new(out)))
            }
            a @ Value::Arr(_) => Ok(a),
            t @ (Value::Tensor(_) | Value::Tracked(_)) => {
                let Some(t) = t.as_tensor() else {
                    return fail(span, "`arr` needs a tensor");
                };
                if t.shape().len() != 1 {
                    return fail(
                        span,
                        format!("`arr` needs a rank-1 tensor, not one of shape {:?}", t.shape()),
                    );
                }
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, t.shape()[0]).or_else(|f| fail_with(span, f))?;
                out.extend(t.scalars().map(|s| match s {
                    Scalar::I8(i) => Value::Int(i64::from(i)),
                    Scalar::I32(i) => Value::Int(i64::from(i)),
                    Scalar::Bool(b) => Value::Bool(b),
                    Scalar::Bf16(_) | Scalar::F16(_) | Scalar::F32(_) | Scalar::F64(_) => {
                        Value::F64(s.to_f64())
                    }
                }));
                Ok(Value::Arr(Rc::new(out)))
            }
            Value::Str(s) => {
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, s.chars().count()).or_else(|f| fail_with(span, f))?;
                out.extend(s.chars().map(|c| Value::str(c.to_string())));
                Ok(Value::Arr(Rc::new(out)))
            }
            other => fail(
                span,
                format!("`arr` cannot make an Arr from a `{}`", other.type_name()),
            ),
        },
        HostFn::Len => match arg(0) {
            Value::Arr(a) => Ok(Value::Int(a.len() as i64)),
            Value::Dict(d) => Ok(Value::Int(d.len() as i64)),
            Value::Str(s) => Ok(Value::Int(s.char_len() as i64)),
            Value::Range(r) => match i64::try_from(r.len()) {
                Ok(n) => Ok(Value::Int(n)),
                Err(_) => fail_as(
                    ErrorKind::Overflow,
                    span,
                    format!(
                        "Int overflow: range({}, {}, {}) has {} elements, more than an Int holds",
                        r.start,
                        r.stop,
                        r.step,
                        r.len()
                    ),
                ),
            },
            v @ (Value::Tensor(_) | Value::Tracked(_)) if v.as_tensor().is_some_and(|t| t.ndim() > 0) => {
                Ok(Value::Int(v.as_tensor().map_or(0, |t| t.shape()[0]) as i64))
            }
            other => fail(
                span,
                format!(
                    "`len` needs an Arr, Str, Range or a tensor of rank 1 or more, not `{}`",
                    other.type_name()
                ),
            ),
        },
        HostFn::Int => match arg(0) {
            Value::Int(i) => Ok(Value::Int(i)),
            Value::Bool(b) => Ok(Value::Int(b as i64)),
            Value::F64(x) => {
                // The Int range is [-2^63, 2^63); both bounds are exact in F64.
                if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
                    Ok(Value::Int(x.trunc() as i64))
                } else {
                    fail(
                        span,
                        format!("cannot convert {} to Int", twill_tensor::format_number(x)),
                    )
                }
            }
            Value::Str(s) => match s.trim().replace('_', "").parse::<i64>() {
                Ok(i) => Ok(Value::Int(i)),
                Err(_) => fail(span, format!("cannot parse {:?} as an Int", s.as_str())),
            },
            other => fail(span, format!("cannot convert a `{}` to Int", other.type_name())),
        },
        HostFn::Float => match arg(0) {
            Value::Int(i) => Ok(Value::F64(i as f64)),
            Value::F64(x) => Ok(Value::F64(x)),
            Value::Bool(b) => Ok(Value::F64(b as i64 as f64)),
            Value::Str(s) => match s.trim().parse::<f64>() {
                Ok(x) => Ok(Value::F64(x)),
                Err(_) => fail(span, format!("cannot parse {:?} as an F64", s.as_str())),
            },
            other => fail(span, format!("cannot convert a `{}` to F64", other.type_name())),
        },
        HostFn::Ok => Ok(Value::Ok(Rc::new(arg(0)))),
        HostFn::Err => Ok(Value::Err(Rc::new(arg(0)))),
        HostFn::Some => Ok(Value::Some(Rc::new(arg(0)))),
        HostFn::Assert => match arg(0) {
            Value::Bool(true) => Ok(Value::Unit),
            Value::Bool(false) => {
                let msg = argv.get(1).map(display).unwrap_or_default();
                if msg.is_empty() {
                    fail_as(ErrorKind::Assertion, span, "assertion failed")
                } else {
                    fail_as(ErrorKind::Assertion, span, format!("assertion failed: {msg}"))
                }
            }
            other => fail(
                span,
                format!("`assert` needs a Bool, not `{}`", other.type_name()),
            ),
        },
        // Every I/O function returns a Res (spec §9, changed in §10.6): a
        // failure is an `Err` with the message, for `?`, `match` or
        // `unwrap`; only a wrong argument type is a runtime error.
        HostFn::ReadText => {
            let Value::Str(path) = arg(0) else {
                return fail(span, "`read_text` needs a path (Str)");
            };
            Ok(res(match cx.host().read_text(path.as_str()) {
                Ok(s) => Ok(Value::str(s)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!("file not found: {path}")),
                Err(e) => Err(format!("cannot read {path}: {e}")),
            }))
        }
        HostFn::ReadLine => Ok(match cx.host().read_line() {
            Ok(Some(line)) => Value::Some(Rc::new(Value::str(line))),
            Ok(None) => Value::None,
            Err(e) => return fail_as(ErrorKind::Io, span, format!("cannot read standard input: {e}")),
        }),
        HostFn::WriteCsv => {
            let Value::Str(path) = arg(0) else {
                return fail(span, "`write_csv` needs a path (Str) and a Dict of columns");
            };
            let cols = arg(1);
            let Value::Dict(cols) = &cols else {
                return fail(
                    span,
                    format!("`write_csv` needs a Dict of columns, not `{}`", cols.type_name()),
                );
            };
            let text = crate::data::csv_text(cols).or_else(|m| fail(span, m))?;
            Ok(res(cx
                .host()
                .write_file(&path, text.as_bytes())
                .map(|_| Value::Unit)
                .map_err(|e| format!("cannot write {path}: {e}"))))
        }
        HostFn::ReadCsv => {
            let Value::Str(path) = arg(0) else {
                return fail(span, "`read_csv` needs a path (Str)");
            };
            Ok(match crate::data::read_csv(cx.host(), path.as_str()) {
                Ok(v) => Value::Ok(Rc::new(v)),
                Err(m) => Value::Err(Rc::new(Value::str(m))),
            })
        }
        HostFn::LoadNpy => {
            let Value::Str(path) = arg(0) else {
                return fail(span, "`load_npy` needs a path (Str)");
            };
            Ok(res(crate::data::load_npy(cx.host(), path.as_str())))
        }
        HostFn::SaveNpy => {
            let Value::Str(path) = arg(0) else {
                return fail(span, "`save_npy` needs a path (Str) and a tensor");
            };
            let t = arg(1);
            let Some(t) = t.as_tensor() else {
                return fail(
                    span,
                    format!("`save_npy` needs a tensor, not `{}`", t.type_name()),
                );
            };
            Ok(res(
                crate::data::save_npy(cx.host(), path.as_str(), t).map(|_| Value::Unit)
            ))
        }
        HostFn::WriteText => {
            let (Value::Str(path), Value::Str(text)) = (arg(0), arg(1)) else {
                return fail(span, "`write_text` needs a path and a Str");
            };
            Ok(res(cx
                .host()
                .write_file(&path, text.as_bytes())
                .map(|_| Value::Unit)
                .map_err(|e| format!("cannot write {path}: {e}"))))
        }
        HostFn::Clock => Ok(Value::F64(cx.host().clock())),
        HostFn::Exit => match argv.first().cloned().unwrap_or(Value::Int(0)) {
            Value::Int(code @ 0..=255) => {
                Err(Box::new(crate::error::Ctrl::Error(crate::error::RuntimeError {
                    kind: ErrorKind::Exit(code as i32),
                    message: format!("exit({code})"),
                    span,
                    notes: Vec::new(),
                    help: None,
                    frames: Vec::new(),
                })))
            }
            Value::Int(code) => fail(span, format!("`exit` needs a status from 0 to 255, not {code}")),
            other => fail(
                span,
                format!("`exit` needs an Int status, not `{}`", other.type_name()),
            ),
        },
        HostFn::Format => {
            let v = arg(0);
            let Value::Str(text) = arg(1) else {
                return fail(
                    span,
                    "`format` needs a format spec (a Str) as its second argument",
                );
            };
            let spec = Spec::parse(&text).or_else(|m| fail(span, format!("bad format spec: {m}")))?;
            crate::print::format_value(&v, &spec)
                .map(Value::str)
                .or_else(|m| {
                    fail(
                        span,
                        format!(
                            "cannot format a value of type `{}` with `{text}`: {m}",
                            v.type_name()
                        ),
                    )
                })
        }
        HostFn::Chr => match arg(0) {
            Value::Int(i) => match u32::try_from(i).ok().and_then(char::from_u32) {
                Some(c) => Ok(Value::str(c.to_string())),
                None => fail(span, format!("`chr`: {i} is not a Unicode code point")),
            },
            other => fail(span, format!("`chr` needs an Int, not `{}`", other.type_name())),
        },
        HostFn::Progress => progress(cx, arg(0), arg(1), arg(2), span),
        // The checker replaces every `help(name)` with its text.
        HostFn::Help => fail(
            span,
            "`help` is called with a name written in place: `help(softmax)`, not through a variable",
        ),
        HostFn::ProgressNote => match arg(0) {
            Value::Str(s) => {
                cx.host().progress_note(&s);
                Ok(Value::Unit)
            }
            other => fail(
                span,
                format!("`progress_note` needs a Str, not `{}`", other.type_name()),
            ),
        },
        HostFn::FloatFormat => float_format(argv.into_iter().map(Some).collect(), span),
        HostFn::Figure => crate::figure::new(argv.into_iter().map(Some).collect(), span),
        HostFn::Display => {
            let v = arg(0);
            let rich = cx.host().shows_rich();
            let shown = crate::figure::shown(&v, rich).or_else(|m| fail(span, format!("`display`: {m}")))?;
            cx.host()
                .display(&shown)
                .or_else(|e| fail(span, format!("`display`: {e}")))?;
            Ok(Value::Unit)
        }
        HostFn::Finfo | HostFn::Iinfo => dtype_info(cx, h, arg(0), span),
        HostFn::Sorted => {
            let reverse = match arg(1) {
                Value::Unit => false,
                Value::Bool(b) => b,
                other => {
                    return fail(
                        span,
                        format!("`sorted`'s `reverse` must be a Bool, not `{}`", other.type_name()),
                    )
                }
            };
            let Value::Arr(items) = arg(0) else {
                return fail(span, "`sorted` needs an Arr");
            };
            let mut v = Vec::new();
            ops::reserve_arr(&mut v, items.len()).or_else(|f| fail_with(span, f))?;
            v.extend(items.iter().cloned());
            ops::sortable(&v).or_else(|f| fail_with(span, f))?;
            // Stable either way: equal elements keep their order (Python's).
            if reverse {
                v.sort_by(|a, b| ops::sort_order(b, a));
            } else {
                v.sort_by(ops::sort_order);
            }
            Ok(Value::Arr(Rc::new(v)))
        }
        HostFn::Env => match arg(0) {
            Value::Str(name) => Ok(match cx.host().env_var(&name) {
                Some(v) => Value::Some(Rc::new(Value::str(v))),
                None => Value::None,
            }),
            other => fail(
                span,
                format!("`env` needs a name (Str), not `{}`", other.type_name()),
            ),
        },
        HostFn::Seed => match arg(0) {
            Value::Int(n) => {
                cx.reseed(n as u64);
                Ok(Value::Unit)
            }
            other => fail(span, format!("`seed` needs an Int, not `{}`", other.type_name())),
        },
        HostFn::F64Bits => match arg(0) {
            Value::F64(x) => Ok(Value::Int(x.to_bits() as i64)),
            Value::Int(i) => Ok(Value::Int((i as f64).to_bits() as i64)),
            other => fail(
                span,
                format!("`f64_bits` needs an F64, not `{}`", other.type_name()),
            ),
        },
        HostFn::F64FromBits => match arg(0) {
            Value::Int(i) => Ok(Value::F64(f64::from_bits(i as u64))),
            other => fail(
                span,
                format!("`f64_from_bits` needs an Int, not `{}`", other.type_name()),
            ),
        },
    }
}

/// A tensor operation in function form: on tensors through the
/// registry, on host numbers as spec §3's math.
fn builtin_op(op: Op, slots: Vec<Option<Value>>, at: ArgSpans, span: Span) -> R<Value> {
    let host = op.spec().host;
    let any_tensor = slots.iter().flatten().any(Value::is_tensor);
    // Python's `min(a, b)` of two numbers is `minimum(a, b)` here: `min`
    // and `max` are reductions (`min(x, axis)`).
    if let (Op::Min | Op::Max, [Some(a), Some(b), ..]) = (op, slots.as_slice()) {
        if number(a).is_some() && number(b).is_some() {
            let pair = if op == Op::Min { "minimum" } else { "maximum" };
            return fail(
                span,
                format!("`{op}` of two numbers is `{pair}(a, b)`: `{op}(x, axis)` reduces a tensor (or `{op}(arr)` an Arr)"),
            );
        }
    }
    if matches!(host, Host::No) || any_tensor {
        return call_op(op, slots, at, span);
    }
    let arg = |i: usize| slots.get(i).cloned().flatten().unwrap_or(Value::Unit);
    match host {
        Host::Unary(u) if slots.get(1).is_some_and(Option::is_some) => {
            // `round(x, decimals)`, the one unary function with a parameter.
            match (number(&arg(0)), &arg(1)) {
                (Some(x), Value::Int(d)) if u == Unary::Round => {
                    Ok(Value::F64(twill_tensor::ops::elementwise::host_round(x, *d)))
                }
                _ => fail(
                    span,
                    format!("`{op}` needs a number and an Int number of decimals"),
                ),
            }
        }
        Host::Unary(u) => host_math(u, op.name(), &arg(0)).or_else(|f| fail_with(span, f)),
        Host::Binary(bop) => {
            let (Some(x), Some(y)) = (number(&arg(0)), number(&arg(1))) else {
                return fail(
                    span,
                    format!(
                        "`{op}` needs numbers or tensors, not `{}` and `{}`",
                        arg(0).type_name(),
                        arg(1).type_name()
                    ),
                );
            };
            match twill_tensor::ops::elementwise::host_binary(bop, x, y) {
                Some(r) => Ok(Value::F64(r)),
                None => fail(span, format!("internal error: `{op}` has no host form")),
            }
        }
        Host::Clip => {
            let bound = |i: usize| match slots.get(i).cloned().flatten() {
                None => Some(None),
                Some(v) => number(&v).map(Some),
            };
            let (Some(x), Some(lo), Some(hi)) = (number(&arg(0)), bound(1), bound(2)) else {
                return fail(span, "`clip` needs numbers or a tensor");
            };
            // As NumPy and JAX: minimum(maximum(x, lo), hi), so a NaN
            // bound propagates too and lo > hi gives hi.
            let lo = lo.map_or(x, |l| nan_maximum(x, l));
            Ok(Value::F64(hi.map_or(lo, |h| nan_minimum(lo, h))))
        }
        Host::No => call_op(op, slots, at, span),
    }
}

/// A method call on its evaluated receiver and arguments (the receiver
/// is slot 0).
/// A method call's arguments after its receiver's slot, sized once (a
/// `collect` through `flatten` grew the vector element by element, a tenth
/// of a Dict-heavy loop's time).
fn method_args(slots: Vec<Option<Value>>) -> Vec<Value> {
    let mut argv = Vec::with_capacity(slots.len().saturating_sub(1));
    for v in slots.into_iter().skip(1).flatten() {
        argv.push(v);
    }
    argv
}

pub(crate) fn call_method(
    cx: &mut dyn Cx,
    recv: Value,
    m: MethodRef,
    sym: Sym,
    mut slots: Vec<Option<Value>>,
    at: ArgSpans,
    span: Span,
) -> R<Value> {
    if recv.is_tensor() {
        if let (Some(h), None) = (m.host, m.op) {
            let argv = method_args(slots);
            return tensor_method(&recv, m, h.name(), argv, span);
        }
        if let Some(op) = m.op {
            if let Some(first) = slots.first_mut() {
                *first = Some(recv);
            }
            return call_op(op, slots, at, span);
        }
    }
    if let (Value::Figure(f), Some(h)) = (&recv, m.host) {
        return crate::figure::method(cx, f, h, slots, span);
    }
    let mut argv = method_args(slots);
    // The counts and widths of Str methods take integral rank-0 tensors
    // (spec §10.3).
    if matches!(recv, Value::Str(_))
        && matches!(
            m.host,
            Some(HostMethod::Repeat | HostMethod::PadLeft | HostMethod::PadRight)
        )
    {
        if let Some(first) = argv.first_mut() {
            int_like(first);
        }
    }
    // A struct field holding a function is called like a method.
    if let Value::Struct(s) = &recv {
        if let Some(i) = s.def.field_offset(sym) {
            let callee = s.fields[i].clone();
            return cx.call_value(&callee, argv, span);
        }
    }
    let name = cx.sym_name(sym);
    method_values(recv, m, &name, argv, span)
}

/// The Str methods of one Str argument that build nothing (`contains`,
/// `starts_with`, `ends_with`, and `find`: the character index of the
/// first match, or -1): the method's value, or `None` for another method.
/// The compiled engine calls them on its registers directly.
pub(crate) fn str_query(s: &Text, m: HostMethod, pat: &Text) -> Option<Value> {
    let ascii = s.is_ascii();
    let (s, p) = (s.as_str(), pat.as_str());
    Some(match m {
        HostMethod::Contains => Value::Bool(s.contains(p)),
        HostMethod::StartsWith => Value::Bool(s.starts_with(p)),
        HostMethod::EndsWith => Value::Bool(s.ends_with(p)),
        // One byte is an ASCII character, found by a byte search (the
        // general searcher's set-up costs more than a short Str's scan).
        HostMethod::Find => {
            let at = match p.as_bytes() {
                [b] => s.bytes().position(|c| c == *b),
                _ => s.find(p),
            };
            Value::Int(match at {
                Some(byte) if ascii => byte as i64,
                Some(byte) => s[..byte].chars().count() as i64,
                None => -1,
            })
        }
        _ => return None,
    })
}

pub(crate) fn method_values(recv: Value, m: MethodRef, name: &str, argv: Vec<Value>, span: Span) -> R<Value> {
    let want = |k: usize| arity(name, k, argv.len()).or_else(|f| fail_with(span, f));
    let str_arg = |i: usize| -> R<Rc<Text>> {
        match argv.get(i) {
            Some(Value::Str(s)) => Ok(s.clone()),
            Some(other) => fail(
                span,
                format!("`{name}` needs a Str argument, not `{}`", other.type_name()),
            ),
            None => fail(span, format!("`{name}` needs an argument")),
        }
    };
    use HostMethod as M;
    let unknown = |what: &str| fail(span, format!("unknown method `{name}` on `{what}`"));
    match (&recv, m.host) {
        (Value::Str(s), Some(h)) => match h {
            M::Len => want(0).map(|_| Value::Int(s.char_len() as i64)),
            M::Upper => want(0).map(|_| Value::str(s.to_uppercase())),
            M::Lower => want(0).map(|_| Value::str(s.to_lowercase())),
            M::Trim => want(0).map(|_| Value::str(s.trim())),
            M::Chars => {
                want(0)?;
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, s.chars().count()).or_else(|f| fail_with(span, f))?;
                out.extend(s.chars().map(|c| Value::str(c.to_string())));
                Ok(Value::Arr(Rc::new(out)))
            }
            M::Split if argv.is_empty() => {
                // On runs of white space, with no empty pieces (Python's).
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, s.split_whitespace().count()).or_else(|f| fail_with(span, f))?;
                out.extend(s.split_whitespace().map(Value::str));
                Ok(Value::Arr(Rc::new(out)))
            }
            M::Split => {
                want(1)?;
                let sep = str_arg(0)?;
                if sep.is_empty() {
                    return fail(span, "`split` needs a non-empty separator");
                }
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, s.matches(sep.as_str()).count() + 1)
                    .or_else(|f| fail_with(span, f))?;
                out.extend(s.split(sep.as_str()).map(Value::str));
                Ok(Value::Arr(Rc::new(out)))
            }
            M::Contains | M::StartsWith | M::EndsWith | M::Find => {
                want(1)?;
                let pat = str_arg(0)?;
                str_query(s, h, &pat).ok_or(()).or_else(|_| unknown("Str"))
            }
            M::Replace => {
                want(2)?;
                let (a, b) = (str_arg(0)?, str_arg(1)?);
                if a.is_empty() {
                    return fail(span, "`replace` needs a non-empty pattern");
                }
                // The result's size is known before it is built: room for
                // it first, so a replacement too large is an error.
                let count = s.matches(a.as_str()).count() as u128;
                let total = s.len() as u128 - count * a.len() as u128 + count * b.len() as u128;
                let mut out = String::new();
                ops::reserve_str(&mut out, usize::try_from(total).unwrap_or(usize::MAX))
                    .or_else(|f| fail_with(span, f))?;
                let mut rest = s.as_str();
                while let Some(at) = rest.find(a.as_str()) {
                    out.push_str(&rest[..at]);
                    out.push_str(&b);
                    rest = &rest[at + a.len()..];
                }
                out.push_str(rest);
                Ok(Value::str(out))
            }
            M::PadLeft | M::PadRight => {
                if !(1..=2).contains(&argv.len()) {
                    return fail(
                        span,
                        format!("`{name}` takes 1 or 2 arguments, but {} were given", argv.len()),
                    );
                }
                let Value::Int(width) = argv[0] else {
                    return fail(
                        span,
                        format!("`{name}`'s width must be an Int, not `{}`", argv[0].type_name()),
                    );
                };
                let fill = match argv.get(1) {
                    None => ' ',
                    Some(Value::Str(f)) if f.chars().count() == 1 => f.chars().next().unwrap_or(' '),
                    Some(other) => {
                        return fail(
                            span,
                            format!(
                                "`{name}`'s fill must be a Str of one character, not `{}`",
                                crate::print::repr(other)
                            ),
                        )
                    }
                };
                let have = s.chars().count();
                let more = usize::try_from(width).unwrap_or(0).saturating_sub(have);
                let mut out = String::new();
                let total = more
                    .checked_mul(fill.len_utf8())
                    .and_then(|b| b.checked_add(s.len()));
                ops::reserve_str(&mut out, total.unwrap_or(usize::MAX)).or_else(|f| fail_with(span, f))?;
                if h == M::PadRight {
                    out.push_str(s);
                }
                out.extend(std::iter::repeat_n(fill, more));
                if h == M::PadLeft {
                    out.push_str(s);
                }
                Ok(Value::str(out))
            }
            M::Repeat => {
                want(1)?;
                match argv[0] {
                    Value::Int(n) => ops::repeat_str(s, n)
                        .map(Value::str)
                        .or_else(|f| fail_with(span, f)),
                    ref other => fail(
                        span,
                        format!("`repeat` needs an Int count, not `{}`", other.type_name()),
                    ),
                }
            }
            M::Ord => {
                want(0)?;
                let mut cs = s.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) => Ok(Value::Int(c as i64)),
                    _ => fail(
                        span,
                        format!(
                            "`ord` needs a Str of one character, not one of {}",
                            s.chars().count()
                        ),
                    ),
                }
            }
            M::IsDigit | M::IsAlpha | M::IsSpace => {
                want(0)?;
                let test: fn(char) -> bool = match h {
                    M::IsDigit => char::is_numeric,
                    M::IsAlpha => char::is_alphabetic,
                    _ => char::is_whitespace,
                };
                Ok(Value::Bool(!s.is_empty() && s.chars().all(test)))
            }
            M::Lines => {
                want(0)?;
                let mut out = Vec::new();
                ops::reserve_arr(&mut out, s.lines().count()).or_else(|f| fail_with(span, f))?;
                out.extend(s.lines().map(Value::str));
                Ok(Value::Arr(Rc::new(out)))
            }
            M::Push
            | M::Pop
            | M::Join
            | M::Reversed
            | M::Insert
            | M::Remove
            | M::Watch
            | M::Encode
            | M::Decode
            | M::Underflows
            | M::Overflows
            | M::To
            | M::Numel
            | M::Item
            | M::Unwrap
            | M::Expect
            | M::UnwrapOr
            | M::IsOk
            | M::IsErr
            | M::IsSome
            | M::IsNone
            | M::Sort
            | M::Extend
            | M::IndexOf
            | M::Get
            | M::Keys
            | M::Values
            | M::Line
            | M::Scatter
            | M::Hist
            | M::Image
            | M::Title
            | M::Xlabel
            | M::Ylabel
            | M::LogY
            | M::Legend
            | M::Save
            | M::Grid
            | M::Panel
            | M::Items => unknown("Str"),
        },
        (Value::Arr(items), Some(h)) => match h {
            M::Len => want(0).map(|_| Value::Int(items.len() as i64)),
            M::Contains => {
                want(1)?;
                Ok(Value::Bool(items.iter().any(|v| ops::equal(v, &argv[0]))))
            }
            M::Reversed => want(0).map(|_| Value::Arr(Rc::new(items.iter().rev().cloned().collect()))),
            M::Join => {
                want(1)?;
                let sep = str_arg(0)?;
                let mut out = String::new();
                for (i, v) in items.iter().enumerate() {
                    let part = display(v);
                    let piece = if i > 0 { sep.len() } else { 0 } + part.len();
                    let want = out.len().saturating_add(piece);
                    ops::reserve_str(&mut out, want).or_else(|f| fail_with(span, f))?;
                    if i > 0 {
                        out.push_str(&sep);
                    }
                    out.push_str(&part);
                }
                Ok(Value::str(out))
            }
            M::IndexOf => {
                want(1)?;
                let at = items.iter().position(|v| ops::equal(v, &argv[0]));
                Ok(Value::Int(at.map_or(-1, |i| i as i64)))
            }
            M::Push | M::Pop | M::Insert | M::Remove | M::Sort | M::Extend => fail(
                span,
                format!(
                    "`{name}` changes the Arr, so it needs a variable declared with `var` as its receiver"
                ),
            ),
            M::Upper
            | M::Lower
            | M::Trim
            | M::Split
            | M::StartsWith
            | M::EndsWith
            | M::Replace
            | M::Find
            | M::Chars
            | M::Watch
            | M::Encode
            | M::Decode
            | M::Underflows
            | M::Overflows
            | M::To
            | M::Numel
            | M::Item
            | M::Unwrap
            | M::Expect
            | M::UnwrapOr
            | M::IsOk
            | M::IsErr
            | M::IsSome
            | M::IsNone
            | M::PadLeft
            | M::PadRight
            | M::Repeat
            | M::Ord
            | M::IsDigit
            | M::IsAlpha
            | M::IsSpace
            | M::Lines
            | M::Get
            | M::Keys
            | M::Values
            | M::Line
            | M::Scatter
            | M::Hist
            | M::Image
            | M::Title
            | M::Xlabel
            | M::Ylabel
            | M::LogY
            | M::Legend
            | M::Save
            | M::Grid
            | M::Panel
            | M::Items => unknown("Arr"),
        },
        (
            Value::Dict(d),
            Some(h @ (M::Len | M::Contains | M::Get | M::Keys | M::Values | M::Items | M::Remove)),
        ) => {
            let key = |i: usize| DictKey::of(&argv[i]).or_else(|m| fail(span, m));
            match h {
                M::Len => want(0).map(|_| Value::Int(d.len() as i64)),
                M::Contains => {
                    want(1)?;
                    Ok(Value::Bool(d.get(&key(0)?).is_some()))
                }
                M::Get => match argv.len() {
                    1 => Ok(match d.get(&key(0)?) {
                        Some(v) => Value::Some(Rc::new(v.clone())),
                        None => Value::None,
                    }),
                    2 => Ok(d.get(&key(0)?).cloned().unwrap_or_else(|| argv[1].clone())),
                    n => fail(span, format!("`get` takes 1 or 2 arguments, but {n} were given")),
                },
                M::Keys | M::Values | M::Items => {
                    want(0)?;
                    let mut out = Vec::new();
                    ops::reserve_arr(&mut out, d.len()).or_else(|f| fail_with(span, f))?;
                    out.extend(d.iter().map(|(k, v)| match h {
                        M::Keys => k.to_value(),
                        M::Values => v.clone(),
                        _ => Value::Tuple(Rc::new(vec![k.to_value(), v.clone()])),
                    }));
                    Ok(Value::Arr(Rc::new(out)))
                }
                _ => fail(
                    span,
                    "`remove` changes the Dict, so it needs a variable declared with `var` as its receiver",
                ),
            }
        }
        (
            Value::Ok(_) | Value::Err(_) | Value::Some(_) | Value::None,
            Some(h @ (M::Unwrap | M::Expect | M::UnwrapOr)),
        ) => {
            let (inner, err) = match &recv {
                Value::Ok(v) | Value::Some(v) => (Some(v), None),
                Value::Err(e) => (None, Some(e)),
                _ => (None, None),
            };
            match (inner, h) {
                (Some(v), M::Unwrap) => want(0).map(|_| (**v).clone()),
                (Some(v), M::Expect | M::UnwrapOr) => want(1).map(|_| (**v).clone()),
                (None, M::UnwrapOr) => {
                    want(1)?;
                    Ok(argv[0].clone())
                }
                (None, M::Expect) => {
                    let msg = str_arg(0)?;
                    want(1)?;
                    match err {
                        Some(e) => fail(span, format!("{msg}: {}", display(e))),
                        None => fail(span, msg.as_str()),
                    }
                }
                // `unwrap` of an Err or None (`h` is one of the three).
                _ => {
                    want(0)?;
                    match err {
                        Some(e) => fail(span, format!("unwrap of Err: {}", display(e))),
                        None => fail(span, "unwrap of None"),
                    }
                }
            }
        }
        (Value::Ok(_) | Value::Err(_), Some(h @ (M::IsOk | M::IsErr))) => {
            want(0)?;
            Ok(Value::Bool(matches!(recv, Value::Ok(_)) == (h == M::IsOk)))
        }
        (Value::Some(_) | Value::None, Some(h @ (M::IsSome | M::IsNone))) => {
            want(0)?;
            Ok(Value::Bool(matches!(recv, Value::Some(_)) == (h == M::IsSome)))
        }
        (Value::Tensor(_) | Value::Tracked(_), _) => tensor_method(&recv, m, name, argv, span),
        (Value::Format(f), Some(h)) => format_method(f, h, &argv, span),
        (Value::Tape(tp), Some(M::Watch)) => {
            want(1)?;
            crate::autodiff::watch(tp, &argv[0]).or_else(|m| fail(span, format!("`watch`: {m}")))
        }
        (Value::Int(_) | Value::F64(_), _)
            if m.op.is_some_and(|op| matches!(op.spec().host, Host::Unary(_))) =>
        {
            want(0)?;
            match m.op.map(|op| op.spec().host) {
                Some(Host::Unary(u)) => host_math(u, name, &recv).or_else(|f| fail_with(span, f)),
                _ => unknown(&recv.type_name()),
            }
        }
        (other, _) => fail(
            span,
            format!("unknown method `{name}` on `{}`", other.type_name()),
        ),
    }
}

pub(crate) fn field(cx: &dyn Cx, base: &Value, member: Member, span: Span) -> R<Value> {
    match (base, member) {
        (Value::Struct(s), Member::Offset(i, _)) if (i as usize) < s.fields.len() => {
            Ok(s.fields[i as usize].clone())
        }
        (Value::Struct(s), Member::Offset(_, sym) | Member::Dynamic(sym, ..)) => {
            match s.def.field_offset(sym) {
                Some(i) => Ok(s.fields[i].clone()),
                None => fail(
                    span,
                    format!("struct `{}` has no field `{}`", s.def.name, cx.sym_name(sym)),
                ),
            }
        }
        (Value::Tensor(_) | Value::Tracked(_), Member::Tensor(f) | Member::Dynamic(_, Some(f), _)) => {
            tensor_field(base, f, span)
        }
        (Value::Format(f), Member::Format(ff) | Member::Dynamic(_, _, Some(ff))) => Ok(format_field(f, ff)),
        (Value::Format(_), Member::Offset(_, sym) | Member::Dynamic(sym, _, None)) => fail(
            span,
            format!(
                "a Format has no field `{}` (its fields are {})",
                cx.sym_name(sym),
                FormatField::names().join(", ")
            ),
        ),
        (Value::Tensor(_) | Value::Tracked(_), Member::Offset(_, sym) | Member::Dynamic(sym, None, _)) => {
            fail(
                span,
                format!(
                    "a tensor has no field `{}` (its fields are {})",
                    cx.sym_name(sym),
                    TensorField::names().join(", ")
                ),
            )
        }
        (Value::Tuple(items), Member::Elem(i)) => match items.get(i as usize) {
            Some(v) => Ok(v.clone()),
            None => fail(span, format!("a tuple of {} has no field `{i}`", items.len())),
        },
        (other, m) => {
            let name = match m {
                Member::Tensor(f) => Rc::from(f.name()),
                Member::Format(f) => Rc::from(f.name()),
                Member::Offset(_, sym) | Member::Dynamic(sym, ..) => cx.sym_name(sym),
                Member::Elem(i) => Rc::from(i.to_string()),
            };
            fail(span, format!("a `{}` has no field `{name}`", other.type_name()))
        }
    }
}

/// A field of a Format (spec §13).
fn format_field(f: &Format, field: FormatField) -> Value {
    match field {
        FormatField::Max => Value::F64(f.max()),
        FormatField::MinNormal => Value::F64(f.min_normal()),
        FormatField::MinSubnormal => Value::F64(f.min_subnormal()),
        FormatField::Eps => Value::F64(f.eps()),
        FormatField::UnderflowCliff => Value::F64(f.underflow_cliff()),
        FormatField::Bits => Value::Int(i64::from(f.bits())),
        FormatField::ExpBits => Value::Int(i64::from(f.exp_bits())),
        FormatField::ManBits => Value::Int(i64::from(f.man_bits())),
        FormatField::Bias => Value::Int(i64::from(f.bias())),
        FormatField::Subnormals => Value::Bool(f.subnormals()),
        FormatField::Special => Value::str(f.special().name()),
    }
}

/// `float_format(exp_bits, man_bits, bias=…, subnormals=true,
/// special="ieee")` from its argument slots (spec §13).
fn float_format(slots: Vec<Option<Value>>, span: Span) -> R<Value> {
    let mut slots = slots.into_iter();
    let mut next = || slots.next().flatten();
    let int = |v: Option<Value>, what: &str| -> R<Option<i64>> {
        match v {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(i)),
            Some(other) => fail(
                span,
                format!(
                    "`float_format`'s `{what}` must be an Int, not `{}`",
                    other.type_name()
                ),
            ),
        }
    };
    let exp_bits = int(next(), "exp_bits")?;
    let man_bits = int(next(), "man_bits")?;
    let (Some(exp_bits), Some(man_bits)) = (exp_bits, man_bits) else {
        return fail(span, "`float_format` needs `exp_bits` and `man_bits`");
    };
    let bias = int(next(), "bias")?;
    let subnormals = match next() {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            return fail(
                span,
                format!(
                    "`float_format`'s `subnormals` must be a Bool, not `{}`",
                    other.type_name()
                ),
            )
        }
    };
    let special = match next() {
        None => Special::Ieee,
        Some(Value::Str(s)) => match Special::from_name(&s) {
            Some(sp) => sp,
            None => {
                return fail(
                    span,
                    format!(
                        "`float_format`'s `special` is \"ieee\", \"fn\" or \"none\", not {:?}",
                        s.as_str()
                    ),
                )
            }
        },
        Some(other) => {
            return fail(
                span,
                format!(
                    "`float_format`'s `special` must be a Str, not `{}`",
                    other.type_name()
                ),
            )
        }
    };
    Format::new(exp_bits, man_bits, bias, subnormals, special)
        .map(|f| Value::Format(Rc::new(f)))
        .or_else(|m| fail(span, format!("`float_format`: {m}")))
}

/// A Format's methods (spec §13): `encode`, `decode`, `underflows`,
/// `overflows`, each of one tensor (or host number).
fn format_method(f: &Format, h: HostMethod, argv: &[Value], span: Span) -> R<Value> {
    let name = h.name();
    arity(name, 1, argv.len()).or_else(|x| fail_with(span, x))?;
    let t = match &argv[0] {
        Value::Int(i) => Tensor::scalar(Scalar::F64(*i as f64)),
        Value::F64(x) => Tensor::scalar(Scalar::F64(*x)),
        v => match v.as_tensor() {
            Some(t) => t.clone(),
            None => return fail(span, format!("`{name}` takes a tensor, not `{}`", v.type_name())),
        },
    };
    let tf = |e: TensorError| fail::<Value>(span, format!("`{name}`: {}", e.0));
    match h {
        HostMethod::Encode => twill_tensor::ops::lab::encode(*f, &t)
            .map(|t| Value::Tensor(Rc::new(t)))
            .or_else(tf),
        HostMethod::Decode => twill_tensor::ops::lab::decode(*f, &t)
            .map(|t| Value::Tensor(Rc::new(t)))
            .or_else(tf),
        HostMethod::Underflows => twill_tensor::ops::lab::underflows(*f, &t)
            .map(|n| Value::Int(n as i64))
            .or_else(tf),
        HostMethod::Overflows => twill_tensor::ops::lab::overflows(*f, &t)
            .map(|n| Value::Int(n as i64))
            .or_else(tf),
        other => fail(span, format!("unknown method `{}` on `Format`", other.name())),
    }
}

pub(crate) fn index(base: &Value, keys: &[IndexKey], span: Span) -> R<Value> {
    if base.is_tensor() {
        return tensor_index(base, keys, span);
    }
    let [key] = keys else {
        return fail(span, format!("a `{}` takes exactly one index", base.type_name()));
    };
    match (base, key) {
        (Value::Dict(d), IndexKey::Single(k, s)) => {
            let key = DictKey::of(k).or_else(|m| fail(*s, m))?;
            match d.get(&key) {
                Some(v) => Ok(v.clone()),
                None => fail_as(
                    ErrorKind::Index,
                    *s,
                    format!("key {} is not in the Dict", repr(k)),
                ),
            }
        }
        (Value::Dict(_), IndexKey::Slice(..)) => fail(span, "a Dict cannot be sliced"),
        (Value::Arr(items), IndexKey::Single(i, s)) => norm_index(i, items.len())
            .map(|j| items[j].clone())
            .or_else(|m| fail_with(*s, m)),
        // An ASCII Str's characters are its bytes (spec §10.7: O(1)).
        (Value::Str(st), IndexKey::Single(i, s)) if st.is_ascii() => norm_index(i, st.len())
            .map(|j| Value::str(st.get(j..=j).unwrap_or_default()))
            .or_else(|m| fail_with(*s, m)),
        (Value::Str(st), IndexKey::Single(i, s)) => {
            let chars: Vec<char> = st.chars().collect();
            norm_index(i, chars.len())
                .map(|j| Value::str(chars[j].to_string()))
                .or_else(|m| fail_with(*s, m))
        }
        (Value::Arr(items), IndexKey::Slice(a, b, c)) => {
            let idx =
                slice_indices(as_int(a)?, as_int(b)?, as_int(c)?, items.len()).or_else(|m| fail(span, m))?;
            Ok(Value::Arr(Rc::new(
                idx.into_iter().map(|i| items[i].clone()).collect(),
            )))
        }
        (Value::Str(st), IndexKey::Slice(a, b, c)) if st.is_ascii() => {
            let idx =
                slice_indices(as_int(a)?, as_int(b)?, as_int(c)?, st.len()).or_else(|m| fail(span, m))?;
            let bytes = st.as_bytes();
            // A run of consecutive bytes is one copy; a stepped slice
            // takes its bytes one by one (each an ASCII character).
            let text = match (idx.first(), idx.last()) {
                (Some(&lo), Some(&hi)) if hi >= lo && hi - lo + 1 == idx.len() => {
                    st.get(lo..=hi).unwrap_or_default().to_string()
                }
                _ => idx
                    .into_iter()
                    .filter_map(|i| bytes.get(i).map(|&b| char::from(b)))
                    .collect(),
            };
            Ok(Value::str(text))
        }
        (Value::Str(st), IndexKey::Slice(a, b, c)) => {
            let chars: Vec<char> = st.chars().collect();
            let idx =
                slice_indices(as_int(a)?, as_int(b)?, as_int(c)?, chars.len()).or_else(|m| fail(span, m))?;
            Ok(Value::str(idx.into_iter().map(|i| chars[i]).collect::<String>()))
        }
        (Value::Arr(_) | Value::Str(_) | Value::Dict(_), IndexKey::Ellipsis) => {
            fail(span, "only a tensor takes `...` in a subscript")
        }
        (other, _) => fail(span, format!("a `{}` cannot be indexed", other.type_name())),
    }
}

/// A shape as the `Arr[Int]` a backend's constructor takes.
pub(crate) fn shape_value(shape: &[usize]) -> Value {
    Value::Arr(Rc::new(shape.iter().map(|&d| Value::Int(d as i64)).collect()))
}

/// A host number's exact scalar as a rank-0 tensor of its own dtype (an
/// Int beyond i32 is an f64 rounded to odd, `bridge::int_scalar`), so that
/// a backend casts it to the dtype asked for as `x.to(dt)` would.
fn scalar_tensor(s: Scalar) -> Result<Value, TensorError> {
    construct::from_scalars(&[s], vec![], s.dtype()).map(tensor_value)
}

/// `tensor(list, dt)` of host numbers: each element's exact scalar cast
/// once to `dt`, by the native kernels or by the backend in force.
fn tensor_of_scalars(
    via: Option<&'static crate::backend::Backend>,
    scalars: &[Scalar],
    shape: Vec<usize>,
    dt: twill_tensor::DType,
) -> Result<Tensor, TensorError> {
    let Some(be) = via else {
        return construct::from_scalars(scalars, shape, dt);
    };
    let items = scalars
        .iter()
        .map(|&s| scalar_tensor(s))
        .collect::<Result<Vec<_>, _>>()?;
    (be.construct)(
        "tensor",
        vec![Value::Arr(Rc::new(items)), shape_value(&shape), Value::DType(dt)],
    )
}

pub(crate) fn tensor_builtin(b: Make, a: Vec<Option<Value>>, span: Span) -> R<Value> {
    let name = Builtin::Make(b).name();
    let get = |i: usize| a.get(i).and_then(|v| v.as_ref());
    let need = |i: usize, name: &str| -> R<&Value> {
        get(i).map_or_else(
            || fail(span, format!("`{}` needs its `{name}` argument", name)),
            Ok,
        )
    };
    // Another backend than the native kernels (the reference runtime)
    // computes the constructors from the arguments read here.
    let via = crate::backend::active();
    let result = match b {
        Make::Zeros | Make::Ones => {
            let shape = shape_arg(need(0, "shape")?, span)?;
            let dt = dtype_arg(get(1), span)?;
            if let Some(be) = via {
                (be.construct)(name, vec![shape_value(&shape), Value::DType(dt)])
            } else if b == Make::Zeros {
                Tensor::zeros(shape, dt)
            } else {
                Tensor::full(shape, Scalar::I32(1), dt)
            }
        }
        Make::Full => {
            let shape = shape_arg(need(0, "shape")?, span)?;
            let value = value_scalar(need(1, "value")?, span, "the fill value")?;
            let dt = dtype_arg(get(2), span)?;
            if let Some(be) = via {
                let one = scalar_tensor(value).or_else(|e| terr(span, e))?;
                (be.construct)(name, vec![shape_value(&shape), one, Value::DType(dt)])
            } else {
                Tensor::full(shape, value, dt)
            }
        }
        Make::Arange => {
            // arange(n), arange(n, dt), arange(a, b), arange(a, b, step, dt)
            let (start, stop, step, dt) = match (get(0), get(1)) {
                (Some(n), None) | (Some(n), Some(Value::DType(_))) => {
                    let dt = dtype_arg(get(3).or(get(1)), span)?;
                    (0.0, number_arg(n, span, "the length")?, 1.0, dt)
                }
                (Some(a0), Some(b0)) => {
                    let step = match get(2) {
                        Some(s) => number_arg(s, span, "the step")?,
                        None => 1.0,
                    };
                    (
                        number_arg(a0, span, "the start")?,
                        number_arg(b0, span, "the end")?,
                        step,
                        dtype_arg(get(3), span)?,
                    )
                }
                (None, _) => return fail(span, "`arange` needs a length or a start and an end"),
            };
            if let Some(b) = via {
                let args = vec![
                    Value::F64(start),
                    Value::F64(stop),
                    Value::F64(step),
                    Value::DType(dt),
                ];
                (b.construct)("arange", args)
            } else {
                construct::arange(start, stop, step, dt)
            }
        }
        Make::Linspace => {
            let start = number_arg(need(0, "a")?, span, "the start")?;
            let stop = number_arg(need(1, "b")?, span, "the end")?;
            let n = int_arg(need(2, "n")?, span, "the count")?;
            let n = usize::try_from(n)
                .or_else(|_| fail(span, format!("`linspace` count cannot be negative ({n})")))?;
            let dt = dtype_arg(get(3), span)?;
            if let Some(b) = via {
                let args = vec![
                    Value::F64(start),
                    Value::F64(stop),
                    Value::Int(n as i64),
                    Value::DType(dt),
                ];
                (b.construct)("linspace", args)
            } else {
                construct::linspace(start, stop, n, dt)
            }
        }
        Make::Eye => {
            let n = int_arg(need(0, "n")?, span, "the size")?;
            let n =
                usize::try_from(n).or_else(|_| fail(span, format!("`eye` size cannot be negative ({n})")))?;
            let dt = dtype_arg(get(1), span)?;
            if let Some(b) = via {
                (b.construct)("eye", vec![Value::Int(n as i64), Value::DType(dt)])
            } else {
                construct::eye(n, dt)
            }
        }
        Make::Tensor => {
            let dt = dtype_arg(get(1), span)?;
            match need(0, "list")? {
                v @ (Value::Tensor(_) | Value::Tracked(_)) => match (v.as_tensor(), via) {
                    (Some(t), Some(be)) => (be.cast)(t, dt).map_err(|e| TensorError(e.message)),
                    (Some(t), None) => t.cast(dt),
                    (None, _) => Tensor::zeros(vec![0], dt),
                },
                Value::Arr(items) => {
                    let mut scalars = Vec::with_capacity(items.len());
                    for it in items.iter() {
                        scalars.push(value_scalar(it, span, "a tensor element")?);
                    }
                    tensor_of_scalars(via, &scalars, vec![items.len()], dt)
                }
                v @ (Value::Int(_) | Value::F64(_) | Value::Bool(_)) => {
                    let one = value_scalar(v, span, "a tensor element")?;
                    tensor_of_scalars(via, &[one], vec![], dt)
                }
                other => {
                    return fail(
                        span,
                        format!("`tensor` needs a list of numbers, not `{}`", other.type_name()),
                    )
                }
            }
        }
        Make::ZerosLike | Make::OnesLike => match need(0, "x")?.as_tensor() {
            Some(t) => {
                let zeros = b == Make::ZerosLike;
                match via {
                    Some(be) => (be.construct)(
                        if zeros { "zeros" } else { "ones" },
                        vec![shape_value(t.shape()), Value::DType(t.dtype())],
                    ),
                    None => Tensor::full(
                        t.shape().to_vec(),
                        Scalar::I32(if zeros { 0 } else { 1 }),
                        t.dtype(),
                    ),
                }
            }
            None => {
                return fail(
                    span,
                    format!("`{}` needs a tensor, not `{}`", name, need(0, "x")?.type_name()),
                )
            }
        },
        Make::Rand | Make::Randn => {
            let shape = shape_arg(need(0, "shape")?, span)?;
            let dt = dtype_arg(get(1), span)?;
            let seed = match get(2) {
                Some(v) => int_arg(v, span, "the seed")?,
                None => 0,
            };
            if let Some(be) = via {
                (be.construct)(
                    name,
                    vec![shape_value(&shape), Value::DType(dt), Value::Int(seed)],
                )
            } else if b == Make::Rand {
                construct::rand(shape, dt, seed as u64)
            } else {
                construct::randn(shape, dt, seed as u64)
            }
        }
        Make::Uniform | Make::Normal => {
            let shape = shape_arg(need(0, "shape")?, span)?;
            let num = |i: usize, default: f64| -> R<f64> {
                match get(i) {
                    None => Ok(default),
                    Some(Value::Int(v)) => Ok(*v as f64),
                    Some(Value::F64(v)) => Ok(*v),
                    Some(other) => fail(
                        span,
                        format!(
                            "`{name}` needs numbers for its bounds, not `{}`",
                            other.type_name()
                        ),
                    ),
                }
            };
            let dt = dtype_arg(get(3), span)?;
            let seed = int_arg(need(4, "seed")?, span, "the seed")?;
            if let Some(be) = via {
                let args = vec![
                    shape_value(&shape),
                    Value::F64(num(1, 0.0)?),
                    Value::F64(num(2, 1.0)?),
                    Value::DType(dt),
                    Value::Int(seed),
                ];
                (be.construct)(name, args)
            } else if b == Make::Uniform {
                construct::uniform(shape, num(1, 0.0)?, num(2, 1.0)?, dt, seed as u64)
            } else {
                construct::normal(shape, num(1, 0.0)?, num(2, 1.0)?, dt, seed as u64)
            }
        }
        Make::Randint => {
            let lo = int_arg(need(0, "lo")?, span, "the low bound")?;
            let hi = int_arg(need(1, "hi")?, span, "the high bound")?;
            let shape = shape_arg(need(2, "shape")?, span)?;
            let dt = match get(3) {
                None => twill_tensor::DType::I32,
                some => dtype_arg(some, span)?,
            };
            let seed = int_arg(need(4, "seed")?, span, "the seed")?;
            if let Some(be) = via {
                let args = vec![
                    Value::Int(lo),
                    Value::Int(hi),
                    shape_value(&shape),
                    Value::DType(dt),
                    Value::Int(seed),
                ];
                (be.construct)(name, args)
            } else {
                construct::randint(lo, hi, shape, dt, seed as u64)
            }
        }
        Make::Permutation => {
            let n = int_arg(need(0, "n")?, span, "the count")?;
            let seed = int_arg(need(1, "seed")?, span, "the seed")?;
            if let Some(be) = via {
                (be.construct)(name, vec![Value::Int(n), Value::Int(seed)])
            } else {
                construct::permutation(n, seed as u64)
            }
        }
    };
    result.map(tensor_value).or_else(|e| terr(span, e))
}

pub(crate) fn tensor_method(
    recv: &Value,
    m: MethodRef,
    name: &str,
    argv: Vec<Value>,
    span: Span,
) -> R<Value> {
    let want = |k: usize| arity(name, k, argv.len()).or_else(|f| fail_with(span, f));
    match m.host {
        Some(HostMethod::To) => {
            want(1)?;
            let dt = dtype_arg(argv.first(), span)?;
            crate::autodiff::cast(recv, dt).or_else(|m| fail(span, m))
        }
        Some(HostMethod::Numel) => {
            want(0)?;
            Ok(Value::Int(recv.as_tensor().map_or(0, |t| t.numel()) as i64))
        }
        Some(HostMethod::Item) => {
            want(0)?;
            match recv.as_tensor() {
                Some(t) => t.item().map(scalar_value).or_else(|e| terr(span, e)),
                None => fail(span, "`item` needs a tensor"),
            }
        }
        _ => match m.op {
            Some(op) => {
                let mut slots = Vec::with_capacity(argv.len() + 1);
                slots.push(Some(recv.clone()));
                slots.extend(argv.into_iter().map(Some));
                crate::autodiff::op(op, &slots).or_else(|e| fail(span, e.message))
            }
            None => fail(span, format!("unknown method `{name}` on `{}`", recv.type_name())),
        },
    }
}

pub(crate) fn tensor_field(recv: &Value, field: TensorField, span: Span) -> R<Value> {
    let Some(t) = recv.as_tensor() else {
        return fail(
            span,
            format!("a `{}` has no field `{}`", recv.type_name(), field.name()),
        );
    };
    match field {
        TensorField::Dtype => Ok(Value::DType(t.dtype())),
        TensorField::Shape => Ok(Value::Arr(Rc::new(
            t.shape().iter().map(|&d| Value::Int(d as i64)).collect(),
        ))),
        TensorField::Ndim => Ok(Value::Int(t.ndim() as i64)),
        TensorField::T => crate::autodiff::reverse(recv).or_else(|m| fail(span, m)),
    }
}

/// Evaluated index keys as the items of a tensor subscript (spec §11.1):
/// an Int, a slice, `None` (a new axis), `...`, an integer or bool tensor
/// (an `Arr` of Ints or of Bools counts as one).
pub(crate) fn tensor_items(keys: &[IndexKey]) -> R<Vec<IndexItem>> {
    let mut items = Vec::with_capacity(keys.len());
    for k in keys {
        items.push(match k {
            IndexKey::Single(v, s) => tensor_item(v, *s)?,
            IndexKey::Slice(a, b, c) => {
                let bound = |x: &Option<(Value, Span)>| -> R<Option<i64>> {
                    match x {
                        None => Ok(None),
                        Some((v, s)) => int_arg(v, *s, "a slice bound").map(Some),
                    }
                };
                IndexItem::Slice(bound(a)?, bound(b)?, bound(c)?)
            }
            IndexKey::Ellipsis => IndexItem::Ellipsis,
        });
    }
    Ok(items)
}

fn tensor_item(v: &Value, s: Span) -> R<IndexItem> {
    let as_tensor =
        |t: Result<Tensor, twill_tensor::TensorError>| t.map(IndexItem::Tensor).or_else(|e| terr(s, e));
    match v {
        Value::Int(i) => Ok(IndexItem::Single(*i)),
        Value::None => Ok(IndexItem::NewAxis),
        Value::Tensor(_) | Value::Tracked(_) => match crate::value::base(v) {
            Some(t) => Ok(IndexItem::Tensor(t.clone())),
            None => fail(s, "an index tensor is missing its value"),
        },
        Value::Arr(xs) if xs.iter().all(|x| matches!(x, Value::Int(_))) && !xs.is_empty() => {
            let v: Vec<f64> = xs
                .iter()
                .map(|x| if let Value::Int(i) = x { *i as f64 } else { 0.0 })
                .collect();
            as_tensor(Tensor::from_vec(v, vec![xs.len()]))
        }
        Value::Arr(xs) if xs.iter().all(|x| matches!(x, Value::Bool(_))) && !xs.is_empty() => {
            let v: Vec<bool> = xs.iter().map(|x| matches!(x, Value::Bool(true))).collect();
            as_tensor(Tensor::from_vec(v, vec![xs.len()]))
        }
        Value::Bool(_) => fail_as(
            ErrorKind::Index,
            s,
            "a Bool is not a tensor index; a mask is a bool tensor of the indexed axes' shape",
        ),
        other => fail_as(
            ErrorKind::Index,
            s,
            format!(
                "a tensor index is an Int, a slice, `None`, `...` or an integer or bool tensor, not a `{}`",
                other.type_name()
            ),
        ),
    }
}

pub(crate) fn tensor_index(recv: &Value, keys: &[IndexKey], span: Span) -> R<Value> {
    let items = tensor_items(keys)?;
    crate::autodiff::index(recv, &items).or_else(|m| fail_as(ErrorKind::Index, span, m))
}

/// Where each argument of a call was written, for errors about one
/// argument (the HIR's argument list, read only for its spans).
#[derive(Clone, Copy)]
pub(crate) struct ArgSpans<'a>(pub &'a hir::Args);

impl ArgSpans<'_> {
    fn of(self, slot: usize) -> Option<Span> {
        self.0
            .items
            .iter()
            .find(|(s, _)| *s as usize == slot)
            .map(|(_, e)| e.span)
    }
}

/// Runs a tensor operation of the registry on arguments bound to its
/// slots, recorded on a tape when an operand is tracked. An error about
/// one argument points at that argument.
pub(crate) fn call_op(op: Op, slots: Vec<Option<Value>>, at: ArgSpans, span: Span) -> R<Value> {
    // `min(a)`, `max(a)`, `sum(a)` of an Arr of numbers are host values
    // (spec §10.7).
    if let (Op::Min | Op::Max | Op::Sum, Some(Some(Value::Arr(items))), true) =
        (op, slots.first(), slots.iter().skip(1).all(Option::is_none))
    {
        return arr_reduce(op, items, span);
    }
    crate::autodiff::op(op, &slots).or_else(|e| {
        let here = e.arg.and_then(|slot| at.of(slot)).unwrap_or(span);
        fail_as(ErrorKind::Tensor, here, e.message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_slices() {
        assert_eq!(slice_indices(None, None, Some(-1), 4), Ok(vec![3, 2, 1, 0]));
        assert_eq!(slice_indices(Some(1), None, None, 4), Ok(vec![1, 2, 3]));
        assert_eq!(slice_indices(Some(-2), Some(100), None, 4), Ok(vec![2, 3]));
        assert_eq!(slice_indices(None, None, Some(2), 5), Ok(vec![0, 2, 4]));
        assert!(slice_indices(None, None, Some(0), 5).is_err());
        assert_eq!(slice_indices(Some(3), Some(1), None, 5), Ok(vec![]));
        // A step near ±2^63 leaves the sequence after one element.
        assert_eq!(slice_indices(Some(1), None, Some(i64::MAX), 10), Ok(vec![1]));
        assert_eq!(slice_indices(None, None, Some(i64::MIN), 10), Ok(vec![9]));
    }
}
