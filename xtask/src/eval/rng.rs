//! The generator's random numbers: SplitMix64, small, fast and the same on every machine,
//! so that a seed names the same instances wherever and whenever it runs (docs/eval.md,
//! "Splits"). Not for anything secret.

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

/// One SplitMix64 step's output for `x` (also used to mix seeds together).
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// FNV-1a of `text`: a family's name as a number for seeding.
pub(crate) fn hash_str(text: &str) -> u64 {
    text.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        // The modulo bias is below 2^-40 for the sizes used here.
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "range({lo}, {hi})");
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// True with probability `percent` / 100.
    pub(crate) fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// One element of `items` (not empty).
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `k` distinct elements of `items`, in random order (`k` ≤ `items.len()`).
    pub(crate) fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        assert!(k <= items.len(), "sample {k} of {}", items.len());
        let mut idx: Vec<usize> = (0..items.len()).collect();
        for i in 0..k {
            let j = i + self.below(idx.len() - i);
            idx.swap(i, j);
        }
        idx[..k].iter().map(|&i| items[i].clone()).collect()
    }

    /// `items` in a random order.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream_and_two_seeds_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(8);
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn ranges_samples_and_shuffles_stay_in_bounds() {
        let mut r = Rng::new(1);
        for _ in 0..1000 {
            let n = r.range(-3, 3);
            assert!((-3..=3).contains(&n));
            assert!(r.below(5) < 5);
        }
        let s = r.sample(&[1, 2, 3, 4, 5], 5);
        let mut sorted = s.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [1, 2, 3, 4, 5]);
        let mut v: Vec<u32> = (0..20).collect();
        r.shuffle(&mut v);
        v.sort_unstable();
        assert_eq!(v, (0..20).collect::<Vec<_>>());
        assert_ne!(hash_str("a"), hash_str("b"));
        assert_ne!(mix(1), mix(2));
    }
}
