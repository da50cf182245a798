//! `/mcp` sessions with bounds (docs/security.md, "The server"): at most
//! [`MAX_SESSIONS`] at once and none idle longer than [`IDLE`]. rmcp's
//! `LocalSessionManager` keeps a session until the client deletes it, so a client that
//! only ever calls `initialize` grows the server without end. This wrapper records when
//! each session was last used; a new session first closes the idle ones and, when the
//! bound is reached, the least recently used one.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// Sessions open at once, whatever their tokens (docs/security.md).
pub const MAX_SESSIONS: usize = 256;
/// A session unused this long is closed.
pub const IDLE: Duration = Duration::from_secs(15 * 60);

/// rmcp's in-memory sessions, bounded in number and idle time.
pub struct BoundedSessions {
    inner: LocalSessionManager,
    /// When each open session was last used.
    used: Mutex<HashMap<SessionId, Instant>>,
    max: usize,
    idle: Duration,
}

impl BoundedSessions {
    pub fn new(max: usize, idle: Duration) -> BoundedSessions {
        BoundedSessions {
            inner: LocalSessionManager::default(),
            used: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
        }
    }

    /// Sessions open now.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.used.lock().map_or(0, |u| u.len())
    }

    fn touch(&self, id: &SessionId) {
        if let Ok(mut used) = self.used.lock() {
            if let Some(at) = used.get_mut(id) {
                *at = Instant::now();
            }
        }
    }

    /// The sessions to close before one more opens: the idle ones, then the least
    /// recently used while the bound would be passed.
    fn to_close(&self) -> Vec<SessionId> {
        let Ok(mut used) = self.used.lock() else {
            return Vec::new();
        };
        let now = Instant::now();
        let mut gone: Vec<SessionId> = used
            .iter()
            .filter(|(_, at)| now.duration_since(**at) >= self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            used.remove(id);
        }
        while used.len() >= self.max {
            let Some(oldest) = used
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            used.remove(&oldest);
            gone.push(oldest);
        }
        gone
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        for id in self.to_close() {
            tracing::debug!(session = %id, "MCP session closed (idle, or the oldest past the bound)");
            let _ = self.inner.close_session(&id).await;
        }
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut used) = self.used.lock() {
            used.insert(id.clone(), Instant::now());
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
        if let Ok(mut used) = self.used.lock() {
            used.remove(id);
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_past_the_bound_close_the_least_recently_used() {
        let sessions = BoundedSessions::new(3, IDLE);
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(sessions.create_session().await.unwrap().0);
        }
        // The first is used again: the second is now the least recently used.
        sessions.touch(&ids[0]);
        let (fourth, _) = sessions.create_session().await.unwrap();
        assert_eq!(sessions.open(), 3);
        assert!(!sessions.has_session(&ids[1]).await.unwrap());
        assert!(sessions.has_session(&ids[0]).await.unwrap());
        assert!(sessions.has_session(&fourth).await.unwrap());
        for _ in 0..100 {
            sessions.create_session().await.unwrap();
        }
        assert_eq!(sessions.open(), 3);
    }

    #[tokio::test]
    async fn idle_sessions_are_closed_when_a_new_one_opens() {
        let sessions = BoundedSessions::new(100, Duration::ZERO);
        let (first, _) = sessions.create_session().await.unwrap();
        let (second, _) = sessions.create_session().await.unwrap();
        assert!(!sessions.has_session(&first).await.unwrap());
        assert!(sessions.has_session(&second).await.unwrap());
        assert_eq!(sessions.open(), 1);
    }
}
