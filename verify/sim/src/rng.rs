//! A small deterministic random number generator (SplitMix64), so a run is reproducible from its
//! seed on any platform and no sample depends on a library's version.

/// SplitMix64: one 64-bit state, advanced by a fixed odd constant and mixed on output.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    #[cfg(test)]
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// An independent stream for `(seed, a, b)`: the same triple always gives the same stream,
    /// and nearby triples give unrelated ones.
    pub fn stream(seed: u64, a: u64, b: u64) -> Rng {
        let mut r = Rng(seed ^ 0x5EED_0000_0000_0019);
        let x = r.next_u64() ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut r = Rng(x);
        let y = r.next_u64() ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        Rng(y)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [a, b).
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * (1.0 - self.unit())
    }

    /// Exponential with this mean: the gap between events of a Poisson process.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.unit().ln()
    }

    /// Log-uniform in [a, b]: as many draws between 1 and 10 as between 10 and 100.
    pub fn log_uniform(&mut self, a: f64, b: f64) -> f64 {
        (a.ln() + (b.ln() - a.ln()) * (1.0 - self.unit())).exp()
    }

    /// Uniform integer in [a, b].
    pub fn range(&mut self, a: u64, b: u64) -> u64 {
        a + self.next_u64() % (b - a + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(19, 1, 2).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::stream(19, 1, 2).next_u64(),
            Rng::stream(19, 2, 1).next_u64()
        );
    }

    #[test]
    fn samples_stay_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let u = r.unit();
            assert!(u > 0.0 && u <= 1.0);
            let l = r.log_uniform(1.0, 500.0);
            assert!((1.0..=500.0).contains(&l));
            assert!((3..=9).contains(&r.range(3, 9)));
        }
        let mean = (0..100_000).map(|_| r.exp(2.0)).sum::<f64>() / 100_000.0;
        assert!((mean - 2.0).abs() < 0.05, "{mean}");
    }
}
