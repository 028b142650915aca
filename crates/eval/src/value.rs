//! Run-time values. Every value has value semantics: aggregates are shared
//! behind `Rc` and copied on write (`Rc::make_mut`), so assignment and
//! closure capture copy cheaply and there are no reference cycles.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use twill_check::hir::{Function, StructDef};
use twill_check::text::Text;
use twill_syntax::ast::BinOp;
use twill_syntax::Span;
use twill_tensor::index::IndexItem;
use twill_tensor::ops::Op;
use twill_tensor::{DType, Tensor};

/// A value of the host language: 16 bytes, a tag and one word.
///
/// `repr(u64)` puts every payload (a `Bool`'s and a `DType`'s too) at
/// offset 8, so a value is copied as two words: with the default layout
/// those one-byte payloads sit next to the tag, and moves out of an
/// `R<Value>` were split into byte and half-word pieces that stalled the
/// loads after them (store forwarding). The tag's unused values remain a
/// niche, so `R<Value>` (asserted beside `R`) and `Option<Value>` are 16
/// bytes too.
#[derive(Clone, Debug)]
#[repr(u64)]
pub enum Value {
    Unit,
    Int(i64),
    F64(f64),
    Bool(bool),
    Str(Rc<Text>),
    DType(DType),
    Arr(Rc<Vec<Value>>),
    /// A tuple of one element or more (spec §10.1); `()` is `Unit`.
    Tuple(Rc<Vec<Value>>),
    /// An insertion-ordered map (spec §10.2), copied on write like `Arr`.
    Dict(Rc<DictVal>),
    Range(Rc<RangeVal>),
    Func(Rc<Closure>),
    Ok(Rc<Value>),
    Err(Rc<Value>),
    Some(Rc<Value>),
    None,
    Struct(Rc<StructVal>),
    Tensor(Rc<Tensor>),
    /// A tensor recorded on an autodiff tape (spec §8).
    Tracked(Rc<Tracked>),
    Tape(Rc<TapeVal>),
    /// A float format of the formats lab (spec §13).
    Format(Rc<twill_tensor::lab::Format>),
    /// A figure (spec §12.3): a handle, so every name bound to it draws on
    /// the same figure.
    Figure(Rc<RefCell<twill_plot::Figure>>),
    /// A global whose definition has not run yet.
    Undefined,
}

const _: () = assert!(std::mem::size_of::<Value>() == 16);

/// An evaluated index item.
pub(crate) enum IndexKey {
    Single(Value, Span),
    Slice(
        Option<(Value, Span)>,
        Option<(Value, Span)>,
        Option<(Value, Span)>,
    ),
    /// `...` (spec §11.1).
    Ellipsis,
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

pub struct Closure {
    pub func: Rc<Function>,
    pub captures: Vec<Value>,
    /// Where the compiled engine keeps the function's compiled body (an
    /// index into its table, `u32::MAX` until the closure's first call),
    /// so a call finds it without a lookup.
    pub(crate) code: std::cell::Cell<u32>,
}

impl Closure {
    pub fn new(func: Rc<Function>, captures: Vec<Value>) -> Closure {
        Closure {
            func,
            captures,
            code: std::cell::Cell::new(u32::MAX),
        }
    }
}

impl std::fmt::Debug for Closure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Closure")
            .field("func", &self.func)
            .field("captures", &self.captures)
            .finish()
    }
}

/// A Dict's key: an Int, Str, Bool or DType (spec §10.2).
///
/// `repr(u64)` for the reason `Value` has it: a key is made on every
/// lookup and copied as two words; with the default layout an Int key's
/// copies were a byte and a misaligned word whose loads waited on the
/// stores before them (a third of a `d.get(k, 0)`'s time in perf).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum DictKey {
    Int(i64),
    Str(Rc<Text>),
    Bool(bool),
    DType(DType),
}

impl DictKey {
    /// The key a value makes; the error names the type that cannot be one.
    pub fn of(v: &Value) -> Result<DictKey, String> {
        DictKey::try_of(v).ok_or_else(|| {
            format!(
                "a Dict key is an Int, Str, Bool or DType, not `{}`",
                v.type_name()
            )
        })
    }

