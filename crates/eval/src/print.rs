//! Text of values for `print` and `str` (spec §6): F64 through
//! `format_number`, strings raw at top level and quoted inside containers.

use std::fmt::Write;

use twill_tensor::convert::Scalar;
use twill_tensor::display::{format_scalar, format_tensor_with};
use twill_tensor::fmtspec::Spec;
use twill_tensor::format_number;

use crate::value::Value;

/// The text `print` writes for a value.
pub fn display(v: &Value) -> String {
    let mut out = String::new();
    // Only a top-level string prints raw; inside containers it is quoted.
    if let Value::Str(s) = v {
        out.push_str(s);
    } else {
        write_value(&mut out, v, 0);
    }
    out
}

/// `format(v, spec)` and an f-string's `{v:spec}` (spec §10.7): a number
/// by the spec's rules, a tensor element by element in `print`'s layout,
/// anything else as its `print` text; the error says why the spec does not
/// apply to the value.
pub fn format_value(v: &Value, spec: &Spec) -> Result<String, String> {
    match v {
        Value::Int(n) => spec.int(*n, &n.to_string()),
        Value::F64(x) => spec.float(*x, &format_number(*x)),
        Value::Str(s) => spec.text(s),
        Value::Tensor(_) | Value::Tracked(_) => match v.as_tensor() {
            Some(t) => format_tensor_with(t, &mut |s| match s {
                Scalar::I8(i) => spec.int(i64::from(i), &i.to_string()),
                Scalar::I32(i) => spec.int(i64::from(i), &i.to_string()),
                Scalar::Bool(_) => spec.text(&format_scalar(s)),
                Scalar::Bf16(_) | Scalar::F16(_) | Scalar::F32(_) | Scalar::F64(_) => {
                    spec.float(s.to_f64(), &format_scalar(s))
                }
            }),
            None => spec.text(&display(v)),
        },
        Value::Unit
        | Value::Bool(_)
        | Value::DType(_)
        | Value::Arr(_)
        | Value::Tuple(_)
        | Value::Dict(_)
        | Value::Range(_)
        | Value::Func(_)
        | Value::Ok(_)
        | Value::Err(_)
        | Value::Some(_)
        | Value::None
        | Value::Struct(_)
        | Value::Tape(_)
        | Value::Format(_)
        | Value::Figure(_)
        | Value::Undefined => spec.text(&display(v)),
    }
}

/// The text of a value inside an error message: strings quoted (so that a
/// newline or an empty string stays visible), cut off after 200 characters.
pub fn repr(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0);
    if let Some((cut, _)) = out.char_indices().nth(200) {
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// Nested values deeper than this print as `…`: printing must not exhaust
/// the stack on a pathologically nested array.
const MAX_DEPTH: usize = 10_000;

fn write_value(out: &mut String, v: &Value, depth: usize) {
    if depth > MAX_DEPTH || stacker::remaining_stack().is_some_and(|r| r < 128 * 1024) {
        out.push('…');
        return;
    }
    match v {
        Value::Unit => out.push_str("()"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::F64(x) => out.push_str(&format_number(*x)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Str(s) => quote(out, s),
        Value::DType(d) => out.push_str(d.name()),
        Value::Arr(items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, it, depth + 1);
            }
            out.push(']');
        }
        Value::Tuple(items) => {
            out.push('(');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, it, depth + 1);
            }
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::Dict(d) => {
            if d.is_empty() {
                out.push_str("[:]");
                return;
            }
            out.push('[');
            for (i, (k, v)) in d.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, &k.to_value(), depth + 1);
                out.push_str(": ");
                write_value(out, v, depth + 1);
            }
            out.push(']');
        }
        Value::Range(r) => {
            let _ = write!(out, "range({}, {}, {})", r.start, r.stop, r.step);
        }
        Value::Func(c) => {
            let _ = write!(out, "<fn {}>", c.func.name);
        }
        Value::Ok(x) => wrap(out, "Ok", x, depth),
        Value::Err(x) => wrap(out, "Err", x, depth),
        Value::Some(x) => wrap(out, "Some", x, depth),
        Value::None => out.push_str("None"),
        Value::Struct(s) => {
            out.push_str(&s.def.name);
            out.push_str(" {");
            for (i, (name, val)) in s.def.fields.iter().zip(&s.fields).enumerate() {
                out.push_str(if i > 0 { ", " } else { " " });
                out.push_str(name);
                out.push_str(": ");
                write_value(out, val, depth + 1);
            }
            out.push_str(if s.fields.is_empty() { "}" } else { " }" });
        }
        Value::Tensor(t) => out.push_str(&twill_tensor::display::format_tensor(t)),
        Value::Tracked(_) => {
            if let Some(t) = v.as_tensor() {
                out.push_str(&twill_tensor::display::format_tensor(t))
            }
        }
        Value::Tape(_) => out.push_str("<tape>"),
        Value::Format(f) => out.push_str(&format_format(f)),
        Value::Figure(f) => {
            let _ = write!(out, "{}", f.borrow());
        }
        Value::Undefined => out.push_str("<undefined>"),
    }
}

/// A Format as the `float_format` call that makes it.
fn format_format(f: &twill_tensor::lab::Format) -> String {
    format!(
        "float_format({}, {}, bias={}, subnormals={}, special=\"{}\")",
        f.exp_bits(),
        f.man_bits(),
        f.bias(),
        f.subnormals(),
        f.special().name()
    )
}

fn wrap(out: &mut String, name: &str, v: &Value, depth: usize) {
    out.push_str(name);
    out.push('(');
    write_value(out, v, depth + 1);
    out.push(')');
}

fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
}
