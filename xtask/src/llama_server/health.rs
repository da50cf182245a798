//! Waiting for a started server: `GET /health` over a plain `TcpStream` until it answers
//! 200 (llama-server answers 503 while it loads the model), the process exits, or time runs
//! out.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Pause between two polls.
const POLL: Duration = Duration::from_millis(100);

/// The status code of `GET /health` at `addr`, or `None` when nothing answers (yet).
pub(crate) fn health_status(addr: SocketAddr) -> Option<u16> {
    let timeout = Duration::from_secs(2);
    let mut stream = TcpStream::connect_timeout(&addr, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    // One write: `write!` on the socket sends each piece on its own, and a server that
    // answers after the first piece and closes with the rest unread resets the connection
    // before its answer is read.
    let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    // The status line is all we need: `HTTP/1.1 200 OK`.
    let mut head = Vec::new();
    let mut buf = [0u8; 256];
    while !head.contains(&b'\n') && head.len() < 4096 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&head)
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
}

/// Polls `GET /health` at `addr` until it answers 200. `exited` is asked between polls and
/// returns why the process is gone, if it is; `limit` bounds the wait.
pub(crate) fn wait_until_healthy(
    addr: SocketAddr,
    limit: Duration,
    mut exited: impl FnMut() -> Option<String>,
) -> Result<Duration, String> {
    let started = Instant::now();
    let mut last = None;
    loop {
        let status = health_status(addr);
        if status == Some(200) {
            return Ok(started.elapsed());
        }
        last = status.or(last);
        if let Some(why) = exited() {
            return Err(format!("the server exited before it was ready: {why}"));
        }
        if started.elapsed() >= limit {
            return Err(format!(
                "http://{addr}/health did not answer 200 within {} s (last answer: {})",
                limit.as_secs(),
                last.map_or_else(|| "none".to_string(), |s| s.to_string())
            ));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A stub answering `/health` with 503 for its first `loading` requests, then 200;
    /// returns its address and the count of requests seen.
    fn stub(loading: usize) -> (SocketAddr, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&seen);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                // The whole request, so that closing leaves nothing unread.
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let status = if n < loading {
                    "503 Service Unavailable"
                } else {
                    "200 OK"
                };
                let body = "{}";
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (addr, seen)
    }

    #[test]
    fn the_wait_ends_at_the_first_200() {
        let (addr, seen) = stub(3);
        assert_eq!(health_status(addr), Some(503));
        wait_until_healthy(addr, Duration::from_secs(30), || None).expect("healthy");
        // Two more 503s, then the 200.
        assert_eq!(seen.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn a_server_that_stays_loading_times_out() {
        let (addr, _) = stub(usize::MAX);
        let err =
            wait_until_healthy(addr, Duration::from_millis(300), || None).expect_err("never ready");
        assert!(
            err.contains("did not answer 200") && err.contains("last answer: 503"),
            "{err}"
        );
    }

    #[test]
    fn a_process_that_exits_stops_the_wait() {
        // Nothing listens on a port just freed.
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("addr");
        assert_eq!(health_status(addr), None);
        let err = wait_until_healthy(addr, Duration::from_secs(30), || {
            Some("exit status: 1".to_string())
        })
        .expect_err("exited");
        assert!(
            err.contains("exited before it was ready: exit status: 1"),
            "{err}"
        );
    }
}
