//! Static types as far as the checker knows them, and the table of the
//! type names annotations may use. Typing is gradual:
//! `Ty::Unknown` is the dynamic type, compatible with everything, so a valid
//! program is never rejected for what the checker cannot see. Annotations
//! also become an [`RtType`], which the evaluator checks at run time when the
//! checker could not. This is the checker's bottom layer: it also owns
//! the struct definitions and interned symbols that a `Ty::Struct` refers
//! to, so it depends on no other module of the crate.

use std::fmt;
use std::rc::Rc;

use twill_tensor::DType;

/// Generates [`TypeName`] and its spellings from one list.
macro_rules! type_names {
    ($($variant:ident = $name:literal;)*) => {
        /// The built-in type names of annotations (spec §1); any other name
        /// in an annotation is a struct's.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum TypeName {
            $($variant,)*
        }

        const TYPE_NAMES: &[(TypeName, &str)] = &[$((TypeName::$variant, $name),)*];
    };
}

type_names! {
    Int = "Int";
    F64 = "F64";
    Bool = "Bool";
    Str = "Str";
    DType = "DType";
    Tape = "Tape";
    Format = "Format";
    Figure = "Figure";
    Unit = "Unit";
    Range = "Range";
    Arr = "Arr";
    Dict = "Dict";
    Opt = "Opt";
    Res = "Res";
    Tensor = "Tensor";
}

impl TypeName {
    pub fn from_name(name: &str) -> Option<TypeName> {
        TYPE_NAMES.iter().find(|t| t.1 == name).map(|t| t.0)
    }

    pub fn name(self) -> &'static str {
        // Every variant is generated with its entry.
        TYPE_NAMES[self as usize].1
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// A float format of the formats lab (spec §13).
    Format,
    /// A figure (spec §12.3): a handle, shared by every name bound to it.
    Figure,
    Arr(Box<Ty>),
    /// `Dict[K, V]` (spec §10.2).
    Dict(Box<Ty>, Box<Ty>),
    /// `(A, B)` (spec §10.1), one element or more; `()` is `Unit`.
    Tuple(Vec<Ty>),
    /// A tensor, with its dtype when known.
    Tensor(Option<DType>),
    Res(Box<Ty>, Box<Ty>),
    Opt(Box<Ty>),
    /// A function; parameter types are `None` when unknown, and the
    /// signature (names, defaults) is known for a function the checker
    /// saw declared.
    Fn(Option<Vec<Ty>>, Box<Ty>, Option<Rc<Sig>>),
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

    /// The element types when this is a tuple of `n` elements.
    pub fn tuple_of(&self, n: usize) -> Option<&[Ty]> {
        if let Ty::Tuple(ts) = self {
            (ts.len() == n).then_some(&ts[..])
        } else {
            None
        }
    }

