//! Tensor constructors of spec §4.1 that compute their values: `arange`,
//! `linspace`, `eye`, `rand`, `randn`, and spec §11.3's `uniform`,
//! `normal`, `randint` and `permutation`. Each value is computed in f64 as the
//! spec writes it and rounded once to the requested dtype.
//!
//! The random generators are deterministic from their seed and identical on
//! every platform: SplitMix64 (Steele, Lea & Flood 2014) produces 64-bit
//! words; a uniform is the top 53 bits times 2^-53, in [0, 1); a normal is
//! Box–Muller on two uniforms, u1 = 1 − uniform (so never 0), u2 = uniform:
//! r = sqrt(−2 ln u1), z0 = r cos(2π u2), z1 = r sin(2π u2), consumed in
//! that order, with `libm`'s log, cos and sin. An integer in [0, r) is
//! Lemire's multiply-and-reject on one 64-bit word (no bias), which
//! `randint` offsets and `permutation`'s Fisher–Yates shuffle draws.

use crate::convert::Scalar;
use crate::dtype::DType;
use crate::math;
use crate::storage::{try_collect, try_filled, try_vec};
use crate::tensor::{numel_of, Tensor, TensorError};

/// Largest element count a computed constructor accepts; beyond it the
/// request is far more likely a mistake than a tensor (16 GiB of f64).
const MAX_COMPUTED: usize = 1 << 31;

fn from_f64s(values: Vec<f64>, shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError> {
    let t = Tensor::from_vec(values, shape)?;
    t.cast(dtype)
}

fn check_len(n: usize) -> Result<(), TensorError> {
    if n > MAX_COMPUTED {
        return Err(TensorError(format!(
            "{n} elements is too many to compute (at most {MAX_COMPUTED})"
        )));
    }
    Ok(())
}

/// `arange(a, b, step)`: x_i = a + i·step for i < ceil((b − a) / step).
pub fn arange(a: f64, b: f64, step: f64, dtype: DType) -> Result<Tensor, TensorError> {
    if step == 0.0 || step.is_nan() {
        return Err(TensorError("arange step must be a nonzero number".into()));
    }
    let count = ((b - a) / step).ceil();
    if count.is_nan() || count.is_infinite() {
        return Err(TensorError(format!(
            "arange({}, {}, {}) has no finite length",
            crate::format_number(a),
            crate::format_number(b),
            crate::format_number(step)
        )));
    }
    let n = if count <= 0.0 { 0 } else { count as usize };
    check_len(n)?;
    let values = try_collect(n, (0..n).map(|i| a + i as f64 * step))?;
    from_f64s(values, vec![n], dtype)
}

/// `linspace(a, b, n)`: x_i = a + i·((b − a)/(n − 1)), the last exactly b.
pub fn linspace(a: f64, b: f64, n: usize, dtype: DType) -> Result<Tensor, TensorError> {
    check_len(n)?;
    let values = match n {
        0 => Vec::new(),
        1 => vec![a],
        _ => {
            let step = (b - a) / (n - 1) as f64;
            let mut v: Vec<f64> = try_collect(n, (0..n).map(|i| a + i as f64 * step))?;
            v[n - 1] = b;
            v
        }
    };
    from_f64s(values, vec![n], dtype)
}

pub fn eye(n: usize, dtype: DType) -> Result<Tensor, TensorError> {
    let total = numel_of(&[n, n])?;
    check_len(total)?;
    let mut values = try_filled(total, 0.0).map_err(|e| e.for_tensor(DType::F64, &[n, n]))?;
    for i in 0..n {
        values[i * n + i] = 1.0;
    }
    from_f64s(values, vec![n, n], dtype)
}

/// The random stream behind `rand` and `randn`.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

pub fn rand(shape: Vec<usize>, dtype: DType, seed: u64) -> Result<Tensor, TensorError> {
    let n = numel_of(&shape)?;
    check_len(n)?;
    let mut g = SplitMix64::new(seed);
    let values = try_collect(n, (0..n).map(|_| g.uniform())).map_err(|e| e.for_tensor(DType::F64, &shape))?;
    from_f64s(values, shape, dtype)
}

pub fn randn(shape: Vec<usize>, dtype: DType, seed: u64) -> Result<Tensor, TensorError> {
    let n = numel_of(&shape)?;
    check_len(n)?;
    let mut g = SplitMix64::new(seed);
    let mut values = try_vec(n).map_err(|e| e.for_tensor(DType::F64, &shape))?;
    while values.len() < n {
        let u1 = 1.0 - g.uniform();
        let u2 = g.uniform();
        let r = math::sqrt(-2.0 * math::log(u1));
        let theta = 2.0 * std::f64::consts::PI * u2;
        values.push(r * math::cos(theta));
        if values.len() < n {
            values.push(r * math::sin(theta));
        }
    }
    from_f64s(values, shape, dtype)
}

/// `uniform(shape, lo, hi)`: lo + (hi − lo)·u for the uniforms u of
/// `rand`, computed in f64 and rounded once to `dtype` (so a narrow dtype
/// can round a value up to `hi`, as NumPy's can).
pub fn uniform(shape: Vec<usize>, lo: f64, hi: f64, dtype: DType, seed: u64) -> Result<Tensor, TensorError> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return Err(TensorError(format!(
            "`uniform` needs finite bounds with lo <= hi, not lo = {lo}, hi = {hi}"
        )));
    }
    let n = numel_of(&shape)?;
    check_len(n)?;
    let mut g = SplitMix64::new(seed);
    let values = try_collect(n, (0..n).map(|_| lo + (hi - lo) * g.uniform()))
        .map_err(|e| e.for_tensor(DType::F64, &shape))?;
    from_f64s(values, shape, dtype)
}

