//! `GET /v1/runs/{id}/events`: every event of a run as Server-Sent Events.
//!
//! The runner's feed (`RunService::follow`: the store replayed after `Last-Event-ID` or
//! `?after=`, then the live events, each once) as SSE frames: each event with its sequence
//! number as id and its kind as the SSE event name. The stream ends after the run's final
//! event (`run_completed` / `run_failed`), or with a `run_cancelled` / `run_error` frame
//! (no id) for a run that stopped without one, or a `stream_error` frame when the store
//! cannot be read.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Query, State as Ext};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use domain::model::event::Event;
use futures_util::stream::Stream;
use serde::Deserialize;

use super::error::ApiError;
use super::State;
use runner::service::{Caller, FeedItem, RunFeed, RunStopped};

#[derive(Debug, Deserialize)]
pub struct EventsQuery {
    /// Replay after this sequence number (same as `Last-Event-ID`).
    #[serde(default)]
    after: Option<u64>,
}

pub async fn events(
    Ext(state): Ext<State>,
    Extension(client): Extension<Caller>,
    UrlPath(run_id): UrlPath<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let last_event_id = match headers.get("last-event-id") {
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::BadRequest("Last-Event-ID must be an event sequence number".into())
                })?,
        ),
        None => None,
    };
    let after = last_event_id.or(query.after).unwrap_or(0);
    let feed = state.service.follow(&client, &run_id, after).await?;
    Ok(Sse::new(frames(run_id, feed))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

/// The feed's items as SSE frames, until the feed ends.
fn frames(run_id: String, mut feed: RunFeed) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures_util::stream::poll_fn(move |cx| {
        feed.poll_next(cx)
            .map(|item| item.map(|item| Ok(frame(&run_id, item))))
    })
}

/// One feed item as its SSE frame.
fn frame(run_id: &str, item: FeedItem) -> SseEvent {
    match item {
        FeedItem::Event(e) => event_frame(&e),
        FeedItem::Stopped(why) => {
            let kind = match why {
                RunStopped::CancelledBeforeStart => "run_cancelled",
                RunStopped::Errored(_) => "run_error",
            };
            let data = serde_json::json!({"run_id": run_id, "message": why.message()});
            SseEvent::default().event(kind).data(data.to_string())
        }
        FeedItem::Unreadable(e) => SseEvent::default()
            .event("stream_error")
            .data(serde_json::json!({"error": ApiError::from(e).to_string()}).to_string()),
    }
}

fn event_frame(e: &Event) -> SseEvent {
    let data = serde_json::to_string(e).unwrap_or_else(|_| "{}".to_string());
    SseEvent::default()
        .id(e.seq.to_string())
        .event(e.kind.name())
        .data(data)
}
