//! # http-client
//!
//! The one place that builds a `reqwest` client's trust and reads its errors, for every
//! crate that talks HTTP out (`adapter-openai`, its `doctor` line included,
//! `adapter-anthropic`, `adapter-search`):
//!
//! - [`client_builder`]: a `reqwest::ClientBuilder` trusting the configured extra root
//!   certificates (PEM bundles, `--ca-cert`); the platform's roots are added only for an
//!   `https` endpoint, so a plain-`http` one (a local server, the tests' mock) never reads
//!   and parses the system's hundred-odd certificates at start (docs/benchmarks.md,
//!   "Containment"). A redirect from such an endpoint to `https` then fails.
//! - [`error_chain`] and [`root_cause`]: a reqwest error and its causes as text without the
//!   URL reqwest puts in its own message (the URL may hold credentials).
//! - [`trace_headers`]: the W3C trace-context headers of the current span, for outgoing
//!   requests, from the source the runner's telemetry sets (none without export);
//!   [`SPAN_EVENTS`], the target of the events the trace export keeps (a retry).
//!
//! - What the LLM adapters share whatever their wire format: [`post_json`] and
//!   [`ReplyHead`] (a request sent, its reply's status, wait and kind), [`RetryPolicy`] (the
//!   retry loop with backoff honouring `retry-after`, each retry a `retry` event on the
//!   current span), [`retry_after`], [`StatusClass`] (a status's class), [`read_body`] /
//!   [`read_stream`] (a body within its byte and idle limits), [`SseLines`] (an event
//!   stream cut into lines), [`checked_base_url`] / [`shown_url`], [`excerpt`].
//!
//! A helper crate, not an adapter: it depends on reqwest (rustls, the workspace's one TLS
//! stack) and on nothing of Planwright's (no `domain`, no adapter); each caller sets its own
//! timeouts, headers and user agent on the builder and maps [`CaCertError`] to its own
//! error type.

use std::error::Error as StdError;

mod base_url;
mod body;
mod excerpt;
mod reply;
mod retry;
mod retry_after;
mod sse_lines;
mod status;

pub use base_url::{checked_base_url, shown_url, BaseUrlError};
pub use body::{read_body, read_stream, BodyError};
pub use excerpt::{body_excerpt, excerpt};
pub use reply::{post_json, ReplyHead};
pub use retry::{retry_error_type, RetryPolicy, RetryableFailure};
pub use retry_after::retry_after;
pub use sse_lines::{data_of, SseLines};
pub use status::{is_success, StatusClass};
mod trace;
pub use trace::{set_trace_header_source, trace_headers, TraceHeaderSource, SPAN_EVENTS};

/// A `--ca-cert` file (an extra root certificate) that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaCertError {
    /// The file is not a PEM bundle.
    #[error("{0}")]
    NotPem(String),
    /// The file holds no PEM certificate.
    #[error("no PEM certificate in the file")]
    Empty,
}

/// Which certificate roots a client trusts, by the scheme of the endpoint it talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots {
    /// The platform's (system) roots and the configured extra ones: an `https` endpoint.
    Platform,
    /// Only the configured extra ones: a plain `http` endpoint, which needs no roots.
    OnlyGiven,
}

impl Roots {
    /// The roots for an endpoint whose URL scheme is `scheme` (`https` in any case: the
    /// platform's; anything else: only the given ones).
    pub fn for_scheme(scheme: &str) -> Roots {
        if scheme.eq_ignore_ascii_case("https") {
            Roots::Platform
        } else {
            Roots::OnlyGiven
        }
    }
}

/// A client builder trusting the certificates of `extra_root_certs` (each a PEM bundle:
/// every certificate in it), and the platform's roots too when `roots` is
/// [`Roots::Platform`]. A file that is not PEM, or holds no certificate, is an error
/// whatever the roots.
pub fn client_builder<P: AsRef<[u8]>>(
    roots: Roots,
    extra_root_certs: &[P],
) -> Result<reqwest::ClientBuilder, CaCertError> {
    let mut extra = Vec::new();
    for pem in extra_root_certs {
        let certs = reqwest::Certificate::from_pem_bundle(pem.as_ref())
            .map_err(|e| CaCertError::NotPem(error_chain(&e.without_url())))?;
        if certs.is_empty() {
            return Err(CaCertError::Empty);
        }
        extra.extend(certs);
    }
    Ok(match roots {
        Roots::Platform => reqwest::Client::builder().tls_certs_merge(extra),
        Roots::OnlyGiven => reqwest::Client::builder().tls_certs_only(extra),
    })
}

/// The error and its causes, `a: b: c`, without any URL reqwest puts in its own message
/// (a cause repeating the one before it is left out).
pub fn error_chain(err: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = current {
        let text = without_url(&e.to_string());
        if !text.is_empty() && parts.last() != Some(&text) {
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// The innermost cause, e.g. `Connection refused (os error 111)`; the whole
/// [`error_chain`] when that cause says nothing.
pub fn root_cause(err: &(dyn StdError + 'static)) -> String {
    let mut current = err;
    while let Some(source) = current.source() {
        current = source;
    }
    match without_url(&current.to_string()) {
        text if !text.is_empty() => text,
        _ => error_chain(err),
    }
}

/// `text` up to the ` for url (` reqwest appends.
fn without_url(text: &str) -> String {
    text.split(" for url (")
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CA: &[u8] = include_bytes!("../../../testdata/tls/ca.pem");

    #[test]
    fn only_https_endpoints_get_the_platform_roots() {
        assert_eq!(Roots::for_scheme("https"), Roots::Platform);
        assert_eq!(Roots::for_scheme("HTTPS"), Roots::Platform);
        assert_eq!(Roots::for_scheme("http"), Roots::OnlyGiven);
    }

    #[test]
    fn clients_build_with_or_without_extra_roots_and_bad_files_are_refused() {
        let none: &[&[u8]] = &[];
        for roots in [Roots::Platform, Roots::OnlyGiven] {
            assert!(client_builder(roots, none).unwrap().build().is_ok());
            assert!(client_builder(roots, &[CA]).unwrap().build().is_ok());
            assert!(matches!(
                client_builder(roots, &[b"not a certificate".as_slice()]),
                Err(CaCertError::Empty | CaCertError::NotPem(_))
            ));
        }
    }

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Layer {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn StdError + 'static))
        }
    }

    #[test]
    fn chains_drop_urls_and_repeats_and_the_root_cause_is_the_innermost() {
        let err = Layer(
            "error sending request for url (http://u:p@h/)",
            Some(Box::new(Layer(
                "error sending request",
                Some(Box::new(Layer("Connection refused (os error 111)", None))),
            ))),
        );
        assert_eq!(
            error_chain(&err),
            "error sending request: Connection refused (os error 111)"
        );
        assert_eq!(root_cause(&err), "Connection refused (os error 111)");
        assert_eq!(root_cause(&Layer(" for url (x)", None)), "");
    }
}
