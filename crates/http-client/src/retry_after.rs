//! How long a server asked a client to wait before trying again: `retry-after-ms`
//! (milliseconds, sent by OpenAI and some proxies), else `retry-after` as seconds (integer or
//! decimal) or as an HTTP date.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;

/// The wait the headers ask for, measured from `now` for a date; `None` when they ask none
/// or the value cannot be read.
pub fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(parse_seconds) {
        return Some(ms / 1000);
    }
    let value = header("retry-after")?;
    parse_seconds(value).or_else(|| {
        let at = DateTime::parse_from_rfc2822(value)
            .ok()?
            .with_timezone(&Utc);
        Some((at - now).to_std().unwrap_or(Duration::ZERO))
    })
}

/// A non-negative, finite number as a duration in seconds (`"1"`, `"1.5"`).
fn parse_seconds(value: &str) -> Option<Duration> {
    let n: f64 = value.parse().ok()?;
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn seconds_dates_and_milliseconds() {
        let now = Utc::now();
        let wait = |pairs: &[(&'static str, &str)]| retry_after(&headers(pairs), now);
        assert_eq!(wait(&[("retry-after", "3")]), Some(Duration::from_secs(3)));
        assert_eq!(
            wait(&[("retry-after", "1.5")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(wait(&[("retry-after", "-1")]), None);
        assert_eq!(wait(&[("retry-after", "soon")]), None);
        let later = (now + chrono::Duration::seconds(30)).to_rfc2822();
        let by_date = wait(&[("retry-after", later.as_str())]).unwrap();
        assert!(
            by_date > Duration::from_secs(28) && by_date <= Duration::from_secs(30),
            "{by_date:?}"
        );
        let earlier = (now - chrono::Duration::seconds(30)).to_rfc2822();
        assert_eq!(
            wait(&[("retry-after", earlier.as_str())]),
            Some(Duration::ZERO)
        );
        assert_eq!(wait(&[]), None);
    }
}
