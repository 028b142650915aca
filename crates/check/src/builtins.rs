//! The table of builtin functions: names, arities, keyword parameters and
//! result types. The checker resolves a call to a `Builtin` through this
//! table; the evaluator implements each variant. Adding a builtin means one
//! variant here and one arm in the evaluator, both matched exhaustively.

use twill_tensor::DType;

use crate::types::Ty;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Print,
    Str,
    Args,
    Range,
    Arr,
    Len,
    Int,
    Float,
    Ok,
    Err,
    Some,
    Assert,
    ReadText,
    WriteText,
    ReadCsv,
    LoadNpy,
    SaveNpy,
    Clock,
    /// A host-number math function (`sqrt(2.0)`, `abs(-3)`).
    Math(MathFn),
    Maximum,
    Minimum,
    Clip,
    Zeros,
    Ones,
    Full,
    Arange,
    Linspace,
    Eye,
    Tensor,
    ZerosLike,
    OnesLike,
    Rand,
    Randn,
    F64Bits,
    F64FromBits,
    /// A tensor operation of spec §4.1, run through `twill_tensor::ops`.
    TensorOp(&'static str),
    // Autodiff (spec §8).
    Tape,
    Backward,
    BackwardScaled,
    GradsFinite,
    Grad,
    ValueAndGrad,
    Vjp,
    Jvp,
    Jacobian,
    Hessian,
}

/// Elementwise functions that also apply to host numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
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
}

impl MathFn {
    pub const ALL: [MathFn; 22] = [
        MathFn::Neg,
        MathFn::Abs,
        MathFn::Sign,
        MathFn::Relu,
        MathFn::Square,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Log1p,
        MathFn::Expm1,
        MathFn::Sqrt,
        MathFn::Rsqrt,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Tanh,
        MathFn::Sigmoid,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Round,
        MathFn::IsNan,
        MathFn::IsInf,
        MathFn::IsFinite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MathFn::Neg => "neg",
            MathFn::Abs => "abs",
            MathFn::Sign => "sign",
            MathFn::Relu => "relu",
            MathFn::Square => "square",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Log1p => "log1p",
            MathFn::Expm1 => "expm1",
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Tanh => "tanh",
            MathFn::Sigmoid => "sigmoid",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::IsNan => "isnan",
            MathFn::IsInf => "isinf",
            MathFn::IsFinite => "isfinite",
        }
    }

    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The result type on a host number: F64, except that `abs` and `neg`
    /// of an Int stay Int (spec §3) and the predicates give Bool.
    pub fn host_result(self, arg: &Ty) -> Ty {
        match self {
            MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite => Ty::Bool,
            MathFn::Neg | MathFn::Abs if *arg == Ty::Int => Ty::Int,
            MathFn::Neg | MathFn::Abs if !arg.is_known() => Ty::Unknown,
            _ => Ty::F64,
        }
    }
}

