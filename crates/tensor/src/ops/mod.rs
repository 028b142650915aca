//! The registry of tensor operations (spec §4.1): the `registry!` table
//! generates [`Op`], one enum value per operation, and its [`OpSpec`] — the
//! name, the parameters (positional order; the same names are the
//! keywords), the result-dtype [`Rule`], which operands promote, whether it
//! is differentiated, how it applies to host numbers, the help text and the
//! kernel. The checker resolves names to `Op` here (and only the checker
//! calls [`Op::from_name`]); the evaluator and the oracle tests run kernels
//! through [`call`]. An operation's facts live in this one table.
//!
//! The kernels live in the submodules by group (`elementwise`, `reduce`,
//! `order` with its vector sort `vsort`, `shape`, `contract`, `linalg`),
//! written against [`Args`] (`args`); `dtypes` applies the rule column for
//! the checker; `adjoint` holds the kernels only autodiff needs, which are
//! not user operations.

pub mod adjoint;
mod args;
pub mod assign;
pub mod contract;
pub mod derived;
pub mod dtypes;
pub mod elementwise;
pub mod lab;
pub mod linalg;
mod lookup;
pub mod order;
pub mod reduce;
pub mod shape;
mod vsort;

pub use args::{opt, req, Arg, Args, BinaryOp, Kernel, OpError, Operand, Out, Param};
pub use elementwise::Unary;

use crate::tensor::{Tensor, TensorError};

/// How an operation's result dtype follows from its arguments' dtypes
/// (spec §5), stated once per operation and applied by [`dtypes::result`]
/// for the checker and asserted against every kernel's output by the
/// oracle harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The first argument's dtype.
    Same,
    /// `float_result` of the first argument's dtype.
    Float,
    /// Always bool.
    Bool,
    /// `sum_result` of the first argument's dtype (i8 and bool sum in i32).
    Sum,
    /// Always i32 (indices).
    Index,
    /// Arguments 0 and 1 promoted together, weak scalars included.
    Join01,
    /// Arguments 1 and 2 promoted together (`where`'s branches).
    Join12,
    /// Arguments 0 and 1 as the operands of a binary operation: its
    /// result dtype (`dtypes::binary`), weak scalars included.
    Binary(BinaryOp),
    /// The first `n` tensor arguments promoted; an integer result is i32.
    Contract(usize),
    /// Every tensor argument after the spec string promoted; integer → i32.
    Einsum,
    /// A list of tensors in or out: the checker works out the element
    /// dtypes itself (`concat`, `stack`, `split`).
    Lists,
    /// The integer dtype of the first argument's bit patterns (`bits`).
    Bits,
    /// The dtype given by an argument (`from_bits`): known only at run time.
    Given,
    /// Linear algebra (spec §11.4): the promoted dtype of the tensor
    /// arguments if f64, else f32 (`linalg::compute_dtype`); the operation
    /// returns that many tensors of it — one a tensor, more a tuple.
    Linalg(usize),
}

/// Which arguments' dtypes promote into the result: the checker's widening
/// warnings look only at these (not at an index tensor, a condition, a
/// shape or an einsum spec).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Promotes {
    pub start: usize,
    /// `None`: every argument from `start` on.
    pub end: Option<usize>,
}

const fn promotes(start: usize, end: usize) -> Promotes {
    Promotes {
        start,
        end: Some(end),
    }
}

/// Whether and how an operation is differentiated (spec §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grad {
    /// It has a vjp rule.
    Rule,
    /// Its derivative is zero wherever it exists, or its result is an
    /// integer or bool: it is computed on the primals and not recorded.
    None,
}

/// How an operation applies to host numbers (spec §3: `sqrt(2.0)`,
/// `maximum(1, 2.5)`), besides tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// Tensors only.
    No,
    /// A unary function of one number.
    Unary(Unary),
    /// `maximum`/`minimum`/`clip` of numbers.
    Binary(BinaryOp),
    Clip,
}

/// One entry of the registry.
pub struct OpSpec {
    pub op: Op,
    pub name: &'static str,
    /// Parameters in positional order; the first is the receiver of the
    /// method form (`x.sum(axis=1)` is `sum(x, axis=1)`).
    pub params: &'static [Param],
    /// Whether a last parameter collects any number of extra positional
    /// arguments (`einsum(spec, a, b, …)`).
    pub variadic: bool,
    pub rule: Rule,
    pub promotes: Promotes,
    pub grad: Grad,
    pub host: Host,
    /// The one-line help text (REPL `:help`, editor hover).
    pub help: &'static str,
    pub run: Kernel,
}

