//! Accepting HTTP connections with bounds (docs/security.md, "Server"): at most
//! [`Limits::max_connections`] open connections (one more is closed at once), and a
//! deadline for a request's headers, so clients that connect and never finish a request
//! cannot pile up. Graceful shutdown waits a bounded time for open connections.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

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

/// Serves `router` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
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
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!(%peer, limit = limits.max_connections, "connection refused: too many open connections");
            drop(stream);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
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
