//! The browser family's web pages, served on 127.0.0.1 from a plain `TcpListener` thread
//! for the whole eval: each instance adds its page under its own path; any other path
//! gets 404.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The running server: its address and the pages it serves.
#[derive(Debug, Clone)]
pub(crate) struct Pages {
    base: String,
    pages: Arc<Mutex<BTreeMap<String, String>>>,
}

impl Pages {
    /// Serves `html` at `/NAME` (NAME made URL-safe); returns the page's URL.
    pub(crate) fn add(&self, name: &str, html: &str) -> String {
        let path: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.pages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(format!("/{path}"), html.to_string());
        format!("{}{path}", self.base)
    }
}

/// Starts serving on a free port.
pub(crate) fn serve() -> Result<Pages, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding 127.0.0.1:0: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("reading the page server's address: {e}"))?;
    let pages = Pages {
        base: format!("http://{addr}/"),
        pages: Arc::new(Mutex::new(BTreeMap::new())),
    };
    let served = pages.pages.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            answer(stream, &served);
        }
    });
    Ok(pages)
}

fn answer(mut stream: TcpStream, pages: &Mutex<BTreeMap<String, String>>) {
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    // Read the request head (bounded), enough to see the path.
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request);
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let path = path
        .strip_suffix('/')
        .filter(|p| !p.is_empty())
        .unwrap_or(path);
    let page = pages
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(path)
        .cloned();
    let (status, body) = match &page {
        Some(html) => ("200 OK", html.as_str()),
        None => ("404 Not Found", ""),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(url: &str) -> String {
        let rest = url.trim_start_matches("http://");
        let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
        let mut s = TcpStream::connect(addr).expect("connect");
        write!(s, "GET /{path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("send");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        out
    }

    #[test]
    fn each_page_is_served_on_loopback_at_its_own_path() {
        let pages = serve().expect("serves");
        let one = pages.add("browser_secret-01", "<p>code XYZ</p>");
        let two = pages.add("browser_secret-02", "<p>code ABC</p>");
        assert!(one.starts_with("http://127.0.0.1:"), "{one}");
        assert!(one.ends_with("/browser-secret-01"), "{one}");
        let reply = get(&one);
        assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
        assert!(reply.ends_with("<p>code XYZ</p>"), "{reply}");
        assert!(get(&format!("{two}/")).ends_with("<p>code ABC</p>"));
        assert!(get(&format!("{two}?x=1")).ends_with("<p>code ABC</p>"));
        let root = one.trim_end_matches("browser-secret-01");
        assert!(get(root).starts_with("HTTP/1.1 404"));
        assert!(get(&format!("{root}favicon.ico")).starts_with("HTTP/1.1 404"));
    }
}
