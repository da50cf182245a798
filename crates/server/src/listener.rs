//! Accepting HTTP connections with bounds (docs/security.md, "Server"): at most
//! [`Limits::max_connections`] open connections, and a deadline for a request's headers,
//! so clients that connect and never finish a request cannot pile up. When every place is
//! taken, the oldest connection that has not sent a whole request yet is closed to make
//! room (idle sockets cannot lock out health checks and real clients); only when every
//! connection is serving a request is a new one closed at once. Graceful shutdown waits a
//! bounded time for open connections.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// How long a new connection waits for the place of the connection closed for it.
const ROOM_WAIT: Duration = Duration::from_millis(500);

/// The bounds of the listener.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most (SSE streams included).
    pub max_connections: usize,
    /// Time a client has to send a request's headers.
    pub header_timeout: Duration,
    /// How long shutdown waits for open connections.
    pub drain: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            drain: Duration::from_secs(5),
        }
    }
}

/// The connections that have not sent a whole request yet, oldest first: the ones closed
/// to make room for a new connection.
#[derive(Default)]
struct Unstarted(Mutex<VecDeque<(u64, CancellationToken)>>);

impl Unstarted {
    fn push(&self, id: u64, close: CancellationToken) {
        if let Ok(mut q) = self.0.lock() {
            q.push_back((id, close));
        }
    }

    /// Connection `id` sent a request (or ended): it is no longer a candidate.
    fn remove(&self, id: u64) {
        if let Ok(mut q) = self.0.lock() {
            q.retain(|(i, _)| *i != id);
        }
    }

    /// Closes the oldest connection without a request; false when there is none.
    fn close_oldest(&self) -> bool {
        let oldest = self.0.lock().ok().and_then(|mut q| q.pop_front());
        oldest.is_some_and(|(_, close)| {
            close.cancel();
            true
        })
    }
}

/// Serves `router` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let unstarted = Arc::new(Unstarted::default());
    let mut next_id: u64 = 0;
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly, keep serving.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(permit) => Some(permit),
            // Full: make room by closing the oldest connection still without a request.
            Err(_) if unstarted.close_oldest() => {
                tokio::time::timeout(ROOM_WAIT, Arc::clone(&permits).acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
            Err(_) => None,
        };
        let Some(permit) = permit else {
            tracing::warn!(%peer, limit = limits.max_connections, "connection refused: too many open connections");
            drop(stream);
            continue;
        };
        next_id += 1;
        let id = next_id;
        let close = CancellationToken::new();
        unstarted.push(id, close.clone());
        let started = Arc::new(AtomicBool::new(false));
        let inner = hyper_util::service::TowerToHyperService::new(router.clone());
        let on_request = Arc::clone(&unstarted);
        let service = hyper::service::service_fn(move |request| {
            if !started.swap(true, Ordering::Relaxed) {
                on_request.remove(id);
            }
            hyper::service::Service::call(&inner, request)
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        let unstarted = Arc::clone(&unstarted);
        tokio::spawn(async move {
            tokio::select! {
                result = connection => if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                },
                () = close.cancelled() => {
                    tracing::debug!(%peer, "connection without a request closed to make room");
                }
            }
            unstarted.remove(id);
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.drain) => {
            tracing::info!("shutdown: open connections (event streams) closed");
        }
    }
}
