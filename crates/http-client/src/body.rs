//! Reading a reply's body within limits: a whole body up to so many bytes, or an event
//! stream piece by piece with an idle limit between pieces as well. Past a limit reading
//! stops (dropping the response drops its connection).

use std::time::Duration;

/// Why a body could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The body is (or says it is) larger than `limit` bytes.
    #[error("the reply is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    /// Nothing arrived on the stream for `idle`.
    #[error("nothing arrived for {} s", idle.as_secs_f64())]
    Stalled { idle: Duration },
    /// The connection failed or timed out while reading.
    #[error("{}", crate::error_chain(.0))]
    Transport(#[source] reqwest::Error),
}

/// The whole body, read piece by piece up to `limit` bytes.
pub async fn read_body(mut response: reqwest::Response, limit: u64) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|len| len > limit) {
        return Err(BodyError::TooLarge { limit });
    }
    let mut raw = Vec::new();
    while let Some(piece) = response.chunk().await.map_err(BodyError::Transport)? {
        if (raw.len() as u64).saturating_add(piece.len() as u64) > limit {
            return Err(BodyError::TooLarge { limit });
        }
        raw.extend_from_slice(&piece);
    }
    Ok(raw)
}

/// Reads a stream's pieces into `feed` until the body ends or `feed` says the stream is
/// done (`Ok(true)`), with at most `idle` between pieces and `limit` bytes in all. A read
/// failure becomes the caller's error through `body_error`; `feed`'s errors stop reading.
pub async fn read_stream<E>(
    mut response: reqwest::Response,
    idle: Duration,
    limit: u64,
    mut feed: impl FnMut(&[u8]) -> Result<bool, E>,
    body_error: impl Fn(BodyError) -> E,
) -> Result<(), E> {
    let mut read: u64 = 0;
    loop {
        let next = tokio::time::timeout(idle, response.chunk())
            .await
            .map_err(|_| body_error(BodyError::Stalled { idle }))?
            .map_err(|e| body_error(BodyError::Transport(e)))?;
        let Some(bytes) = next else {
            return Ok(());
        };
        read = read.saturating_add(bytes.len() as u64);
        if read > limit {
            return Err(body_error(BodyError::TooLarge { limit }));
        }
        if feed(&bytes)? {
            return Ok(());
        }
    }
}
