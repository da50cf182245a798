//! From a provider's result objects to [`SearchHit`]s, leniently: fields are read one by one
//! from JSON values, so a missing field or one of an unexpected type only loses that field.

use domain::ports::SearchHit;
use serde_json::Value;

use crate::text::{self, SNIPPET_CHARS, TITLE_CHARS};

/// The string at `key` of a JSON object, if it is one.
pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// One result before cleanup.
pub(crate) struct RawHit<'a> {
    pub title: Option<&'a str>,
    pub url: Option<&'a str>,
    /// HTML allowed: it is stripped here.
    pub snippet: String,
}

/// Clean hits: results without a URL are skipped, a repeated URL is dropped, a missing title
/// becomes the URL; at most `max`.
pub(crate) fn collect<'a>(raw: impl IntoIterator<Item = RawHit<'a>>, max: usize) -> Vec<SearchHit> {
    let mut hits: Vec<SearchHit> = Vec::new();
    for r in raw {
        if hits.len() >= max {
            break;
        }
        let Some(url) = r.url.map(str::trim).filter(|u| !u.is_empty()) else {
            continue;
        };
        if hits.iter().any(|h| h.url == url) {
            continue;
        }
        let title = text::clean(r.title.unwrap_or_default(), TITLE_CHARS);
        hits.push(SearchHit {
            title: if title.is_empty() {
                url.to_owned()
            } else {
                title
            },
            url: url.to_owned(),
            snippet: text::clean(&r.snippet, SNIPPET_CHARS),
        });
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_urlless_and_repeated_results_and_caps() {
        let raw = vec![
            RawHit {
                title: Some("A &amp; B"),
                url: Some(" https://a.example/ "),
                snippet: "<b>one</b>".into(),
            },
            RawHit {
                title: Some("no url"),
                url: None,
                snippet: String::new(),
            },
            RawHit {
                title: Some("again"),
                url: Some("https://a.example/"),
                snippet: String::new(),
            },
            RawHit {
                title: None,
                url: Some("https://c.example/"),
                snippet: String::new(),
            },
            RawHit {
                title: Some("over the cap"),
                url: Some("https://d.example/"),
                snippet: String::new(),
            },
        ];
        let hits = collect(raw, 2);
        assert_eq!(
            hits,
            vec![
                SearchHit {
                    title: "A & B".into(),
                    url: "https://a.example/".into(),
                    snippet: "one".into()
                },
                SearchHit {
                    title: "https://c.example/".into(),
                    url: "https://c.example/".into(),
                    snippet: String::new()
                },
            ]
        );
    }
}
