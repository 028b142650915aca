//! The fuzzer's pseudo-random numbers: SplitMix64, small and good enough
//! for choosing grammar productions, and fully determined by its seed, so
//! that program number `n` of seed `s` is the same on every machine and in
//! every run (a finding can be regenerated from its seed and number).

/// SplitMix64 (Steele, Lea and Flood).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator of program `n` of a run seeded with `seed`: mixed so
    /// that neighbouring numbers give unrelated streams.
    pub fn for_program(seed: u64, n: u64) -> Rng {
        let mut r = Rng(seed ^ n.wrapping_mul(0xD1B5_4A32_D192_ED03));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.wrapping_sub(lo) as u64;
        if span == u64::MAX {
            return self.next_u64() as i64;
        }
        lo.wrapping_add((self.next_u64() % (span + 1)) as i64)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.next_u64() % 100 < u64::from(percent)
    }

    /// One element of a slice (the default value of an empty one).
    pub fn pick<T: Copy + Default>(&mut self, items: &[T]) -> T {
        items.get(self.below(items.len())).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::for_program(7, 3);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::for_program(7, 3);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(
            Rng::for_program(7, 3).next_u64(),
            Rng::for_program(7, 4).next_u64()
        );
    }

    #[test]
    fn ranges_stay_inside() {
        let mut r = Rng::new(1);
        for _ in 0..1000 {
            let v = r.range(-3, 3);
            assert!((-3..=3).contains(&v));
            assert!(r.below(5) < 5);
        }
        r.range(i64::MIN, i64::MAX);
    }
}