/// How many positional arguments a builtin takes, and the names by which
/// its parameters can also be passed as keywords (`dt=bf16`).
pub struct Signature {
    pub min: usize,
    /// `None`: any number.
    pub max: Option<usize>,
    pub params: &'static [&'static str],
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "print" => Builtin::Print,
            "str" => Builtin::Str,
            "args" => Builtin::Args,
            "range" => Builtin::Range,
            "arr" => Builtin::Arr,
            "len" => Builtin::Len,
            "int" => Builtin::Int,
            "float" => Builtin::Float,
            "Ok" => Builtin::Ok,
            "Err" => Builtin::Err,
            "Some" => Builtin::Some,
            "assert" => Builtin::Assert,
            "read_text" => Builtin::ReadText,
            "write_text" => Builtin::WriteText,
            "read_csv" => Builtin::ReadCsv,
            "load_npy" => Builtin::LoadNpy,
            "save_npy" => Builtin::SaveNpy,
            "clock" => Builtin::Clock,
            "maximum" => Builtin::Maximum,
            "minimum" => Builtin::Minimum,
            "clip" => Builtin::Clip,
            "zeros" => Builtin::Zeros,
            "ones" => Builtin::Ones,
            "full" => Builtin::Full,
            "arange" => Builtin::Arange,
            "linspace" => Builtin::Linspace,
            "eye" => Builtin::Eye,
            "tensor" => Builtin::Tensor,
            "zeros_like" => Builtin::ZerosLike,
            "ones_like" => Builtin::OnesLike,
            "rand" => Builtin::Rand,
            "randn" => Builtin::Randn,
            "f64_bits" => Builtin::F64Bits,
            "f64_from_bits" => Builtin::F64FromBits,
            "tape" => Builtin::Tape,
            "backward" => Builtin::Backward,
            "backward_scaled" => Builtin::BackwardScaled,
            "grads_finite" => Builtin::GradsFinite,
            "grad" => Builtin::Grad,
            "value_and_grad" => Builtin::ValueAndGrad,
            "vjp" => Builtin::Vjp,
            "jvp" => Builtin::Jvp,
            "jacobian" => Builtin::Jacobian,
            "hessian" => Builtin::Hessian,
            other => match MathFn::from_name(other) {
                Some(m) => Builtin::Math(m),
                None => Builtin::TensorOp(twill_tensor::ops::SPEC_NAMES.iter().find(|n| **n == other)?),
            },
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Print => "print",
            Builtin::Str => "str",
            Builtin::Args => "args",
            Builtin::Range => "range",
            Builtin::Arr => "arr",
            Builtin::Len => "len",
            Builtin::Int => "int",
            Builtin::Float => "float",
            Builtin::Ok => "Ok",
            Builtin::Err => "Err",
            Builtin::Some => "Some",
            Builtin::Assert => "assert",
            Builtin::ReadText => "read_text",
            Builtin::WriteText => "write_text",
            Builtin::ReadCsv => "read_csv",
            Builtin::LoadNpy => "load_npy",
            Builtin::SaveNpy => "save_npy",
            Builtin::Clock => "clock",
            Builtin::Maximum => "maximum",
            Builtin::Minimum => "minimum",
            Builtin::Clip => "clip",
            Builtin::Zeros => "zeros",
            Builtin::Ones => "ones",
            Builtin::Full => "full",
            Builtin::Arange => "arange",
            Builtin::Linspace => "linspace",
            Builtin::Eye => "eye",
            Builtin::Tensor => "tensor",
            Builtin::ZerosLike => "zeros_like",
            Builtin::OnesLike => "ones_like",
            Builtin::Rand => "rand",
            Builtin::Randn => "randn",
            Builtin::F64Bits => "f64_bits",
            Builtin::F64FromBits => "f64_from_bits",
            Builtin::TensorOp(name) => name,
            Builtin::Math(m) => m.name(),
            Builtin::Tape => "tape",
            Builtin::Backward => "backward",
            Builtin::BackwardScaled => "backward_scaled",
            Builtin::GradsFinite => "grads_finite",
            Builtin::Grad => "grad",
            Builtin::ValueAndGrad => "value_and_grad",
            Builtin::Vjp => "vjp",
            Builtin::Jvp => "jvp",
            Builtin::Jacobian => "jacobian",
            Builtin::Hessian => "hessian",
        }
    }

    pub fn signature(self) -> Signature {
        // (fewest positional arguments, most, parameter names for keywords)
        let (min, max, params): (usize, Option<usize>, &'static [&'static str]) = match self {
            Builtin::Print | Builtin::TensorOp(_) => (0, None, &[]),
            Builtin::Args | Builtin::Clock | Builtin::Tape => (0, Some(0), &[]),
            Builtin::GradsFinite => (1, Some(1), &[]),
            Builtin::Grad | Builtin::ValueAndGrad | Builtin::Jacobian | Builtin::Hessian => (2, Some(2), &[]),
            Builtin::Backward | Builtin::Vjp | Builtin::Jvp => (3, Some(3), &[]),
            Builtin::BackwardScaled => (4, Some(4), &[]),
            Builtin::Range => (1, Some(3), &[]),
            Builtin::Assert => (1, Some(2), &[]),
            Builtin::WriteText | Builtin::SaveNpy | Builtin::Maximum | Builtin::Minimum => (2, Some(2), &[]),
            Builtin::ReadCsv | Builtin::LoadNpy => (1, Some(1), &[]),
            Builtin::Clip => (3, Some(3), &[]),
            Builtin::Str
            | Builtin::Arr
            | Builtin::Len
            | Builtin::Int
            | Builtin::Float
            | Builtin::Ok
            | Builtin::Err
            | Builtin::Some
            | Builtin::ReadText
            | Builtin::ZerosLike
            | Builtin::OnesLike
            | Builtin::F64Bits
            | Builtin::F64FromBits
            | Builtin::Math(_) => (1, Some(1), &[]),
            Builtin::Zeros | Builtin::Ones => (1, Some(2), &["shape", "dt"]),
            Builtin::Full => (2, Some(3), &["shape", "value", "dt"]),
            Builtin::Arange => (1, Some(4), &["a", "b", "step", "dt"]),
            Builtin::Linspace => (3, Some(4), &["a", "b", "n", "dt"]),
            Builtin::Eye => (1, Some(2), &["n", "dt"]),
            Builtin::Tensor => (1, Some(2), &["list", "dt"]),
            Builtin::Rand | Builtin::Randn => (1, Some(3), &["shape", "dt", "seed"]),
        };
        Signature { min, max, params }
    }

    /// Where the dtype argument sits among the positional arguments, for
    /// builtins that make a tensor of a requested dtype (f64 by default).
    pub fn dtype_param(self) -> Option<usize> {
        self.signature().params.iter().position(|p| *p == "dt")
    }

    /// The static result type, given the static argument types.
    pub fn result_type(self, args: &[Ty]) -> Ty {
        let first = args.first().cloned().unwrap_or(Ty::Unknown);
        match self {
            Builtin::Print | Builtin::Assert | Builtin::WriteText | Builtin::SaveNpy => Ty::Unit,
            Builtin::ReadCsv => Ty::Res(Box::new(Ty::Arr(Box::new(Ty::Unknown))), Box::new(Ty::Str)),
            Builtin::LoadNpy => Ty::Tensor(None),
            Builtin::Str | Builtin::ReadText => Ty::Str,
            Builtin::Args => Ty::Arr(Box::new(Ty::Str)),
            Builtin::Range => Ty::Range,
            Builtin::Arr => match first {
                Ty::Range => Ty::Arr(Box::new(Ty::Int)),
                Ty::Arr(t) => Ty::Arr(t),
                _ => Ty::Arr(Box::new(Ty::Unknown)),
            },
            Builtin::Len | Builtin::Int => Ty::Int,
            Builtin::Float | Builtin::Clock => Ty::F64,
            Builtin::Ok => Ty::Res(Box::new(first), Box::new(Ty::Unknown)),
            Builtin::Err => Ty::Res(Box::new(Ty::Unknown), Box::new(first)),
            Builtin::Some => Ty::Opt(Box::new(first)),
            Builtin::Math(m) => match first {
                Ty::Int | Ty::F64 => m.host_result(&first),
                Ty::Tensor(_) | Ty::Unknown => Ty::Unknown,
                _ => Ty::Unknown,
            },
            Builtin::Zeros
            | Builtin::Ones
            | Builtin::Full
            | Builtin::Arange
            | Builtin::Linspace
            | Builtin::Eye
            | Builtin::Tensor
            | Builtin::Rand
            | Builtin::Randn => Ty::Tensor(None),
            Builtin::ZerosLike | Builtin::OnesLike => match first {
                Ty::Tensor(d) => Ty::Tensor(d),
                _ => Ty::Tensor(None),
            },
            Builtin::F64Bits => Ty::Int,
            Builtin::F64FromBits => Ty::F64,
            Builtin::TensorOp(_) => Ty::Unknown,
            Builtin::Tape => Ty::Tape,
            Builtin::Backward | Builtin::BackwardScaled => {
                Ty::Res(Box::new(Ty::Arr(Box::new(Ty::Tensor(None)))), Box::new(Ty::Str))
            }
            Builtin::GradsFinite => Ty::Bool,
            // A gradient with respect to x has dtype grad_dtype(x) (spec §8).
            Builtin::Jvp => Ty::Tensor(None),
            Builtin::Jacobian | Builtin::Hessian => match args.get(1) {
                Some(Ty::Tensor(d)) => Ty::Tensor(d.map(twill_tensor::promote::grad_dtype)),
                _ => Ty::Tensor(None),
            },
            Builtin::Grad | Builtin::Vjp => match args.get(1) {
                Some(Ty::Tensor(d)) => Ty::Tensor(d.map(twill_tensor::promote::grad_dtype)),
                Some(Ty::Arr(_)) => Ty::Arr(Box::new(Ty::Tensor(None))),
                _ => Ty::Unknown,
            },
            Builtin::ValueAndGrad => Ty::Arr(Box::new(Ty::Unknown)),
            Builtin::Maximum | Builtin::Minimum | Builtin::Clip => {
                if args.iter().all(|t| matches!(t, Ty::Int | Ty::F64)) {
                    Ty::F64
                } else {
                    Ty::Unknown
                }
            }
        }
    }
}