    /// The key a value makes, if it makes one (no error message built).
    #[inline]
    pub fn try_of(v: &Value) -> Option<DictKey> {
        match v {
            Value::Int(i) => Some(DictKey::Int(*i)),
            Value::Str(s) => Some(DictKey::Str(s.clone())),
            Value::Bool(b) => Some(DictKey::Bool(*b)),
            Value::DType(d) => Some(DictKey::DType(*d)),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            DictKey::Int(i) => Value::Int(*i),
            DictKey::Str(s) => Value::Str(s.clone()),
            DictKey::Bool(b) => Value::Bool(*b),
            DictKey::DType(d) => Value::DType(*d),
        }
    }
}

/// The entries of a Dict in insertion order, with a hash index: lookup,
/// insertion and removal are O(1) (a removed entry leaves a hole, and the
/// holes are squeezed out once they are half the entries). The index
/// holds only each live entry's position (4 bytes; the key is compared in
/// `entries`), as CPython's dict does: a large Dict's index is a sixth of
/// a map from keys, so more of it stays in the cache.
#[derive(Clone, Debug, Default)]
pub struct DictVal {
    entries: Vec<Option<(DictKey, Value)>>,
    index: hashbrown::HashTable<u32>,
    /// The position of the key found last: tried before the index, so the
    /// second lookup of `d[k] = d.get(k, 0) + 1` (or of `d.contains(k)`
    /// then `d[k]`) is one comparison. Only a hint: a position whose entry
    /// holds the key is that key's position (keys are unique), whatever
    /// happened since, and any other position falls back to the index.
    hint: std::cell::Cell<u32>,
}

/// The hash of a Dict key.
fn key_hash(k: &DictKey) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = KeyHasher::default();
    k.hash(&mut h);
    h.finish()
}

/// The hash of the key of entry `i` (for the index when it grows).
fn entry_hash(entries: &[Option<(DictKey, Value)>], i: u32) -> u64 {
    match entries.get(i as usize) {
        Some(Some((k, _))) => key_hash(k),
        _ => 0,
    }
}

/// Whether entry `i` holds the key `k`.
fn entry_is(entries: &[Option<(DictKey, Value)>], i: u32, k: &DictKey) -> bool {
    matches!(entries.get(i as usize), Some(Some((key, _))) if key == k)
}

/// The Dict index's hash (FxHash's multiply-and-rotate): a key is an Int,
/// a short Str, a Bool or a DType, and SipHash, the standard map's
/// default, spent a third of a Dict-heavy program's time hashing them.
/// Hash flooding is no concern for a program's own data; the order of a
/// Dict is its insertion order, never the hash's, so nothing printed
/// depends on it.
#[derive(Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in chunks.by_ref() {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn write_isize(&mut self, i: isize) {
        self.add(i as u64);
    }
}

impl DictVal {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The position in `entries` of the key `k` whose hash is `h`.
    /// The position of `k`, or the hash to add it with.
    fn find(&self, k: &DictKey) -> Result<usize, u64> {
        let hint = self.hint.get();
        if entry_is(&self.entries, hint, k) {
            return Ok(hint as usize);
        }
        let h = key_hash(k);
        let entries = &self.entries;
        match self.index.find(h, |&i| entry_is(entries, i, k)) {
            Some(&i) => {
                self.hint.set(i);
                Ok(i as usize)
            }
            None => Err(h),
        }
    }

    pub fn get(&self, k: &DictKey) -> Option<&Value> {
        let i = self.find(k).ok()?;
        self.entries.get(i)?.as_ref().map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, k: &DictKey) -> Option<&mut Value> {
        let i = self.find(k).ok()?;
        self.entries.get_mut(i)?.as_mut().map(|(_, v)| v)
    }

    /// Appends the new key `k` (hash `h`) with the value `v`: its position.
    /// Fails only when memory runs out.
    fn push(&mut self, h: u64, k: DictKey, v: Value) -> Result<usize, String> {
        let n = self.len();
        let out_of_memory = || format!("cannot grow a Dict of {n} entries: out of memory");
        let at = self.entries.len();
        let at32 = u32::try_from(at).map_err(|_| out_of_memory())?;
        self.entries.try_reserve(1).map_err(|_| out_of_memory())?;
        let entries = &self.entries;
        self.index
            .try_reserve(1, |&i| entry_hash(entries, i))
            .map_err(|_| out_of_memory())?;
        self.entries.push(Some((k, v)));
        let entries = &self.entries;
        self.index.insert_unique(h, at32, |&i| entry_hash(entries, i));
        self.hint.set(at32);
        Ok(at)
    }

