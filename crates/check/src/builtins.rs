//! The table of builtin functions and of the methods of host values:
//! names, arities, keyword parameters, result types and help text; the
//! fields of tensors, the predefined constants (`nan`, `inf`, `pi`, `None`)
//! and the constructors that are patterns. The checker resolves every call,
//! method, constant and constructor name through these tables (and
//! through `twill_tensor::ops::Op` for tensor operations); the evaluator
//! implements each variant, matched exhaustively, and never sees a name.
//! Adding a builtin means one line in `builtins!` and one arm in the
//! evaluator.

use twill_tensor::ops::{Host, Op};
use twill_tensor::DType;

use crate::types::Ty;

/// Generates [`Builtin`] and its three groups, their names and help texts
/// from one list. The groups are what the evaluator dispatches on: each
/// group's function matches its own enum exhaustively, so no arm exists
/// for a builtin that cannot reach it.
macro_rules! builtins {
    (
        host { $($hv:ident = $hn:literal, $hh:literal;)* }
        make { $($mv:ident = $mn:literal, $mh:literal;)* }
        autodiff { $($av:ident = $an:literal, $ah:literal;)* }
    ) => {
        /// A builtin function (spec §3, §4, §8, §9).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Builtin {
            /// A function of host values (printing, strings, files, …).
            Host(HostFn),
            /// A tensor constructor (binds `dt=` and its other keywords).
            Make(Make),
            /// An autodiff function (spec §8).
            Autodiff(Autodiff),
            /// A tensor operation of the registry in function form.
            Op(Op),
        }

        /// The builtins of host values.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum HostFn {
            $($hv,)*
        }

        /// The tensor constructors.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Make {
            $($mv,)*
        }

        /// The autodiff builtins.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Autodiff {
            $($av,)*
        }

        const PLAIN: &[(Builtin, &str, &str)] = &[
            $((Builtin::Host(HostFn::$hv), $hn, $hh),)*
            $((Builtin::Make(Make::$mv), $mn, $mh),)*
            $((Builtin::Autodiff(Autodiff::$av), $an, $ah),)*
        ];
    };
}

builtins! {
    host {
        Print = "print", "print values separated by sep (a space), then end (a newline): print(a, b, sep=\" \", end=\"\\n\")";
        Str = "str", "the text of a value, as `print` shows it";
        Args = "args", "the program's command-line arguments, an Arr[Str]";
        Range = "range", "the Ints from start (0) up to stop, by step (1)";
        Arr = "arr", "an Arr from a Range, an Arr, a Str (its characters) or a rank-1 tensor (F64, Int or Bool elements)";
        Len = "len", "the length of a Str, Arr, Dict or Range";
        Int = "int", "a number or Str as an Int (F64 truncates toward zero)";
        Float = "float", "a number or Str as an F64";
        Ok = "Ok", "a successful Res";
        Err = "Err", "a failed Res";
        Some = "Some", "an Opt holding a value";
        Assert = "assert", "stop with an error if the condition is false";
        ReadText = "read_text", "the contents of a text file, a Res[Str, Str]";
        WriteText = "write_text", "write a Str to a file, atomically; a Res[Unit, Str]";
        ReadCsv = "read_csv", "read a CSV file with a header row into a Dict of its columns by name (numeric columns f64 tensors, others Arr[Str]); a Res";
        WriteCsv = "write_csv", "write a Dict of equally long columns (rank-1 tensors or Arrs) as a CSV file with a header row, atomically; a Res[Unit, Str]";
        LoadNpy = "load_npy", "load a tensor from a NumPy .npy file, a Res[Tensor, Str]";
        SaveNpy = "save_npy", "save a tensor to a NumPy .npy file, atomically; a Res[Unit, Str]";
        ReadLine = "read_line", "the next line of standard input without its newline, an Opt[Str] (None at the end)";
        Clock = "clock", "seconds since the program started, an F64";
        F64Bits = "f64_bits", "the IEEE bit pattern of an F64, as an Int";
        F64FromBits = "f64_from_bits", "the F64 whose bit pattern is this Int";
        Seed = "seed", "restart the program's random generator from an Int: seed(n)";
        Exit = "exit", "end the program with an exit status from 0 to 255 (0 by default), after flushing output";
        Env = "env", "the value of an environment variable, an Opt[Str]";
        Chr = "chr", "the one-character Str of a code point";
        TypeName = "type_name", "the name of a value's type as messages give it, a Str: \"Int\", \"F64\", \"Str\", \"Arr\", \"Tensor[f32]\", a struct's name, …";
        Format = "format", "a value's text by a format spec, as in an f-string: format(x, \".3f\")";
        Sorted = "sorted", "a sorted copy of an Arr, stably: sorted(a, reverse=false)";
        Progress = "progress", "the elements of an Arr, range, tensor or Dict, unchanged, with a progress bar (rate and ETA) on standard error when it is a terminal: for x in progress(it, total=none, label=\"\")";
        Help = "help", "the help text of a builtin, operation or function, a Str: help(softmax), help(nn.linear), help(\"zeros\")";
        ProgressNote = "progress_note", "the message shown beside the innermost running progress bar (for example the current loss): progress_note(s)";
        Finfo = "finfo", "the limits of a float dtype, NumPy's finfo: a struct of F64s eps, max, min (= -max), tiny (the smallest normal), smallest_subnormal, and the Int bits";
        Iinfo = "iinfo", "the range of an integer dtype, NumPy's iinfo: a struct of the Ints min, max and bits";
        Figure = "figure", "a new figure of width x height pixels with one panel: let fig = figure(width=640, height=480); draw with fig.line, fig.scatter, fig.hist, fig.image, then fig.save(\"plot.png\")";
        Display = "display", "show a value: in a notebook a figure inline (PNG and SVG) and a tensor as a table too, elsewhere its text as print shows it: display(fig)";
        FloatFormat = "float_format", "a float format for the formats lab: float_format(exp_bits, man_bits, bias=2^(exp_bits-1)-1, subnormals=true, special=\"ieee\"), special one of \"ieee\", \"fn\", \"none\"";
    }
    make {
        Zeros = "zeros", "a tensor of zeros: zeros(shape, dt=f64)";
        Ones = "ones", "a tensor of ones: ones(shape, dt=f64)";
        Full = "full", "a tensor filled with a value: full(shape, value, dt=f64)";
        Arange = "arange", "evenly spaced values in [a, b) by step";
        Linspace = "linspace", "n evenly spaced values from a to b inclusive";
        Eye = "eye", "the n x n identity matrix";
        Tensor = "tensor", "a tensor from a number or list, of dtype dt (f64 by default)";
        ZerosLike = "zeros_like", "zeros of another tensor's shape and dtype";
        OnesLike = "ones_like", "ones of another tensor's shape and dtype";
        Rand = "rand", "uniform random numbers in [0, 1): rand(shape, dt, seed); without a seed, from the program's generator";
        Randn = "randn", "standard normal random numbers: randn(shape, dt, seed); without a seed, from the program's generator";
        Uniform = "uniform", "uniform random numbers in [lo, hi): uniform(shape, lo=0, hi=1, dt=f64, seed); without a seed, from the program's generator";
        Normal = "normal", "normal random numbers: normal(shape, mean=0, std=1, dt=f64, seed); without a seed, from the program's generator";
        Randint = "randint", "uniform random integers in [lo, hi): randint(lo, hi, shape, dt=i32, seed); without a seed, from the program's generator";
        Permutation = "permutation", "0 … n-1 in a random order (i32): permutation(n, seed); without a seed, from the program's generator";
    }
    autodiff {
        Tape = "tape", "a new autodiff tape: watch tensors on it, then backward";
        Backward = "backward", "gradients of a scalar root with respect to tensors";
        BackwardScaled = "backward_scaled", "backward with a loss scale, for f16 training";
        GradsFinite = "grads_finite", "whether every gradient is finite";
        Grad = "grad", "the gradient function's value: grad(f, x)";
        ValueAndGrad = "value_and_grad", "f(x) and its gradient: value_and_grad(f, x)";
        Vjp = "vjp", "the vector-Jacobian product: vjp(f, x, v)";
        Jvp = "jvp", "the Jacobian-vector product: jvp(f, x, v)";
        Jacobian = "jacobian", "the Jacobian of f at x";
        Hessian = "hessian", "the exact Hessian of a scalar f at x";
    }
}

