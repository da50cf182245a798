//! A streamed `POST /completion` to llama-server over a plain `TcpStream` (HTTP/1.1,
//! chunked or not), timing the first token as it arrives and reading the last event's
//! `timings`. No HTTP client crate: this bench is the only user, and it needs the moment
//! each byte arrives, which a small reader gives plainly.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One streamed completion as the client saw it.
#[derive(Debug, Clone, Default)]
pub struct Streamed {
    /// The generated text.
    pub text: String,
    /// From sending the request to the first event carrying text.
    pub first_token: Duration,
    /// From sending the request to the last event.
    pub total: Duration,
    /// The server's own figures (`timings` of the last event).
    pub cached_tokens: u32,
    pub prompt_tokens_read: u32,
    pub prompt_ms: f64,
    pub generated_tokens: u32,
    pub generation_ms: f64,
}

/// Streams `body` (a `/completion` request with `"stream": true`) to `base_url`
/// (`http://127.0.0.1:PORT`).
pub fn stream_completion(base_url: &str, body: &Value) -> Result<Streamed, String> {
    let host = base_url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{base_url}: only http:// is supported"))?
        .trim_end_matches('/');
    let payload = body.to_string();
    let mut stream = TcpStream::connect(host).map_err(|e| format!("connecting {host}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(600)))
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    write!(
        stream,
        "POST /completion HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .map_err(|e| format!("sending the request: {e}"))?;
    let mut reader = BufReader::new(stream);
    let (status, chunked) = read_head(&mut reader)?;
    let body: Box<dyn Read> = if chunked {
        Box::new(Chunked::new(reader))
    } else {
        Box::new(reader)
    };
    let mut lines = BufReader::new(body);
    if status != 200 {
        let mut text = String::new();
        let _ = lines.read_to_string(&mut text);
        return Err(format!("HTTP {status}: {}", text.trim()));
    }
    let mut out = Streamed::default();
    let mut first = None;
    let mut line = String::new();
    loop {
        line.clear();
        let n = lines
            .read_line(&mut line)
            .map_err(|e| format!("reading the stream: {e}"))?;
        if n == 0 {
            return Err("the stream ended without a last event".to_string());
        }
        let Some(data) = line.trim().strip_prefix("data:") else {
            continue;
        };
        let event: Value =
            serde_json::from_str(data.trim()).map_err(|e| format!("event {data:?}: {e}"))?;
        if let Some(content) = event["content"].as_str().filter(|c| !c.is_empty()) {
            first.get_or_insert_with(|| started.elapsed());
            out.text.push_str(content);
        }
        if event["stop"].as_bool() == Some(true) {
            out.total = started.elapsed();
            out.first_token = first.unwrap_or(out.total);
            let t = &event["timings"];
            let count = |k: &str| u32::try_from(t[k].as_u64().unwrap_or(0)).unwrap_or(u32::MAX);
            out.cached_tokens = count("cache_n");
            out.prompt_tokens_read = count("prompt_n");
            out.prompt_ms = t["prompt_ms"].as_f64().unwrap_or(0.0);
            out.generated_tokens = count("predicted_n");
            out.generation_ms = t["predicted_ms"].as_f64().unwrap_or(0.0);
            return Ok(out);
        }
    }
}

/// The status code and whether the body is chunked.
fn read_head(reader: &mut impl BufRead) -> Result<(u16, bool), String> {
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| format!("reading the status line: {e}"))?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {line:?}"))?;
    let mut chunked = false;
    loop {
        line.clear();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("reading the headers: {e}"))?;
        let header = line.trim();
        if header.is_empty() {
            return Ok((status, chunked));
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("transfer-encoding")
                && value.trim().eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
    }
}

/// A chunked body's bytes, as they arrive.
struct Chunked<R> {
    inner: R,
    left: usize,
    done: bool,
}

impl<R: BufRead> Chunked<R> {
    fn new(inner: R) -> Chunked<R> {
        Chunked {
            inner,
            left: 0,
            done: false,
        }
    }
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        if self.left == 0 {
            let mut size = String::new();
            self.inner.read_line(&mut size)?;
            // A chunk's own CRLF ends the chunk before: skip the blank line.
            if size.trim().is_empty() {
                size.clear();
                self.inner.read_line(&mut size)?;
            }
            let hex = size.trim().split(';').next().unwrap_or("");
            self.left = usize::from_str_radix(hex, 16).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{size:?}: {e}"))
            })?;
            if self.left == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        let want = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n;
        Ok(n)
    }
}
