//! The tensor operations of spec §4.1 as one table. Each operation is an
//! [`OpSpec`]: its name, its parameters (positional order, which are
//! required — the same names work as keywords) and its kernel. The checker
//! reads names and parameters from here, the evaluator dispatches through
//! [`call`], and the oracle tests call the same entry point, so an
//! operation exists in exactly one place.
//!
//! Each submodule owns a group of operations and exports its `OPS`, except
//! `adjoint`, whose kernels (the adjoints autodiff needs) are not user
//! operations and stay out of the table.

pub mod adjoint;
pub mod contract;
pub mod dtypes;
pub mod elementwise;
pub mod order;
pub mod reduce;
pub mod shape;

use crate::dtype::DType;
use crate::tensor::{Tensor, TensorError};

/// An argument as the evaluator hands it over.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Tensor(Tensor),
    Int(i64),
    Float(f64),
    Bool(bool),
    DType(DType),
    /// An `Arr[Int]` (a shape, an axis list, a permutation, split sizes).
    Ints(Vec<i64>),
    /// An `Arr[Tensor]` (`concat`, `stack`).
    Tensors(Vec<Tensor>),
    Str(String),
}

impl Arg {
    pub fn kind(&self) -> &'static str {
        match self {
            Arg::Tensor(_) => "Tensor",
            Arg::Int(_) => "Int",
            Arg::Float(_) => "F64",
            Arg::Bool(_) => "Bool",
            Arg::DType(_) => "DType",
            Arg::Ints(_) => "Arr[Int]",
            Arg::Tensors(_) => "Arr[Tensor]",
            Arg::Str(_) => "Str",
        }
    }
}

/// What an operation returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    Tensor(Tensor),
    Tensors(Vec<Tensor>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub required: bool,
}

pub const fn req(name: &'static str) -> Param {
    Param { name, required: true }
}

pub const fn opt(name: &'static str) -> Param {
    Param {
        name,
        required: false,
    }
}

pub type Kernel = fn(&Args) -> Result<Out, TensorError>;

pub struct OpSpec {
    pub name: &'static str,
    /// Parameters in positional order; the first is the receiver of the
    /// method form (`x.sum(axis=1)` is `sum(x, axis=1)`).
    pub params: &'static [Param],
    pub run: Kernel,
    /// Whether a last parameter collects any number of extra positional
    /// arguments (`einsum(spec, a, b, …)`).
    pub variadic: bool,
}

/// Arguments bound to an operation's parameters.
pub struct Args {
    pub op: &'static str,
    params: &'static [Param],
    values: Vec<Option<Arg>>,
    /// Extra positional arguments of a variadic operation.
    pub rest: Vec<Arg>,
}

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

impl Args {
    fn index(&self, name: &str) -> usize {
        self.params
            .iter()
            .position(|p| p.name == name)
            .unwrap_or(usize::MAX)
    }

    /// The argument named `name`, if given.
    pub fn get(&self, name: &str) -> Option<&Arg> {
        self.values.get(self.index(name)).and_then(|v| v.as_ref())
    }