/// The struct `finfo` or `iinfo` returns (spec §11.3), named after the
/// builtin, with its fields in order and whether each is an Int (else an
/// F64). The checker registers it and the evaluator builds its values from
/// this one description.
pub fn info_fields(h: HostFn) -> Option<(&'static str, &'static [(&'static str, bool)])> {
    const FINFO: &[(&str, bool)] = &[
        ("eps", false),
        ("max", false),
        ("min", false),
        ("tiny", false),
        ("smallest_subnormal", false),
        ("bits", true),
    ];
    const IINFO: &[(&str, bool)] = &[("min", true), ("max", true), ("bits", true)];
    if h == HostFn::Finfo {
        Some(("finfo", FINFO))
    } else if h == HostFn::Iinfo {
        Some(("iinfo", IINFO))
    } else {
        None
    }
}

/// A field value of `finfo`'s or `iinfo`'s struct.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InfoValue {
    F64(f64),
    Int(i64),
}

/// The field values of `finfo(d)` or `iinfo(d)`, in [`info_fields`]'
/// order, from the dtype's own limits (`DType::float_info`,
/// `DType::int_info`); or the error for a dtype that has none.
pub fn info_values(h: HostFn, d: DType) -> Result<Vec<InfoValue>, String> {
    use InfoValue::{Int, F64};
    if h == HostFn::Finfo {
        let i = d.float_info().ok_or_else(|| {
            format!("`finfo` takes a float dtype (bf16, f16, f32, f64), not {d}; for an integer dtype, `iinfo` gives its range")
        })?;
        Ok(vec![
            F64(i.eps),
            F64(i.max),
            F64(i.min),
            F64(i.tiny),
            F64(i.smallest_subnormal),
            Int(i.bits),
        ])
    } else {
        let i = d.int_info().ok_or_else(|| {
            format!("`iinfo` takes an integer dtype (i8, i32), not {d}; for a float dtype, `finfo` gives its limits")
        })?;
        Ok(vec![Int(i.min), Int(i.max), Int(i.bits)])
    }
}

/// The definition of `finfo`'s or `iinfo`'s struct, its fields' symbols
/// given by `sym` (the checker interns them; the evaluator looks them up).
pub fn info_struct(
    h: HostFn,
    mut sym: impl FnMut(&str) -> crate::types::Sym,
) -> Option<crate::types::StructDef> {
    let (name, fields) = info_fields(h)?;
    Some(crate::types::StructDef {
        name: name.into(),
        fields: fields.iter().map(|(f, _)| (*f).into()).collect(),
        syms: fields.iter().map(|(f, _)| sym(f)).collect(),
    })
}

/// The keyword of the dtype parameter of the builtins that make a tensor
/// of a requested dtype (`zeros([2], dt=bf16)`).
pub const DTYPE_PARAM: &str = "dt";

/// The constructors that are also patterns (`Ok(p)`, `Err(p)`, `Some(p)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctor {
    Ok,
    Err,
    Some,
}

const CTORS: [(Builtin, Ctor); 3] = [
    (Builtin::Host(HostFn::Ok), Ctor::Ok),
    (Builtin::Host(HostFn::Err), Ctor::Err),
    (Builtin::Host(HostFn::Some), Ctor::Some),
];

impl Ctor {
    /// The constructor a pattern's name denotes, by its builtin's name.
    pub fn from_name(name: &str) -> Option<Ctor> {
        let b = Builtin::from_name(name)?;
        CTORS.iter().find(|(c, _)| *c == b).map(|(_, c)| *c)
    }
}

/// Generates [`Constant`] with its names, values and help from one list.
macro_rules! constants {
    ($($variant:ident = $name:literal, $value:expr, $help:literal;)*) => {
        /// A predefined name that denotes a value (spec §3); a binding of
        /// the same name shadows it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Constant {
            $($variant,)*
        }

        const CONSTANTS: &[(Constant, &str, ConstValue, &str)] = &[
            $((Constant::$variant, $name, $value, $help),)*
        ];
    };
}

/// The value of a [`Constant`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    F64(f64),
    /// The empty `Opt`.
    None,
}

constants! {
    Nan = "nan", ConstValue::F64(f64::NAN), "not a number, an F64";
    Inf = "inf", ConstValue::F64(f64::INFINITY), "positive infinity, an F64";
    Pi = "pi", ConstValue::F64(std::f64::consts::PI), "the ratio of a circle's circumference to its diameter";
    None = "None", ConstValue::None, "the Opt that holds no value (also a pattern)";
}

