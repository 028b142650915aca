//! Static types as far as the checker knows them. Typing is gradual:
//! `Ty::Unknown` is the dynamic type, compatible with everything, so a valid
//! program is never rejected for what the checker cannot see. Annotations
//! also become an [`RtType`], which the evaluator checks at run time when the
//! checker could not. This is the checker's bottom layer: it also owns
//! the struct definitions and interned symbols that a `Ty::Struct` refers
//! to, so it depends on no other module of the crate.

use std::fmt;
use std::rc::Rc;

use twill_tensor::DType;

#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Unknown,
    Unit,
    Int,
    F64,
    Bool,
    Str,
    DType,
    Range,
    Tape,
    Arr(Box<Ty>),
    /// A tensor, with its dtype when known.
    Tensor(Option<DType>),
    Res(Box<Ty>, Box<Ty>),
    Opt(Box<Ty>),
    /// A function; parameter types are `None` when unknown.
    Fn(Option<Vec<Ty>>, Box<Ty>),
    Struct(Rc<StructDef>),
}

impl Ty {
    pub fn is_known(&self) -> bool {
        !matches!(self, Ty::Unknown)
    }

    /// The dtype of a tensor type, when known; `None` for any other type.
    pub fn tensor_dtype(&self) -> Option<DType> {
        if let Ty::Tensor(d) = self {
            *d
        } else {
            None
        }
    }

    /// The number of parameters of a function type, when known.
    pub fn param_count(&self) -> Option<usize> {
        if let Ty::Fn(Some(ps), _) = self {
            Some(ps.len())
        } else {
            None
        }
    }

    /// Whether a value of type `self` may be bound where `expected` is
    /// required. Unknown parts are compatible with anything; an Int is
    /// accepted where an F64 is expected (it is converted).
    pub fn fits(&self, expected: &Ty) -> bool {
        match (self, expected) {
            (Ty::Unknown, _) | (_, Ty::Unknown) => true,
            (Ty::Int, Ty::F64) => true,
            (Ty::Arr(a), Ty::Arr(b)) | (Ty::Opt(a), Ty::Opt(b)) => a.fits(b),
            (Ty::Res(a, e), Ty::Res(b, f)) => a.fits(b) && e.fits(f),
            (Ty::Tensor(a), Ty::Tensor(b)) => a.is_none() || b.is_none() || a == b,
            (Ty::Fn(pa, ra), Ty::Fn(pb, rb)) => {
                let params_ok = match (pa, pb) {
                    (Some(pa), Some(pb)) => pa.len() == pb.len() && pa.iter().zip(pb).all(|(a, b)| b.fits(a)),
                    _ => true,
                };
                params_ok && ra.fits(rb)
            }
            (Ty::Struct(a), Ty::Struct(b)) => a.name == b.name,
            (a, b) => a == b,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Unknown => write!(f, "?"),
            Ty::Unit => write!(f, "Unit"),
            Ty::Int => write!(f, "Int"),
            Ty::F64 => write!(f, "F64"),
            Ty::Bool => write!(f, "Bool"),
            Ty::Str => write!(f, "Str"),
            Ty::DType => write!(f, "DType"),
            Ty::Range => write!(f, "Range"),
            Ty::Tape => write!(f, "Tape"),
            Ty::Arr(t) => write!(f, "Arr[{t}]"),
            Ty::Tensor(None) => write!(f, "Tensor"),
            Ty::Tensor(Some(d)) => write!(f, "Tensor[{d}]"),
            Ty::Res(a, b) => write!(f, "Res[{a}, {b}]"),
            Ty::Opt(a) => write!(f, "Opt[{a}]"),
            Ty::Fn(params, ret) => {
                write!(f, "Fn(")?;
                if let Some(ps) = params {
                    for (i, p) in ps.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{p}")?;
                    }
                } else {
                    write!(f, "…")?;
                }
                write!(f, ") -> {ret}")
            }
            Ty::Struct(s) => write!(f, "{}", s.name),
        }
    }
}

/// An annotation as the evaluator checks it: the shape of a value, without
/// the parts that cannot be checked cheaply (element types of arrays,
/// function signatures).
#[derive(Clone, Debug, PartialEq)]
pub enum RtType {
    Int,
    /// Accepts an Int too, converting it.
    F64,
    Bool,
    Str,
    DType,
    Range,
    Tape,
    Arr,
    Tensor(Option<DType>),
    Res,
    Opt,
    Fn,
    Struct(Rc<str>),
    Any,
    /// Not an annotation: the checker's own claim that a tensor has this
    /// dtype, asserted at run time when cross-checking (see `Checker`).
    Crosscheck(DType),
}

impl RtType {
    pub fn from_ty(ty: &Ty) -> RtType {
        match ty {
            Ty::Unknown | Ty::Unit => RtType::Any,
            Ty::Int => RtType::Int,
            Ty::F64 => RtType::F64,
            Ty::Bool => RtType::Bool,
            Ty::Str => RtType::Str,
            Ty::DType => RtType::DType,
            Ty::Range => RtType::Range,
            Ty::Tape => RtType::Tape,
            Ty::Arr(_) => RtType::Arr,
            Ty::Tensor(d) => RtType::Tensor(*d),
            Ty::Res(..) => RtType::Res,
            Ty::Opt(_) => RtType::Opt,
            Ty::Fn(..) => RtType::Fn,
            Ty::Struct(s) => RtType::Struct(s.name.clone()),
        }
    }
}

/// An interned name (a struct field or a method that may be one), so that
/// the evaluator compares integers, never strings. The names themselves
/// are in [`crate::hir::Module::symbols`], for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sym(pub u32);

#[derive(Debug, PartialEq)]
pub struct StructDef {
    pub name: Rc<str>,
    /// The field names, for printing a struct value and for messages.
    pub fields: Vec<Rc<str>>,
    /// The same fields as symbols, for look-ups while running.
    pub syms: Vec<Sym>,
}

impl StructDef {
    /// The offset of a field named in the source (checker only).
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &**f == name)
    }

    /// The offset of a field by symbol.
    pub fn field_offset(&self, sym: Sym) -> Option<usize> {
        self.syms.iter().position(|s| *s == sym)
    }
}
