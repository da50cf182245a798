//! Chromium's DevTools over a pipe instead of a TCP port (docs/security.md, "The browser").
//!
//! Chromium is started with `--remote-debugging-pipe`: it reads DevTools commands from its
//! file descriptor 3 and writes answers and events to descriptor 4, each message ended by a
//! NUL byte, and listens on no port. chromiumoxide only speaks WebSocket, so
//! [`bridge`] gives it one connection: a listener on 127.0.0.1 whose only accepted path
//! holds a fresh 128-bit secret, closed as soon as that one connection is made (or when the
//! launch time runs out). From then on nothing listens, and a port scan by a command that
//! shares the host's network finds no DevTools endpoint to open `file://` tabs through.

use std::net::Ipv4Addr;
use std::time::Duration;

use async_tungstenite::tokio::{accept_hdr_async_with_config, TokioAdapter};
use async_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use async_tungstenite::tungstenite::http::StatusCode;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use async_tungstenite::tungstenite::Message;
use async_tungstenite::WebSocketStream;
use futures_util::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

type DevToolsSocket = WebSocketStream<TokioAdapter<TcpStream>>;

/// Starts the bridge between one WebSocket client and Chromium's pipe. Returns the
/// `ws://` address to connect to (valid for one connection, within `accept_limit`) and the
/// task that carries the messages; it ends when either side closes.
pub(crate) async fn bridge(
    to_chromium: ChildStdin,
    from_chromium: ChildStdout,
    accept_limit: Duration,
) -> std::io::Result<(String, JoinHandle<()>)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let port = listener.local_addr()?.port();
    let path = format!("/devtools/browser/{}", uuid::Uuid::new_v4().simple());
    let url = format!("ws://127.0.0.1:{port}{path}");
    let task = tokio::spawn(async move {
        let Some(socket) = accept_one(listener, path, accept_limit).await else {
            tracing::warn!("nobody connected to the browser's DevTools bridge in time");
            return;
        };
        pump(socket, to_chromium, from_chromium).await;
    });
    Ok((url, task))
}

/// The first connection that asks for `path`; the listener is closed when this returns.
/// Handshakes run side by side, so a client that connects and says nothing holds up no one.
async fn accept_one(
    listener: TcpListener,
    path: String,
    limit: Duration,
) -> Option<DevToolsSocket> {
    let (found_tx, mut found) = mpsc::channel::<DevToolsSocket>(1);
    let mut handshakes = JoinSet::new();
    let deadline = tokio::time::sleep(limit);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => return None,
            Some(socket) = found.recv() => return Some(socket),
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let path = path.clone();
                let found_tx = found_tx.clone();
                handshakes.spawn(async move {
                    // tungstenite's callback type fixes the (large) error type.
                    #[allow(clippy::result_large_err)]
                    let check = |request: &Request, response: Response| {
                        if request.uri().path() == path {
                            Ok(response)
                        } else {
                            tracing::warn!(%peer, "refused a DevTools connection with the wrong path");
                            let mut refusal = ErrorResponse::new(None);
                            *refusal.status_mut() = StatusCode::NOT_FOUND;
                            Err(refusal)
                        }
                    };
                    let config = WebSocketConfig::default()
                        .max_message_size(None)
                        .max_frame_size(None);
                    let handshake = accept_hdr_async_with_config(stream, check, Some(config));
                    if let Ok(Ok(socket)) = tokio::time::timeout(limit, handshake).await {
                        let _ = found_tx.send(socket).await;
                    }
                });
            }
        }
    }
}

/// Carries WebSocket text frames to the pipe (each followed by NUL) and NUL-ended pipe
/// messages back as text frames, until one side closes; then both are closed.
async fn pump(socket: DevToolsSocket, mut to_chromium: ChildStdin, from_chromium: ChildStdout) {
    let (mut sink, mut stream) = socket.split();
    let inbound = async {
        let mut reader = BufReader::new(from_chromium);
        let mut message = Vec::new();
        loop {
            message.clear();
            match reader.read_until(0, &mut message).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if message.last() == Some(&0) {
                message.pop();
            }
            let Ok(text) = String::from_utf8(std::mem::take(&mut message)) else {
                tracing::debug!("Chromium sent a DevTools message that is not UTF-8");
                continue;
            };
            if sink.send(Message::text(text)).await.is_err() {
                break;
            }
        }
        let _ = sink.close(None).await;
    };
    let outbound = async {
        while let Some(Ok(message)) = stream.next().await {
            let bytes = match &message {
                Message::Text(text) => text.as_bytes(),
                Message::Binary(bytes) => bytes.as_ref(),
                Message::Close(_) => break,
                _ => continue,
            };
            let sent = async {
                to_chromium.write_all(bytes).await?;
                to_chromium.write_all(b"\0").await?;
                to_chromium.flush().await
            };
            if sent.await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        _ = inbound => {}
        _ = outbound => {}
    }
    tracing::debug!("the browser's DevTools pipe closed");
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_tungstenite::tokio::connect_async;

    /// `cat` plays Chromium: every message written to its pipe comes back.
    #[tokio::test]
    async fn one_client_with_the_secret_path_then_no_listener() {
        let mut cat = tokio::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (to, from) = (cat.stdin.take().unwrap(), cat.stdout.take().unwrap());
        let (url, _task) = bridge(to, from, Duration::from_secs(10)).await.unwrap();
        let (base, secret) = url.rsplit_once('/').unwrap();
        assert_eq!(secret.len(), 32, "{url}");

        // A scanner that knows the port but not the secret is turned away.
        let guessed = format!("{base}/00000000000000000000000000000000");
        assert!(connect_async(guessed.as_str()).await.is_err());
        let listing = format!(
            "{}/json/version",
            base.trim_end_matches("/devtools/browser")
        );
        assert!(connect_async(listing.as_str()).await.is_err());

        let (mut socket, _) = connect_async(url.as_str()).await.unwrap();
        socket.send(Message::text("{\"id\":1}")).await.unwrap();
        let echoed = socket.next().await.unwrap().unwrap();
        assert_eq!(echoed, Message::text("{\"id\":1}"));

        // The listener is gone once the one connection is made.
        let port = url
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .unwrap();
        let again = TcpStream::connect(format!("127.0.0.1:{port}")).await;
        assert!(again.is_err(), "the bridge still listens on {port}");
    }
}
