//! Linear algebra (spec §11.4) against `numpy.linalg`: every case of
//! `testdata/vectors/linalg.jsonl` (made by `tools/oracle/linalg.py`) is
//! run, its residuals are checked against the bounds docs/language.md
//! documents ("Linear algebra"), and it is compared with NumPy's answer
//! where that answer is unique (solutions within a condition-scaled bound,
//! singular values, eigenvalues, ranks, errors). Factorisations differ from
//! LAPACK's in rounding and in the signs of vectors, so q, u, v are only
//! checked through sign-invariant quantities. The suite runs on a 1-thread
//! and a 4-thread pool and both must give the same bits; a separate test
//! runs batches on 1, 2 and 7 threads and compares bits.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::wildcard_enum_match_arm)]
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
#![allow(clippy::needless_range_loop)]

use std::path::Path;

use serde_json::Value as J;
use twill_tensor::convert::Scalar;
use twill_tensor::ops::{self, Arg, Op, Out};
use twill_tensor::storage::Storage;
use twill_tensor::{DType, Tensor};

/// The constant of every residual bound: a residual r of an operation on
/// matrices whose larger side is N, in a dtype with unit roundoff eps,
/// must satisfy r ≤ C · N · eps (docs/language.md).
const C: f64 = 16.0;

fn parse_tensor(j: &J) -> Tensor {
    let dt = DType::from_name(j["t"].as_str().unwrap()).unwrap();
    let shape: Vec<usize> = j["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let bits: Vec<Scalar> = j["bits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| Scalar::from_bits(dt, u64::from_str_radix(b.as_str().unwrap(), 16).unwrap()))
        .collect();
    Tensor::from_storage(Storage::from_scalars(dt, &bits).unwrap(), shape).unwrap()
}

fn f64_of(j: &J) -> f64 {
    f64::from_bits(u64::from_str_radix(j.as_str().unwrap(), 16).unwrap())
}

/// A batch of matrices in f64, row-major.
#[derive(Clone, Debug)]
struct M {
    lead: Vec<usize>,
    r: usize,
    c: usize,
    v: Vec<f64>,
}

impl M {
    fn of(t: &Tensor) -> M {
        let s = t.shape();
        let v = t.to_f64_vec().unwrap();
        match s.len() {
            0 => M {
                lead: vec![],
                r: 1,
                c: 1,
                v,
            },
            1 => M {
                lead: vec![],
                r: s[0],
                c: 1,
                v,
            },
            _ => M {
                lead: s[..s.len() - 2].to_vec(),
                r: s[s.len() - 2],
                c: s[s.len() - 1],
                v,
            },
        }
    }
    fn count(&self) -> usize {
        self.lead.iter().product()
    }
    fn mat(&self, b: usize) -> Vec<Vec<f64>> {
        let o = b * self.r * self.c;
        (0..self.r)
            .map(|i| self.v[o + i * self.c..o + (i + 1) * self.c].to_vec())
            .collect()
    }
}

type Mat = Vec<Vec<f64>>;