    /// Sets `k` to `v`: an existing key keeps its place, a new one goes
    /// last. Fails only when memory runs out.
    pub fn insert(&mut self, k: DictKey, v: Value) -> Result<(), String> {
        match self.find(&k) {
            Ok(i) => {
                if let Some(Some((_, slot))) = self.entries.get_mut(i) {
                    *slot = v;
                }
                Ok(())
            }
            Err(h) => self.push(h, k, v).map(|_| ()),
        }
    }

    /// The value of `k`, added as Unit when it is missing (for the caller
    /// to set): one lookup where `get_mut` then `insert` would take three.
    pub fn slot(&mut self, k: &DictKey) -> Result<&mut Value, String> {
        let i = match self.find(k) {
            Ok(i) => i,
            Err(h) => self.push(h, k.clone(), Value::Unit)?,
        };
        match self.entries.get_mut(i) {
            Some(Some((_, v))) => Ok(v),
            _ => Err("a Dict lost a key".into()),
        }
    }

    /// Removes `k`, giving its value.
    pub fn remove(&mut self, k: &DictKey) -> Option<Value> {
        let entries = &self.entries;
        let (i, _) = self
            .index
            .find_entry(key_hash(k), |&i| entry_is(entries, i, k))
            .ok()?
            .remove();
        let (_, v) = self.entries.get_mut(i as usize)?.take()?;
        if self.entries.len() > 16 && self.index.len() * 2 < self.entries.len() {
            self.entries.retain(Option::is_some);
            self.index.clear();
            let entries = &self.entries;
            for (i, e) in entries.iter().enumerate() {
                if let (Some((k, _)), Ok(i)) = (e, u32::try_from(i)) {
                    self.index
                        .insert_unique(key_hash(k), i, |&j| entry_hash(entries, j));
                }
            }
        }
        Some(v)
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&DictKey, &Value)> {
        self.entries.iter().flatten().map(|(k, v)| (k, v))
    }
}

#[derive(Clone, Debug)]
pub struct StructVal {
    pub def: Rc<StructDef>,
    pub fields: Vec<Value>,
}

impl Value {
    /// The tensor a tensor value holds, under any tapes that record it.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        base(self)
    }

    /// Whether this is a tensor (recorded on a tape or not).
    pub fn is_tensor(&self) -> bool {
        matches!(self, Value::Tensor(_) | Value::Tracked(_))
    }

    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Rc::new(Text::new(s.into())))
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
            Value::Dict(_) => "Dict".into(),
            Value::Tuple(items) => {
                let names: Vec<String> = items.iter().map(Value::type_name).collect();
                let comma = if names.len() == 1 { "," } else { "" };
                format!("({}{comma})", names.join(", "))
            }
            Value::Range(_) => "Range".into(),
            Value::Func(_) => "Fn".into(),
            Value::Ok(_) | Value::Err(_) => "Res".into(),
            Value::Some(_) | Value::None => "Opt".into(),
            Value::Struct(s) => s.def.name.to_string(),
            Value::Tensor(t) => format!("Tensor[{}]", t.dtype()),
            Value::Tracked(_) => format!("Tensor[{}]", self.as_tensor().map_or(DType::F64, |t| t.dtype())),
            Value::Tape(_) => "Tape".into(),
            Value::Format(_) => "Format".into(),
            Value::Figure(_) => "Figure".into(),
            Value::Undefined => "undefined".into(),
        }
    }
}

