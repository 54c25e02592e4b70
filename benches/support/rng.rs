//! splitmix64: deterministic, so runs compare, and needs no dependency. Shared by the benches.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[expect(
        clippy::cast_precision_loss,
        reason = "53 random bits fit an f64 exactly"
    )]
    pub fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// A Pareto-tailed value: mostly near `scale`, now and then far above it, as lag is.
    pub fn pareto(&mut self, scale: f64) -> f64 {
        scale * (1.0 - self.uniform()).powf(-1.0 / 1.1)
    }
}