fn dims(a: &Mat) -> (usize, usize) {
    (a.len(), a.first().map_or(0, |r| r.len()))
}
fn mm(a: &Mat, b: &Mat) -> Mat {
    let (m, k) = dims(a);
    let n = dims(b).1;
    let mut out = vec![vec![0.0; n]; m];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                out[i][j] += a[i][p] * b[p][j];
            }
        }
    }
    out
}
fn tr(a: &Mat) -> Mat {
    let (m, n) = dims(a);
    (0..n).map(|j| (0..m).map(|i| a[i][j]).collect()).collect()
}
fn sub(a: &Mat, b: &Mat) -> Mat {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p - q).collect())
        .collect()
}
fn fro(a: &Mat) -> f64 {
    a.iter().flatten().map(|x| x * x).sum::<f64>().sqrt()
}
fn eye(n: usize) -> Mat {
    (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect()
}
fn eps(d: DType) -> f64 {
    if d == DType::F64 {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    }
}

/// Checks `r ≤ bound` (NaN fails), naming the quantity.
fn within(what: &str, r: f64, bound: f64) -> Result<(), String> {
    if r <= bound {
        Ok(())
    } else {
        Err(format!("{what}: {r:e} exceeds the bound {bound:e}"))
    }
}

fn run(op: Op, args: &[Tensor]) -> Result<Out, String> {
    let slots = ops::bind(op, args.iter().cloned().map(Arg::Tensor).collect(), vec![]).map_err(|e| e.0)?;
    ops::call(op, slots).map_err(|e| e.message)
}

fn outs(o: Out) -> Vec<Tensor> {
    match o {
        Out::Tensor(t) => vec![t],
        Out::Tensors(ts) | Out::Tuple(ts) => ts,
        Out::Bool(b) => panic!("a linear algebra op gave the Bool {b}"),
    }
}

fn check_case(c: &J) -> Result<Vec<Tensor>, String> {
    let name = c["op"].as_str().unwrap();
    let op = Op::from_name(name).ok_or("no such op")?;
    let args: Vec<Tensor> = c["args"].as_array().unwrap().iter().map(parse_tensor).collect();
    let cond = f64_of(&c["cond"]);
    let got = run(op, &args);
    let expect = &c["expect"];
    if let Some(msg) = expect.get("error").and_then(|m| m.as_str()) {
        return match got {
            Err(e) if e.contains(msg) => Ok(vec![]),
            Err(e) => Err(format!("error {e:?} does not mention {msg:?}")),
            Ok(_) => Err(format!("expected an error mentioning {msg:?}, got a result")),
        };
    }
    let got = outs(got.map_err(|e| format!("unexpected error: {e}"))?);
    let want: Vec<Tensor> = match expect.get("ts") {
        Some(ts) => ts.as_array().unwrap().iter().map(parse_tensor).collect(),
        None => vec![parse_tensor(expect)],
    };
    if got.len() != want.len() {
        return Err(format!("{} results, NumPy has {}", got.len(), want.len()));
    }
    for (g, w) in got.iter().zip(&want) {
        if g.shape() != w.shape() || g.dtype() != w.dtype() {
            return Err(format!(
                "result {} {:?}, NumPy's {} {:?}",
                g.dtype(),
                g.shape(),
                w.dtype(),
                w.shape()
            ));
        }
    }
    // The dtype the registry's rule promises.
    let inputs: Vec<ops::dtypes::Input> = args
        .iter()
        .map(|t| ops::dtypes::Input::Tensor(Some(t.dtype())))
        .collect();
    if ops::dtypes::result(op, &inputs) != Some(got[0].dtype()) {
        return Err(format!("dtype {} differs from the rule's", got[0].dtype()));
    }
    let e = eps(got[0].dtype());
    let a = M::of(&args[0]);
    let nn = a.r.max(a.c).max(1) as f64;
    let tol = C * nn * e;
    let kind = c["kind"].as_str().unwrap_or("");
    // A condition-scaled bound on the distance to NumPy's answer (both
    // answers are within C·N·eps·cond of the exact one).
    let fwd = |cnd: f64| 2.0 * tol * cnd.max(1.0);
    match op {
        Op::Solve | Op::Lstsq => {
            let x = M::of(&got[0]);
            let xn = M::of(&want[0]);
            let b = M::of(&args[1]);
            let vector = args[1].ndim() == 1;
            // Broadcast a and b's batches to x's, by flat index with the
            // NumPy rules (the generator uses few shapes: equal, [2,1] vs
            // [n], or a shared vector).
            let xs = got[0].shape().to_vec();
            let lead = if vector {
                xs[..xs.len() - 1].to_vec()
            } else {
                xs[..xs.len() - 2].to_vec()
            };
            let total: usize = lead.iter().product();
            for i in 0..total {
                let ai = a.mat(batch_index(&lead, &a.lead, i));
                let bi = if vector {
                    b.v.iter().map(|&v| vec![v]).collect::<Mat>()
                } else {
                    b.mat(batch_index(&lead, &b.lead, i))
                };
                let (xi, xni) = if vector {
                    let n = *xs.last().unwrap();
                    (
                        x.v[i * n..(i + 1) * n].iter().map(|&v| vec![v]).collect::<Mat>(),
                        xn.v[i * n..(i + 1) * n].iter().map(|&v| vec![v]).collect::<Mat>(),
                    )
                } else {
                    (x.mat(i), xn.mat(i))
                };
                let ax = mm(&ai, &xi);
                let r = sub(&ax, &bi);
                if op == Op::Solve {
                    // Backward error of a solve: ‖Ax − b‖ / (‖A‖‖x‖ + ‖b‖).
                    let den = fro(&ai) * fro(&xi) + fro(&bi);
                    if den > 0.0 {
                        within("solve backward error", fro(&r) / den, tol)?;
                    }
                    let scale = fro(&xni).max(f64::MIN_POSITIVE);
                    within("solve vs NumPy", fro(&sub(&xi, &xni)) / scale, fwd(cond))?;
                } else {
                    // Least squares: the normal-equations residual
                    // ‖Aᵀ(Ax − b)‖ / (‖A‖ (‖A‖‖x‖ + ‖b‖)), and NumPy's
                    // solution within cond + cond²·‖r‖/(‖A‖‖x‖).
                    let na = fro(&ai);
                    let den = na * (na * fro(&xi) + fro(&bi));
                    if den > 0.0 {
                        let ne = mm(&tr(&ai), &r);
                        within("lstsq normal equations", fro(&ne) / den / cond.max(1.0), tol)?;
                    }
                    let scale = fro(&xni).max(f64::MIN_POSITIVE);
                    let rel_r = if na * fro(&xni) > 0.0 {
                        fro(&r) / (na * fro(&xni))
                    } else {
                        0.0
                    };
                    let bound = fwd(cond) * (1.0 + cond * rel_r);
                    if fro(&xni) > 0.0 || fro(&xi) > 0.0 {
                        within("lstsq vs NumPy", fro(&sub(&xi, &xni)) / scale, bound)?;
                    }
                }
            }
        }
        Op::Inv => {
            let x = M::of(&got[0]);
            let xn = M::of(&want[0]);
            for i in 0..x.count() {
                let (ai, xi) = (a.mat(i), x.mat(i));
                let r = sub(&mm(&ai, &xi), &eye(a.r));
                within(
                    "inv residual ‖AX − I‖/(‖A‖‖X‖)",
                    fro(&r) / (fro(&ai) * fro(&xi)).max(1e-300),
                    tol,
                )?;
                let scale = fro(&xn.mat(i)).max(f64::MIN_POSITIVE);
                within("inv vs NumPy", fro(&sub(&xi, &xn.mat(i))) / scale, fwd(cond))?;
            }
        }
        Op::Det | Op::Slogdet => {
            let count = a.count();
            let (d, dn): (Vec<f64>, Vec<f64>) = if op == Op::Det {
                (got[0].to_f64_vec().unwrap(), want[0].to_f64_vec().unwrap())
            } else {
                let (s, l) = (got[0].to_f64_vec().unwrap(), got[1].to_f64_vec().unwrap());
                let (sn, ln) = (want[0].to_f64_vec().unwrap(), want[1].to_f64_vec().unwrap());
                for i in 0..count {
                    if sn[i] == 0.0 || s[i] == 0.0 {
                        // Exactly singular: both must say so.
                        if !(s[i] == 0.0 && sn[i] == 0.0 && l[i] == f64::NEG_INFINITY) {
                            return Err(format!(
                                "slogdet ({}, {}) vs NumPy ({}, {})",
                                s[i], l[i], sn[i], ln[i]
                            ));
                        }
                        continue;
                    }
                    if s[i] != sn[i] {
                        return Err(format!("slogdet sign {} vs NumPy's {}", s[i], sn[i]));
                    }
                    within("logabsdet vs NumPy", (l[i] - ln[i]).abs(), fwd(cond))?;
                }
                (vec![], vec![])
            };
            for i in 0..d.len() {
                if kind == "singular" {
                    // Exactly singular: an exact zero pivot gives 0 exactly.
                    if d[i] != 0.0 || dn[i] != 0.0 {
                        return Err(format!("det of a singular matrix: {} (NumPy {})", d[i], dn[i]));
                    }
                    continue;
                }
                within(
                    "det vs NumPy (relative)",
                    (d[i] - dn[i]).abs() / dn[i].abs().max(f64::MIN_POSITIVE),
                    fwd(cond),
                )?;
            }
        }
        Op::Cholesky => {
            let l = M::of(&got[0]);
            let ln = M::of(&want[0]);
            for i in 0..l.count() {
                let (ai, li) = (a.mat(i), l.mat(i));
                for r in 0..a.r {
                    for c in r + 1..a.r {
                        if li[r][c] != 0.0 {
                            return Err("cholesky: L is not lower triangular".into());
                        }
                    }
                    if li[r][r] <= 0.0 {
                        return Err("cholesky: a diagonal element is not positive".into());
                    }
                }
                let r = sub(&mm(&li, &tr(&li)), &ai);
                within("cholesky ‖LLᵀ − A‖/‖A‖", fro(&r) / fro(&ai).max(1e-300), tol)?;
                let scale = fro(&ln.mat(i)).max(f64::MIN_POSITIVE);
                within("cholesky vs NumPy", fro(&sub(&li, &ln.mat(i))) / scale, fwd(cond))?;
            }
        }
        Op::Qr => {
            let (q, r) = (M::of(&got[0]), M::of(&got[1]));
            let rn = M::of(&want[1]);
            for i in 0..a.count() {
                let (ai, qi, ri) = (a.mat(i), q.mat(i), r.mat(i));
                for x in 0..r.r {
                    for y in 0..x.min(r.c) {
                        if ri[x][y] != 0.0 {
                            return Err("qr: R is not upper triangular".into());
                        }
                    }
                }
                let na = fro(&ai);
                if q.c > 0 {
                    within(
                        "qr ‖QR − A‖/‖A‖",
                        fro(&sub(&mm(&qi, &ri), &ai)) / na.max(1e-300),
                        tol,
                    )?;
                    within("qr ‖QᵀQ − I‖", fro(&sub(&mm(&tr(&qi), &qi), &eye(q.c))), tol)?;
                }
                if cond.is_finite() && kind != "rank" {
                    // Full rank: R is unique up to the signs of its rows.
                    let rni = rn.mat(i);
                    let mut worst: f64 = 0.0;
                    for x in 0..r.r {
                        for y in 0..r.c {
                            worst = worst.max((ri[x][y].abs() - rni[x][y].abs()).abs());
                        }
                    }
                    within(
                        "qr |R| vs NumPy's, relative to ‖A‖",
                        worst / na.max(1e-300),
                        fwd(cond),
                    )?;
                }
            }
        }
        Op::Eigh => {
            let (w, v) = (M::of(&got[0]), M::of(&got[1]));
            let wn = want[0].to_f64_vec().unwrap();
            let n = a.r;
            for i in 0..a.count() {
                // The symmetric matrix the lower triangle describes.
                let mut ai = a.mat(i);
                for r in 0..n {
                    for c in r + 1..n {
                        ai[r][c] = ai[c][r];
                    }
                }
                let vi = v.mat(i);
                let wi = &w.v[i * n..(i + 1) * n];
                let na = fro(&ai);
                let mut vw = vi.clone();
                for r in 0..n {
                    for c in 0..n {
                        vw[r][c] *= wi[c];
                    }
                }
                within(
                    "eigh ‖AV − VΛ‖/‖A‖",
                    fro(&sub(&mm(&ai, &vi), &vw)) / na.max(1e-300),
                    tol,
                )?;
                within("eigh ‖VᵀV − I‖", fro(&sub(&mm(&tr(&vi), &vi), &eye(n))), tol)?;
                for j in 1..n {
                    if wi[j] < wi[j - 1] {
                        return Err("eigh: eigenvalues not ascending".into());
                    }
                }
                for j in 0..n {
                    within(
                        "eigh eigenvalue vs NumPy (Weyl: relative to ‖A‖)",
                        (wi[j] - wn[i * n + j]).abs() / na.max(1e-300),
                        2.0 * tol,
                    )?;
                }
            }
        }
        Op::Svd => {
            let (u, s, vh) = (M::of(&got[0]), M::of(&got[1]), M::of(&got[2]));
            let sn = want[1].to_f64_vec().unwrap();
            let k = a.r.min(a.c);
            for i in 0..a.count() {
                let (ai, ui, vi) = (a.mat(i), u.mat(i), vh.mat(i));
                let si = &s.v[i * k..(i + 1) * k];
                let na = fro(&ai);
                let smax = si.first().copied().unwrap_or(0.0);
                for j in 0..k {
                    if si[j] < 0.0 || (j > 0 && si[j] > si[j - 1]) {
                        return Err("svd: singular values not non-negative and descending".into());
                    }
                    within(
                        "svd singular value vs NumPy (relative to s_max)",
                        (si[j] - sn[i * k + j]).abs() / smax.max(1e-300),
                        2.0 * tol,
                    )?;
                }
                if k > 0 {
                    let mut us = ui.clone();
                    for r in 0..a.r {
                        for c in 0..k {
                            us[r][c] *= si[c];
                        }
                    }
                    within(
                        "svd ‖U S Vh − A‖/‖A‖",
                        fro(&sub(&mm(&us, &vi), &ai)) / na.max(1e-300),
                        tol,
                    )?;
                    within("svd ‖UᵀU − I‖", fro(&sub(&mm(&tr(&ui), &ui), &eye(k))), tol)?;
                    within("svd ‖Vh Vhᵀ − I‖", fro(&sub(&mm(&vi, &tr(&vi)), &eye(k))), tol)?;
                }
            }
        }
        Op::Pinv => {
            let x = M::of(&got[0]);
            let xn = M::of(&want[0]);
            for i in 0..a.count() {
                let (ai, xi) = (a.mat(i), x.mat(i));
                let na = fro(&ai);
                if a.r.min(a.c) > 0 && na > 0.0 {
                    let axa = mm(&mm(&ai, &xi), &ai);
                    within(
                        "pinv ‖AXA − A‖/‖A‖",
                        fro(&sub(&axa, &ai)) / na / cond.max(1.0),
                        tol,
                    )?;
                }
                let scale = fro(&xn.mat(i)).max(f64::MIN_POSITIVE);
                if fro(&xn.mat(i)) > 0.0 || fro(&xi) > 0.0 {
                    within("pinv vs NumPy", fro(&sub(&xi, &xn.mat(i))) / scale, fwd(cond))?;
                }
            }
        }
        Op::MatrixRank => {
            let (g, w) = (got[0].to_f64_vec().unwrap(), want[0].to_f64_vec().unwrap());
            if g != w {
                return Err(format!("rank {g:?}, NumPy's {w:?}"));
            }
        }
        other => return Err(format!("`{other}` is not a linear-algebra operation")),
    }
    Ok(got)
}

/// The flat batch index into `own` (broadcast to `lead`) of element `i` of
/// `lead`.
fn batch_index(lead: &[usize], own: &[usize], i: usize) -> usize {
    let mut idx = vec![0; lead.len()];
    let mut rest = i;
    for d in (0..lead.len()).rev() {
        idx[d] = rest % lead[d].max(1);
        rest /= lead[d].max(1);
    }
    let off = lead.len() - own.len();
    let mut flat = 0;
    for (d, &sz) in own.iter().enumerate() {
        flat = flat * sz + if sz == 1 { 0 } else { idx[off + d] };
    }
    flat
}

fn cases() -> Vec<J> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors/linalg.jsonl");
    let text = std::fs::read_to_string(path).expect("linalg.jsonl");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn bits(ts: &[Tensor]) -> Vec<Vec<u64>> {
    ts.iter()
        .map(|t| t.scalars().map(|s| s.to_bits()).collect())
        .collect()
}

#[test]
fn residuals_within_bounds_and_numpy_agrees_on_one_and_four_threads() {
    let cases = cases();
    let mut runs = Vec::new();
    for threads in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (results, failures): (Vec<_>, Vec<_>) = pool.install(|| {
            cases
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    check_case(c).map(|r| bits(&r)).map_err(|e| {
                        format!("case {} {} ({}, {}): {e}", i + 1, c["op"], c["kind"], c["note"])
                    })
                })
                .partition::<Vec<_>, _>(Result::is_ok)
        });
        if !failures.is_empty() {
            for f in failures.iter().take(40) {
                eprintln!("{}", f.as_ref().unwrap_err());
            }
            panic!(
                "{} of {} linalg cases failed on {threads} thread(s)",
                failures.len(),
                cases.len()
            );
        }
        runs.push(results.into_iter().map(Result::unwrap).collect::<Vec<_>>());
        eprintln!(
            "{} linalg cases within their bounds on {threads} thread(s)",
            cases.len()
        );
    }
    assert!(runs[0] == runs[1], "results differ between 1 and 4 threads");
    // Every linear-algebra operation has cases, and errors among them.
    for op in linalg_ops() {
        let n = cases.iter().filter(|c| c["op"] == op.name()).count();
        assert!(n >= 10, "`{op}` has only {n} cases");
    }
}

