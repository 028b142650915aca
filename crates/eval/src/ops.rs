//! Operators on host values (spec §3): Int arithmetic is checked (overflow
//! is an error), `Int / Int` is F64, `//` and `%` floor like Python, mixed
//! Int/F64 gives F64, comparisons between Int and F64 are exact. The
//! checker's `host_binop` states the same table statically.

use std::cmp::Ordering;
use std::rc::Rc;

use twill_check::text::Text;
use twill_syntax::ast::BinOp;

use crate::error::{ErrorKind, Failure};
use crate::value::Value;

/// Why an operator failed; the caller attaches the span.
pub type OpResult = Result<Value, Failure>;

fn overflow(op: BinOp, a: i64, b: i64) -> Failure {
    Failure::new(
        ErrorKind::Overflow,
        format!("Int overflow: {a} {} {b} does not fit in 64 bits", op.symbol()),
    )
}

pub fn binary(op: BinOp, a: &Value, b: &Value) -> OpResult {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => int_op(op, *x, *y),
        (Value::F64(x), Value::F64(y)) => float_op(op, *x, *y),
        (Value::Tensor(_) | Value::Tracked(_), _) | (_, Value::Tensor(_) | Value::Tracked(_)) => {
            Err(format!(
                "`{}` with a tensor operand is autodiff's (`autodiff::binary_values`)",
                op.symbol()
            )
            .into())
        }
        (Value::Int(x), Value::F64(y)) => float_op_mixed(op, a, b, *x as f64, *y),
        (Value::F64(x), Value::Int(y)) => float_op_mixed(op, a, b, *x, *y as f64),
        _ if op == BinOp::Eq => Ok(Value::Bool(equal(a, b))),
        _ if op == BinOp::Ne => Ok(Value::Bool(!equal(a, b))),
        _ => other_op(op, a, b),
    }
}

fn int_op(op: BinOp, x: i64, y: i64) -> OpResult {
    let checked = |r: Option<i64>| r.map(Value::Int).ok_or_else(|| overflow(op, x, y));
    match op {
        BinOp::Add => checked(x.checked_add(y)),
        BinOp::Sub => checked(x.checked_sub(y)),
        BinOp::Mul => checked(x.checked_mul(y)),
        BinOp::Div => Ok(Value::F64(x as f64 / y as f64)),
        BinOp::FloorDiv => {
            if y == 0 {
                return Err(Failure::new(ErrorKind::ZeroDivision, "integer division by zero"));
            }
            let q = x.checked_div(y).ok_or_else(|| overflow(op, x, y))?;
            Ok(Value::Int(if (x % y != 0) && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            }))
        }
        BinOp::Mod => {
            if y == 0 {
                return Err(Failure::new(ErrorKind::ZeroDivision, "integer modulo by zero"));
            }
            // `checked_rem` fails only for MIN % -1, whose result is 0.
            let r = x.checked_rem(y).unwrap_or(0);
            Ok(Value::Int(if r != 0 && ((r < 0) != (y < 0)) { r + y } else { r }))
        }
        BinOp::Pow => {
            if y < 0 {
                return Ok(Value::F64(twill_tensor::math::pow(x as f64, y as f64)));
            }
            let e = u32::try_from(y).map_err(|_| overflow(op, x, y))?;
            checked(x.checked_pow(e))
        }
        BinOp::Eq => Ok(Value::Bool(x == y)),
        BinOp::Ne => Ok(Value::Bool(x != y)),
        BinOp::Lt => Ok(Value::Bool(x < y)),
        BinOp::Le => Ok(Value::Bool(x <= y)),
        BinOp::Gt => Ok(Value::Bool(x > y)),
        BinOp::Ge => Ok(Value::Bool(x >= y)),
        BinOp::BitAnd => Ok(Value::Int(x & y)),
        BinOp::BitOr => Ok(Value::Int(x | y)),
        BinOp::BitXor => Ok(Value::Int(x ^ y)),
        BinOp::Shl => {
            if y < 0 {
                return Err(format!("negative shift count {y}").into());
            }
            if y >= 64 {
                return if x == 0 {
                    Ok(Value::Int(0))
                } else {
                    Err(overflow(op, x, y))
                };
            }
            let r = x << y;
            if r >> y != x {
                return Err(overflow(op, x, y));
            }
            Ok(Value::Int(r))
        }
        BinOp::Shr => {
            if y < 0 {
                return Err(format!("negative shift count {y}").into());
            }
            Ok(Value::Int(x >> y.min(63)))
        }
        BinOp::MatMul => Err("`@` needs tensors, not `Int` and `Int`".into()),
    }
}

