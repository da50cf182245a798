//! The two splits of the eval (docs/eval.md, "Splits"): `dev`, generated from a fixed seed
//! (the same instances every run, transcripts shown, for looking at failures), and `test`,
//! from a new seed each run (printed, so that `--seed N` makes the same instances again;
//! texts and transcripts hidden), the split the figures are quoted from. An instance's
//! random stream depends on the split, the seed, its family's name and its index only, so
//! narrowing the families or the count keeps the other instances as they were.

use super::family::Family;
use super::instance::Instance;
use super::rng::{hash_str, mix, Rng};

/// The dev split's seed: fixed, so that its instances never change.
pub(crate) const DEV_SEED: u64 = 20_261_128;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Split {
    Dev,
    Test,
}

impl Split {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }

    /// Mixed into every instance seed, so that the same number seeds the two splits
    /// differently.
    fn tag(self) -> u64 {
        match self {
            Split::Dev => 0x6465_7600,
            Split::Test => 0x7465_7374,
        }
    }
}

/// The seed of instance `index` of `family` in `split` seeded with `seed`.
fn instance_seed(split: Split, seed: u64, family: &str, index: usize) -> u64 {
    mix(mix(seed ^ split.tag())
        .wrapping_add(hash_str(family))
        .wrapping_add(mix(index as u64)))
}

/// `per_family` instances of each family, ordered round-robin (every family's first,
/// then every family's second, ...) so that a run stopped early has seen every family.
/// Each is named `family-NN` (from 01).
pub(crate) fn instances(
    families: &[&Family],
    split: Split,
    seed: u64,
    per_family: usize,
) -> Vec<Instance> {
    let mut out = Vec::with_capacity(families.len() * per_family);
    for index in 0..per_family {
        for family in families {
            let mut rng = Rng::new(instance_seed(split, seed, family.name, index));
            let mut instance = (family.generate)(&mut rng);
            instance.id = format!("{}-{:02}", family.name, index + 1);
            out.push(instance);
        }
    }
    out
}

/// A new test seed: the clock and the process id mixed, below 10^9 so that it is easy to
/// type back as `--seed N`.
pub(crate) fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let seed = mix(nanos ^ (u64::from(std::process::id()) << 32)) % 1_000_000_000;
    if seed == DEV_SEED {
        seed + 1
    } else {
        seed
    }
}

#[cfg(test)]
mod tests {
    use super::super::families::FAMILIES;
    use super::*;

    fn all() -> Vec<&'static Family> {
        FAMILIES.iter().collect()
    }

    #[test]
    fn a_seed_gives_the_same_instances_and_another_seed_others() {
        let a = instances(&all(), Split::Test, 42, 2);
        let b = instances(&all(), Split::Test, 42, 2);
        let c = instances(&all(), Split::Test, 43, 2);
        assert_eq!(a, b);
        assert_eq!(a.len(), 2 * FAMILIES.len());
        let same = a.iter().zip(&c).filter(|(x, y)| x == y).count();
        assert!(same < a.len() / 4, "{same} of {} identical", a.len());
    }

    /// The dev split with seed N is not the test split with seed N.
    #[test]
    fn the_splits_differ_for_the_same_number() {
        let dev = instances(&all(), Split::Dev, DEV_SEED, 1);
        let test = instances(&all(), Split::Test, DEV_SEED, 1);
        assert!(dev.iter().zip(&test).filter(|(x, y)| x == y).count() < dev.len() / 4);
    }

    /// Narrowing to one family or fewer instances keeps the instances that remain.
    #[test]
    fn narrowing_keeps_the_remaining_instances() {
        let whole = instances(&all(), Split::Dev, DEV_SEED, 3);
        let one = instances(&[&FAMILIES[2]], Split::Dev, DEV_SEED, 2);
        let from_whole: Vec<&Instance> = whole
            .iter()
            .filter(|i| i.family == FAMILIES[2].name)
            .take(2)
            .collect();
        assert_eq!(one.iter().collect::<Vec<_>>(), from_whole);
        assert_eq!(whole[0].id, format!("{}-01", FAMILIES[0].name));
        assert_eq!(whole[FAMILIES.len()].id, format!("{}-02", FAMILIES[0].name));
        let seed = fresh_seed();
        assert!(seed < 1_000_000_000 && seed != DEV_SEED);
    }
}