impl Constant {
    pub fn from_name(name: &str) -> Option<Constant> {
        CONSTANTS.iter().find(|c| c.1 == name).map(|c| c.0)
    }

    fn entry(self) -> &'static (Constant, &'static str, ConstValue, &'static str) {
        // Every variant is generated with its entry.
        &CONSTANTS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.entry().1
    }

    pub fn value(self) -> ConstValue {
        self.entry().2
    }

    pub fn help(self) -> &'static str {
        self.entry().3
    }

    pub fn all() -> impl Iterator<Item = Constant> {
        CONSTANTS.iter().map(|c| c.0)
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
    /// The builtin a source name denotes: a function of the table above,
    /// else a tensor operation in function form.
    pub fn from_name(name: &str) -> Option<Builtin> {
        PLAIN
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(b, _, _)| *b)
            .or_else(|| Op::from_name(name).map(Builtin::Op))
    }

    /// The tensor operation, for a builtin that is one.
    pub fn op(self) -> Option<Op> {
        if let Builtin::Op(op) = self {
            Some(op)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self.op() {
            Some(op) => op.name(),
            None => PLAIN
                .iter()
                .find(|(p, _, _)| *p == self)
                .map_or("?", |(_, n, _)| n),
        }
    }

    pub fn help(self) -> &'static str {
        match self.op() {
            Some(op) => op.help(),
            None => PLAIN
                .iter()
                .find(|(p, _, _)| *p == self)
                .map_or("", |(_, _, h)| h),
        }
    }

    /// Every builtin function name, for completion and suggestions.
    pub fn all() -> impl Iterator<Item = Builtin> {
        PLAIN
            .iter()
            .map(|(b, _, _)| *b)
            .chain(Op::ALL.iter().map(|op| Builtin::Op(*op)))
    }

    pub fn signature(self) -> Signature {
        // (fewest positional arguments, most, parameter names for keywords)
        let (min, max, params): (usize, Option<usize>, &'static [&'static str]) = match self {
            // Values, then the keyword-only `sep` and `end`.
            Builtin::Host(HostFn::Print) => (0, None, &["sep", "end"]),
            // A tensor operation's keywords are its registry parameters
            // (see `resolve`); the arity of the tensor-only ones is the
            // kernel's to check, those that also take host numbers have
            // their fixed host arity.
            Builtin::Op(op) => match op.spec().host {
                Host::No => (0, None, &[]),
                // `round(x, decimals)` has an optional parameter more.
                Host::Unary(_) => (1, Some(op.spec().params.len()), &[]),
                Host::Binary(_) => (2, Some(2), &[]),
                Host::Clip => (1, Some(3), &[]),
            },
            Builtin::Host(HostFn::Args)
            | Builtin::Host(HostFn::Clock)
            | Builtin::Autodiff(Autodiff::Tape) => (0, Some(0), &[]),
            Builtin::Autodiff(Autodiff::GradsFinite) => (1, Some(1), &[]),
            Builtin::Autodiff(Autodiff::Grad)
            | Builtin::Autodiff(Autodiff::ValueAndGrad)
            | Builtin::Autodiff(Autodiff::Jacobian)
            | Builtin::Autodiff(Autodiff::Hessian) => (2, Some(2), &[]),
            Builtin::Autodiff(Autodiff::Backward)
            | Builtin::Autodiff(Autodiff::Vjp)
            | Builtin::Autodiff(Autodiff::Jvp) => (3, Some(3), &[]),
            Builtin::Autodiff(Autodiff::BackwardScaled) => (4, Some(4), &[]),
            Builtin::Host(HostFn::Range) => (1, Some(3), &[]),
            Builtin::Host(HostFn::Assert) => (1, Some(2), &[]),
            Builtin::Host(HostFn::WriteText)
            | Builtin::Host(HostFn::SaveNpy)
            | Builtin::Host(HostFn::WriteCsv) => (2, Some(2), &[]),
            Builtin::Host(HostFn::ReadLine) => (0, Some(0), &[]),
            Builtin::Host(HostFn::ReadCsv) | Builtin::Host(HostFn::LoadNpy) => (1, Some(1), &[]),
            Builtin::Host(HostFn::Str)
            | Builtin::Host(HostFn::Arr)
            | Builtin::Host(HostFn::Len)
            | Builtin::Host(HostFn::Int)
            | Builtin::Host(HostFn::Float)
            | Builtin::Host(HostFn::Ok)
            | Builtin::Host(HostFn::Err)
            | Builtin::Host(HostFn::Some)
            | Builtin::Host(HostFn::ReadText)
            | Builtin::Make(Make::ZerosLike)
            | Builtin::Make(Make::OnesLike)
            | Builtin::Host(HostFn::F64Bits)
            | Builtin::Host(HostFn::F64FromBits)
            | Builtin::Host(HostFn::Seed)
            | Builtin::Host(HostFn::Env)
            | Builtin::Host(HostFn::Chr)
            | Builtin::Host(HostFn::TypeName)
            | Builtin::Host(HostFn::Finfo)
            | Builtin::Host(HostFn::Iinfo) => (1, Some(1), &[]),
            Builtin::Host(HostFn::Sorted) => (1, Some(2), &["a", "reverse"]),
            Builtin::Host(HostFn::Progress) => (1, Some(3), &["it", "total", "label"]),
            Builtin::Host(HostFn::ProgressNote) => (1, Some(1), &["s"]),
            Builtin::Host(HostFn::Help) => (1, Some(1), &["name"]),
            Builtin::Host(HostFn::FloatFormat) => (
                2,
                Some(5),
                &["exp_bits", "man_bits", "bias", "subnormals", "special"],
            ),
            Builtin::Host(HostFn::Format) => (2, Some(2), &[]),
            Builtin::Host(HostFn::Figure) => (0, Some(2), &["width", "height"]),
            Builtin::Host(HostFn::Display) => (1, Some(1), &["value"]),
            Builtin::Host(HostFn::Exit) => (0, Some(1), &[]),
            Builtin::Make(Make::Zeros) | Builtin::Make(Make::Ones) => (1, Some(2), &["shape", DTYPE_PARAM]),
            Builtin::Make(Make::Full) => (2, Some(3), &["shape", "value", DTYPE_PARAM]),
            Builtin::Make(Make::Arange) => (1, Some(4), &["a", "b", "step", DTYPE_PARAM]),
            Builtin::Make(Make::Linspace) => (3, Some(4), &["a", "b", "n", DTYPE_PARAM]),
            Builtin::Make(Make::Eye) => (1, Some(2), &["n", DTYPE_PARAM]),
            Builtin::Make(Make::Tensor) => (1, Some(2), &["list", DTYPE_PARAM]),
            Builtin::Make(Make::Rand) | Builtin::Make(Make::Randn) => {
                (1, Some(3), &["shape", DTYPE_PARAM, "seed"])
            }
            Builtin::Make(Make::Uniform) => (1, Some(5), &["shape", "lo", "hi", DTYPE_PARAM, "seed"]),
            Builtin::Make(Make::Normal) => (1, Some(5), &["shape", "mean", "std", DTYPE_PARAM, "seed"]),
            Builtin::Make(Make::Randint) => (3, Some(5), &["lo", "hi", "shape", DTYPE_PARAM, "seed"]),
            Builtin::Make(Make::Permutation) => (1, Some(2), &["n", "seed"]),
        };
        Signature { min, max, params }
    }

    /// Whether the named parameters are keyword-only, after any number of
    /// positional arguments (`print(a, b, sep=", ", end="")`): the
    /// keywords are bound to the first slots, in the order of the
    /// parameter names, and the positional arguments to the slots after
    /// them.
    pub fn keyword_only(self) -> bool {
        matches!(self, Builtin::Host(HostFn::Print))
    }

    /// Where the dtype argument sits among the positional arguments, for
    /// builtins that make a tensor of a requested dtype (f64 by default).
    pub fn dtype_param(self) -> Option<usize> {
        self.signature().params.iter().position(|p| *p == DTYPE_PARAM)
    }

    /// The static result type, given the static argument types.
    pub fn result_type(self, args: &[Ty]) -> Ty {
        let first = args.first().cloned().unwrap_or(Ty::Unknown);
        match self {
            Builtin::Host(HostFn::Print)
            | Builtin::Host(HostFn::Seed)
            | Builtin::Host(HostFn::Exit)
            | Builtin::Host(HostFn::ProgressNote)
            | Builtin::Host(HostFn::Display)
            | Builtin::Host(HostFn::Assert) => Ty::Unit,
            Builtin::Host(HostFn::Figure) => Ty::Figure,
            // The iterable itself, unchanged.
            Builtin::Host(HostFn::Progress) => first,
            Builtin::Host(HostFn::WriteText)
            | Builtin::Host(HostFn::SaveNpy)
            | Builtin::Host(HostFn::WriteCsv) => Ty::Res(Box::new(Ty::Unit), Box::new(Ty::Str)),
            Builtin::Host(HostFn::ReadCsv) => Ty::Res(
                Box::new(Ty::Dict(Box::new(Ty::Str), Box::new(Ty::Unknown))),
                Box::new(Ty::Str),
            ),
            Builtin::Host(HostFn::LoadNpy) => Ty::Res(Box::new(Ty::Tensor(None)), Box::new(Ty::Str)),
            Builtin::Host(HostFn::ReadText) => Ty::Res(Box::new(Ty::Str), Box::new(Ty::Str)),
            Builtin::Host(HostFn::ReadLine) => Ty::Opt(Box::new(Ty::Str)),
            Builtin::Host(HostFn::Env) => Ty::Opt(Box::new(Ty::Str)),
            Builtin::Host(HostFn::Chr)
            | Builtin::Host(HostFn::Format)
            | Builtin::Host(HostFn::Help)
            | Builtin::Host(HostFn::TypeName) => Ty::Str,
            Builtin::Host(HostFn::FloatFormat) => Ty::Format,
            // Structs the checker registers (`info_struct`); it gives their
            // type itself.
            Builtin::Host(HostFn::Finfo) | Builtin::Host(HostFn::Iinfo) => Ty::Unknown,
            Builtin::Host(HostFn::Sorted) => {
                let elem = if let Ty::Arr(t) = &first {
                    (**t).clone()
                } else {
                    Ty::Unknown
                };
                Ty::Arr(Box::new(elem))
            }
            Builtin::Host(HostFn::Str) => Ty::Str,
            Builtin::Host(HostFn::Args) => Ty::Arr(Box::new(Ty::Str)),
            Builtin::Host(HostFn::Range) => Ty::Range,
            Builtin::Host(HostFn::Arr) => Ty::Arr(Box::new(match first {
                Ty::Range => Ty::Int,
                Ty::Arr(t) => *t,
                Ty::Str => Ty::Str,
                Ty::Tensor(Some(DType::I8 | DType::I32)) => Ty::Int,
                Ty::Tensor(Some(DType::Bool)) => Ty::Bool,
                Ty::Tensor(Some(_)) => Ty::F64,
                // The others fail at run time.
                Ty::Unknown
                | Ty::Unit
                | Ty::Int
                | Ty::F64
                | Ty::Bool
                | Ty::DType
                | Ty::Tape
                | Ty::Format
                | Ty::Figure
                | Ty::Tensor(None)
                | Ty::Res(..)
                | Ty::Opt(_)
                | Ty::Fn(..)
                | Ty::Dict(..)
                | Ty::Tuple(_)
                | Ty::Struct(_) => Ty::Unknown,
            })),
            Builtin::Host(HostFn::Len) | Builtin::Host(HostFn::Int) => Ty::Int,
            Builtin::Host(HostFn::Float) | Builtin::Host(HostFn::Clock) => Ty::F64,
            Builtin::Host(HostFn::Ok) => Ty::Res(Box::new(first), Box::new(Ty::Unknown)),
            Builtin::Host(HostFn::Err) => Ty::Res(Box::new(Ty::Unknown), Box::new(first)),
            Builtin::Host(HostFn::Some) => Ty::Opt(Box::new(first)),
            Builtin::Op(op) => host_op_result(op, args),
            Builtin::Make(Make::Zeros)
            | Builtin::Make(Make::Ones)
            | Builtin::Make(Make::Full)
            | Builtin::Make(Make::Arange)
            | Builtin::Make(Make::Linspace)
            | Builtin::Make(Make::Eye)
            | Builtin::Make(Make::Tensor)
            | Builtin::Make(Make::Rand)
            | Builtin::Make(Make::Randn)
            | Builtin::Make(Make::Uniform)
            | Builtin::Make(Make::Normal)
            | Builtin::Make(Make::Randint) => Ty::Tensor(None),
            Builtin::Make(Make::Permutation) => Ty::Tensor(Some(DType::I32)),
            Builtin::Make(Make::ZerosLike) | Builtin::Make(Make::OnesLike) => {
                Ty::Tensor(first.tensor_dtype())
            }
            Builtin::Host(HostFn::F64Bits) => Ty::Int,
            Builtin::Host(HostFn::F64FromBits) => Ty::F64,
            Builtin::Autodiff(Autodiff::Tape) => Ty::Tape,
            Builtin::Autodiff(Autodiff::Backward) | Builtin::Autodiff(Autodiff::BackwardScaled) => {
                Ty::Res(Box::new(Ty::Arr(Box::new(Ty::Tensor(None)))), Box::new(Ty::Str))
            }
            Builtin::Autodiff(Autodiff::GradsFinite) => Ty::Bool,
            // A gradient with respect to x has dtype grad_dtype(x) (spec §8).
            Builtin::Autodiff(Autodiff::Jvp) => Ty::Tensor(None),
            Builtin::Autodiff(Autodiff::Jacobian) | Builtin::Autodiff(Autodiff::Hessian) => match args.get(1)
            {
                Some(Ty::Tensor(d)) => Ty::Tensor(d.map(twill_tensor::promote::grad_dtype)),
                _ => Ty::Tensor(None),
            },
            Builtin::Autodiff(Autodiff::Grad) | Builtin::Autodiff(Autodiff::Vjp) => match args.get(1) {
                Some(Ty::Tensor(d)) => Ty::Tensor(d.map(twill_tensor::promote::grad_dtype)),
                Some(Ty::Arr(_)) => Ty::Arr(Box::new(Ty::Tensor(None))),
                _ => Ty::Unknown,
            },
            Builtin::Autodiff(Autodiff::ValueAndGrad) => Ty::Tuple(vec![
                Ty::Unknown,
                match args.get(1) {
                    Some(Ty::Tensor(d)) => Ty::Tensor(d.map(twill_tensor::promote::grad_dtype)),
                    _ => Ty::Unknown,
                },
            ]),
        }
    }
}