impl OpSpec {
    /// The position of parameter `name`.
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }
}

const X: &[Param] = &[req("x")];
const AB: &[Param] = &[req("a"), req("b")];
const REDUCE: &[Param] = &[req("x"), opt("axis"), opt("keepdim")];
const SPREAD: &[Param] = &[req("x"), opt("axis"), opt("keepdim"), opt("ddof")];
const SCAN: &[Param] = &[req("x"), req("axis")];
/// `sum` and `cumsum` take the formats lab's `acc=` (spec §13).
const SUM: &[Param] = &[req("x"), opt("axis"), opt("keepdim"), opt("acc")];
const CUMSUM: &[Param] = &[req("x"), req("axis"), opt("acc")];
const NORMALISE: &[Param] = &[req("x"), opt("axis")];
const SORT: &[Param] = &[req("x"), opt("axis"), opt("descending")];
const TOPK: &[Param] = &[req("x"), req("k"), opt("axis"), opt("largest"), opt("sorted")];
const X_AXIS: &[Param] = &[req("x"), opt("axis")];
const LIST_AXIS: &[Param] = &[req("arr"), opt("axis")];
const SELECT: &[Param] = &[req("x"), req("axis"), req("idx")];

const CLOSE: &[Param] = &[req("a"), req("b"), opt("rtol"), opt("atol"), opt("equal_nan")];

const P0: Promotes = promotes(0, 1);
const NONE: Promotes = promotes(0, 0);

/// Generates [`Op`] and the table of [`OpSpec`]s from one list, so that an
/// operation's name, parameters, dtype rule, gradient kind, help text and
/// kernel are written in exactly one place. A new operation is one line
/// here, a kernel, and an arm in autodiff's exhaustive match over `Op`.
macro_rules! registry {
    ($($variant:ident = $name:literal, $params:expr, $variadic:literal, $rule:expr, $promotes:expr, $grad:ident,
       $host:expr, $help:literal, $run:path;)*) => {
        /// A tensor operation of spec §4.1. The checker resolves every call
        /// and method name to one of these; nothing after it names an
        /// operation by string.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $($variant,)*
        }

        static SPECS: &[OpSpec] = &[
            $(OpSpec {
                op: Op::$variant,
                name: $name,
                params: $params,
                variadic: $variadic,
                rule: $rule,
                promotes: $promotes,
                grad: Grad::$grad,
                host: $host,
                help: $help,
                run: $run,
            },)*
        ];

        impl Op {
            /// Every operation, in the order of spec §4.1's table.
            pub const ALL: &'static [Op] = &[$(Op::$variant,)*];
        }
    };
}