/// Python's float floor division and modulo: the remainder takes the sign
/// of the divisor; division by zero follows IEEE (NumPy's behaviour).
pub fn float_divmod(x: f64, y: f64) -> (f64, f64) {
    if y == 0.0 {
        return (x / y, f64::NAN);
    }
    let m = x % y;
    let (div, m) = if m != 0.0 && ((y < 0.0) != (m < 0.0)) {
        ((x - (m + y)) / y, m + y)
    } else {
        ((x - m) / y, if m == 0.0 { 0.0f64.copysign(y) } else { m })
    };
    let mut floordiv = div.floor();
    if div - floordiv > 0.5 {
        floordiv += 1.0;
    }
    if div == 0.0 {
        floordiv = 0.0f64.copysign(x / y);
    }
    (floordiv, m)
}

fn float_op(op: BinOp, x: f64, y: f64) -> OpResult {
    Ok(match op {
        BinOp::Add => Value::F64(x + y),
        BinOp::Sub => Value::F64(x - y),
        BinOp::Mul => Value::F64(x * y),
        BinOp::Div => Value::F64(x / y),
        BinOp::FloorDiv => Value::F64(float_divmod(x, y).0),
        BinOp::Mod => Value::F64(float_divmod(x, y).1),
        BinOp::Pow => Value::F64(twill_tensor::math::pow(x, y)),
        BinOp::Eq => Value::Bool(x == y),
        BinOp::Ne => Value::Bool(x != y),
        BinOp::Lt => Value::Bool(x < y),
        BinOp::Le => Value::Bool(x <= y),
        BinOp::Gt => Value::Bool(x > y),
        BinOp::Ge => Value::Bool(x >= y),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr | BinOp::MatMul => {
            return Err(format!("`{}` is not defined for `F64`", op.symbol()).into())
        }
    })
}

/// Mixed Int/F64: arithmetic in F64, comparisons exact.
fn float_op_mixed(op: BinOp, a: &Value, b: &Value, x: f64, y: f64) -> OpResult {
    if op.is_comparison() {
        let ord = compare_numbers(a, b);
        // `is_comparison` leaves `Ge` as the only operator the last arm sees.
        #[allow(clippy::wildcard_enum_match_arm)]
        let holds = match op {
            BinOp::Eq => ord == Some(Ordering::Equal),
            BinOp::Ne => ord != Some(Ordering::Equal),
            BinOp::Lt => ord == Some(Ordering::Less),
            BinOp::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
            BinOp::Gt => ord == Some(Ordering::Greater),
            _ => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
        };
        return Ok(Value::Bool(holds));
    }
    float_op(op, x, y).map_err(|_| {
        Failure::from(format!(
            "cannot apply `{}` to `{}` and `{}`",
            op.symbol(),
            a.type_name(),
            b.type_name()
        ))
    })
}

/// Exact order of an Int and an F64 (no rounding of the Int); `None` with NaN.
fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= 9_223_372_036_854_775_808.0 {
        return Some(Ordering::Less);
    }
    if f < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    match i.cmp(&(t as i64)) {
        Ordering::Equal => 0.0.partial_cmp(&(f - t)),
        o @ (Ordering::Less | Ordering::Greater) => Some(o),
    }
}