/// `normal(shape, mean, std)`: mean + std·z for the normals z of `randn`,
/// in f64, rounded once to `dtype`.
pub fn normal(
    shape: Vec<usize>,
    mean: f64,
    std: f64,
    dtype: DType,
    seed: u64,
) -> Result<Tensor, TensorError> {
    if !(mean.is_finite() && std.is_finite()) || std < 0.0 {
        return Err(TensorError(format!(
            "`normal` needs a finite mean and a finite std >= 0, not mean = {mean}, std = {std}"
        )));
    }
    let z = randn(shape, DType::F64, seed)?;
    let values: Vec<f64> = z.to_f64_vec()?.into_iter().map(|v| mean + std * v).collect();
    from_f64s(values, z.shape().to_vec(), dtype)
}

/// A uniform integer in [0, range) from the stream, without bias: words
/// in the last partial copy of the range are drawn again (Lemire's
/// threshold), so every value has the same chance.
fn below(g: &mut SplitMix64, range: u64) -> u64 {
    let threshold = range.wrapping_neg() % range;
    loop {
        let w = g.next_u64();
        let m = u128::from(w) * u128::from(range);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// `randint(lo, hi, shape, dt=i32)`: uniform integers in [lo, hi), each
/// drawn without bias from the 64-bit stream; `dtype` must hold every
/// value of the range (a float dtype holds it when the range is exact).
pub fn randint(lo: i64, hi: i64, shape: Vec<usize>, dtype: DType, seed: u64) -> Result<Tensor, TensorError> {
    if hi <= lo {
        return Err(TensorError(format!(
            "`randint` needs lo < hi, not lo = {lo}, hi = {hi}"
        )));
    }
    let fits = |v: i64| match dtype {
        DType::Bool => (0..=1).contains(&v),
        DType::I8 => i8::try_from(v).is_ok(),
        DType::I32 => i32::try_from(v).is_ok(),
        DType::Bf16 => v.unsigned_abs() <= 1 << 8,
        DType::F16 => v.unsigned_abs() <= 1 << 11,
        DType::F32 => v.unsigned_abs() <= 1 << 24,
        DType::F64 => v.unsigned_abs() <= 1 << 53,
    };
    if !fits(lo) || !fits(hi - 1) {
        return Err(TensorError(format!(
            "`randint`: {dtype} cannot hold every integer in [{lo}, {hi})"
        )));
    }
    let n = numel_of(&shape)?;
    check_len(n)?;
    let range = hi.abs_diff(lo);
    let mut g = SplitMix64::new(seed);
    let values = try_collect(
        n,
        (0..n).map(|_| (lo as i128 + below(&mut g, range) as i128) as f64),
    )
    .map_err(|e| e.for_tensor(DType::F64, &shape))?;
    from_f64s(values, shape, dtype)
}

/// `permutation(n)`: 0 … n−1 shuffled by Fisher–Yates (from the last
/// position down, each swapped with a uniform position at or below it),
/// as i32.
pub fn permutation(n: i64, seed: u64) -> Result<Tensor, TensorError> {
    let len = i32::try_from(n)
        .ok()
        .and_then(|m| usize::try_from(m).ok())
        .ok_or_else(|| TensorError(format!("`permutation` needs a count in 0 … 2^31 - 1, not {n}")))?;
    check_len(len)?;
    let mut v: Vec<i32> = try_collect(len, 0..len as i32).map_err(|e| e.for_tensor(DType::I32, &[len]))?;
    let mut g = SplitMix64::new(seed);
    for i in (1..len).rev() {
        let j = below(&mut g, i as u64 + 1) as usize;
        v.swap(i, j);
    }
    Tensor::from_vec(v, vec![len])
}

/// A tensor of `shape` from row-major scalars, each cast once to `dtype`.
pub fn from_scalars(items: &[Scalar], shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError> {
    let mut cast = try_vec(items.len())?;
    for s in items {
        cast.push(s.cast(dtype)?);
    }
    Tensor::from_storage(crate::storage::Storage::from_scalars(dtype, &cast)?, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_random_constructors_keep_their_ranges_and_are_pure_in_the_seed() {
        let r = randint(-3, 4, vec![10_000], DType::I32, 9).expect("randint");
        let v = vals(&r);
        assert!(v.iter().all(|&x| (-3.0..4.0).contains(&x)));
        // Every value of the range occurs about equally often: each count
        // is binomial(10 000, 1/7), within 6 standard deviations of 1428.6.
        for k in -3..4 {
            let c = v.iter().filter(|&&x| x == k as f64).count() as f64;
            assert!(
                (c - 10_000.0 / 7.0).abs() < 6.0 * (10_000.0f64 * (1.0 / 7.0) * (6.0 / 7.0)).sqrt(),
                "{k}: {c}"
            );
        }
        assert_eq!(
            vals(&randint(-3, 4, vec![50], DType::I32, 9).expect("again")),
            v[..50].to_vec()
        );
        assert!(randint(0, 300, vec![2], DType::I8, 0).is_err());
        assert!(randint(5, 5, vec![2], DType::I32, 0).is_err());
        let p = permutation(1000, 4).expect("permutation");
        let mut seen = vals(&p);
        assert_ne!(seen, (0..1000).map(f64::from).collect::<Vec<_>>());
        seen.sort_by(f64::total_cmp);
        assert_eq!(seen, (0..1000).map(f64::from).collect::<Vec<_>>());
        assert_eq!(permutation(0, 1).expect("empty").shape(), &[0]);
        let u = vals(&uniform(vec![4000], 2.0, 5.0, DType::F64, 3).expect("uniform"));
        assert!(u.iter().all(|&x| (2.0..5.0).contains(&x)));
        let mean = u.iter().sum::<f64>() / 4000.0;
        assert!((mean - 3.5).abs() < 0.1, "{mean}");
        let z = vals(&normal(vec![4000], 10.0, 0.5, DType::F64, 3).expect("normal"));
        let m = z.iter().sum::<f64>() / 4000.0;
        let sd = (z.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 4000.0).sqrt();
        assert!((m - 10.0).abs() < 0.05 && (sd - 0.5).abs() < 0.05, "{m} {sd}");
        // normal is mean + std · randn, element for element.
        let base = vals(&randn(vec![5], DType::F64, 3).expect("randn"));
        assert_eq!(
            z[..5].to_vec(),
            base.iter().map(|b| 10.0 + 0.5 * b).collect::<Vec<_>>()
        );
        assert!(uniform(vec![1], 1.0, 0.0, DType::F64, 0).is_err());
        assert!(normal(vec![1], 0.0, -1.0, DType::F64, 0).is_err());
        // The unbiased draw covers a range that does not divide 2^64.
        let mut g = SplitMix64::new(1);
        assert!((0..1000).all(|_| below(&mut g, 3) < 3));
    }

    fn vals(t: &Tensor) -> Vec<f64> {
        t.scalars().map(|s| s.to_f64()).collect()
    }

    #[test]
    fn arange_and_linspace_follow_their_formulas() {
        assert_eq!(
            vals(&arange(0.0, 5.0, 1.0, DType::F64).expect("ok")),
            vec![0.0, 1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(vals(&arange(1.0, 2.0, 0.3, DType::F64).expect("ok")).len(), 4);
        assert_eq!(
            vals(&arange(5.0, 0.0, -2.0, DType::F64).expect("ok")),
            vec![5.0, 3.0, 1.0]
        );
        assert!(arange(0.0, 1.0, 0.0, DType::F64).is_err());
        let l = vals(&linspace(0.0, 1.0, 3, DType::F64).expect("ok"));
        assert_eq!(l, vec![0.0, 0.5, 1.0]);
        let l = vals(&linspace(0.1, 0.7, 7, DType::F64).expect("ok"));
        assert_eq!(l[6], 0.7);
    }

    #[test]
    fn random_streams_are_fixed() {
        // SplitMix64 from seed 0: the reference sequence of the algorithm.
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let a = vals(&randn(vec![5], DType::F64, 7).expect("ok"));
        let b = vals(&randn(vec![5], DType::F64, 7).expect("ok"));
        assert_eq!(a, b);
        assert!(vals(&rand(vec![1000], DType::F64, 1).expect("ok"))
            .iter()
            .all(|x| (0.0..1.0).contains(x)));
    }
}
