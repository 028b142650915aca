//! The self-hosted reference runtime as a backend (spec §16): with it on
//! (`twill run --reference`, [`set_enabled`], which installs it in
//! `crate::backend`), every registry operation but the linear algebra of
//! §11.4, every operator, cast, constructor, tensor literal, subscript and
//! assignment into a tensor that would run on a native kernel runs instead
//! through the `reference` module (`stdlib/reference/`), which computes it
//! in twill over a flat `Arr[F64]` and rounds with `float`.
//!
//! The module runs in an interpreter of its own, one per thread, loaded on
//! first use: the program's globals, random generator and output are not
//! its business, and it calls no tensor operation, so nothing re-enters.
//! A tensor crosses as a `Flat` struct (its elements as exact F64, its
//! shape, its dtype); a result comes back through the native cast, and an
//! element that the cast would change (one the reference forgot to round)
//! is an error, so the module cannot pass by the native code rounding for
//! it. An operation the module does not define yet is an error naming it.

// The `_ =>` and `other =>` arms over `Value` here reject what the module
// may not answer (a malformed result is an error naming the function): a
// new kind of value is rejected until it is taught otherwise, as wanted.
#![allow(clippy::wildcard_enum_match_arm)]

use std::cell::RefCell;
use std::rc::Rc;

use twill_check::hir::StructDef;
use twill_check::Checker;
use twill_host::{CaptureHost, Host, RealHost};
use twill_syntax::FileId;
use twill_tensor::index::IndexItem;
use twill_tensor::ops::{Arg, BinaryOp, Op, OpError, Operand, Out, Rule};
use twill_tensor::{DType, Tensor};

use crate::backend::Backend;
use crate::interp::Interp;
use crate::value::{StructVal, Value};

thread_local! {
    static RUNTIME: RefCell<Option<Runtime>> = const { RefCell::new(None) };
}

/// The module as a backend (`crate::backend`).
static BACKEND: Backend = Backend {
    op,
    binary,
    cast,
    construct,
    index,
    assign,
};

/// Routes this thread's tensor operations through the reference module
/// (on) or the native kernels (off, the default).
pub fn set_enabled(on: bool) {
    crate::backend::install(on.then_some(&BACKEND));
}

/// Whether this thread's tensor operations run on the reference module.
pub fn enabled() -> bool {
    crate::backend::active().is_some_and(|b| std::ptr::eq(b, &BACKEND))
}

/// The loaded module: its interpreter and the `Flat` struct's definition.
struct Runtime {
    interp: Interp,
    flat: Rc<StructDef>,
}

/// The module's parts with their texts: the bundled ones, or — for
/// working on the module without rebuilding twill — read from the
/// directory `TWILL_REFERENCE_DIR` names.
fn module_parts() -> Result<Vec<(&'static str, String)>, String> {
    let mut host = RealHost::buffered(Vec::new());
    let dir = host.env_var("TWILL_REFERENCE_DIR");
    let mut parts = Vec::new();
    for (part, bundled) in crate::stdlib::REFERENCE_PARTS {
        let text = match &dir {
            Some(dir) => {
                let path = format!("{dir}/{part}");
                let bytes = host
                    .read_file(&path)
                    .map_err(|e| format!("cannot read {path}: {e}"))?;
                String::from_utf8_lossy(&bytes).into_owned()
            }
            None => bundled.to_string(),
        };
        parts.push((*part, text));
    }
    Ok(parts)
}