pub fn compare_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::F64(x), Value::F64(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::F64(y)) => cmp_int_float(*x, *y),
        (Value::F64(x), Value::Int(y)) => cmp_int_float(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

// An operator without a meaning for these operands falls through to the type
// error at the end, whatever operator it is.
#[allow(clippy::wildcard_enum_match_arm)]
fn other_op(op: BinOp, a: &Value, b: &Value) -> OpResult {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => match op {
            BinOp::BitAnd => return Ok(Value::Bool(*x & *y)),
            BinOp::BitOr => return Ok(Value::Bool(*x | *y)),
            BinOp::BitXor => return Ok(Value::Bool(*x ^ *y)),
            _ => {}
        },
        (Value::Str(x), Value::Str(y)) => match op {
            BinOp::Add => {
                let mut s = String::new();
                reserve_str(&mut s, x.len() + y.len())?;
                s.push_str(x);
                s.push_str(y);
                return Ok(Value::str(s));
            }
            BinOp::Lt => return Ok(Value::Bool(x < y)),
            BinOp::Le => return Ok(Value::Bool(x <= y)),
            BinOp::Gt => return Ok(Value::Bool(x > y)),
            BinOp::Ge => return Ok(Value::Bool(x >= y)),
            _ => {}
        },
        (Value::Arr(x), Value::Arr(y)) if op == BinOp::Add => {
            let mut v = Vec::new();
            reserve_arr(&mut v, x.len() + y.len())?;
            v.extend(x.iter().cloned());
            v.extend(y.iter().cloned());
            return Ok(Value::Arr(Rc::new(v)));
        }
        (Value::Str(s), Value::Int(n)) | (Value::Int(n), Value::Str(s)) if op == BinOp::Mul => {
            return repeat_str(s, *n).map(Value::str);
        }
        (Value::Arr(items), Value::Int(n)) | (Value::Int(n), Value::Arr(items)) if op == BinOp::Mul => {
            return repeat_arr(items, *n).map(|v| Value::Arr(Rc::new(v)));
        }
        _ => {}
    }
    Err(format!(
        "cannot apply `{}` to `{}` and `{}`",
        op.symbol(),
        a.type_name(),
        b.type_name()
    )
    .into())
}

/// Room for `total` bytes in `s`: a Str longer than
/// [`twill_host::STR_MAX_BYTES`], or too long for memory, is an error at the
/// operation that makes it, never an abort.
pub(crate) fn reserve_str(s: &mut String, total: usize) -> Result<(), Failure> {
    str_fits(total)?;
    let more = total.saturating_sub(s.len());
    s.try_reserve(more).map_err(|_| str_out_of_memory(total))
}

/// Room for `total` bytes in a Str's `Text`, as [`reserve_str`].
pub(crate) fn reserve_text(t: &mut Text, total: usize) -> Result<(), Failure> {
    str_fits(total)?;
    if t.capacity() >= total {
        return Ok(());
    }
    let more = total.saturating_sub(t.len());
    t.try_reserve(more).map_err(|_| str_out_of_memory(total))
}

fn str_fits(total: usize) -> Result<(), Failure> {
    if total > twill_host::STR_MAX_BYTES {
        return Err(Failure::from(format!(
            "a Str of {total} bytes is longer than the {} bytes (512 MiB) a Str can hold",
            twill_host::STR_MAX_BYTES
        )));
    }
    Ok(())
}

fn str_out_of_memory(total: usize) -> Failure {
    Failure::from(format!("cannot allocate {total} bytes for a Str: out of memory"))
}

/// Room for `total` items in `v` (as [`reserve_str`], for an Arr).
pub(crate) fn reserve_arr(v: &mut Vec<Value>, total: usize) -> Result<(), Failure> {
    let more = total.saturating_sub(v.len());
    v.try_reserve(more).map_err(|_| {
        let bytes = total as u128 * std::mem::size_of::<Value>() as u128;
        Failure::from(format!(
            "cannot allocate {bytes} bytes for an Arr of {total} items: out of memory"
        ))
    })
}

