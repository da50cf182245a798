//! Test helper shared by the adapters' TLS tests (included with `#[path]`): starts
//! `https_reply.py` beside it.
#![allow(dead_code, clippy::unwrap_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub const TLS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tls");

/// The HTTPS server, stopped (its stdin closed) when dropped.
pub struct HttpsReply {
    child: Child,
    pub port: u16,
}

impl Drop for HttpsReply {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Starts `testdata/tls/https_reply.py` answering `body`; `None` (a skip) without python3,
/// except under `CI=true`, where the test must run.
pub fn https_reply(body: &serde_json::Value) -> Option<HttpsReply> {
    let spawned = Command::new("python3")
        .arg(format!("{TLS_DIR}/https_reply.py"))
        .arg(body.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: python3 cannot start ({e})");
            return None;
        }
        Err(e) => panic!("python3 is needed for the TLS tests under CI=true: {e}"),
    };
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("https_reply.py printed no port: {line:?}"));
    Some(HttpsReply { child, port })
}