    pub fn tensor(&self, name: &str) -> Result<&Tensor, TensorError> {
        match self.get(name) {
            Some(Arg::Tensor(t)) => Ok(t),
            Some(other) => err(format!(
                "`{}`: `{name}` must be a tensor, not `{}`",
                self.op,
                other.kind()
            )),
            None => err(format!("`{}` needs its `{name}` argument", self.op)),
        }
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>, TensorError> {
        match self.get(name) {
            None => Ok(None),
            Some(Arg::Int(i)) => Ok(Some(*i)),
            Some(Arg::Tensor(t)) if t.numel() == 1 => {
                let x = t.item()?.to_f64();
                if x.fract() == 0.0 && x.abs() < 9.0e18 {
                    Ok(Some(x as i64))
                } else {
                    err(format!("`{}`: `{name}` must be an integer", self.op))
                }
            }
            Some(other) => err(format!(
                "`{}`: `{name}` must be an Int, not `{}`",
                self.op,
                other.kind()
            )),
        }
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, TensorError> {
        match self.get(name) {
            None => Ok(default),
            Some(Arg::Bool(b)) => Ok(*b),
            Some(other) => err(format!(
                "`{}`: `{name}` must be a Bool, not `{}`",
                self.op,
                other.kind()
            )),
        }
    }

    pub fn float(&self, name: &str) -> Result<Option<f64>, TensorError> {
        match self.get(name) {
            None => Ok(None),
            Some(Arg::Int(i)) => Ok(Some(*i as f64)),
            Some(Arg::Float(x)) => Ok(Some(*x)),
            Some(other) => err(format!(
                "`{}`: `{name}` must be a number, not `{}`",
                self.op,
                other.kind()
            )),
        }
    }

    /// A list of integers: an `Arr[Int]`, a single Int, or an integral
    /// rank-0/1 tensor (spec §4: shapes, axes, permutations, split sizes).
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, TensorError> {
        match self.get(name) {
            None => Ok(None),
            Some(Arg::Int(i)) => Ok(Some(vec![*i])),
            Some(Arg::Ints(v)) => Ok(Some(v.clone())),
            Some(Arg::Tensor(t)) if t.ndim() <= 1 => {
                let mut out = Vec::with_capacity(t.numel());
                for s in t.scalars() {
                    let x = s.to_f64();
                    if x.fract() != 0.0 || !x.is_finite() || x.abs() > 9.0e18 {
                        return err(format!("`{}`: `{name}` must hold integers", self.op));
                    }
                    out.push(x as i64);
                }
                Ok(Some(out))
            }
            Some(other) => err(format!(
                "`{}`: `{name}` must be an Arr[Int], not `{}`",
                self.op,
                other.kind()
            )),
        }
    }

    pub fn tensors(&self, name: &str) -> Result<&[Tensor], TensorError> {
        match self.get(name) {
            Some(Arg::Tensors(v)) => Ok(v),
            // An empty `Arr` arrives as an empty integer list.
            Some(Arg::Ints(v)) if v.is_empty() => Ok(&[]),
            Some(other) => err(format!(
                "`{}`: `{name}` must be an Arr[Tensor], not `{}`",
                self.op,
                other.kind()
            )),
            None => err(format!("`{}` needs its `{name}` argument", self.op)),
        }
    }
}

/// The names of every operation of spec §4.1 that takes or makes a tensor
/// through this table (the constructors and `.to` live elsewhere). The
/// checker accepts these names; `all()` must eventually implement each.
pub const SPEC_NAMES: &[&str] = &[
    "maximum",
    "minimum",
    "where",
    "neg",
    "abs",
    "sign",
    "relu",
    "square",
    "clip",
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
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "median",
    "var",
    "std",
    "argmax",
    "argmin",
    "all",
    "any",
    "logsumexp",
    "cumsum",
    "cumprod",
    "softmax",
    "log_softmax",
    "sort",
    "argsort",
    "topk",
    "argtopk",
    "reshape",
    "transpose",
    "permute",
    "flip",
    "roll",
    "squeeze",
    "unsqueeze",
    "broadcast_to",
    "concat",
    "stack",
    "split",
    "gather",
    "index_select",
    "matmul",
    "linear",
    "einsum",
    "conv2d",
];

/// Every operation, in the order of spec §4.1's table.
pub fn all() -> impl Iterator<Item = &'static OpSpec> {
    elementwise::OPS
        .iter()
        .chain(reduce::OPS)
        .chain(order::OPS)
        .chain(shape::OPS)
        .chain(contract::OPS)
}

pub fn lookup(name: &str) -> Option<&'static OpSpec> {
    all().find(|o| o.name == name)
}

/// Runs operation `name` on positional and keyword arguments, checking them
/// against its parameters.
pub fn call(name: &str, pos: Vec<Arg>, kw: Vec<(String, Arg)>) -> Result<Out, TensorError> {
    let Some(spec) = lookup(name) else {
        if SPEC_NAMES.contains(&name) {
            return err(format!("`{name}` on tensors is not supported yet"));
        }
        return err(format!("unknown tensor operation `{name}`"));
    };
    let n = spec.params.len();
    let mut values: Vec<Option<Arg>> = vec![None; n];
    let mut rest = Vec::new();
    for (i, a) in pos.into_iter().enumerate() {
        if i < n {
            values[i] = Some(a);
        } else if spec.variadic {
            rest.push(a);
        } else {
            return err(format!("`{name}` takes at most {n} arguments"));
        }
    }
    for (k, a) in kw {
        match spec.params.iter().position(|p| p.name == k) {
            Some(i) if values[i].is_none() => values[i] = Some(a),
            Some(_) => return err(format!("`{name}`: argument `{k}` is given twice")),
            None => return err(format!("`{name}` has no argument `{k}`")),
        }
    }
    for (p, v) in spec.params.iter().zip(&values) {
        if p.required && v.is_none() {
            return err(format!("`{name}` needs its `{}` argument", p.name));
        }
    }
    (spec.run)(&Args {
        op: spec.name,
        params: spec.params,
        values,
        rest,
    })
}

/// A binary operator of the language (and `maximum`/`minimum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Maximum,
    Minimum,
}

/// One operand of a binary operation: a tensor or a (weak) host scalar.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    Tensor(&'a Tensor),
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// `a op b` where at least one side is a tensor.
pub fn binary(op: BinaryOp, a: Operand, b: Operand) -> Result<Tensor, TensorError> {
    elementwise::binary(op, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation of spec §4.1 that the checker accepts has a kernel
    /// in the table (none is left "not supported yet"), and the table holds
    /// nothing the spec does not name.
    #[test]
    fn every_spec_name_has_a_kernel() {
        for name in SPEC_NAMES {
            assert!(lookup(name).is_some(), "`{name}` has no kernel");
        }
        for op in all() {
            assert!(SPEC_NAMES.contains(&op.name), "`{}` is not a spec name", op.name);
        }
        assert_eq!(all().count(), SPEC_NAMES.len());
    }
}
