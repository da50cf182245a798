//! `GET /metrics`: the runner's Prometheus text exposition (docs/observability.md,
//! "Metrics"); on `serve` behind the API's token unless `--metrics-public`, on a worker's
//! `--metrics-addr` alone.

use axum::extract::State as Ext;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::{auth, State};

/// The `/metrics` route; `public`: without the token.
pub(crate) fn router(state: State, public: bool) -> Router {
    let route = Router::new().route("/metrics", get(metrics));
    let route = if public {
        route
    } else {
        route.route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
    };
    route.with_state(state)
}

async fn metrics(Ext(state): Ext<State>) -> Response {
    let text = runner::metrics::exposition(&state.runner.gauges().await);
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(runner::metrics::CONTENT_TYPE),
    );
    response
}