thread_local! {
    /// Each part of the loaded module and its number of lines, for `locate`.
    static LINES: RefCell<Vec<(&'static str, usize)>> = const { RefCell::new(Vec::new()) };
}

fn load() -> Result<Runtime, String> {
    let mut checker = Checker::new();
    let mut interp = Interp::new(Box::new(CaptureHost::new()));
    let parts = module_parts()?;
    let text: String = parts.iter().map(|(_, t)| t.as_str()).collect();
    // The module's spans are rendered by `locate` from its own text, so
    // every file may share one id.
    let float = crate::stdlib::FILES
        .iter()
        .find(|(n, _)| *n == "float.tw")
        .map_or("", |(_, t)| t);
    crate::stdlib::load_module(&mut checker, &mut interp, "float.tw", float, FileId(0))?;
    crate::stdlib::load_module(&mut checker, &mut interp, "reference.tw", &text, FileId(0))?;
    LINES.with(|l| {
        *l.borrow_mut() = parts
            .iter()
            .map(|(p, t)| (*p, t.bytes().filter(|&b| b == b'\n').count()))
            .collect();
    });
    // One `Flat` made in twill lends its definition to every other.
    let probe = interp
        .call_global(
            "reference.make",
            vec![
                Value::Arr(Rc::new(Vec::new())),
                Value::Arr(Rc::new(Vec::new())),
                Value::DType(DType::F64),
            ],
        )
        .map_err(|e| e.message)?;
    let Value::Struct(s) = probe else {
        return Err("reference.make does not make a struct".into());
    };
    Ok(Runtime {
        interp,
        flat: s.def.clone(),
    })
}

/// The line of the reference module a span of it starts on.
fn locate(start: u32) -> String {
    let Ok(text) = module_parts().map(|p| p.into_iter().map(|(_, t)| t).collect::<String>()) else {
        return "?".into();
    };
    let upto = text.get(..start as usize).unwrap_or(&text);
    let line = upto.bytes().filter(|&b| b == b'\n').count() + 1;
    LINES.with(|l| {
        let mut first = 1;
        for (part, lines) in l.borrow().iter() {
            if line < first + lines {
                return format!("{part} line {}", line - first + 1);
            }
            first += lines;
        }
        format!("line {line}")
    })
}

fn failure(message: impl Into<String>) -> OpError {
    OpError {
        message: message.into(),
        arg: None,
    }
}

/// Calls `reference.NAME` on `args`, converting tensors both ways.
/// `op` is the registry operation being run, if it is one (for
/// [`not_a_tensor`]).
fn call(name: &str, op: Option<Op>, args: Vec<Value>) -> Result<Value, OpError> {
    RUNTIME.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return Err(failure("the reference runtime called itself"));
        };
        if slot.is_none() {
            *slot = Some(load().map_err(|m| failure(format!("the reference runtime does not load: {m}")))?);
        }
        let Some(rt) = slot.as_mut() else {
            return Err(failure("the reference runtime is not loaded"));
        };
        let global = format!("reference.{name}");
        let out = rt.interp.call_global(&global, args).map_err(|e| {
            if let Some(bad) = op.and_then(|op| not_a_tensor(op, &e.message)) {
                bad
            } else if e.message.starts_with("no global `") {
                failure(format!("the reference runtime has no `{name}` yet"))
            } else {
                failure(format!(
                    "the reference runtime failed in `{name}` ({}): {}",
                    locate(e.span.start),
                    e.message
                ))
            }
        })?;
        match out {
            Value::Err(e) => Err(match &*e {
                Value::Str(m) => failure(m.to_string()),
                Value::Tuple(t) => match (t.first(), t.get(1)) {
                    (Some(Value::Int(slot)), Some(Value::Str(m))) => OpError {
                        message: m.to_string(),
                        arg: usize::try_from(*slot).ok(),
                    },
                    // `about(param, message)`: the parameter by its name in
                    // the registry ("" for none).
                    (Some(Value::Str(param)), Some(Value::Str(m))) => OpError {
                        message: m.to_string(),
                        arg: op.and_then(|op| op.spec().params.iter().position(|p| p.name == param.as_str())),
                    },
                    _ => failure(format!("`reference.{name}` failed with a malformed error")),
                },
                _ => failure(format!("`reference.{name}` failed with a malformed error")),
            }),
            // `Ok(v)` from a function declared to return a `Res`.
            Value::Ok(v) => Ok((*v).clone()),
            v => Ok(v),
        }
    })
}

/// A parameter annotated `Flat` in the module is a tensor parameter: the
/// interpreter's refusal of another value there ("argument `x` of
/// `reference.op_exp` must be `reference.Flat`, not `Arr`") is the
/// kernel's error about that argument ("`exp`: `x` must be a tensor, not
/// `Arr`", `Args::tensor`).
fn not_a_tensor(op: Op, message: &str) -> Option<OpError> {
    let rest = message.strip_prefix("argument `")?;
    let (param, rest) = rest.split_once('`')?;
    let kind = rest
        .strip_prefix(&format!(
            " of `reference.op_{}` must be `reference.Flat`, not `",
            op.name()
        ))?
        .strip_suffix('`')?;
    Some(OpError {
        message: format!("`{}`: `{param}` must be a tensor, not `{kind}`", op.name()),
        arg: op.spec().params.iter().position(|p| p.name == param),
    })
}

/// A tensor as a `Flat`.
fn flat(t: &Tensor) -> Result<Value, OpError> {
    // The module's size cap (`reference.max_elements`): a larger tensor
    // is refused with an error rather than exhausting memory.
    let most = call("max_elements", None, Vec::new())?;
    if let Value::Int(most) = most {
        if t.numel() as u64 > most as u64 {
            return Err(failure(format!(
                "the reference runtime takes tensors of at most {most} elements; this one has {}",
                t.numel()
            )));
        }
    }
    let def = RUNTIME.with(|cell| {
        if cell.borrow().is_none() {
            let rt = load().map_err(|m| failure(format!("the reference runtime does not load: {m}")))?;
            *cell.borrow_mut() = Some(rt);
        }
        cell.borrow()
            .as_ref()
            .map(|rt| rt.flat.clone())
            .ok_or_else(|| failure("the reference runtime is not loaded"))
    })?;
    let data: Vec<Value> = t.to_f64_vec()?.into_iter().map(Value::F64).collect();
    let shape: Vec<Value> = t.shape().iter().map(|&d| Value::Int(d as i64)).collect();
    Ok(Value::Struct(Rc::new(StructVal {
        def,
        fields: vec![
            Value::Arr(Rc::new(data)),
            Value::Arr(Rc::new(shape)),
            Value::DType(t.dtype()),
        ],
    })))
}