/// The result type of a tensor operation applied to host numbers (spec
/// §3): F64, except that `abs` and `neg` of an Int stay Int and the
/// predicates give Bool; `Unknown` when an argument may be a tensor (the
/// checker types the tensor case from the registry's dtype rule).
pub fn host_op_result(op: Op, args: &[Ty]) -> Ty {
    let numbers = !args.is_empty() && args.iter().all(|t| matches!(t, Ty::Int | Ty::F64));
    if !numbers {
        return Ty::Unknown;
    }
    let first = &args[0];
    match op.spec().host {
        Host::No => Ty::Unknown,
        Host::Unary(u) => {
            use twill_tensor::ops::Unary as U;
            match u {
                U::IsNan | U::IsInf | U::IsFinite | U::Signbit => Ty::Bool,
                U::Neg | U::Abs if *first == Ty::Int => Ty::Int,
                U::Neg
                | U::Abs
                | U::Sign
                | U::Relu
                | U::Square
                | U::Exp
                | U::Log
                | U::Log1p
                | U::Expm1
                | U::Sqrt
                | U::Rsqrt
                | U::Sin
                | U::Cos
                | U::Tan
                | U::Tanh
                | U::Sigmoid
                | U::Floor
                | U::Ceil
                | U::Round
                | U::Trunc
                | U::Exp2
                | U::Log2
                | U::Log10
                | U::Cbrt
                | U::Sinh
                | U::Cosh
                | U::Asin
                | U::Acos
                | U::Atan
                | U::Asinh
                | U::Acosh
                | U::Atanh
                | U::Erf
                | U::Erfc
                | U::Reciprocal
                | U::Lgamma
                | U::Digamma => Ty::F64,
            }
        }
        Host::Binary(_) | Host::Clip => Ty::F64,
    }
}

