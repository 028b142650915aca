//! Run-time values. Every value has value semantics: aggregates are shared
//! behind `Rc` and copied on write (`Rc::make_mut`), so assignment and
//! closure capture copy cheaply and there are no reference cycles.

use std::rc::Rc;

use twill_check::hir::{Function, StructDef};
use twill_tensor::{DType, Tensor};

#[derive(Clone, Debug)]
pub enum Value {
    Unit,
    Int(i64),
    F64(f64),
    Bool(bool),
    Str(Rc<String>),
    DType(DType),
    Arr(Rc<Vec<Value>>),
    Range(Rc<RangeVal>),
    Func(Rc<Closure>),
    Ok(Rc<Value>),
    Err(Rc<Value>),
    Some(Rc<Value>),
    None,
    Struct(Rc<StructVal>),
    Tensor(Rc<Tensor>),
    /// A tensor recorded on an autodiff tape (spec §8).
    Tracked(Rc<crate::autodiff::Tracked>),
    Tape(Rc<crate::autodiff::TapeVal>),
    /// A global whose definition has not run yet.
    Undefined,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RangeVal {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
}

impl RangeVal {
    /// Number of elements, computed without overflow.
    pub fn len(&self) -> u64 {
        let (start, stop, step) = (self.start as i128, self.stop as i128, self.step as i128);
        let n = if step > 0 {
            (stop - start + step - 1).div_euclid(step)
        } else {
            (start - stop - step - 1).div_euclid(-step)
        };
        n.max(0) as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: u64) -> i64 {
        (self.start as i128 + i as i128 * self.step as i128) as i64
    }
}

#[derive(Debug)]
pub struct Closure {
    pub func: Rc<Function>,
    pub captures: Vec<Value>,
}

#[derive(Clone, Debug)]
pub struct StructVal {
    pub def: Rc<StructDef>,
    pub fields: Vec<Value>,
}

impl Value {
    /// The tensor a tensor value holds, under any tapes that record it.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        crate::autodiff::base(self)
    }

    /// Whether this is a tensor (recorded on a tape or not).
    pub fn is_tensor(&self) -> bool {
        matches!(self, Value::Tensor(_) | Value::Tracked(_))
    }

    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Rc::new(s.into()))
    }

    /// The type name used in error messages.
    pub fn type_name(&self) -> String {
        match self {
            Value::Unit => "Unit".into(),
            Value::Int(_) => "Int".into(),
            Value::F64(_) => "F64".into(),
            Value::Bool(_) => "Bool".into(),
            Value::Str(_) => "Str".into(),
            Value::DType(_) => "DType".into(),
            Value::Arr(_) => "Arr".into(),
            Value::Range(_) => "Range".into(),
            Value::Func(_) => "Fn".into(),
            Value::Ok(_) | Value::Err(_) => "Res".into(),
            Value::Some(_) | Value::None => "Opt".into(),
            Value::Struct(s) => s.def.name.to_string(),
            Value::Tensor(t) => format!("Tensor[{}]", t.dtype()),
            Value::Tracked(_) => format!("Tensor[{}]", self.as_tensor().map_or(DType::F64, |t| t.dtype())),
            Value::Tape(_) => "Tape".into(),
            Value::Undefined => "undefined".into(),
        }
    }
}
