//! The web page at `/` (HTML, JS and CSS embedded in the binary; no CDN) and the OpenAPI
//! description at `/v1/openapi.json` (served without a token: it holds no data): the
//! embedded document with the domain's list of planning styles filled in.

use std::sync::LazyLock;

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use domain::model::names::Named;
use domain::Mode;

use super::State;

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");
const OPENAPI_JSON: &str = include_str!("assets/openapi.json");

/// Content-Security-Policy of the page: everything from this server only.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

pub fn routes() -> Router<State> {
    Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(app_js))
        .route("/assets/style.css", get(style_css))
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

async fn index() -> Response {
    let mut r = asset(INDEX_HTML, "text/html; charset=utf-8");
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    r
}

async fn app_js() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

async fn style_css() -> Response {
    asset(STYLE_CSS, "text/css; charset=utf-8")
}

pub async fn openapi() -> Response {
    asset(openapi_document(), "application/json")
}

/// Where assets/openapi.json leaves `CreateRun.mode`'s names to the server.
const MODE_NAMES_SLOT: &str = r#""mode": {"type": "string", "enum": []"#;

/// The OpenAPI document as served: assets/openapi.json, with `CreateRun.mode`'s names
/// taken from [`Mode`] (a new planning style is documented without touching this crate;
/// a test checks the slot is filled).
pub(crate) fn openapi_document() -> &'static str {
    static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
        let names = serde_json::json!(Mode::names());
        let filled = format!(r#""mode": {{"type": "string", "enum": {names}"#);
        OPENAPI_JSON.replacen(MODE_NAMES_SLOT, &filled, 1)
    });
    DOCUMENT.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_openapi_document_is_valid_json_naming_every_route() {
        let v: serde_json::Value = serde_json::from_str(OPENAPI_JSON).expect("valid JSON");
        assert_eq!(v["openapi"], "3.1.0");
        for p in [
            "/v1/health",
            "/v1/runs",
            "/v1/runs/{id}",
            "/v1/runs/{id}/events",
            "/v1/runs/{id}/cancel",
            "/v1/runs/{id}/reply",
            "/v1/runs/{id}/files/{path}",
            "/mcp",
        ] {
            assert!(v["paths"][p].is_object(), "{p} missing");
        }
    }

    #[test]
    fn the_page_has_every_marker_and_no_external_resource() {
        for m in ["[ ]", "[→]", "[✓]", "[!]", "[✗]", "[-]"] {
            assert!(APP_JS.contains(m), "{m} missing");
        }
        for text in [INDEX_HTML, APP_JS, STYLE_CSS] {
            assert!(!text.contains("http://") && !text.contains("https://"));
        }
    }
}