/// Generates [`HostMethod`] with its names, receivers and help from one list.
macro_rules! host_methods {
    ($($variant:ident = $name:literal, [$($recv:ident),*], $help:literal;)*) => {
        /// A method of a value that is not a tensor operation: of Str, Arr,
        /// Dict, Tape, Res and Opt, and the tensor methods `to`, `numel`,
        /// `item`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum HostMethod {
            $($variant,)*
        }

        const METHODS: &[(HostMethod, &str, &[Recv], &str)] = &[
            $((HostMethod::$variant, $name, &[$(Recv::$recv),*], $help),)*
        ];
    };
}

/// The kinds of value a host method belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recv {
    Str,
    Arr,
    Tape,
    Tensor,
    Res,
    Opt,
    Dict,
    Format,
    Figure,
}

host_methods! {
    Len = "len", [Str, Arr, Dict], "the number of characters, elements or entries";
    Upper = "upper", [Str], "the Str in upper case";
    Lower = "lower", [Str], "the Str in lower case";
    Trim = "trim", [Str], "the Str without leading and trailing white space";
    Split = "split", [Str], "the pieces of the Str between separators";
    Contains = "contains", [Str, Arr, Dict], "whether the Str holds a piece, the Arr an element, or the Dict a key";
    StartsWith = "starts_with", [Str], "whether the Str begins with a piece";
    EndsWith = "ends_with", [Str], "whether the Str ends with a piece";
    Replace = "replace", [Str], "the Str with every occurrence of a piece replaced";
    Find = "find", [Str], "the character index of a piece, or -1";
    Chars = "chars", [Str], "the characters of the Str, an Arr[Str]";
    PadLeft = "pad_left", [Str], "the Str padded on the left to n characters with the one-character c: pad_left(n, c=\" \")";
    PadRight = "pad_right", [Str], "the Str padded on the right to n characters with the one-character c: pad_right(n, c=\" \")";
    Repeat = "repeat", [Str], "the Str repeated n times (also s * n)";
    Ord = "ord", [Str], "the code point of a one-character Str, an Int";
    IsDigit = "is_digit", [Str], "whether the Str is not empty and all its characters are numeric";
    IsAlpha = "is_alpha", [Str], "whether the Str is not empty and all its characters are letters";
    IsSpace = "is_space", [Str], "whether the Str is not empty and all its characters are white space";
    Lines = "lines", [Str], "the lines of the Str, without their line ends, an Arr[Str]";
    Push = "push", [Arr], "append an element (on a var)";
    Pop = "pop", [Arr], "remove and return the last element (on a var)";
    Join = "join", [Arr], "the elements' text joined by a separator";
    Reversed = "reversed", [Arr], "a reversed copy";
    Insert = "insert", [Arr], "insert an element at an index (on a var)";
    Remove = "remove", [Arr, Dict], "remove and return the element at an index, or a Dict's value as an Opt (on a var)";
    Get = "get", [Dict], "the value of a key as an Opt, or get(k, default) the value or the default";
    Keys = "keys", [Dict], "the keys, in insertion order, an Arr";
    Values = "values", [Dict], "the values, in the keys' order, an Arr";
    Items = "items", [Dict], "the (key, value) tuples, in insertion order, an Arr";
    Sort = "sort", [Arr], "sort the Arr in place, stably (on a var): numbers or Strs";
    Extend = "extend", [Arr], "append every element of another Arr (on a var)";
    IndexOf = "index_of", [Arr], "the index of the first element equal to a value, or -1";
    Watch = "watch", [Tape], "record a tensor on the tape";
    To = "to", [Tensor], "the tensor cast to a dtype, rounding once";
    Numel = "numel", [Tensor], "the number of elements";
    Item = "item", [Tensor], "the value of a one-element tensor as a host number";
    Unwrap = "unwrap", [Res, Opt], "the value in an Ok or a Some; an Err or None is a runtime error";
    Expect = "expect", [Res, Opt], "the value in an Ok or a Some; else a runtime error with your message";
    UnwrapOr = "unwrap_or", [Res, Opt], "the value in an Ok or a Some, else the default given";
    IsOk = "is_ok", [Res], "whether the Res is an Ok";
    IsErr = "is_err", [Res], "whether the Res is an Err";
    IsSome = "is_some", [Opt], "whether the Opt is a Some";
    Encode = "encode", [Format], "the bit patterns of a tensor's elements rounded to the format, a Tensor[i32]";
    Decode = "decode", [Format], "the values of an i32 tensor of the format's bit patterns, a Tensor[f64]";
    Underflows = "underflows", [Format], "how many non-zero elements of a tensor round to zero in the format, an Int";
    Overflows = "overflows", [Format], "how many finite elements of a tensor lie beyond the format's largest value after rounding, an Int";
    IsNone = "is_none", [Opt], "whether the Opt is None";
    Line = "line", [Figure], "draw a line through the points (x[i], y[i]) in the current panel: fig.line(x, y, label=\"\"); x and y are tensors of any dtype or Arrs of numbers, a NaN or inf point breaks the line";
    Scatter = "scatter", [Figure], "draw a dot at each point (x[i], y[i]) in the current panel: fig.scatter(x, y, label=\"\")";
    Hist = "hist", [Figure], "draw a histogram of the finite values of x in equal bins from their smallest to their largest, as numpy.histogram: fig.hist(x, bins=30, label=\"\")";
    Image = "image", [Figure], "draw a 2-D tensor as a grey-scale image (smallest value black, largest white) or an [h, w, 3] one as RGB (floats 0 to 1, integers 0 to 255), pixel (0, 0) at the top left: fig.image(t)";
    Title = "title", [Figure], "the current panel's title: fig.title(s)";
    Xlabel = "xlabel", [Figure], "the current panel's x-axis label: fig.xlabel(s)";
    Ylabel = "ylabel", [Figure], "the current panel's y-axis label: fig.ylabel(s)";
    LogY = "log_y", [Figure], "a logarithmic y axis for the current panel (values <= 0 are not drawn): fig.log_y()";
    Legend = "legend", [Figure], "a legend of the current panel's labelled lines, scatters and histograms: fig.legend()";
    Save = "save", [Figure], "write the figure to a .svg or .png file, atomically; the same figure gives the same bytes on every run; a Res[Unit, Str]: fig.save(path)";
    Grid = "grid", [Figure], "split the figure into rows x cols panels, numbered from 0 row by row; panel 0 becomes current: fig.grid(rows, cols)";
    Panel = "panel", [Figure], "make panel i (from 0, row by row) the one the drawing methods use: fig.panel(i)";
}