fn linalg_ops() -> Vec<Op> {
    Op::ALL
        .iter()
        .copied()
        .filter(|o| matches!(o.spec().rule, ops::Rule::Linalg(_)) || *o == Op::MatrixRank)
        .collect()
}

/// Larger batches, where the matrices are spread over rayon's threads:
/// the bits must not depend on the pool's size.
/// The batches of the thread test (tensors are not `Send`, so each pool
/// builds its own, from the same seed).
fn batch_calls() -> Vec<(Op, Vec<Tensor>)> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = |n: usize| -> Vec<f64> {
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    };
    let (b, n) = (23, 37);
    let a = Tensor::from_vec(rand(b * n * n), vec![b, n, n]).unwrap();
    let rhs = Tensor::from_vec(rand(b * n * 3), vec![b, n, 3]).unwrap();
    let a32 = a.cast(DType::F32).unwrap();
    // A symmetric positive-definite batch for cholesky: a aᵀ + n I.
    let spd = {
        let v = a.to_f64_vec().unwrap();
        let mut out = vec![0.0; b * n * n];
        for k in 0..b {
            for i in 0..n {
                for j in 0..n {
                    let mut s = if i == j { n as f64 } else { 0.0 };
                    for p in 0..n {
                        s += v[k * n * n + i * n + p] * v[k * n * n + j * n + p];
                    }
                    out[k * n * n + i * n + j] = s;
                }
            }
        }
        Tensor::from_vec(out, vec![b, n, n]).unwrap()
    };
    let wide = Tensor::from_vec(rand(b * 9 * 31), vec![b, 9, 31]).unwrap();
    let calls: Vec<(Op, Vec<Tensor>)> = vec![
        (Op::Solve, vec![a.clone(), rhs.clone()]),
        (Op::Inv, vec![a.clone()]),
        (Op::Inv, vec![a32.clone()]),
        (Op::Det, vec![a.clone()]),
        (Op::Slogdet, vec![a32]),
        (Op::Cholesky, vec![spd.clone()]),
        (Op::Qr, vec![wide.clone()]),
        (Op::Eigh, vec![spd]),
        (Op::Svd, vec![a.clone()]),
        (Op::Svd, vec![wide.clone()]),
        (Op::Lstsq, vec![a.clone(), rhs]),
        (Op::Pinv, vec![wide.clone()]),
        (Op::MatrixRank, vec![wide]),
    ];
    calls
}