/// A `Flat` back as a tensor. Every element must already be a value of
/// its dtype: the native cast that stores it may not round anything.
fn unflat(name: &str, v: &Value) -> Result<Tensor, OpError> {
    let bad = || failure(format!("`reference.{name}` did not answer a tensor (a Flat)"));
    let Value::Struct(s) = v else { return Err(bad()) };
    let (Some(Value::Arr(data)), Some(Value::Arr(shape)), Some(Value::DType(dt))) =
        (s.fields.first(), s.fields.get(1), s.fields.get(2))
    else {
        return Err(bad());
    };
    let mut xs = Vec::with_capacity(data.len());
    for d in data.iter() {
        match d {
            Value::F64(x) => xs.push(*x),
            Value::Int(i) => xs.push(*i as f64),
            _ => return Err(bad()),
        }
    }
    let mut dims = Vec::with_capacity(shape.len());
    for d in shape.iter() {
        match d {
            Value::Int(i) if *i >= 0 => dims.push(*i as usize),
            _ => return Err(bad()),
        }
    }
    let wide = Tensor::from_vec(xs.clone(), dims)?;
    let stored = wide.cast(*dt)?;
    let back = stored.to_f64_vec()?;
    for (i, (a, b)) in xs.iter().zip(&back).enumerate() {
        let same = a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        if !same {
            return Err(failure(format!(
                "`reference.{name}` gave element {i} = {a:?}, which is not a {} value (the module must round it)",
                dt.name()
            )));
        }
    }
    Ok(stored)
}

fn from_value(name: &str, v: &Value) -> Result<Out, OpError> {
    match v {
        Value::Bool(b) => Ok(Out::Bool(*b)),
        Value::Arr(items) => items
            .iter()
            .map(|x| unflat(name, x))
            .collect::<Result<_, _>>()
            .map(Out::Tensors),
        Value::Tuple(items) => items
            .iter()
            .map(|x| unflat(name, x))
            .collect::<Result<_, _>>()
            .map(Out::Tuple),
        other => unflat(name, other).map(Out::Tensor),
    }
}

fn arg_value(a: &Arg) -> Result<Value, OpError> {
    Ok(match a {
        Arg::Tensor(t) => flat(t)?,
        Arg::Int(i) => Value::Int(*i),
        Arg::Float(x) => Value::F64(*x),
        Arg::Bool(b) => Value::Bool(*b),
        Arg::DType(d) => Value::DType(*d),
        Arg::Ints(v) => Value::Arr(Rc::new(v.iter().map(|&i| Value::Int(i)).collect())),
        Arg::Tensors(ts) => Value::Arr(Rc::new(ts.iter().map(flat).collect::<Result<_, _>>()?)),
        Arg::Str(s) => Value::str(s.clone()),
        Arg::Format(f) => Value::Format(Rc::new(*f)),
    })
}

/// Whether `op` is one of the linear algebra of spec §11.4 (the registry's
/// `Rule::Linalg` operations and `matrix_rank`), which the module does not
/// hold — spec §16 defines it for the operations of §4.1 and §11.3 — and
/// which therefore runs on the native kernels under `--reference` too.
pub fn native_only(op: Op) -> bool {
    matches!(op.spec().rule, Rule::Linalg(_)) || op == Op::MatrixRank
}

/// A registry operation on arguments bound to its slots (absent ones are
/// `None`), run by `reference.op_NAME` (by the native kernel for the
/// operations of [`native_only`]).
pub fn op(op: Op, args: &[Option<Arg>]) -> Result<Out, OpError> {
    if native_only(op) {
        return twill_tensor::ops::call(op, args.to_vec());
    }
    let mut vals = Vec::with_capacity(op.spec().params.len().max(args.len()));
    for a in args {
        vals.push(match a {
            Some(a) => arg_value(a)?,
            None => Value::None,
        });
    }
    while vals.len() < op.spec().params.len() {
        vals.push(Value::None);
    }
    let name = format!("op_{}", op.name());
    let out = call(&name, Some(op), vals)?;
    from_value(&name, &out)
}