impl HostMethod {
    pub fn from_name(name: &str) -> Option<HostMethod> {
        METHODS.iter().find(|m| m.1 == name).map(|m| m.0)
    }

    fn entry(self) -> &'static (HostMethod, &'static str, &'static [Recv], &'static str) {
        // Every variant is generated with its entry.
        &METHODS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.entry().1
    }

    pub fn help(self) -> &'static str {
        self.entry().3
    }

    pub fn applies_to(self, r: Recv) -> bool {
        self.entry().2.contains(&r)
    }

    /// Whether it changes an Arr in place (allowed on a `var` only).
    pub fn mutates(self) -> bool {
        matches!(
            self,
            HostMethod::Push
                | HostMethod::Pop
                | HostMethod::Insert
                | HostMethod::Remove
                | HostMethod::Sort
                | HostMethod::Extend
        )
    }

    pub fn all() -> impl Iterator<Item = HostMethod> {
        METHODS.iter().map(|m| m.0)
    }

    /// The parameter names (after the receiver) of a method that takes
    /// keyword arguments, and how many must be given; `None` for the
    /// methods that take positional arguments only.
    pub fn params(self) -> Option<(usize, &'static [&'static str])> {
        if matches!(self, HostMethod::PadLeft | HostMethod::PadRight) {
            return Some((1, &["n", "c"]));
        }
        self.figure().map(FigureMethod::params)
    }

    /// The figure method this is, if it is one.
    pub fn figure(self) -> Option<FigureMethod> {
        use FigureMethod as F;
        use HostMethod as M;
        match self {
            M::Line => Some(F::Line),
            M::Scatter => Some(F::Scatter),
            M::Hist => Some(F::Hist),
            M::Image => Some(F::Image),
            M::Title => Some(F::Title),
            M::Xlabel => Some(F::Xlabel),
            M::Ylabel => Some(F::Ylabel),
            M::LogY => Some(F::LogY),
            M::Legend => Some(F::Legend),
            M::Save => Some(F::Save),
            M::Grid => Some(F::Grid),
            M::Panel => Some(F::Panel),
            M::Len
            | M::Upper
            | M::Lower
            | M::Trim
            | M::Split
            | M::Contains
            | M::StartsWith
            | M::EndsWith
            | M::Replace
            | M::Find
            | M::Chars
            | M::PadLeft
            | M::PadRight
            | M::Repeat
            | M::Ord
            | M::IsDigit
            | M::IsAlpha
            | M::IsSpace
            | M::Lines
            | M::Push
            | M::Pop
            | M::Join
            | M::Reversed
            | M::Insert
            | M::Remove
            | M::Get
            | M::Keys
            | M::Values
            | M::Items
            | M::Sort
            | M::Extend
            | M::IndexOf
            | M::Watch
            | M::To
            | M::Numel
            | M::Item
            | M::Unwrap
            | M::Expect
            | M::UnwrapOr
            | M::IsOk
            | M::IsErr
            | M::IsSome
            | M::Encode
            | M::Decode
            | M::Underflows
            | M::Overflows
            | M::IsNone => None,
        }
    }
}

