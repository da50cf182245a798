//! `/mcp` sessions, bounded and tied to the client that opened them (docs/security.md,
//! "The server"). rmcp's `LocalSessionManager` keeps a session until the client deletes
//! it, so a client that only ever calls `initialize` would grow the server without end; and
//! it never sees the HTTP request's token, so on its own it cannot tell whose a session is.
//!
//! Two parts share one book of open sessions:
//! - [`BoundedSessions`], the session manager rmcp calls: records when each session was last
//!   used, and closes the idle ones (unused for [`IDLE`]) before a new one opens;
//! - [`own_sessions`], a layer around the `/mcp` service that sees the token's
//!   [`Caller`]: a request naming a session another client opened (or one idle too long)
//!   is answered 404, as an unknown session is; a new session is recorded as its
//!   opener's, and an opener past [`PER_CLIENT`] sessions has its own least recently used
//!   one closed, never another client's. When [`MAX_SESSIONS`] are open and none is idle,
//!   a client still under its own bound is refused with 503 and `Retry-After`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use super::super::error::ApiError;
use runner::service::Caller;

/// Sessions open at once, whatever their tokens (docs/security.md).
pub const MAX_SESSIONS: usize = 256;
/// Sessions one token (one client) keeps open at once.
pub const PER_CLIENT: usize = 16;
/// A session unused this long is closed.
pub const IDLE: Duration = Duration::from_secs(15 * 60);

/// The header naming a request's session (MCP, streamable HTTP).
const SESSION_HEADER: &str = "mcp-session-id";

/// Who opened a session: the token's client.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Owner {
    /// The server's own token.
    Admin,
    /// A named token (`server-tokens.toml`).
    Named(String),
}

impl Owner {
    /// The owner of the sessions `client` opens; `None` for a caller without identity.
    fn of(client: &Caller) -> Option<Owner> {
        match client.name() {
            Some(name) => Some(Owner::Named(name.to_string())),
            None if client.is_admin() => Some(Owner::Admin),
            None => None,
        }
    }
}

/// One open session.
struct Open {
    used: Instant,
    /// Recorded once the `initialize` response names the session; until then nobody may
    /// use it (nobody has its id yet).
    owner: Option<Owner>,
}

/// The open sessions, and the new ones admitted but not yet recorded.
#[derive(Default)]
struct Book {
    open: HashMap<SessionId, Open>,
    /// `initialize` requests admitted and under way: counted against [`MAX_SESSIONS`].
    opening: usize,
}

impl Book {
    fn owned_by(&self, owner: &Owner) -> usize {
        self.open
            .values()
            .filter(|o| o.owner.as_ref() == Some(owner))
            .count()
    }

    /// Removes the sessions idle for `idle` or longer; their ids, to close.
    fn take_idle(&mut self, idle: Duration) -> Vec<SessionId> {
        let now = Instant::now();
        let gone: Vec<SessionId> = self
            .open
            .iter()
            .filter(|(_, o)| now.duration_since(o.used) >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            self.open.remove(id);
        }
        gone
    }
}

/// Whether a request may use the session it names.
#[derive(Debug, PartialEq, Eq)]
enum Access {
    /// The caller opened it and it is live.
    Own,
    /// Unknown, not yet recorded, or opened by another client.
    NotYours,
    /// The caller's, but unused for [`IDLE`]: closed now.
    Expired,
}

/// A new session would pass [`MAX_SESSIONS`], and the caller has none of its own to give up.
#[derive(Debug)]
struct Full;

/// An `initialize` admitted: counted as opening until dropped.
struct Admission<'a> {
    sessions: &'a BoundedSessions,
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        if let Ok(mut book) = self.sessions.book.lock() {
            book.opening = book.opening.saturating_sub(1);
        }
    }
}

/// rmcp's in-memory sessions, bounded in number and idle time, each tied to its opener.
pub struct BoundedSessions {
    inner: LocalSessionManager,
    book: Mutex<Book>,
    max: usize,
    per_client: usize,
    idle: Duration,
}

impl BoundedSessions {
    pub fn new(max: usize, per_client: usize, idle: Duration) -> BoundedSessions {
        BoundedSessions {
            inner: LocalSessionManager::default(),
            book: Mutex::new(Book::default()),
            max: max.max(1),
            per_client: per_client.clamp(1, max.max(1)),
            idle,
        }
    }