/// An operator's name for `reference.binary`: the kernel's operator in
/// snake case (`FloorDiv` is "floor_div").
fn operator_name(op: BinaryOp) -> String {
    let mut out = String::new();
    for (i, c) in format!("{op:?}").chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn operand_value(x: &Operand) -> Result<Value, OpError> {
    Ok(match x {
        Operand::Tensor(t) => flat(t)?,
        Operand::Int(i) => Value::Int(*i),
        Operand::Float(f) => Value::F64(*f),
        Operand::Bool(b) => Value::Bool(*b),
    })
}

/// `a op b`, with host scalars as themselves (weak, spec §5), by
/// `reference.binary`.
pub fn binary(op: BinaryOp, a: Operand, b: Operand) -> Result<Tensor, OpError> {
    let args = vec![
        Value::str(operator_name(op)),
        operand_value(&a)?,
        operand_value(&b)?,
    ];
    let out = call("binary", None, args)?;
    unflat("binary", &out)
}

/// `x.to(dt)`, by `reference.cast`. A cast to x's own dtype is a copy
/// that changes nothing, not even a signalling NaN's quiet bit (spec §5;
/// the module's `cast` returns its input too): a `Flat` holds widened F64
/// elements, and widening quiets a NaN, so that copy is made here rather
/// than through the module.
pub fn cast(x: &Tensor, dt: DType) -> Result<Tensor, OpError> {
    if dt == x.dtype() {
        return Ok(x.clone());
    }
    let out = call("cast", None, vec![flat(x)?, Value::DType(dt)])?;
    unflat("cast", &out)
}

/// A constructor (`zeros ones full tensor arange linspace eye rand randn
/// uniform normal randint permutation`) on arguments the builtin has
/// already read, by `reference.make_NAME`.
pub fn construct(name: &str, args: Vec<Value>) -> Result<Tensor, twill_tensor::TensorError> {
    let name = format!("make_{name}");
    // Tensors among the arguments (a fill value, a list's elements) cross
    // as `Flat`s.
    let as_flat = |v: Value| -> Result<Value, OpError> {
        Ok(match v {
            Value::Tensor(t) => flat(&t)?,
            Value::Arr(items) if items.iter().any(|x| matches!(x, Value::Tensor(_))) => Value::Arr(Rc::new(
                items
                    .iter()
                    .map(|x| match x {
                        Value::Tensor(t) => flat(t),
                        other => Ok(other.clone()),
                    })
                    .collect::<Result<_, _>>()?,
            )),
            other => other,
        })
    };
    let args = args
        .into_iter()
        .map(as_flat)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| twill_tensor::TensorError(e.message))?;
    let out = call(&name, None, args).map_err(|e| twill_tensor::TensorError(e.message))?;
    unflat(&name, &out).map_err(|e| twill_tensor::TensorError(e.message))
}

/// A subscript's items as the module takes them: an Int; a slice as the
/// tuple (start, stop, step) of Ints or None; the Strs "None" (a new axis)
/// and "..."; a tensor as a `Flat`.
fn items_value(items: &[IndexItem]) -> Result<Value, OpError> {
    let opt = |v: &Option<i64>| v.map_or(Value::None, Value::Int);
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        out.push(match it {
            IndexItem::Single(i) => Value::Int(*i),
            IndexItem::Slice(a, b, c) => Value::Tuple(Rc::new(vec![opt(a), opt(b), opt(c)])),
            IndexItem::NewAxis => Value::str("None"),
            IndexItem::Ellipsis => Value::str("..."),
            IndexItem::Tensor(t) => flat(t)?,
        });
    }
    Ok(Value::Arr(Rc::new(out)))
}

/// `x[items]` (spec §11.1), by `reference.index`.
pub fn index(x: &Tensor, items: &[IndexItem]) -> Result<Tensor, twill_tensor::TensorError> {
    let t = |e: OpError| twill_tensor::TensorError(e.message);
    let out = call(
        "index",
        None,
        vec![flat(x).map_err(t)?, items_value(items).map_err(t)?],
    )
    .map_err(t)?;
    unflat("index", &out).map_err(t)
}

/// `x[items] = v` or `x[items] op= v` (spec §11.2), by `reference.assign`,
/// which answers the new x.
pub fn assign(
    x: &mut Tensor,
    items: &[IndexItem],
    v: Operand,
    op: Option<BinaryOp>,
) -> Result<(), twill_tensor::TensorError> {
    let t = |e: OpError| twill_tensor::TensorError(e.message);
    let args = vec![
        flat(x).map_err(t)?,
        items_value(items).map_err(t)?,
        operand_value(&v).map_err(t)?,
        Value::str(op.map_or_else(String::new, operator_name)),
    ];
    let out = call("assign", None, args).map_err(t)?;
    *x = unflat("assign", &out).map_err(t)?;
    Ok(())
}