registry! {
    Maximum = "maximum", AB, false, Rule::Join01, promotes(0, 2), Rule, Host::Binary(BinaryOp::Maximum),
        "the larger of two values, elementwise with broadcasting; NaN if either is NaN", elementwise::run_maximum;
    Minimum = "minimum", AB, false, Rule::Join01, promotes(0, 2), Rule, Host::Binary(BinaryOp::Minimum),
        "the smaller of two values, elementwise with broadcasting; NaN if either is NaN", elementwise::run_minimum;
    Where = "where", &[req("cond"), req("a"), req("b")], false, Rule::Join12, promotes(1, 3), Rule, Host::No,
        "`a` where `cond` is true, else `b`, elementwise with broadcasting", elementwise::run_where;
    Neg = "neg", X, false, Rule::Same, P0, Rule, Host::Unary(Unary::Neg), "negation, elementwise", elementwise::run_neg;
    Abs = "abs", X, false, Rule::Same, P0, Rule, Host::Unary(Unary::Abs), "absolute value, elementwise", elementwise::run_abs;
    Sign = "sign", X, false, Rule::Same, P0, None, Host::Unary(Unary::Sign), "-1, 0 or 1 by the sign, elementwise (0 for NaN and for ±0)", elementwise::run_sign;
    Relu = "relu", X, false, Rule::Same, P0, Rule, Host::Unary(Unary::Relu), "max(x, 0), elementwise", elementwise::run_relu;
    Square = "square", X, false, Rule::Same, P0, Rule, Host::Unary(Unary::Square), "x * x, elementwise", elementwise::run_square;
    Clip = "clip", &[req("x"), opt("lo"), opt("hi")], false, Rule::Same, P0, Rule, Host::Clip,
        "x limited to [lo, hi], elementwise; either bound may be left out", elementwise::run_clip;
    Exp = "exp", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Exp), "e to the x, elementwise", elementwise::run_exp;
    Log = "log", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Log), "natural logarithm, elementwise", elementwise::run_log;
    Log1p = "log1p", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Log1p), "log(1 + x), accurate near 0, elementwise", elementwise::run_log1p;
    Expm1 = "expm1", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Expm1), "exp(x) - 1, accurate near 0, elementwise", elementwise::run_expm1;
    Sqrt = "sqrt", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Sqrt), "square root, elementwise", elementwise::run_sqrt;
    Rsqrt = "rsqrt", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Rsqrt), "1 / sqrt(x), elementwise", elementwise::run_rsqrt;
    Sin = "sin", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Sin), "sine, elementwise", elementwise::run_sin;
    Cos = "cos", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Cos), "cosine, elementwise", elementwise::run_cos;
    Tan = "tan", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Tan), "tangent, elementwise", elementwise::run_tan;
    Tanh = "tanh", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Tanh), "hyperbolic tangent, elementwise", elementwise::run_tanh;
    Sigmoid = "sigmoid", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Sigmoid), "1 / (1 + exp(-x)), elementwise", elementwise::run_sigmoid;
    Floor = "floor", X, false, Rule::Same, P0, None, Host::Unary(Unary::Floor), "the largest integer not above x, elementwise", elementwise::run_floor;
    Ceil = "ceil", X, false, Rule::Same, P0, None, Host::Unary(Unary::Ceil), "the smallest integer not below x, elementwise", elementwise::run_ceil;
    Round = "round", &[req("x"), opt("decimals")], false, Rule::Same, P0, None, Host::Unary(Unary::Round),
        "x rounded to `decimals` digits after the point (0: to an integer; negative: before it), ties to even, elementwise", elementwise::run_round;
    IsNan = "isnan", X, false, Rule::Bool, P0, None, Host::Unary(Unary::IsNan), "whether each element is NaN", elementwise::run_isnan;
    IsInf = "isinf", X, false, Rule::Bool, P0, None, Host::Unary(Unary::IsInf), "whether each element is +inf or -inf", elementwise::run_isinf;
    IsFinite = "isfinite", X, false, Rule::Bool, P0, None, Host::Unary(Unary::IsFinite), "whether each element is neither infinite nor NaN", elementwise::run_isfinite;
    Trunc = "trunc", X, false, Rule::Same, P0, None, Host::Unary(Unary::Trunc), "the integer part of x, rounded toward zero, elementwise", elementwise::run_trunc;
    Signbit = "signbit", X, false, Rule::Bool, P0, None, Host::Unary(Unary::Signbit), "whether the sign bit is set (true for -0.0 and for a negative NaN), elementwise", elementwise::run_signbit;
    Reciprocal = "reciprocal", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Reciprocal), "1 / x, elementwise", elementwise::run_reciprocal;
    Exp2 = "exp2", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Exp2), "2 to the x, elementwise", elementwise::run_exp2;
    Log2 = "log2", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Log2), "base-2 logarithm, elementwise", elementwise::run_log2;
    Log10 = "log10", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Log10), "base-10 logarithm, elementwise", elementwise::run_log10;
    Cbrt = "cbrt", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Cbrt), "cube root (negative for negative x), elementwise", elementwise::run_cbrt;
    Sinh = "sinh", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Sinh), "hyperbolic sine, elementwise", elementwise::run_sinh;
    Cosh = "cosh", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Cosh), "hyperbolic cosine, elementwise", elementwise::run_cosh;
    Asin = "asin", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Asin), "inverse sine in [-pi/2, pi/2], elementwise (NaN outside [-1, 1])", elementwise::run_asin;
    Acos = "acos", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Acos), "inverse cosine in [0, pi], elementwise (NaN outside [-1, 1])", elementwise::run_acos;
    Atan = "atan", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Atan), "inverse tangent in (-pi/2, pi/2), elementwise", elementwise::run_atan;
    Asinh = "asinh", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Asinh), "inverse hyperbolic sine, elementwise", elementwise::run_asinh;
    Acosh = "acosh", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Acosh), "inverse hyperbolic cosine, elementwise (NaN below 1)", elementwise::run_acosh;
    Atanh = "atanh", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Atanh), "inverse hyperbolic tangent, elementwise (±inf at ±1, NaN outside)", elementwise::run_atanh;
    Erf = "erf", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Erf), "the error function, elementwise", elementwise::run_erf;
    Erfc = "erfc", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Erfc), "1 - erf(x), accurate for large x, elementwise", elementwise::run_erfc;
    Lgamma = "lgamma", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Lgamma), "the log of |gamma(x)|, elementwise (+inf at 0 and the negative integers)", elementwise::run_lgamma;
    Digamma = "digamma", X, false, Rule::Float, P0, Rule, Host::Unary(Unary::Digamma), "the digamma function, the derivative of lgamma, elementwise (NaN at the negative integers)", elementwise::run_digamma;
    Polygamma = "polygamma", &[req("x"), req("n")], false, Rule::Float, P0, Rule, Host::No,
        "the n-th derivative of digamma, elementwise (`polygamma(x, 0)` is `digamma(x)`; n an Int ≥ 0; +inf at the poles for odd n)", elementwise::run_polygamma;
    Fmod = "fmod", AB, false, Rule::Binary(BinaryOp::Fmod), promotes(0, 2), Rule, Host::Binary(BinaryOp::Fmod),
        "the remainder of a / b with the sign of a (C's fmod), exact, elementwise with broadcasting", elementwise::run_fmod;
    Copysign = "copysign", AB, false, Rule::Binary(BinaryOp::Copysign), promotes(0, 2), Rule, Host::Binary(BinaryOp::Copysign),
        "the magnitude of a with the sign of b, elementwise with broadcasting", elementwise::run_copysign;
    Nextafter = "nextafter", AB, false, Rule::Binary(BinaryOp::Nextafter), promotes(0, 2), None, Host::Binary(BinaryOp::Nextafter),
        "the next value after a toward b in the result dtype, elementwise with broadcasting", elementwise::run_nextafter;
    Atan2 = "atan2", &[req("y"), req("x")], false, Rule::Binary(BinaryOp::Atan2), promotes(0, 2), Rule, Host::Binary(BinaryOp::Atan2),
        "the angle in [-pi, pi] of the point (x, y), elementwise with broadcasting", elementwise::run_atan2;
    Hypot = "hypot", AB, false, Rule::Binary(BinaryOp::Hypot), promotes(0, 2), Rule, Host::Binary(BinaryOp::Hypot),
        "sqrt(a^2 + b^2) without overflow, elementwise with broadcasting", elementwise::run_hypot;
    Logaddexp = "logaddexp", AB, false, Rule::Binary(BinaryOp::Logaddexp), promotes(0, 2), Rule, Host::Binary(BinaryOp::Logaddexp),
        "log(exp(a) + exp(b)) without overflow, elementwise with broadcasting", elementwise::run_logaddexp;
    LogicalAnd = "logical_and", AB, false, Rule::Bool, NONE, None, Host::No,
        "whether both a and b are nonzero (true), elementwise with broadcasting", elementwise::run_logical_and;
    LogicalOr = "logical_or", AB, false, Rule::Bool, NONE, None, Host::No,
        "whether a or b is nonzero (true), elementwise with broadcasting", elementwise::run_logical_or;
    LogicalXor = "logical_xor", AB, false, Rule::Bool, NONE, None, Host::No,
        "whether exactly one of a and b is nonzero (true), elementwise with broadcasting", elementwise::run_logical_xor;
    LogicalNot = "logical_not", X, false, Rule::Bool, NONE, None, Host::No, "whether x is zero (false), elementwise", elementwise::run_logical_not;
    Sum = "sum", SUM, false, Rule::Sum, P0, Rule, Host::No,
        "the sum over all elements or along `axis`; narrow floats accumulate in f32; acc=fmt rounds every step to a Format", reduce::sum;
    Mean = "mean", REDUCE, false, Rule::Float, P0, Rule, Host::No, "the arithmetic mean over all elements or along `axis`", reduce::mean;
    Prod = "prod", REDUCE, false, Rule::Sum, P0, Rule, Host::No, "the product over all elements or along `axis`", reduce::prod;
    Max = "max", REDUCE, false, Rule::Same, P0, Rule, Host::No, "the largest element, overall or along `axis`; NaN if any is NaN", reduce::max;
    Min = "min", REDUCE, false, Rule::Same, P0, Rule, Host::No, "the smallest element, overall or along `axis`; NaN if any is NaN", reduce::min;
    Median = "median", REDUCE, false, Rule::Float, P0, Rule, Host::No, "the median, overall or along `axis`", reduce::median;
    Var = "var", SPREAD, false, Rule::Float, P0, Rule, Host::No, "the variance (divisor n - ddof), overall or along `axis`", reduce::var;
    Std = "std", SPREAD, false, Rule::Float, P0, Rule, Host::No, "the standard deviation (divisor n - ddof), overall or along `axis`", reduce::std;
    Argmax = "argmax", REDUCE, false, Rule::Index, NONE, None, Host::No, "the index of the largest element (the first on ties; NaN counts as largest)", reduce::argmax;
    Argmin = "argmin", REDUCE, false, Rule::Index, NONE, None, Host::No, "the index of the smallest element (the first on ties; NaN counts as smallest)", reduce::argmin;
    All = "all", REDUCE, false, Rule::Bool, NONE, None, Host::No, "whether every element is nonzero, overall or along `axis`", reduce::all;
    Any = "any", REDUCE, false, Rule::Bool, NONE, None, Host::No, "whether some element is nonzero, overall or along `axis`", reduce::any;
    Logsumexp = "logsumexp", REDUCE, false, Rule::Float, P0, Rule, Host::No, "log(sum(exp(x))) computed without overflow", reduce::logsumexp;
    Nansum = "nansum", REDUCE, false, Rule::Sum, P0, Rule, Host::No,
        "the sum over all elements or along `axis`, NaN taken as 0 (all-NaN gives 0)", derived::nansum;
    Nanmean = "nanmean", REDUCE, false, Rule::Float, P0, Rule, Host::No,
        "the mean of the elements that are not NaN, overall or along `axis` (all-NaN gives NaN)", derived::nanmean;
    Nanmax = "nanmax", REDUCE, false, Rule::Same, P0, Rule, Host::No,
        "the largest element that is not NaN, overall or along `axis` (all-NaN gives NaN)", derived::nanmax;
    Nanmin = "nanmin", REDUCE, false, Rule::Same, P0, Rule, Host::No,
        "the smallest element that is not NaN, overall or along `axis` (all-NaN gives NaN)", derived::nanmin;
    Quantile = "quantile", &[req("x"), req("q"), opt("axis"), opt("keepdim")], false, Rule::Float, P0, Rule, Host::No,
        "the q-th quantile (q in [0, 1], an F64 or a rank-1 tensor whose axis goes first), overall or along `axis`, by NumPy's linear interpolation", reduce::quantile;
    CountNonzero = "count_nonzero", X_AXIS, false, Rule::Index, NONE, None, Host::No,
        "how many elements are nonzero (NaN counts), overall or along `axis`", reduce::count_nonzero;
    Norm = "norm", &[req("x"), opt("ord"), opt("axis"), opt("keepdim")], false, Rule::Float, P0, Rule, Host::No,
        "the vector norm (ord 1, 2 or inf) of the elements reduced over `axis` as one vector, or the Frobenius norm (ord=\"fro\")", derived::norm;
    Cumsum = "cumsum", CUMSUM, false, Rule::Sum, P0, Rule, Host::No, "running sums along `axis`; acc=fmt rounds every step to a Format", reduce::cumsum;
    Cumprod = "cumprod", SCAN, false, Rule::Sum, P0, Rule, Host::No, "running products along `axis`", reduce::cumprod;
    Softmax = "softmax", NORMALISE, false, Rule::Float, P0, Rule, Host::No, "exp(x) normalised to sum to 1 along `axis` (the last by default)", reduce::softmax;
    LogSoftmax = "log_softmax", NORMALISE, false, Rule::Float, P0, Rule, Host::No, "log(softmax(x)) computed stably along `axis`", reduce::log_softmax;
    Sort = "sort", SORT, false, Rule::Same, P0, Rule, Host::No, "the elements sorted along `axis` (stable; NaN last)", order::sort;
    Argsort = "argsort", SORT, false, Rule::Index, NONE, None, Host::No, "the indices that sort along `axis` (stable)", order::argsort;
    Topk = "topk", TOPK, false, Rule::Same, P0, Rule, Host::No, "the `k` largest elements along `axis`, largest first (largest=false: the k smallest, smallest first; always sorted)", order::topk;
    Argtopk = "argtopk", TOPK, false, Rule::Index, NONE, None, Host::No, "the indices of the `k` largest (largest=false: smallest) elements along `axis`, in topk's order", order::argtopk;
    Unique = "unique", X, false, Rule::Same, P0, None, Host::No,
        "the distinct elements, sorted, flattened (NaNs collapse to one, last)", order::unique;
    UniqueCounts = "unique_counts", X, false, Rule::Same, P0, None, Host::No,
        "the distinct elements, sorted, and how often each occurs (i32), as a tuple", order::unique_counts;
    Searchsorted = "searchsorted", &[req("sorted"), req("values"), opt("side")], false, Rule::Index, NONE, None, Host::No,
        "where each value would be inserted into the rank-1 `sorted` to keep it sorted (side \"left\" or \"right\"), i32", order::searchsorted;
    Bincount = "bincount", &[req("x"), opt("minlength")], false, Rule::Index, NONE, None, Host::No,
        "how often each of 0, 1, … occurs in a rank-1 non-negative integer tensor, i32", order::bincount;
    Nonzero = "nonzero", X, false, Rule::Index, NONE, None, Host::No,
        "the indices of the nonzero elements, one row each in row-major order, i32 of shape [count, ndim]", reduce::nonzero_indices;
    Reshape = "reshape", &[req("x"), req("shape")], false, Rule::Same, P0, Rule, Host::No,
        "the same elements in a new shape (one size may be -1)", shape::reshape;
    Transpose = "transpose", &[req("x"), req("a"), req("b")], false, Rule::Same, P0, Rule, Host::No, "axes `a` and `b` swapped", shape::transpose;
    Permute = "permute", &[req("x"), req("axes")], false, Rule::Same, P0, Rule, Host::No, "the axes reordered as `axes`", shape::permute;
    Flip = "flip", X_AXIS, false, Rule::Same, P0, Rule, Host::No, "the elements reversed along `axis` (every axis by default)", shape::flip;
    Roll = "roll", &[req("x"), req("shift"), opt("axis")], false, Rule::Same, P0, Rule, Host::No,
        "the elements shifted cyclically by `shift` along `axis`", shape::roll;
    Squeeze = "squeeze", X_AXIS, false, Rule::Same, P0, Rule, Host::No, "size-1 axes removed (or only `axis`)", shape::squeeze;
    Unsqueeze = "unsqueeze", &[req("x"), req("axis")], false, Rule::Same, P0, Rule, Host::No, "a size-1 axis inserted at `axis`", shape::unsqueeze;
    BroadcastTo = "broadcast_to", &[req("x"), req("shape")], false, Rule::Same, P0, Rule, Host::No,
        "x broadcast to `shape` (a view, no copy)", shape::broadcast_to;
    Concat = "concat", LIST_AXIS, false, Rule::Lists, NONE, Rule, Host::No, "the tensors of `arr` joined along an existing `axis`", shape::concat;
    Stack = "stack", LIST_AXIS, false, Rule::Lists, NONE, Rule, Host::No, "the tensors of `arr` joined along a new `axis`", shape::stack;
    Split = "split", &[req("x"), req("sizes"), opt("axis")], false, Rule::Lists, NONE, Rule, Host::No,
        "x cut along `axis` into pieces of the given sizes (an Int: pieces of that size, the last one shorter)", shape::split;
    Flatten = "flatten", X, false, Rule::Same, P0, Rule, Host::No, "the elements as a vector, in row-major order", derived::flatten;
    Diff = "diff", &[req("x"), opt("n"), opt("axis")], false, Rule::Same, P0, Rule, Host::No,
        "the n-th forward difference x[1:] - x[:-1] along `axis` (the last by default)", derived::diff;
    Tril = "tril", &[req("x"), opt("k")], false, Rule::Same, P0, Rule, Host::No,
        "the matrix with the elements above diagonal `k` set to 0", derived::tril;
    Triu = "triu", &[req("x"), opt("k")], false, Rule::Same, P0, Rule, Host::No,
        "the matrix with the elements below diagonal `k` set to 0", derived::triu;
    Diag = "diag", &[req("x"), opt("k")], false, Rule::Same, P0, Rule, Host::No,
        "a vector on diagonal `k` of a square matrix, or a matrix's diagonal `k` as a vector", derived::diag;
    Trace = "trace", X, false, Rule::Sum, P0, Rule, Host::No, "the sum of a matrix's main diagonal", derived::trace;
    Gather = "gather", SELECT, false, Rule::Same, P0, Rule, Host::No, "elements picked along `axis` by the index tensor `idx`", shape::gather;
    IndexSelect = "index_select", SELECT, false, Rule::Same, P0, Rule, Host::No,
        "slices picked along `axis` by the rank-1 index tensor `idx`", shape::index_select;
    Matmul = "matmul", &[req("a"), req("b"), opt("acc")], false, Rule::Contract(2), promotes(0, 2), Rule, Host::No,
        "matrix product with NumPy's batching rules (also `a @ b`); acc=fmt rounds every product and step to a Format", contract::matmul_op;
    Outer = "outer", AB, false, Rule::Contract(2), promotes(0, 2), Rule, Host::No,
        "every product a[i] * b[j] as a matrix (the inputs flattened)", derived::outer;
    Dot = "dot", AB, false, Rule::Contract(2), promotes(0, 2), Rule, Host::No,
        "the inner product of two vectors, accumulated in order", derived::dot;
    Isclose = "isclose", CLOSE, false, Rule::Bool, NONE, None, Host::No,
        "whether |a - b| <= atol + rtol * |b| elementwise (NumPy's isclose; equal_nan counts two NaNs as close)", derived::isclose;
    Allclose = "allclose", CLOSE, false, Rule::Bool, NONE, None, Host::No,
        "whether isclose(a, b, …) holds for every element, as a Bool", derived::allclose;
    Bits = "bits", X, false, Rule::Bits, NONE, None, Host::No,
        "each element's storage bit pattern as an integer (i32; zero-extended for bf16/f16; i8 for i8 and bool)", derived::bits;
    FromBits = "from_bits", &[req("t"), req("dt")], false, Rule::Given, NONE, None, Host::No,
        "the tensor of dtype `dt` whose storage bits are t's integers (the inverse of `bits`)", derived::from_bits;
    RoundTo = "round_to", &[req("x"), req("fmt")], false, Rule::Same, P0, None, Host::No,
        "every element rounded once, to nearest even, to a Format, in x's dtype (f64, or f32 when the Format fits)", lab::round_to;
    Linear = "linear", &[req("x"), req("w"), opt("b")], false, Rule::Contract(3), promotes(0, 3), Rule, Host::No,
        "x @ w.T + b, as PyTorch's linear layer", contract::linear_op;
    Einsum = "einsum", &[req("spec"), req("a")], true, Rule::Einsum, Promotes { start: 1, end: None }, Rule, Host::No,
        "Einstein summation over the operands as `spec` says (\"ij,jk->ik\")", contract::einsum_op;
    Conv2d = "conv2d", &[req("x"), req("w"), opt("stride"), opt("padding")], false, Rule::Contract(2), promotes(0, 2), Rule, Host::No,
        "2-D cross-correlation of (N,)C,H,W input with O,C,KH,KW weights", contract::conv2d_op;
    // Linear algebra (spec §11.4), batched over leading axes; kernels in `linalg`.
    Solve = "solve", AB, false, Rule::Linalg(1), promotes(0, 2), Rule, Host::No,
        "x with a @ x = b (b a matrix, or a vector when rank 1); an error if a is singular", linalg::solve;
    Inv = "inv", &[req("a")], false, Rule::Linalg(1), P0, Rule, Host::No,
        "the inverse of a square matrix; an error if it is singular", linalg::inv;
    Det = "det", &[req("a")], false, Rule::Linalg(1), P0, Rule, Host::No,
        "the determinant of a square matrix (by LU with partial pivoting)", linalg::det;
    Slogdet = "slogdet", &[req("a")], false, Rule::Linalg(2), P0, Rule, Host::No,
        "(sign, log|det|) of a square matrix, without overflow; (0, -inf) if singular", linalg::slogdet;
    Cholesky = "cholesky", &[req("a")], false, Rule::Linalg(1), P0, Rule, Host::No,
        "the lower-triangular L with L @ L.T = a (only a's lower triangle is read); an error if not positive definite", linalg::cholesky;
    Qr = "qr", &[req("a")], false, Rule::Linalg(2), P0, Rule, Host::No,
        "(q, r), the reduced QR factorisation: q's columns orthonormal, r upper triangular", linalg::qr;
    Eigh = "eigh", &[req("a")], false, Rule::Linalg(2), P0, Rule, Host::No,
        "(w, v) of a symmetric matrix (its lower triangle): eigenvalues ascending, eigenvectors as v's columns", linalg::eigh;
    Svd = "svd", &[req("a")], false, Rule::Linalg(3), P0, Rule, Host::No,
        "(u, s, vh), the reduced SVD with s descending: a = u @ diag(s) @ vh", linalg::svd_op;
    Lstsq = "lstsq", AB, false, Rule::Linalg(1), promotes(0, 2), Rule, Host::No,
        "the minimum-norm least-squares solution x of a @ x ≈ b (by the SVD, NumPy's cutoff)", linalg::lstsq;
    Pinv = "pinv", &[req("a")], false, Rule::Linalg(1), P0, Rule, Host::No,
        "the Moore-Penrose pseudo-inverse (by the SVD, NumPy's default cutoff)", linalg::pinv;
    MatrixRank = "matrix_rank", &[req("a")], false, Rule::Index, NONE, None, Host::No,
        "the number of singular values above NumPy's default tolerance (i32)", linalg::matrix_rank;
}