/// The methods of a figure (spec §12.3), the host methods with keyword
/// parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureMethod {
    Line,
    Scatter,
    Hist,
    Image,
    Title,
    Xlabel,
    Ylabel,
    LogY,
    Legend,
    Save,
    Grid,
    Panel,
}

impl FigureMethod {
    /// How many arguments must be given, and the parameters' names.
    pub fn params(self) -> (usize, &'static [&'static str]) {
        use FigureMethod as F;
        match self {
            F::Line | F::Scatter => (2, &["x", "y", "label"]),
            F::Hist => (1, &["x", "bins", "label"]),
            F::Image => (1, &["t"]),
            F::Title | F::Xlabel | F::Ylabel => (1, &["s"]),
            F::LogY | F::Legend => (0, &[]),
            F::Save => (1, &["path"]),
            F::Grid => (2, &["rows", "cols"]),
            F::Panel => (1, &["i"]),
        }
    }
}

/// A method name as the checker resolved it: the tensor operation and the
/// host method it may denote (a receiver of unknown type can be either,
/// `x.split(…)`), and the interned name for a struct field holding a
/// function. The evaluator picks by the receiver's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodRef {
    pub op: Option<Op>,
    pub host: Option<HostMethod>,
}

impl MethodRef {
    pub fn resolve(name: &str) -> MethodRef {
        MethodRef {
            op: Op::from_name(name),
            host: HostMethod::from_name(name),
        }
    }

    pub fn is_known(self) -> bool {
        self.op.is_some() || self.host.is_some()
    }
}

/// The kind of a receiver type, for host methods; `None` when the type has
/// no host methods or is not known.
pub fn recv_kind(ty: &Ty) -> Option<Recv> {
    match ty {
        Ty::Str => Some(Recv::Str),
        Ty::Arr(_) => Some(Recv::Arr),
        Ty::Tape => Some(Recv::Tape),
        Ty::Format => Some(Recv::Format),
        Ty::Figure => Some(Recv::Figure),
        Ty::Tensor(_) => Some(Recv::Tensor),
        Ty::Res(..) => Some(Recv::Res),
        Ty::Dict(..) => Some(Recv::Dict),
        Ty::Opt(_) => Some(Recv::Opt),
        Ty::Unknown
        | Ty::Unit
        | Ty::Int
        | Ty::F64
        | Ty::Bool
        | Ty::DType
        | Ty::Range
        | Ty::Tuple(_)
        | Ty::Fn(..)
        | Ty::Struct(_) => None,
    }
}

/// The names of the host methods of a type, for "unknown method" notes.
pub fn host_method_names(r: Recv) -> Vec<&'static str> {
    HostMethod::all()
        .filter(|m| m.applies_to(r))
        .map(HostMethod::name)
        .collect()
}

/// The static result type of a method on a receiver of type `recv`.
pub fn host_method_type(recv: &Ty, m: MethodRef) -> Ty {
    use HostMethod as M;
    if let (Ty::Int | Ty::F64, Some(op)) = (recv, m.op) {
        // Host numbers take the unary math functions as methods.
        return match op.spec().host {
            Host::Unary(_) => host_op_result(op, std::slice::from_ref(recv)),
            Host::No | Host::Binary(_) | Host::Clip => Ty::Unknown,
        };
    }
    let Some(h) = m.host else {
        return Ty::Unknown;
    };
    match (recv, h) {
        (Ty::Str, M::Len | M::Find) => Ty::Int,
        (Ty::Str, M::Upper | M::Lower | M::Trim | M::Replace | M::PadLeft | M::PadRight | M::Repeat) => {
            Ty::Str
        }
        (Ty::Str, M::Split | M::Chars | M::Lines) => Ty::Arr(Box::new(Ty::Str)),
        (Ty::Str, M::Contains | M::StartsWith | M::EndsWith | M::IsDigit | M::IsAlpha | M::IsSpace) => {
            Ty::Bool
        }
        (Ty::Str, M::Ord) => Ty::Int,
        (Ty::Arr(_), M::IndexOf) => Ty::Int,
        (Ty::Arr(_), M::Sort | M::Extend) => Ty::Unit,
        (Ty::Dict(..), M::Len) => Ty::Int,
        (Ty::Dict(..), M::Contains) => Ty::Bool,
        (Ty::Dict(_, v), M::Remove) => Ty::Opt(v.clone()),
        (Ty::Dict(k, _), M::Keys) => Ty::Arr(k.clone()),
        (Ty::Dict(_, v), M::Values) => Ty::Arr(v.clone()),
        (Ty::Dict(k, v), M::Items) => Ty::Arr(Box::new(Ty::Tuple(vec![(**k).clone(), (**v).clone()]))),
        (Ty::Arr(_), M::Len) => Ty::Int,
        (Ty::Arr(_), M::Contains) => Ty::Bool,
        (Ty::Arr(_), M::Join) => Ty::Str,
        (Ty::Arr(t), M::Pop) => (**t).clone(),
        (Ty::Arr(t), M::Reversed) => Ty::Arr(t.clone()),
        (Ty::Arr(_), M::Push | M::Insert) => Ty::Unit,
        (Ty::Tensor(_), M::Numel) => Ty::Int,
        (Ty::Tape, M::Watch) => Ty::Tensor(None),
        (Ty::Format, M::Encode) => Ty::Tensor(Some(DType::I32)),
        (Ty::Format, M::Decode) => Ty::Tensor(Some(DType::F64)),
        (Ty::Format, M::Underflows | M::Overflows) => Ty::Int,
        (Ty::Figure, M::Save) => Ty::Res(Box::new(Ty::Unit), Box::new(Ty::Str)),
        (
            Ty::Figure,
            M::Line
            | M::Scatter
            | M::Hist
            | M::Image
            | M::Title
            | M::Xlabel
            | M::Ylabel
            | M::LogY
            | M::Legend
            | M::Grid
            | M::Panel,
        ) => Ty::Unit,
        (Ty::Res(ok, _), M::Unwrap | M::Expect | M::UnwrapOr) => (**ok).clone(),
        (Ty::Opt(t), M::Unwrap | M::Expect | M::UnwrapOr) => (**t).clone(),
        (Ty::Res(..), M::IsOk | M::IsErr) | (Ty::Opt(_), M::IsSome | M::IsNone) => Ty::Bool,
        (Ty::Tensor(Some(d)), M::Item) => match d {
            DType::Bool => Ty::Bool,
            DType::I8 | DType::I32 => Ty::Int,
            DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => Ty::F64,
        },
        _ => Ty::Unknown,
    }
}