    /// Sessions open now.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.book.lock().map_or(0, |b| b.open.len())
    }

    fn touch(&self, id: &SessionId) {
        if let Ok(mut book) = self.book.lock() {
            if let Some(open) = book.open.get_mut(id) {
                open.used = Instant::now();
            }
        }
    }

    /// Closes `ids` in rmcp's manager (they are already out of the book).
    async fn close_all(&self, ids: Vec<SessionId>, why: &str) {
        for id in ids {
            tracing::debug!(session = %id, "MCP session closed ({why})");
            let _ = self.inner.close_session(&id).await;
        }
    }

    /// Whether `owner` may use session `id`; an expired one leaves the book (to close).
    fn access(&self, id: &SessionId, owner: &Owner) -> Access {
        let Ok(mut book) = self.book.lock() else {
            return Access::NotYours;
        };
        match book.open.get(id) {
            Some(open) if open.owner.as_ref() == Some(owner) => {
                if open.used.elapsed() >= self.idle {
                    book.open.remove(id);
                    Access::Expired
                } else {
                    Access::Own
                }
            }
            _ => Access::NotYours,
        }
    }

    /// Room for one more session of `owner`: the idle sessions leave the book (returned, to
    /// close); refused when the bound is reached and `owner` is under its own bound (an
    /// owner at its bound gives one of its own up once the new one is recorded).
    fn admit(&self, owner: &Owner) -> Result<(Admission<'_>, Vec<SessionId>), Full> {
        let Ok(mut book) = self.book.lock() else {
            return Err(Full);
        };
        let idle = book.take_idle(self.idle);
        if book.open.len() + book.opening >= self.max && book.owned_by(owner) < self.per_client {
            return Err(Full);
        }
        book.opening += 1;
        Ok((Admission { sessions: self }, idle))
    }

    /// Records `owner` as the opener of the new session `id`; while `owner` has more than
    /// its bound, its least recently used other session leaves the book (returned, to close).
    fn record(&self, id: &SessionId, owner: &Owner) -> Vec<SessionId> {
        let Ok(mut book) = self.book.lock() else {
            return Vec::new();
        };
        match book.open.get_mut(id) {
            Some(open) => open.owner = Some(owner.clone()),
            // Closed meanwhile (shutdown): nothing to record.
            None => return Vec::new(),
        }
        let mut gone = Vec::new();
        while book.owned_by(owner) > self.per_client {
            let Some(oldest) = book
                .open
                .iter()
                .filter(|(other, o)| *other != id && o.owner.as_ref() == Some(owner))
                .min_by_key(|(_, o)| o.used)
                .map(|(other, _)| other.clone())
            else {
                break;
            };
            book.open.remove(&oldest);
            gone.push(oldest);
        }
        gone
    }
}

