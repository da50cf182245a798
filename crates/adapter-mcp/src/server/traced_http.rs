//! The HTTP client of a streamable-HTTP MCP server: rmcp's reqwest client, with a tool call's
//! trace context also as HTTP headers. A call carries its `execute_tool` span's context in the
//! request's `_meta` (MCP's convention, `trace_meta` in `server/mod.rs`); this client copies
//! that `traceparent` and `tracestate` into the POST's headers, W3C trace context, so an HTTP
//! server or a proxy that reads only headers joins the run's trace too
//! (docs/observability.md, "Across processes"). The headers come from the message, not from
//! the current span: rmcp sends from a worker task of its own, outside the tool call's span.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestParamsMeta};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// How many same-origin redirects one request follows, as rmcp's own client does.
const MAX_REDIRECTS: usize = 10;

/// rmcp's reqwest client, adding a tool call's trace context as headers.
#[derive(Debug, Clone)]
pub(crate) struct TracedHttp(reqwest::Client);

impl TracedHttp {
    /// A client like rmcp's default one: no idle connections kept (a reused connection
    /// whose body was not read to the end stalls on delayed ACKs), and only same-origin
    /// 307/308 redirects followed (they keep the method and the body; another origin would
    /// be sent the session id and the bearer token).
    pub(crate) fn new() -> Result<TracedHttp, reqwest::Error> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if keeps_body && same_origin && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            .map(TracedHttp)
    }
}

/// The W3C trace-context headers of a `tools/call` request: its `_meta`'s `traceparent`
/// and `tracestate`, when set and valid as header values; none for anything else.
pub(crate) fn trace_headers(message: &ClientJsonRpcMessage) -> Vec<(HeaderName, HeaderValue)> {
    let JsonRpcMessage::Request(request) = message else {
        return Vec::new();
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return Vec::new();
    };
    [
        ("traceparent", call.params.traceparent()),
        ("tracestate", call.params.tracestate()),
    ]
    .into_iter()
    .filter_map(|(name, value)| {
        let value = HeaderValue::from_str(value?).ok()?;
        Some((HeaderName::from_static(name), value))
    })
    .collect()
}

type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type StreamResult =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for TracedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    /// Every POST comes here: the one place the trace headers are added.
    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        custom_headers.extend(trace_headers(&message));
        self.0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> StreamResult {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> StreamResult {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequestParams, Request, RequestId, RequestMetaObject};
    use serde_json::json;

    /// A `tools/call` of `echo` as the client sends it, its `_meta` holding `trace`.
    fn call(trace: &[(&str, &str)]) -> ClientJsonRpcMessage {
        let mut params = CallToolRequestParams::new("echo");
        if !trace.is_empty() {
            let mut meta = RequestMetaObject::default();
            for (name, value) in trace {
                match *name {
                    "traceparent" => meta.set_traceparent(*value),
                    _ => meta.set_tracestate(*value),
                }
            }
            params.meta = Some(meta);
        }
        JsonRpcMessage::request(
            ClientRequest::CallToolRequest(Request::new(params)),
            RequestId::Number(3),
        )
    }

    #[test]
    fn a_tool_call_gives_its_meta_trace_context_as_headers() {
        let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let message = call(&[("traceparent", traceparent), ("tracestate", "vendor=1")]);
        let headers: HashMap<_, _> = trace_headers(&message).into_iter().collect();
        assert_eq!(headers.len(), 2);
        assert_eq!(
            headers[&HeaderName::from_static("traceparent")],
            traceparent
        );
        assert_eq!(headers[&HeaderName::from_static("tracestate")], "vendor=1");
    }

    #[test]
    fn other_messages_and_calls_without_meta_give_none() {
        let list: ClientJsonRpcMessage =
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
                .expect("a request");
        let note: ClientJsonRpcMessage = serde_json::from_value(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .expect("a notification");
        for m in [call(&[]), list, note] {
            assert!(trace_headers(&m).is_empty(), "{m:?}");
        }
    }

    #[test]
    fn a_value_that_is_no_header_value_is_left_out() {
        let message = call(&[("traceparent", "bad\nvalue"), ("tracestate", "vendor=1")]);
        let headers = trace_headers(&message);
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].0, HeaderName::from_static("tracestate"));
    }
}