    /// The number of parameters of a function type, when known.
    pub fn param_count(&self) -> Option<usize> {
        if let Ty::Fn(Some(ps), ..) = self {
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
            (Ty::Res(a, e), Ty::Res(b, f)) | (Ty::Dict(a, e), Ty::Dict(b, f)) => a.fits(b) && e.fits(f),
            (Ty::Tensor(a), Ty::Tensor(b)) => a.is_none() || b.is_none() || a == b,
            (Ty::Fn(pa, ra, _), Ty::Fn(pb, rb, _)) => {
                let params_ok = match (pa, pb) {
                    (Some(pa), Some(pb)) => pa.len() == pb.len() && pa.iter().zip(pb).all(|(a, b)| b.fits(a)),
                    _ => true,
                };
                params_ok && ra.fits(rb)
            }
            (Ty::Struct(a), Ty::Struct(b)) => a.name == b.name,
            (Ty::Tuple(a), Ty::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.fits(b)),
            (a, b) => a == b,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Unknown => write!(f, "?"),
            Ty::Unit => write!(f, "{}", TypeName::Unit),
            Ty::Int => write!(f, "{}", TypeName::Int),
            Ty::F64 => write!(f, "{}", TypeName::F64),
            Ty::Bool => write!(f, "{}", TypeName::Bool),
            Ty::Str => write!(f, "{}", TypeName::Str),
            Ty::DType => write!(f, "{}", TypeName::DType),
            Ty::Range => write!(f, "{}", TypeName::Range),
            Ty::Tape => write!(f, "{}", TypeName::Tape),
            Ty::Format => write!(f, "{}", TypeName::Format),
            Ty::Figure => write!(f, "{}", TypeName::Figure),
            Ty::Arr(t) => write!(f, "{}[{t}]", TypeName::Arr),
            Ty::Dict(k, v) => write!(f, "{}[{k}, {v}]", TypeName::Dict),
            Ty::Tuple(items) => {
                write!(f, "(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if items.len() == 1 {
                    write!(f, ",")?;
                }
                write!(f, ")")
            }
            Ty::Tensor(None) => write!(f, "{}", TypeName::Tensor),
            Ty::Tensor(Some(d)) => write!(f, "{}[{d}]", TypeName::Tensor),
            Ty::Res(a, b) => write!(f, "{}[{a}, {b}]", TypeName::Res),
            Ty::Opt(a) => write!(f, "{}[{a}]", TypeName::Opt),
            Ty::Fn(params, ret, _) => {
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
    Format,
    Figure,
    Arr,
    Dict,
    /// A tuple of this many elements.
    Tuple(usize),
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
            Ty::Format => RtType::Format,
            Ty::Figure => RtType::Figure,
            Ty::Arr(_) => RtType::Arr,
            Ty::Dict(..) => RtType::Dict,
            Ty::Tuple(items) => RtType::Tuple(items.len()),
            Ty::Tensor(d) => RtType::Tensor(*d),
            Ty::Res(..) => RtType::Res,
            Ty::Opt(_) => RtType::Opt,
            Ty::Fn(..) => RtType::Fn,
            Ty::Struct(s) => RtType::Struct(s.name.clone()),
        }
    }
}

/// What a call needs to know of a declared function's parameters (spec
/// §10.5): their names, for keyword arguments, and how many come before
/// the first with a default (those must be given).
#[derive(Debug, PartialEq)]
pub struct Sig {
    pub names: Vec<Rc<str>>,
    pub required: usize,
}

impl Sig {
    pub fn arity_text(&self) -> String {
        arity_text(self.required, self.names.len())
    }

    pub fn accepts(&self, n: usize) -> bool {
        accepts(self.required, self.names.len(), n)
    }
}

/// "2", or "1 to 3" when some of `total` parameters have defaults: the
/// checker's and the evaluator's arity messages.
pub fn arity_text(required: usize, total: usize) -> String {
    if required == total {
        total.to_string()
    } else {
        format!("{required} to {total}")
    }
}

/// Whether `n` arguments give every one of the `required` parameters and
/// no more than `total` (spec §10.5).
pub fn accepts(required: usize, total: usize, n: usize) -> bool {
    (required..=total).contains(&n)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_in_enum_order_and_spell_their_types() {
        for (i, t) in TYPE_NAMES.iter().enumerate() {
            assert_eq!(t.0 as usize, i);
            assert_eq!(TypeName::from_name(t.1), Some(t.0));
        }
        let plain = [
            (Ty::Int, TypeName::Int),
            (Ty::F64, TypeName::F64),
            (Ty::Bool, TypeName::Bool),
            (Ty::Str, TypeName::Str),
            (Ty::DType, TypeName::DType),
            (Ty::Tape, TypeName::Tape),
            (Ty::Format, TypeName::Format),
            (Ty::Figure, TypeName::Figure),
            (Ty::Unit, TypeName::Unit),
            (Ty::Range, TypeName::Range),
            (Ty::Tensor(None), TypeName::Tensor),
        ];
        for (ty, name) in plain {
            assert_eq!(ty.to_string(), name.name());
        }
        assert_eq!(Ty::Arr(Box::new(Ty::Int)).to_string(), "Arr[Int]");
        assert_eq!(Ty::Opt(Box::new(Ty::Str)).to_string(), "Opt[Str]");
        assert_eq!(
            Ty::Res(Box::new(Ty::F64), Box::new(Ty::Str)).to_string(),
            "Res[F64, Str]"
        );
        assert_eq!(Ty::Tensor(Some(DType::Bf16)).to_string(), "Tensor[bf16]");
    }
}