/// A rank-0 tensor holding an integral value becomes that Int; anything
/// else is left for the caller's own type error.
pub(crate) fn int_like(v: &mut Value) {
    if let Value::Tensor(t) = v {
        if t.ndim() == 0 {
            if let Ok(s) = t.item() {
                let x = s.to_f64();
                if x.fract() == 0.0 && x.abs() < 9.2e18 {
                    *v = Value::Int(x as i64);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// What a tape records (spec §8). The operations on these live in
// `autodiff`; the records are values, so they live here, below everything.

thread_local! {
    pub(crate) static NEXT_NODE: Cell<u64> = const { Cell::new(1) };
    static NEXT_LEVEL: Cell<u64> = const { Cell::new(1) };
}

pub(crate) fn next_id(c: &'static std::thread::LocalKey<Cell<u64>>) -> u64 {
    c.with(|n| {
        let v = n.get();
        n.set(v + 1);
        v
    })
}

/// A tape: its level and the leaves watched on it, in watch order.
#[derive(Debug)]
pub struct TapeVal {
    pub level: u64,
    pub(crate) leaves: RefCell<Vec<Rc<Node>>>,
}

impl Default for TapeVal {
    fn default() -> Self {
        Self::new()
    }
}

impl TapeVal {
    pub fn new() -> TapeVal {
        TapeVal {
            level: next_id(&NEXT_LEVEL),
            leaves: RefCell::new(Vec::new()),
        }
    }
}

/// A tensor recorded on a tape: its node, and its value one level down
/// (a plain tensor, or a value tracked by an outer tape).
#[derive(Debug)]
pub struct Tracked {
    pub node: Rc<Node>,
    pub primal: Value,
}

/// An operation as the backward pass needs to know it.
#[derive(Clone, Debug)]
pub(crate) enum AdOp {
    /// An operation of the registry.
    Table(Op),
    Bin(BinOp),
    Cast,
    Index(Vec<IndexItem>),
    /// `x.T`.
    Reverse,
    /// The adjoint of `index_select` along an axis; args: src, idx.
    IndexAdd(usize),
    /// The adjoint of `gather` along an axis; args: src, idx.
    ScatterAdd(usize),
    /// `x[items] = v` (spec §11.2); args: x, v. With a repeated element,
    /// which selected elements are their element's last write (the only
    /// ones whose value survives).
    Assign(Vec<IndexItem>, Option<Rc<Vec<bool>>>),
    /// `x[items] += v`, every occurrence of a repeated element added (the
    /// adjoint of indexing); args: x, v.
    Accumulate(Vec<IndexItem>),
    /// Result `.1` of a registry operation with several results (`qr`,
    /// `eigh`, `svd`, `slogdet`), the operation's arguments as args; `.2`
    /// holds every primal result, which the vjp rule needs.
    Part(Op, usize, Rc<Vec<Value>>),
}

#[derive(Debug)]
pub(crate) enum Kind {
    Leaf,
    Op {
        op: AdOp,
        /// The arguments by parameter (primals one level down), then the
        /// extra positional ones of a variadic operation.
        args: Vec<Option<Value>>,
        out: Value,
    },
}

/// Where a parent sits among a node's arguments: the argument, and the
/// element for an `Arr[Tensor]` argument (0 otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub arg: usize,
    pub elem: usize,
}

#[derive(Debug)]
pub struct Node {
    pub(crate) id: u64,
    pub(crate) level: u64,
    pub(crate) kind: Kind,
    pub(crate) parents: Vec<(Slot, Rc<Node>)>,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
}

impl Drop for Node {
    /// Long chains of nodes (a training loop that keeps a tracked value
    /// across many steps) would otherwise drop recursively.
    fn drop(&mut self) {
        let mut stack: Vec<Rc<Node>> = self.parents.drain(..).map(|(_, n)| n).collect();
        while let Some(n) = stack.pop() {
            if let Ok(mut inner) = Rc::try_unwrap(n) {
                stack.extend(inner.parents.drain(..).map(|(_, n)| n));
            }
        }
    }
}

/// The plain tensor under any number of tapes.
pub(crate) fn base(v: &Value) -> Option<&Tensor> {
    let mut v = v;
    loop {
        match v {
            Value::Tensor(t) => return Some(t),
            Value::Tracked(tr) => v = &tr.primal,
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(d: &DictVal) -> Vec<i64> {
        d.iter()
            .map(|(k, _)| match k {
                DictKey::Int(i) => *i,
                other => panic!("not an Int key: {other:?}"),
            })
            .collect()
    }

    /// Insertion order, lookups, replacement in place, removal (holes
    /// squeezed out once they are half the entries) and re-insertion,
    /// checked against a plain list of pairs on 3,000 colliding keys.
    #[test]
    fn the_last_lookups_hint_never_answers_for_another_key() {
        // Each lookup leaves its position as the hint for the next; remove
        // that key, compact the entries under it, bring the key back, and
        // every lookup must still find what a plain map holds.
        let mut d = DictVal::default();
        let mut model = std::collections::BTreeMap::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for step in 0..20_000i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = (x % 97) as i64;
            let key = DictKey::Int(k);
            match x % 5 {
                0 => {
                    assert_eq!(
                        d.remove(&key).is_some(),
                        model.remove(&k).is_some(),
                        "step {step}"
                    );
                }
                1 => {
                    *d.slot(&key).unwrap() = Value::Int(step);
                    model.insert(k, step);
                }
                2 => {
                    if let Some(v) = d.get_mut(&key) {
                        *v = Value::Int(-step);
                    }
                    if let Some(v) = model.get_mut(&k) {
                        *v = -step;
                    }
                }
                _ => {
                    d.insert(key.clone(), Value::Int(step)).unwrap();
                    model.insert(k, step);
                }
            }
            // The key just used, then a neighbour: a hit on the hint, then
            // a lookup the hint must not answer.
            for probe in [k, (k + 1) % 97] {
                let got = match d.get(&DictKey::Int(probe)) {
                    Some(Value::Int(v)) => Some(*v),
                    _ => None,
                };
                assert_eq!(got, model.get(&probe).copied(), "step {step}, key {probe}");
            }
        }
        assert_eq!(d.len(), model.len());
    }

    #[test]
    fn a_dict_keeps_insertion_order_through_removals() {
        let mut d = DictVal::default();
        let mut model: Vec<(i64, i64)> = Vec::new();
        for i in 0..3000i64 {
            // Shifted left by 12 bits: the keys' hashes share their low
            // bits, so they collide in the index and the key comparison
            // decides.
            let k = ((i * 7919) % 3001) << 12;
            d.insert(DictKey::Int(k), Value::Int(i)).unwrap();
            model.push((k, i));
        }
        // Replacing keeps the place.
        d.insert(DictKey::Int(model[10].0), Value::Int(-1)).unwrap();
        model[10].1 = -1;
        // Remove two thirds, which compacts the entries more than once.
        for (n, (k, _)) in model.clone().iter().enumerate() {
            if n % 3 != 0 {
                assert!(d.remove(&DictKey::Int(*k)).is_some());
            }
        }
        model = model
            .into_iter()
            .enumerate()
            .filter(|(n, _)| n % 3 == 0)
            .map(|(_, p)| p)
            .collect();
        assert!(d.remove(&DictKey::Int(model[1].0 + 100_000)).is_none());
        // New keys go last; a removed key comes back last.
        d.insert(DictKey::Int(-5), Value::Int(5)).unwrap();
        model.push((-5, 5));
        assert_eq!(d.len(), model.len());
        assert_eq!(keys(&d), model.iter().map(|p| p.0).collect::<Vec<_>>());
        for (k, v) in &model {
            assert!(
                matches!(d.get(&DictKey::Int(*k)), Some(Value::Int(x)) if x == v),
                "key {k}"
            );
        }
        // `slot` finds an existing key and adds a missing one as Unit.
        *d.slot(&DictKey::Int(-5)).unwrap() = Value::Int(6);
        assert!(matches!(d.get(&DictKey::Int(-5)), Some(Value::Int(6))));
        assert!(matches!(d.slot(&DictKey::Int(424242)).unwrap(), Value::Unit));
        assert_eq!(keys(&d).last(), Some(&424242));
        // Keys of different kinds with equal payloads stay apart.
        let n = d.len();
        d.insert(DictKey::Bool(true), Value::Int(1)).unwrap();
        d.insert(DictKey::Str(Rc::new("1".into())), Value::Int(2))
            .unwrap();
        assert_eq!(d.len(), n + 2);
        assert_eq!(d.get(&DictKey::Int(1)).is_some(), model.iter().any(|p| p.0 == 1));
        assert!(matches!(d.get(&DictKey::Bool(true)), Some(Value::Int(1))));
        assert!(matches!(
            d.get(&DictKey::Str(Rc::new("1".into()))),
            Some(Value::Int(2))
        ));
    }
}
