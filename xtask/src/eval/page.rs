//! The browser task's web page, served on 127.0.0.1 from a plain `TcpListener` thread for
//! the whole eval. Every GET is answered with the page (a favicon request gets 404).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// Starts serving `html` on a free port; returns the page's URL.
pub(crate) fn serve(html: String) -> Result<String, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding 127.0.0.1:0: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("reading the page server's address: {e}"))?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            answer(stream, &html);
        }
    });
    Ok(format!("http://{addr}/"))
}

fn answer(mut stream: TcpStream, html: &str) {
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
    let (status, body) = if path.starts_with("/favicon") {
        ("404 Not Found", "")
    } else {
        ("200 OK", html)
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

    fn get(url: &str, path: &str) -> String {
        let addr = url.trim_start_matches("http://").trim_end_matches('/');
        let mut s = TcpStream::connect(addr).expect("connect");
        write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("send");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        out
    }

    #[test]
    fn the_page_is_served_on_loopback() {
        let url = serve("<p>code XYZ</p>".to_string()).expect("serves");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let reply = get(&url, "/");
        assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
        assert!(reply.ends_with("<p>code XYZ</p>"), "{reply}");
        assert!(get(&url, "/favicon.ico").starts_with("HTTP/1.1 404"));
    }
}