impl Op {
    pub fn spec(self) -> &'static OpSpec {
        // The table is generated in the enum's order, so the discriminant
        // is the index (tested by `the_table_is_in_enum_order`).
        &SPECS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn help(self) -> &'static str {
        self.spec().help
    }

    pub fn is_differentiable(self) -> bool {
        self.spec().grad == Grad::Rule
    }

    /// The operation a source name denotes: only the checker resolves names.
    pub fn from_name(name: &str) -> Option<Op> {
        SPECS.iter().find(|s| s.name == name).map(|s| s.op)
    }
}

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

/// Runs the operation named `name` on positional arguments (unit tests).
#[cfg(test)]
pub(crate) fn call_named(name: &str, pos: Vec<Arg>) -> Result<Out, TensorError> {
    let op = Op::from_name(name).ok_or_else(|| TensorError(format!("no operation `{name}`")))?;
    call(op, bind(op, pos, Vec::new())?).map_err(|e| TensorError(e.message))
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Binds positional and keyword arguments to `op`'s parameter slots, as
/// the checker does statically (used by callers that hold names, such as
/// the oracle harness reading JSON vectors).
pub fn bind(op: Op, pos: Vec<Arg>, kw: Vec<(String, Arg)>) -> Result<Vec<Option<Arg>>, TensorError> {
    let spec = op.spec();
    let n = spec.params.len();
    let mut slots: Vec<Option<Arg>> = Vec::with_capacity(n.max(pos.len()));
    slots.resize(n, None);
    for (i, a) in pos.into_iter().enumerate() {
        if i < n {
            slots[i] = Some(a);
        } else if spec.variadic {
            slots.push(Some(a));
        } else {
            return err(format!("`{op}` takes at most {n} arguments"));
        }
    }
    for (k, a) in kw {
        match spec.param_index(&k) {
            Some(i) if slots[i].is_none() => slots[i] = Some(a),
            Some(_) => return err(format!("`{op}`: argument `{k}` is given twice")),
            None => return err(format!("`{op}` has no argument `{k}`")),
        }
    }
    Ok(slots)
}

/// Runs `op` on arguments already bound to its parameter slots (missing
/// optional ones `None`; a variadic operation's extra arguments after the
/// parameters).
pub fn call(op: Op, mut slots: Vec<Option<Arg>>) -> Result<Out, OpError> {
    let spec = op.spec();
    let n = spec.params.len();
    if slots.len() > n && !spec.variadic {
        return Err(TensorError(format!("`{op}` takes at most {n} arguments")).into());
    }
    if slots.len() < n {
        slots.resize(n, None);
    }
    for (p, v) in spec.params.iter().zip(&slots) {
        if p.required && v.is_none() {
            return Err(TensorError(format!("`{op}` needs its `{}` argument", p.name)).into());
        }
    }
    let mut rest = Vec::new();
    if slots.len() > n {
        for v in slots.drain(n..) {
            match v {
                Some(a) => rest.push(a),
                None => return Err(TensorError(format!("`{op}`: an extra argument is missing")).into()),
            }
        }
    }
    let args = Args::new(spec.name, spec.params, slots, rest);
    (spec.run)(&args).map_err(|e| OpError {
        message: e.0,
        arg: args.blamed(),
    })
}

/// `a op b` where at least one side is a tensor.
pub fn binary(op: BinaryOp, a: Operand, b: Operand) -> Result<Tensor, TensorError> {
    elementwise::binary(op, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_enum_order() {
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(SPECS[i].op, *op);
            assert_eq!(*op as usize, i);
            assert_eq!(Op::from_name(op.name()), Some(*op));
        }
        assert_eq!(SPECS.len(), Op::ALL.len());
    }

    /// Every operation has help text and no two share a name.
    #[test]
    fn every_operation_has_help_and_a_unique_name() {
        let mut names = std::collections::BTreeSet::new();
        for op in Op::ALL {
            assert!(!op.help().trim().is_empty(), "`{op}` has no help text");
            assert!(names.insert(op.name()), "`{op}` is listed twice");
            assert!(!op.spec().params.is_empty(), "`{op}` has no parameters");
        }
    }
}