/// rmcp's answer to an unknown session, given as well to a session of another client (so
/// that ids do not leak) and to an expired one.
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// Layer around the `/mcp` service, inside the token check (`auth.rs` put the request's
/// [`Caller`] in its extensions): a request naming a session is let through only when its
/// client opened that session; a request without one may open a session, which is then
/// recorded as the client's, within the bounds (module doc).
pub async fn own_sessions(
    State(sessions): State<Arc<BoundedSessions>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let Some(owner) = request.extensions().get::<Caller>().and_then(Owner::of) else {
        return ApiError::Unauthorized("missing API token".into()).into_response();
    };
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .map(|v| SessionId::from(String::from_utf8_lossy(v.as_bytes()).into_owned()));
    if let Some(id) = named {
        return match sessions.access(&id, &owner) {
            Access::Own => next.run(request).await,
            Access::NotYours => session_not_found(),
            Access::Expired => {
                sessions.close_all(vec![id], "idle").await;
                session_not_found()
            }
        };
    }
    // Without a session id only a POST `initialize` opens a session (rmcp refuses the rest).
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (admission, idle) = match sessions.admit(&owner) {
        Ok(admitted) => admitted,
        Err(Full) => {
            tracing::warn!("MCP session refused: {MAX_SESSIONS} sessions are open");
            return ApiError::Unavailable(format!(
                "the server has {} MCP sessions open; close one (DELETE /mcp) or retry later",
                sessions.max
            ))
            .into_response();
        }
    };
    sessions.close_all(idle, "idle").await;
    let response = next.run(request).await;
    let opened = response
        .headers()
        .get(SESSION_HEADER)
        .map(|v| SessionId::from(String::from_utf8_lossy(v.as_bytes()).into_owned()));
    if let Some(id) = opened {
        let past_bound = sessions.record(&id, &owner);
        sessions
            .close_all(past_bound, "its client opened more than its bound")
            .await;
    }
    drop(admission);
    response
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let idle = self
            .book
            .lock()
            .map(|mut b| b.take_idle(self.idle))
            .unwrap_or_default();
        self.close_all(idle, "idle").await;
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut book) = self.book.lock() {
            book.open.insert(
                id.clone(),
                Open {
                    used: Instant::now(),
                    owner: None,
                },
            );
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Ok(mut book) = self.book.lock() {
            book.open.remove(id);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // In-memory sessions cannot be restored after they were closed.
        let _ = id;
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Owner {
        Owner::Named("alice".into())
    }

    /// Opens a session for `owner` as the layer does: admitted, created, recorded.
    async fn open_as(sessions: &BoundedSessions, owner: &Owner) -> Result<SessionId, Full> {
        let (admission, idle) = sessions.admit(owner)?;
        sessions.close_all(idle, "idle").await;
        let (id, _) = sessions.create_session().await.unwrap();
        let past = sessions.record(&id, owner);
        sessions.close_all(past, "past the bound").await;
        drop(admission);
        Ok(id)
    }

    #[tokio::test]
    async fn a_client_past_its_bound_closes_its_own_least_recently_used_session() {
        let sessions = BoundedSessions::new(100, 3, IDLE);
        let bob = open_as(&sessions, &Owner::Named("bob".into()))
            .await
            .unwrap();
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(open_as(&sessions, &alice()).await.unwrap());
        }
        // The first is used again: the second is now alice's least recently used.
        sessions.touch(&ids[0]);
        let fourth = open_as(&sessions, &alice()).await.unwrap();
        assert_eq!(sessions.open(), 4);
        assert!(!sessions.has_session(&ids[1]).await.unwrap());
        assert!(sessions.has_session(&ids[0]).await.unwrap());
        assert!(sessions.has_session(&fourth).await.unwrap());
        for _ in 0..100 {
            open_as(&sessions, &alice()).await.unwrap();
        }
        assert_eq!(sessions.open(), 4);
        assert!(sessions.has_session(&bob).await.unwrap());
        assert_eq!(
            sessions.access(&bob, &Owner::Named("bob".into())),
            Access::Own
        );
        assert_eq!(sessions.access(&bob, &alice()), Access::NotYours);
        assert_eq!(sessions.access(&bob, &Owner::Admin), Access::NotYours);
    }

    #[tokio::test]
    async fn past_the_global_bound_a_client_under_its_own_is_refused_and_nobody_is_closed() {
        let sessions = BoundedSessions::new(4, 2, IDLE);
        let mut all = Vec::new();
        for name in ["a", "b"] {
            for _ in 0..2 {
                all.push(
                    open_as(&sessions, &Owner::Named(name.into()))
                        .await
                        .unwrap(),
                );
            }
        }
        assert!(open_as(&sessions, &Owner::Admin).await.is_err());
        // A client at its own bound may still open one: it gives up its own oldest.
        open_as(&sessions, &Owner::Named("a".into())).await.unwrap();
        assert_eq!(sessions.open(), 4);
        assert!(!sessions.has_session(&all[0]).await.unwrap());
        for id in &all[1..] {
            assert!(sessions.has_session(id).await.unwrap());
        }
    }

    #[tokio::test]
    async fn idle_sessions_are_closed_and_refused() {
        let sessions = BoundedSessions::new(100, 10, Duration::ZERO);
        let first = open_as(&sessions, &alice()).await.unwrap();
        assert_eq!(sessions.access(&first, &alice()), Access::Expired);
        let second = open_as(&sessions, &alice()).await.unwrap();
        let third = open_as(&sessions, &alice()).await.unwrap();
        assert!(!sessions.has_session(&second).await.unwrap());
        assert!(sessions.has_session(&third).await.unwrap());
        assert_eq!(sessions.open(), 1);
    }
}
