//! An age on the command line (`runs prune --older-than 30d`): a whole number and a unit,
//! `d` days, `h` hours or `m` minutes.

use std::time::Duration;

/// Parses `30d`, `12h`, `90m`.
pub(crate) fn age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let bad = || format!("`{text}` is not an age: a number and d, h or m (30d, 12h, 90m)");
    let unit_at = text.len().checked_sub(1).ok_or_else(bad)?;
    let (number, unit) = text.split_at(unit_at);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let secs = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        _ => return Err(bad()),
    };
    n.checked_mul(secs).map(Duration::from_secs).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_age_is_a_number_and_a_unit() {
        assert_eq!(age("30d").unwrap(), Duration::from_secs(30 * 86_400));
        assert_eq!(age(" 12h ").unwrap(), Duration::from_secs(12 * 3_600));
        assert_eq!(age("0m").unwrap(), Duration::ZERO);
        for bad in ["", "d", "30", "30s", "-1d", "1.5d", "99999999999999999999d"] {
            assert!(age(bad).is_err(), "{bad}");
        }
    }
}