/// Generates [`TensorField`] and its names from one list.
macro_rules! tensor_fields {
    ($($variant:ident = $name:literal, $help:literal;)*) => {
        /// The fields of a tensor (spec §4).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum TensorField {
            $($variant,)*
        }

        const FIELDS: &[(TensorField, &str, &str)] = &[$((TensorField::$variant, $name, $help),)*];
    };
}

tensor_fields! {
    Dtype = "dtype", "the tensor's dtype";
    Shape = "shape", "the tensor's shape, an Arr[Int]";
    Ndim = "ndim", "the number of axes";
    T = "T", "the tensor with its axes reversed (the transpose of a matrix)";
}

impl TensorField {
    pub fn from_name(name: &str) -> Option<TensorField> {
        FIELDS.iter().find(|f| f.1 == name).map(|f| f.0)
    }

    pub fn name(self) -> &'static str {
        FIELDS[self as usize].1
    }

    pub fn help(self) -> &'static str {
        FIELDS[self as usize].2
    }

    /// The names of all tensor fields, for messages.
    pub fn names() -> Vec<&'static str> {
        FIELDS.iter().map(|f| f.1).collect()
    }
}

/// Generates [`FormatField`] and its names from one list.
macro_rules! format_fields {
    ($($variant:ident = $name:literal, $help:literal;)*) => {
        /// The fields of a Format (spec §13).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum FormatField {
            $($variant,)*
        }

        const FORMAT_FIELDS: &[(FormatField, &str, &str)] = &[$((FormatField::$variant, $name, $help),)*];
    };
}

format_fields! {
    Max = "max", "the largest finite value, an F64";
    MinNormal = "min_normal", "the smallest positive normal value, 2^(1 - bias)";
    MinSubnormal = "min_subnormal", "the smallest positive value (the smallest normal without subnormals)";
    Eps = "eps", "the distance from 1 to the next larger value, 2^-man_bits";
    UnderflowCliff = "underflow_cliff", "half the smallest positive value: the largest magnitude that rounds to zero";
    Bits = "bits", "the width of a pattern, sign included, an Int";
    ExpBits = "exp_bits", "the exponent bits, an Int";
    ManBits = "man_bits", "the stored mantissa bits, an Int";
    Bias = "bias", "the exponent bias, an Int";
    Subnormals = "subnormals", "whether the format has subnormals, a Bool";
    Special = "special", "the special-value scheme, a Str: \"ieee\", \"fn\" or \"none\"";
}

impl FormatField {
    pub fn from_name(name: &str) -> Option<FormatField> {
        FORMAT_FIELDS.iter().find(|f| f.1 == name).map(|f| f.0)
    }

    pub fn name(self) -> &'static str {
        FORMAT_FIELDS[self as usize].1
    }

    pub fn help(self) -> &'static str {
        FORMAT_FIELDS[self as usize].2
    }

    /// The names of all Format fields, for messages.
    pub fn names() -> Vec<&'static str> {
        FORMAT_FIELDS.iter().map(|f| f.1).collect()
    }

    /// The field's static type.
    pub fn ty(self) -> Ty {
        match self {
            FormatField::Max
            | FormatField::MinNormal
            | FormatField::MinSubnormal
            | FormatField::Eps
            | FormatField::UnderflowCliff => Ty::F64,
            FormatField::Bits | FormatField::ExpBits | FormatField::ManBits | FormatField::Bias => Ty::Int,
            FormatField::Subnormals => Ty::Bool,
            FormatField::Special => Ty::Str,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_values_match_their_fields() {
        for h in [HostFn::Finfo, HostFn::Iinfo] {
            let (_, fields) = info_fields(h).unwrap();
            let mut some = 0;
            for d in DType::ALL {
                if let Ok(vals) = info_values(h, d) {
                    some += 1;
                    assert_eq!(vals.len(), fields.len());
                    for (v, (name, int)) in vals.iter().zip(fields) {
                        assert_eq!(matches!(v, InfoValue::Int(_)), *int, "{name} of {d}");
                    }
                }
            }
            assert_eq!(some, if h == HostFn::Finfo { 4 } else { 2 });
        }
    }

    #[test]
    fn tables_are_in_enum_order_and_names_are_unique() {
        for (i, m) in METHODS.iter().enumerate() {
            assert_eq!(m.0 as usize, i);
            assert_eq!(HostMethod::from_name(m.1), Some(m.0));
            assert!(!m.3.is_empty());
        }
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(f.0 as usize, i);
            assert_eq!(TensorField::from_name(f.1), Some(f.0));
        }
        for (i, f) in FORMAT_FIELDS.iter().enumerate() {
            assert_eq!(f.0 as usize, i);
            assert_eq!(FormatField::from_name(f.1), Some(f.0));
            assert!(!f.2.is_empty());
        }
        for (i, c) in CONSTANTS.iter().enumerate() {
            assert_eq!(c.0 as usize, i);
            assert_eq!(Constant::from_name(c.1), Some(c.0));
            assert!(!c.3.is_empty());
        }
        for c in Constant::all() {
            assert_eq!(
                Builtin::from_name(c.name()),
                None,
                "`{}` is a builtin too",
                c.name()
            );
        }
        for (b, c) in CTORS {
            assert_eq!(Ctor::from_name(b.name()), Some(c));
        }
        let mut names = std::collections::BTreeSet::new();
        for b in Builtin::all() {
            assert!(names.insert(b.name()), "`{}` twice", b.name());
            assert_eq!(Builtin::from_name(b.name()), Some(b));
            assert!(!b.help().is_empty(), "`{}` has no help", b.name());
        }
    }
}