/// `s` repeated `n` times (none for n ≤ 0), as Python's `s * n`.
pub(crate) fn repeat_str(s: &str, n: i64) -> Result<String, Failure> {
    let n = usize::try_from(n).unwrap_or(0);
    let mut out = String::new();
    reserve_str(&mut out, s.len().saturating_mul(n))?;
    for _ in 0..n {
        out.push_str(s);
    }
    Ok(out)
}

/// The items repeated `n` times (none for n ≤ 0), as Python's `a * n`.
pub(crate) fn repeat_arr(items: &[Value], n: i64) -> Result<Vec<Value>, Failure> {
    let n = usize::try_from(n).unwrap_or(0);
    let mut out = Vec::new();
    reserve_arr(&mut out, items.len().saturating_mul(n))?;
    for _ in 0..n {
        out.extend(items.iter().cloned());
    }
    Ok(out)
}

/// The order of two elements for `sort` and `sorted`: numbers by value
/// (Int and F64 together; NaN after every other number, as NumPy sorts),
/// Strs by code point. `sortable` has checked the kinds first.
// Every kind but numbers and Strs is unordered, whatever kinds come later.
#[allow(clippy::wildcard_enum_match_arm)]
pub(crate) fn sort_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let num = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::F64(x) => Some(*x),
        _ => None,
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        // Tuples in order of their first unequal element, then by length.
        (Value::Tuple(x), Value::Tuple(y)) => x
            .iter()
            .zip(y.iter())
            .map(|(p, q)| sort_order(p, q))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
            },
            _ => Ordering::Equal,
        },
    }
}

/// Whether the items can be sorted: all numbers, all Strs, or all tuples
/// of those (spec §10.7).
// As for `sort_order`.
#[allow(clippy::wildcard_enum_match_arm)]
pub(crate) fn sortable(items: &[Value]) -> Result<(), Failure> {
    fn kind(v: &Value) -> Option<u8> {
        match v {
            Value::Int(_) | Value::F64(_) => Some(0),
            Value::Str(_) => Some(1),
            Value::Tuple(xs) if xs.iter().all(|x| kind(x).is_some()) => Some(2),
            _ => None,
        }
    }
    let Some(first) = items.first() else {
        return Ok(());
    };
    for v in items {
        if kind(v).is_none() {
            return Err(Failure::from(format!(
                "cannot sort an Arr holding a `{}`: only numbers, only Strs, or only tuples of those",
                v.type_name()
            )));
        }
        if kind(v) != kind(first) {
            return Err(Failure::from(format!(
                "cannot sort an Arr holding `{}` and `{}`: only numbers, only Strs, or only tuples of those",
                first.type_name(),
                v.type_name()
            )));
        }
    }
    Ok(())
}

/// Structural equality; numbers compare by value across Int and F64;
/// functions by identity; values of different kinds are unequal.
pub fn equal(a: &Value, b: &Value) -> bool {
    if stacker::remaining_stack().is_some_and(|r| r < 128 * 1024) {
        return false;
    }
    match (a, b) {
        (Value::Int(_) | Value::F64(_), Value::Int(_) | Value::F64(_)) => {
            compare_numbers(a, b) == Some(Ordering::Equal)
        }
        (Value::Unit, Value::Unit) | (Value::None, Value::None) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::DType(x), Value::DType(y)) => x == y,
        (Value::Format(x), Value::Format(y)) => x == y,
        // A figure is a handle: equal to itself only.
        (Value::Figure(x), Value::Figure(y)) => Rc::ptr_eq(x, y),
        (Value::Arr(x), Value::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q))
        }
        (Value::Range(x), Value::Range(y)) => x == y,
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q))
        }
        // The same keys with equal values, in any order (Python's).
        (Value::Dict(x), Value::Dict(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Tensor(_) | Value::Tracked(_), Value::Tensor(_) | Value::Tracked(_)) => {
            let (Some(x), Some(y)) = (a.as_tensor(), b.as_tensor()) else {
                return false;
            };
            x.dtype() == y.dtype()
                && x.shape() == y.shape()
                && x.scalars()
                    .zip(y.scalars())
                    .all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Value::Arr(items), Value::Tensor(_) | Value::Tracked(_))
        | (Value::Tensor(_) | Value::Tracked(_), Value::Arr(items)) => {
            let t = if let Value::Arr(_) = a {
                b.as_tensor()
            } else {
                a.as_tensor()
            };
            t.is_some_and(|t| arr_equals_tensor(items, t))
        }
        (Value::Func(x), Value::Func(y)) => Rc::ptr_eq(x, y),
        (Value::Ok(x), Value::Ok(y)) | (Value::Err(x), Value::Err(y)) | (Value::Some(x), Value::Some(y)) => {
            equal(x, y)
        }
        (Value::Struct(x), Value::Struct(y)) => {
            x.def == y.def && x.fields.iter().zip(y.fields.iter()).all(|(p, q)| equal(p, q))
        }
        _ => false,
    }
}

