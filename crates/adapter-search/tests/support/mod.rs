//! Shared helpers: fast options for a local wiremock server, a log capture, and the
//! providers' real response shapes (from their public API documentation).
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adapter_search::SearchOptions;
use serde_json::{json, Value};

pub const BRAVE_KEY: &str = "BSA-test-0123456789abcdefSECRETbrave";
pub const TAVILY_KEY: &str = "tvly-dev-0123456789abcdefSECRETtavily";

/// A 5 s timeout and a 10 ms pause before the retry.
pub fn fast() -> SearchOptions {
    SearchOptions::default()
        .with_timeout(Duration::from_secs(5))
        .with_retry_delay(Duration::from_millis(10))
}

/// A log sink the test can read back.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// Captures every log line at TRACE on this thread while the guard lives.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_default(subscriber)
    }
}

/// A SearxNG `/search?format=json` reply: three results (one without `content`, one with
/// entities and line breaks), an infobox, suggestions and an unresponsive engine.
pub fn searxng_reply() -> Value {
    json!({
        "query": "rust async runtime",
        "number_of_results": 0,
        "results": [
            {
                "url": "https://tokio.rs/",
                "title": "Tokio - An asynchronous Rust runtime",
                "content": "Tokio is an asynchronous runtime for the Rust programming language.\n  It provides the building blocks needed for writing network applications.",
                "publishedDate": null,
                "thumbnail": "",
                "engine": "duckduckgo",
                "template": "default.html",
                "parsed_url": ["https", "tokio.rs", "/", "", "", ""],
                "img_src": "",
                "priority": "",
                "engines": ["duckduckgo", "brave", "google"],
                "positions": [1, 1, 1],
                "score": 9.0,
                "category": "general"
            },
            {
                "url": "https://rust-lang.github.io/async-book/",
                "title": "Asynchronous Programming in Rust &mdash; async book",
                "content": "Async &amp; await: what&#39;s <b>the</b> deal?",
                "engine": "google",
                "parsed_url": ["https", "rust-lang.github.io", "/async-book/", "", "", ""],
                "engines": ["google"],
                "positions": [2],
                "score": 0.5,
                "category": "general"
            },
            {
                "url": "https://async.rs/",
                "title": "async-std",
                "engine": "brave",
                "engines": ["brave"],
                "positions": [3],
                "score": 0.33,
                "category": "general"
            }
        ],
        "answers": [],
        "corrections": [],
        "infoboxes": [{
            "infobox": "Rust",
            "id": "https://en.wikipedia.org/wiki/Rust_(programming_language)",
            "content": "Rust is a general-purpose programming language.",
            "img_src": null,
            "urls": [{"title": "Official website", "url": "https://www.rust-lang.org/"}],
            "engine": "wikipedia",
            "engines": ["wikipedia"]
        }],
        "suggestions": ["tokio vs async-std", "rust async runtime comparison"],
        "unresponsive_engines": [["qwant", "CAPTCHA"]]
    })
}

/// A Brave Web Search reply: `query`, `mixed`, `videos` and `web` with three results, the
/// matches wrapped in `<strong>`.
pub fn brave_reply() -> Value {
    json!({
        "query": {
            "original": "rust async runtime",
            "show_strict_warning": false,
            "is_navigational": false,
            "is_news_breaking": false,
            "spellcheck_off": true,
            "country": "us",
            "bad_results": false,
            "should_fallback": false,
            "postal_code": "",
            "city": "",
            "header_country": "",
            "more_results_available": true,
            "state": ""
        },
        "mixed": {
            "type": "mixed",
            "main": [
                {"type": "web", "index": 0, "all": false},
                {"type": "web", "index": 1, "all": false},
                {"type": "videos", "all": true}
            ],
            "top": [],
            "side": []
        },
        "type": "search",
        "videos": {
            "type": "videos",
            "results": [{"type": "video_result", "url": "https://www.youtube.com/watch?v=x", "title": "Async Rust", "description": "a talk"}],
            "mutated_by_goggles": false
        },
        "web": {
            "type": "search",
            "results": [
                {
                    "title": "Tokio - An asynchronous Rust runtime",
                    "url": "https://tokio.rs/",
                    "is_source_local": false,
                    "is_source_both": false,
                    "description": "<strong>Tokio</strong> is an asynchronous <strong>runtime</strong> for the <strong>Rust</strong> programming language.",
                    "page_age": "2024-08-01T00:00:00",
                    "profile": {"name": "Tokio", "url": "https://tokio.rs/", "long_name": "tokio.rs", "img": "https://imgs.search.brave.com/x"},
                    "language": "en",
                    "family_friendly": true,
                    "type": "search_result",
                    "subtype": "generic",
                    "is_live": false,
                    "meta_url": {"scheme": "https", "netloc": "tokio.rs", "hostname": "tokio.rs", "favicon": "https://imgs.search.brave.com/f", "path": ""},
                    "age": "August 1, 2024"
                },
                {
                    "title": "Async in depth | Tokio &amp; friends",
                    "url": "https://tokio.rs/tokio/tutorial/async",
                    "description": "",
                    "extra_snippets": ["Futures are <strong>lazy</strong>: nothing happens until they are polled."],
                    "type": "search_result",
                    "language": "en",
                    "family_friendly": true
                },
                {
                    "title": "async-std",
                    "url": "https://async.rs/",
                    "description": "Async version of the <strong>Rust</strong> standard library",
                    "type": "search_result"
                }
            ],
            "family_friendly": true
        }
    })
}

/// A Tavily `/search` reply with three results.
pub fn tavily_reply() -> Value {
    json!({
        "query": "rust async runtime",
        "follow_up_questions": null,
        "answer": null,
        "images": [],
        "results": [
            {
                "url": "https://tokio.rs/",
                "title": "Tokio - An asynchronous Rust runtime",
                "content": "Tokio is an event-driven, non-blocking I/O platform for writing asynchronous applications with the Rust programming language.",
                "score": 0.98,
                "raw_content": null
            },
            {
                "url": "https://rust-lang.github.io/async-book/",
                "title": "Asynchronous Programming in Rust",
                "content": "This book aims to be a thorough guide to asynchronous programming in Rust. ".repeat(8),
                "score": 0.91,
                "raw_content": null
            },
            {
                "url": "https://async.rs/",
                "title": "async-std",
                "content": "Async version of the Rust standard library",
                "score": 0.72
            }
        ],
        "response_time": 1.67,
        "request_id": "123e4567-e89b-12d3-a456-426614174111"
    })
}
