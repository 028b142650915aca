//! Axis ticks and their labels: "nice" steps of 1, 2 or 5 times a power of
//! ten on a linear axis, powers of ten (with 2 and 5 between when the axis
//! spans little more than a decade) on a log axis. Labels are formatted with
//! as many decimals as the step needs, so 0.1 + 0.2 prints as 0.3.

/// Tick positions in `[lo, hi]` for a linear axis, about `target` of them,
/// at least `min_step` apart (1 on an image's axes, whose ticks are pixels).
pub(crate) fn linear(lo: f64, hi: f64, target: usize, min_step: f64) -> (Vec<f64>, f64) {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return (vec![lo], 1.0);
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= target as f64 + 0.5)
        .unwrap_or(10.0 * mag)
        .max(min_step);
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    let n = (last - first) as i64;
    let ticks = (0..=n.clamp(0, 1000))
        .map(|k| {
            let v = (first + k as f64) * step;
            // -0.0 labels as 0.
            if v == 0.0 {
                0.0
            } else {
                v
            }
        })
        .collect();
    (ticks, step)
}

/// Tick positions (as values, not exponents) for a log axis over `[lo, hi]`
/// (both positive).
pub(crate) fn log(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades = b - a;
    let stride = (decades / 8 + 1).max(1);
    let mut out = Vec::new();
    for e in (a..=b).step_by(stride as usize) {
        let base = 10f64.powi(e);
        let mults: &[f64] = if decades <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        for m in mults {
            let v = m * base;
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    out
}

/// The label of a linear tick at `v` for ticks `step` apart.
pub(crate) fn label(v: f64, step: f64) -> String {
    let big = v.abs().max(step);
    if big >= 1e6 || step < 1e-4 {
        return sci(v);
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    // A step of 0.25 needs two decimals, not one.
    let decimals = (decimals..decimals + 3)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(decimals);
    format!("{v:.decimals$}")
}

/// The label of a log tick: `0.01`, `100` within four decades of 1, else
/// `1e-7`, `2e+12`.
pub(crate) fn log_label(v: f64) -> String {
    let e = v.log10().floor() as i32;
    if (-4..=4).contains(&e) {
        format!("{v:.prec$}", prec = (-e).max(0) as usize)
    } else {
        sci(v)
    }
}

/// Scientific notation with the fewest digits that round-trip to three
/// significant figures: `1e+06`, `2.5e-05`.
fn sci(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let s = format!("{v:.2e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mant = mant.trim_end_matches('0').trim_end_matches('.');
    let exp: i32 = exp.parse().unwrap_or(0);
    format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_steps_are_nice() {
        let (t, s) = linear(0.0, 1.0, 6, 0.0);
        assert_eq!(s, 0.2);
        assert_eq!(t.len(), 6);
        assert_eq!(label(t[3], s), "0.6");
        let (t, s) = linear(-3.2, 97.0, 6, 0.0);
        assert_eq!(s, 20.0);
        assert_eq!(t, vec![0.0, 20.0, 40.0, 60.0, 80.0]);
        assert_eq!(label(0.25, 0.25), "0.25");
        assert_eq!(linear(-0.5, 2.5, 6, 1.0).0, vec![0.0, 1.0, 2.0]);
        assert_eq!(label(3e6, 1e6), "3e+06");
        assert_eq!(label(2.5e-5, 5e-6), "2.5e-05");
    }

    #[test]
    fn log_ticks_are_powers_of_ten() {
        assert_eq!(log(0.01, 1000.0), vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log(1.0, 30.0), vec![1.0, 2.0, 5.0, 10.0, 20.0]);
        assert_eq!(log_label(0.01), "0.01");
        assert_eq!(log_label(100.0), "100");
        assert_eq!(log_label(1e-7), "1e-07");
    }
}