/// An Arr against a tensor (`x.shape == [2, 3]`): equal when the tensor
/// is rank 1, as long as the Arr, and each element equals the Arr's as a
/// host value (numbers exactly, as `==` compares Int and F64; a bool
/// tensor's elements against Bools).
fn arr_equals_tensor(items: &[Value], t: &twill_tensor::Tensor) -> bool {
    use twill_tensor::convert::Scalar;
    t.ndim() == 1
        && t.numel() == items.len()
        && t.scalars().zip(items.iter()).all(|(s, v)| match (s, v) {
            (Scalar::Bool(p), Value::Bool(q)) => p == *q,
            (Scalar::Bool(_), _) | (_, Value::Bool(_)) => false,
            (Scalar::I8(_) | Scalar::I32(_), Value::Int(_) | Value::F64(_)) => {
                compare_numbers(&Value::Int(s.to_f64() as i64), v) == Some(Ordering::Equal)
            }
            (_, Value::Int(_) | Value::F64(_)) => {
                compare_numbers(&Value::F64(s.to_f64()), v) == Some(Ordering::Equal)
            }
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_floor_semantics() {
        let fd = |a, b| {
            int_op(BinOp::FloorDiv, a, b)
                .ok()
                .map(|v| if let Value::Int(i) = v { i } else { 0 })
        };
        let md = |a, b| {
            int_op(BinOp::Mod, a, b)
                .ok()
                .map(|v| if let Value::Int(i) = v { i } else { 0 })
        };
        assert_eq!(fd(7, 2), Some(3));
        assert_eq!(fd(-7, 2), Some(-4));
        assert_eq!(fd(7, -2), Some(-4));
        assert_eq!(md(-7, 2), Some(1));
        assert_eq!(md(7, -2), Some(-1));
        assert_eq!(md(i64::MIN, -1), Some(0));
        assert!(fd(i64::MIN, -1).is_none());
        assert!(fd(1, 0).is_none());
        assert_eq!(float_divmod(-7.0, 2.0), (-4.0, 1.0));
        assert_eq!(float_divmod(7.5, -2.0), (-4.0, -0.5));
    }

    #[test]
    fn exact_mixed_comparison() {
        // 2^53 + 1 is not representable in F64; it must still compare greater.
        let big = Value::Int((1i64 << 53) + 1);
        let f = Value::F64(9007199254740992.0);
        assert_eq!(compare_numbers(&big, &f), Some(Ordering::Greater));
        assert_eq!(compare_numbers(&Value::Int(1), &Value::F64(f64::NAN)), None);
        assert!(!equal(&Value::Int(1), &Value::F64(f64::NAN)));
        assert!(equal(&Value::Int(3), &Value::F64(3.0)));
    }

    #[test]
    fn shifts_are_checked() {
        assert!(int_op(BinOp::Shl, 1, 63).is_err());
        assert!(int_op(BinOp::Shl, 1, 62).is_ok());
        assert!(int_op(BinOp::Shl, 1, -1).is_err());
        assert!(matches!(int_op(BinOp::Shr, -8, 100), Ok(Value::Int(-1))));
    }
}
