//! What an operation on runs answers when it cannot do what was asked: the HTTP API turns it
//! into a status and `{"error": "..."}`, the MCP service into a tool error.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use runner::service::RunServiceError;

/// An API failure: a status and `{"error": "..."}`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Internal(String),
    /// The store is down for now: 503 with `Retry-After`.
    #[error("{0}")]
    Unavailable(String),
}

/// Seconds a client is told to wait after a 503 (`Retry-After`).
const RETRY_AFTER_SECS: &str = "5";

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, Json(json!({"error": self.to_string()}))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECS),
            );
        }
        response
    }
}

/// The HTTP API's answer to a run operation's failure: each kind its status.
impl From<RunServiceError> for ApiError {
    fn from(e: RunServiceError) -> ApiError {
        match e {
            RunServiceError::BadRequest(m) => ApiError::BadRequest(m),
            RunServiceError::Forbidden(m) => ApiError::Forbidden(m),
            RunServiceError::NotFound(m) => ApiError::NotFound(m),
            RunServiceError::Conflict(m) => ApiError::Conflict(m),
            RunServiceError::Unavailable(m) => ApiError::Unavailable(m),
            RunServiceError::Internal(m) => ApiError::Internal(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::StoreError;

    /// Issue 29: the body named the database URL (user, host, port, name); an outage was 500.
    #[test]
    fn store_errors_never_show_the_database_and_an_outage_is_503_with_retry_after() {
        let url = "create_run of run 'r' on postgres://planwright@db.internal:5432/prod";
        for (error, status) in [
            (
                StoreError::Unavailable(url.into()),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (StoreError::Unstorable(url.into()), StatusCode::BAD_REQUEST),
            (
                StoreError::Corrupt(url.into()),
                StatusCode::INTERNAL_SERVER_ERROR,
            ),
            (StoreError::Conflict(url.into()), StatusCode::CONFLICT),
        ] {
            let api = ApiError::from(runner::service::store_error(error));
            assert!(!api.to_string().contains("postgres"), "{api}");
            let response = api.into_response();
            assert_eq!(response.status(), status);
            assert_eq!(
                response.headers().get(header::RETRY_AFTER).is_some(),
                status == StatusCode::SERVICE_UNAVAILABLE
            );
        }
    }
}