#[test]
fn the_same_bits_on_one_two_and_seven_threads() {
    let names: Vec<Op> = batch_calls().iter().map(|(o, _)| *o).collect();
    let n = 37;
    let mut reference: Option<Vec<Vec<Vec<u64>>>> = None;
    for threads in [1, 2, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got: Vec<Vec<Vec<u64>>> = pool.install(|| {
            batch_calls()
                .iter()
                .map(|(op, args)| bits(&outs(run(*op, args).unwrap())))
                .collect()
        });
        match &reference {
            None => reference = Some(got),
            Some(r) => {
                for (i, (x, y)) in r.iter().zip(&got).enumerate() {
                    assert!(x == y, "`{}` differs between 1 and {threads} threads", names[i]);
                }
            }
        }
    }
    // And one matrix at a time gives the bits of the batch.
    let a = batch_calls().swap_remove(1).1.swap_remove(0);
    let first = a.index(&[twill_tensor::index::IndexItem::Single(0)]).unwrap();
    let one = bits(&outs(run(Op::Inv, &[first]).unwrap()));
    let all = &reference.unwrap()[1][0];
    assert_eq!(&one[0][..], &all[..n * n]);
}

/// 0×0 matrices and empty batches.
#[test]
fn empty_inputs() {
    let z = |s: Vec<usize>| Tensor::zeros(s, DType::F64).unwrap();
    let d = outs(run(Op::Det, &[z(vec![0, 0])]).unwrap());
    assert_eq!(d[0].to_f64_vec().unwrap(), vec![1.0]);
    let sl = outs(run(Op::Slogdet, &[z(vec![0, 0])]).unwrap());
    assert_eq!(
        (sl[0].to_f64_vec().unwrap(), sl[1].to_f64_vec().unwrap()),
        (vec![1.0], vec![0.0])
    );
    let d = outs(run(Op::Det, &[z(vec![0, 3, 3])]).unwrap());
    assert_eq!(d[0].shape(), &[0]);
    let s = outs(run(Op::Svd, &[z(vec![2, 0, 3])]).unwrap());
    assert_eq!(
        (s[0].shape(), s[1].shape(), s[2].shape()),
        (&[2, 0, 0][..], &[2, 0][..], &[2, 0, 3][..])
    );
    let r = outs(run(Op::MatrixRank, &[z(vec![0, 3])]).unwrap());
    assert_eq!(r[0].to_f64_vec().unwrap(), vec![0.0]);
}