/// Methods of host values, for "unknown method" errors on receivers whose
/// type the checker knows. Host numbers accept the math functions as methods.
pub fn host_methods(ty: &Ty) -> Option<&'static [&'static str]> {
    match ty {
        Ty::Str => Some(&[
            "len",
            "upper",
            "lower",
            "trim",
            "split",
            "contains",
            "starts_with",
            "ends_with",
            "replace",
            "find",
            "chars",
        ]),
        Ty::Arr(_) => Some(&[
            "push", "pop", "len", "contains", "join", "reversed", "insert", "remove",
        ]),
        Ty::Bool | Ty::Unit | Ty::DType | Ty::Range | Ty::Fn(..) | Ty::Res(..) | Ty::Opt(_) => Some(&[]),
        Ty::Int | Ty::F64 => Some(&[]),
        Ty::Tensor(_) => None,
        Ty::Tape => Some(&["watch"]),
        Ty::Unknown | Ty::Struct(_) => None,
    }
}

/// Methods of tensors besides the operations of `twill_tensor::ops`.
pub const TENSOR_METHODS: &[&str] = &["to", "numel", "item"];

/// Whether `name` is a method of tensors (spec §4.1's method forms).
pub fn is_tensor_method(name: &str) -> bool {
    TENSOR_METHODS.contains(&name) || twill_tensor::ops::SPEC_NAMES.contains(&name)
}

