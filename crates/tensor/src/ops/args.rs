//! What a kernel sees and returns: the arguments bound to an operation's
//! parameters ([`Args`], with accessors that reject a wrong argument with
//! an error about it), the operand forms of the binary operators, and the
//! error a caller gets ([`OpError`], naming the argument at fault). The
//! kernels depend on this module, the registry (`ops/mod.rs`) on the
//! kernels, so there is no cycle.

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
    /// A float format of the formats lab (`acc=`, `round_to`'s `fmt`).
    Format(crate::lab::Format),
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
            Arg::Format(_) => "Format",
        }
    }
}

/// What an operation returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    Tensor(Tensor),
    /// An `Arr[Tensor]` (`split`).
    Tensors(Vec<Tensor>),
    /// A host Bool (`allclose`).
    Bool(bool),
    /// A tuple of tensors, each of a dtype the checker knows (`qr`, `eigh`,
    /// `svd`, `slogdet`: spec §10.1, "builtins that return several values
    /// return tuples").
    Tuple(Vec<Tensor>),
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

/// Arguments bound to an operation's parameters.
pub struct Args {
    /// The operation's name, for messages.
    pub op: &'static str,
    params: &'static [Param],
    values: Vec<Option<Arg>>,
    /// Extra positional arguments of a variadic operation.
    pub rest: Vec<Arg>,
    /// The parameter an error is about, set by the accessors when they
    /// reject an argument and by kernels through [`Args::blame`], so that
    /// the diagnostic can point at that argument rather than the call.
    blamed: std::cell::Cell<Option<usize>>,
}

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

impl Args {
    /// Arguments bound to `params` (by the registry's `call`).
    pub(crate) fn new(
        op: &'static str,
        params: &'static [Param],
        values: Vec<Option<Arg>>,
        rest: Vec<Arg>,
    ) -> Args {
        Args {
            op,
            params,
            values,
            rest,
            blamed: std::cell::Cell::new(None),
        }
    }

    /// The parameter an error was blamed on, if any.
    pub(crate) fn blamed(&self) -> Option<usize> {
        self.blamed.get()
    }

    fn index(&self, name: &str) -> usize {
        self.params
            .iter()
            .position(|p| p.name == name)
            .unwrap_or(usize::MAX)
    }

    /// Marks `e` as being about parameter `name`.
    pub fn blame(&self, name: &str, e: TensorError) -> TensorError {
        let i = self.index(name);
        if i < self.params.len() {
            self.blamed.set(Some(i));
        }
        e
    }

    /// `r`, with an error marked as being about parameter `name`.
    pub fn about<T>(&self, name: &str, r: Result<T, TensorError>) -> Result<T, TensorError> {
        r.map_err(|e| self.blame(name, e))
    }

    // The accessors: each rejects a wrong argument with an error about it.

    pub fn tensor(&self, name: &str) -> Result<&Tensor, TensorError> {
        self.about(name, self.tensor_unblamed(name))
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>, TensorError> {
        self.about(name, self.int_unblamed(name))
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, TensorError> {
        self.about(name, self.bool_unblamed(name, default))
    }

    pub fn float(&self, name: &str) -> Result<Option<f64>, TensorError> {
        self.about(name, self.float_unblamed(name))
    }

    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, TensorError> {
        self.about(name, self.ints_unblamed(name))
    }

    pub fn tensors(&self, name: &str) -> Result<&[Tensor], TensorError> {
        self.about(name, self.tensors_unblamed(name))
    }

    /// The argument named `name`, if given.
    /// A Format argument (`acc=`, `fmt`), if given.
    pub fn format(&self, name: &str) -> Result<Option<crate::lab::Format>, TensorError> {
        let r = match self.get(name) {
            None => Ok(None),
            Some(Arg::Format(f)) => Ok(Some(*f)),
            Some(Arg::DType(d)) if matches!(d, DType::Bf16 | DType::F16 | DType::F32) => err(format!(
                "`{}`: `{name}` must be a Format, not the dtype {d}; a dtype's own format is `formats.{d}` (`import formats`)",
                self.op
            )),
            Some(other) => err(format!(
                "`{}`: `{name}` must be a Format, not `{}`",
                self.op,
                other.kind()
            )),
        };
        self.about(name, r)
    }

    pub fn get(&self, name: &str) -> Option<&Arg> {
        self.values.get(self.index(name)).and_then(|v| v.as_ref())
    }

    fn tensor_unblamed(&self, name: &str) -> Result<&Tensor, TensorError> {
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

    fn int_unblamed(&self, name: &str) -> Result<Option<i64>, TensorError> {
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

    fn bool_unblamed(&self, name: &str, default: bool) -> Result<bool, TensorError> {
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

    fn float_unblamed(&self, name: &str) -> Result<Option<f64>, TensorError> {
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
    fn ints_unblamed(&self, name: &str) -> Result<Option<Vec<i64>>, TensorError> {
        match self.get(name) {
            None => Ok(None),
            Some(Arg::Int(i)) => Ok(Some(vec![*i])),
            Some(Arg::Ints(v)) => Ok(Some(v.clone())),
            Some(Arg::Tensor(t)) if t.ndim() <= 1 => {
                let mut out = crate::storage::try_vec(t.numel())?;
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

    fn tensors_unblamed(&self, name: &str) -> Result<&[Tensor], TensorError> {
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

/// Why an operation failed: the message, and the parameter slot of the
/// argument it is about, when it is about one (the evaluator points the
/// diagnostic there).
#[derive(Clone, Debug, PartialEq)]
pub struct OpError {
    pub message: String,
    pub arg: Option<usize>,
}

impl From<TensorError> for OpError {
    fn from(e: TensorError) -> OpError {
        OpError {
            message: e.0,
            arg: None,
        }
    }
}

impl From<String> for OpError {
    fn from(message: String) -> OpError {
        OpError { message, arg: None }
    }
}

impl From<&str> for OpError {
    fn from(message: &str) -> OpError {
        OpError {
            message: message.to_string(),
            arg: None,
        }
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
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
    /// `fmod(a, b)`: the remainder with the sign of `a`, exact (C's fmod).
    Fmod,
    /// `copysign(a, b)`: the magnitude of `a` with the sign of `b`.
    Copysign,
    /// `nextafter(a, b)`: the next value after `a` toward `b` in the
    /// result dtype.
    Nextafter,
    /// `atan2(y, x)`: the angle of the point (x, y).
    Atan2,
    /// `hypot(a, b)`: sqrt(a² + b²) without overflow.
    Hypot,
    /// `logaddexp(a, b)`: log(exp(a) + exp(b)) without overflow.
    Logaddexp,
}

impl BinaryOp {
    /// Whether the operation's result is a float for integer operands too
    /// (seed 000: an integer input promotes to f32), as `/` is.
    pub fn float_only(self) -> bool {
        match self {
            BinaryOp::Div
            | BinaryOp::Copysign
            | BinaryOp::Nextafter
            | BinaryOp::Atan2
            | BinaryOp::Hypot
            | BinaryOp::Logaddexp => true,
            BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
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
            | BinaryOp::Fmod => false,
        }
    }
}

/// One operand of a binary operation: a tensor or a (weak) host scalar.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    Tensor(&'a Tensor),
    Int(i64),
    Float(f64),
    Bool(bool),
}
