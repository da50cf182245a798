//! Resources a test needs from the machine: skipped on a laptop, required under CI.

use std::fmt::Display;

/// Whether the tests run under CI: `CI` is `true` (in any case) or `1`. CI installs every
/// program the tests need, so there a missing one is a failure, never a skip.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The resource `found`, or `None` when it is missing (`Err(why)`: what is missing and how
/// to install it): the test then returns early, with `skipped: {why}` on stderr. Under CI
/// ([`under_ci`]) a missing resource panics instead: `CI=true but {why}`.
pub fn require_or_skip<T, E: Display>(found: Result<T, E>) -> Option<T> {
    match found {
        Ok(found) => Some(found),
        Err(why) => {
            assert!(!under_ci(), "CI=true but {why}");
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// [`require_or_skip`] for a condition: true when `ok`; else false (the test returns
/// early) with `why` on stderr, or a panic under CI.
pub fn skip_unless(ok: bool, why: impl Display) -> bool {
    require_or_skip(if ok { Ok(()) } else { Err(why) }).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_resource_is_given_back_whatever_the_environment() {
        assert_eq!(require_or_skip::<_, String>(Ok(7)), Some(7));
        assert!(skip_unless(true, "never shown"));
    }

    #[test]
    fn a_missing_resource_skips_on_a_laptop_and_fails_under_ci() {
        let missing = std::panic::catch_unwind(|| require_or_skip::<(), _>(Err("no chromium")));
        if under_ci() {
            let message = missing.expect_err("CI requires it");
            let text = message
                .downcast_ref::<String>()
                .map(String::as_str)
                .unwrap_or_default();
            assert_eq!(text, "CI=true but no chromium");
        } else {
            assert_eq!(missing.ok(), Some(None));
        }
    }
}