/// The static result type of a method on a host receiver.
pub fn host_method_type(recv: &Ty, name: &str) -> Ty {
    match (recv, name) {
        (Ty::Str, "len" | "find") => Ty::Int,
        (Ty::Str, "upper" | "lower" | "trim" | "replace") => Ty::Str,
        (Ty::Str, "split" | "chars") => Ty::Arr(Box::new(Ty::Str)),
        (Ty::Str, "contains" | "starts_with" | "ends_with") => Ty::Bool,
        (Ty::Arr(_), "len") => Ty::Int,
        (Ty::Arr(_), "contains") => Ty::Bool,
        (Ty::Arr(_), "join") => Ty::Str,
        (Ty::Arr(t), "pop") => (**t).clone(),
        (Ty::Arr(t), "reversed") => Ty::Arr(t.clone()),
        (Ty::Arr(_), "push" | "insert") => Ty::Unit,
        (Ty::Tensor(_), "numel") => Ty::Int,
        (Ty::Tape, "watch") => Ty::Tensor(None),
        (Ty::Tensor(Some(d)), "item") => match d {
            DType::Bool => Ty::Bool,
            DType::I8 | DType::I32 => Ty::Int,
            DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => Ty::F64,
        },
        (Ty::Int | Ty::F64, m) => match MathFn::from_name(m) {
            Some(f) => f.host_result(recv),
            None => Ty::Unknown,
        },
        _ => Ty::Unknown,
    }
}
