//! The case runner of `testdata/vectors/indexing.jsonl` (NumPy indexing
//! and assignment, spec §11.1–11.2), shared by the native kernels' test
//! (`tests/indexing.rs`) and the reference runtime's
//! (`crates/eval/tests/reference_indexing.rs`).

use std::path::Path;

use serde_json::Value as J;
use twill_tensor::index::IndexItem;
use twill_tensor::ops::{BinaryOp, Operand};
use twill_tensor::{DType, Tensor, TensorError};

/// `x[items] = v` or `x[items] op= v`, as `ops::assign::assign`.
pub type AssignFn = fn(&mut Tensor, &[IndexItem], Operand, Option<BinaryOp>) -> Result<(), TensorError>;

/// What runs the cases: the native kernels, or another backend with their
/// signatures (the self-hosted reference runtime, spec §16).
pub struct Backend {
    pub index: fn(&Tensor, &[IndexItem]) -> Result<Tensor, TensorError>,
    pub assign: AssignFn,
}

fn shape_of(j: &J) -> Vec<usize> {
    j["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

fn f64_tensor(j: &J) -> Tensor {
    let data: Vec<f64> = j["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|v| v.as_f64().expect("number"))
        .collect();
    Tensor::from_vec(data, shape_of(j)).expect("tensor")
}

fn item(j: &J) -> IndexItem {
    match j {
        J::String(s) if s == "none" => IndexItem::NewAxis,
        J::String(s) if s == "ellipsis" => IndexItem::Ellipsis,
        J::Object(o) if o.contains_key("int") => IndexItem::Single(o["int"].as_i64().expect("int")),
        J::Object(o) if o.contains_key("slice") => {
            let b = o["slice"].as_array().expect("slice");
            IndexItem::Slice(b[0].as_i64(), b[1].as_i64(), b[2].as_i64())
        }
        J::Object(o) if o.contains_key("idx") => {
            let data: Vec<i32> = o["idx"]["data"]
                .as_array()
                .expect("data")
                .iter()
                .map(|v| v.as_i64().expect("int") as i32)
                .collect();
            IndexItem::Tensor(Tensor::from_vec(data, shape_of(&o["idx"])).expect("idx"))
        }
        J::Object(o) if o.contains_key("mask") => {
            let data: Vec<bool> = o["mask"]["data"]
                .as_array()
                .expect("data")
                .iter()
                .map(|v| v.as_bool().expect("bool"))
                .collect();
            IndexItem::Tensor(Tensor::from_vec(data, shape_of(&o["mask"])).expect("mask"))
        }
        other => panic!("unknown item {other}"),
    }
}

fn values(t: &Tensor) -> (Vec<usize>, Vec<f64>) {
    (t.shape().to_vec(), t.to_f64_vec().expect("values"))
}

/// Runs one case; `Err` describes a mismatch.
fn run(c: &J, b: &Backend) -> Result<(), String> {
    let dt = DType::from_name(c["dtype"].as_str().expect("dtype")).expect("dtype");
    let mut x = f64_tensor(&c["x"]).cast(dt).expect("cast");
    let items: Vec<IndexItem> = c["sub"].as_array().expect("sub").iter().map(item).collect();
    let op = c["op"].as_str().expect("op");
    let expect = &c["expect"];
    let got = if op == "get" {
        (b.index)(&x, &items).map(|t| values(&t))
    } else {
        let v = &c["value"];
        let vt;
        let operand = match v.get("scalar") {
            Some(s) => Operand::Int(s.as_i64().expect("scalar")),
            None => {
                vt = f64_tensor(v).cast(dt).expect("value in x's dtype");
                Operand::Tensor(&vt)
            }
        };
        let bop = match op {
            "set" => None,
            "add" => Some(BinaryOp::Add),
            "sub" => Some(BinaryOp::Sub),
            "mul" => Some(BinaryOp::Mul),
            other => panic!("unknown op {other}"),
        };
        (b.assign)(&mut x, &items, operand, bop).map(|()| values(&x))
    };
    match (got, expect.get("error").is_some()) {
        (Err(_), true) => Ok(()),
        (Ok(g), true) => Err(format!("NumPy refuses this, twill gave {g:?}")),
        (Err(e), false) => Err(format!("twill refused it: {}", e.0)),
        (Ok(g), false) => {
            let want = values(&f64_tensor(expect));
            if g == want {
                Ok(())
            } else {
                Err(format!("got {g:?}, NumPy {want:?}"))
            }
        }
    }
}

/// Runs every case of `testdata/vectors/indexing.jsonl` on `b`; fails
/// listing the disagreements, else returns the number of cases.
pub fn run_all(b: &Backend) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors/indexing.jsonl");
    let text = std::fs::read_to_string(&path).expect("indexing.jsonl (run tools/oracle/indexing.py)");
    let mut failures = Vec::new();
    let mut n = 0;
    for (lineno, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let c: J = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", lineno + 1));
        n += 1;
        if let Err(m) = run(&c, b) {
            failures.push(format!("line {}: {} {}: {m}", lineno + 1, c["op"], c["sub"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} cases disagree with NumPy:\n{}",
        failures.len(),
        failures.iter().take(30).cloned().collect::<Vec<_>>().join("\n")
    );
    n
}
