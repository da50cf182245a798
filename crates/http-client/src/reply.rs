//! One JSON request posted, and the head of its reply read the way every LLM adapter needs
//! it: the status, the wait the server asked for, and whether the body is an event stream.

use std::time::Duration;

use chrono::Utc;
use reqwest::header;
use reqwest::{Client, Response, Url};

/// Posts `body` (JSON) to `url`, with the current trace context's headers
/// ([`crate::trace_headers`]: the call's `chat` span as the server's parent,
/// docs/observability.md); the reply's body is left to read.
pub async fn post_json(http: &Client, url: Url, body: &[u8]) -> Result<Response, reqwest::Error> {
    let mut request = http
        .post(url)
        .header(header::CONTENT_TYPE, "application/json");
    for (name, value) in crate::trace_headers() {
        request = request.header(name, value);
    }
    request.body(body.to_vec()).send().await
}

/// What a reply's status line and headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyHead {
    pub status: u16,
    /// The wait asked for ([`crate::retry_after`]), measured now.
    pub retry_after: Option<Duration>,
    /// A 2xx `text/event-stream` reply: read it as a stream ([`crate::read_stream`]).
    pub event_stream: bool,
}

impl ReplyHead {
    pub fn of(response: &Response) -> ReplyHead {
        let status = response.status().as_u16();
        let is_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        ReplyHead {
            status,
            retry_after: crate::retry_after(response.headers(), Utc::now()),
            event_stream: crate::is_success(status) && is_stream,
        }
    }
}
