//! The address guard: a SOCKS5 proxy on 127.0.0.1, one per browser, that every connection
//! Chromium makes goes through (`--proxy-server=socks5://…` with `--proxy-bypass-list=
//! <-loopback>`, so not even `localhost` is exempt). Chromium hands it host names
//! unresolved; the guard resolves them itself, checks *every* address against
//! [`crate::address_policy`] and connects only to an address it checked, so a page, a
//! redirect, a script's `fetch`, a WebSocket or a DNS name that points at 127.0.0.1 all meet
//! the same refusal, and a name cannot resolve differently between check and connection.
//!
//! Why a connection failed is kept for the session ([`AddressGuard::take_failures`]):
//! Chromium only reports a failed proxy connection, and the model should read "connection
//! refused" or "refused: loopback address, see --browser-allow-local" instead.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::address_policy::{self, AddressClass};
use crate::own_addresses::OwnAddresses;

/// Failures kept between two looks (older ones are dropped).
const MAX_FAILURES: usize = 32;

/// SOCKS5 reply codes (RFC 1928).
const REPLY_OK: u8 = 0;
const REPLY_GENERAL_FAILURE: u8 = 1;
const REPLY_NOT_ALLOWED: u8 = 2;
const REPLY_HOST_UNREACHABLE: u8 = 4;
const REPLY_CONNECTION_REFUSED: u8 = 5;
const REPLY_TTL_EXPIRED: u8 = 6;
const REPLY_COMMAND_NOT_SUPPORTED: u8 = 7;
const REPLY_ADDRESS_TYPE_NOT_SUPPORTED: u8 = 8;

/// Why the guard did not connect the browser to `host`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GuardFailure {
    pub host: String,
    pub kind: FailureKind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FailureKind {
    /// The policy refused an address `host` resolved to.
    Refused { ip: IpAddr, class: AddressClass },
    /// The name did not resolve.
    Unresolved,
    /// Nothing listened there.
    ConnectionRefused,
    /// The server did not accept the connection in time.
    TimedOut,
    /// Another network error.
    Unreachable,
}

impl GuardFailure {
    /// The Chromium error code the failure would have had without the proxy in between.
    pub(crate) fn net_error(&self) -> &'static str {
        match self.kind {
            FailureKind::Refused { .. } => "net::ERR_BLOCKED_BY_CLIENT",
            FailureKind::Unresolved => "net::ERR_NAME_NOT_RESOLVED",
            FailureKind::ConnectionRefused => "net::ERR_CONNECTION_REFUSED",
            FailureKind::TimedOut => "net::ERR_CONNECTION_TIMED_OUT",
            FailureKind::Unreachable => "net::ERR_ADDRESS_UNREACHABLE",
        }
    }

    /// The policy's refusal text, if this was a refusal.
    pub(crate) fn refusal(&self) -> Option<String> {
        match self.kind {
            FailureKind::Refused { ip, class } => {
                Some(address_policy::refusal_text(&self.host, ip, class))
            }
            _ => None,
        }
    }
}

/// A running guard. Dropping it stops it and every connection through it.
pub(crate) struct AddressGuard {
    port: u16,
    failures: Arc<StdMutex<Vec<GuardFailure>>>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Drop for AddressGuard {
    fn drop(&mut self) {
        self.stop.cancel();
        self.task.abort();
    }
}

impl AddressGuard {
    /// Starts a guard on a free port of 127.0.0.1. `connect_timeout` bounds name resolution
    /// and each connection attempt; `this_machine`: addresses the process serves on, refused
    /// like the machine's interfaces' (read by the guard itself).
    pub(crate) async fn start(
        allow_local: bool,
        connect_timeout: Duration,
        this_machine: Vec<IpAddr>,
    ) -> std::io::Result<AddressGuard> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let failures = Arc::new(StdMutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let rules = Rules {
            allow_local,
            connect_timeout,
            failures: failures.clone(),
            own: Arc::new(OwnAddresses::new(this_machine)),
        };
        let task = tokio::spawn(accept_loop(listener, rules, stop.clone()));
        Ok(AddressGuard {
            port,
            failures,
            stop,
            task,
        })
    }

    /// The value of Chromium's `--proxy-server`.
    pub(crate) fn proxy_server(&self) -> String {
        format!("socks5://127.0.0.1:{}", self.port)
    }

    /// The failures since the last call, oldest first.
    pub(crate) fn take_failures(&self) -> Vec<GuardFailure> {
        match self.failures.lock() {
            Ok(mut f) => std::mem::take(&mut *f),
            Err(_) => Vec::new(),
        }
    }
}

#[derive(Clone)]
struct Rules {
    allow_local: bool,
    connect_timeout: Duration,
    failures: Arc<StdMutex<Vec<GuardFailure>>>,
    /// This machine's addresses: refused like loopback.
    own: Arc<OwnAddresses>,
}

impl Rules {
    fn record(&self, host: &str, kind: FailureKind) {
        tracing::debug!(host, ?kind, "the browser's address guard did not connect");
        if let Ok(mut f) = self.failures.lock() {
            if f.len() == MAX_FAILURES {
                f.remove(0);
            }
            f.push(GuardFailure {
                host: host.to_string(),
                kind,
            });
        }
    }
}

async fn accept_loop(listener: TcpListener, rules: Rules, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((stream, _)) = accepted else { continue };
        let rules = rules.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                r = serve(stream, &rules) => {
                    if let Err(e) = r {
                        tracing::trace!(error = %e, "browser proxy connection ended");
                    }
                }
            }
        });
    }
}

/// One SOCKS5 CONNECT (no authentication), then the bytes both ways.
async fn serve(mut client: TcpStream, rules: &Rules) -> std::io::Result<()> {
    let mut head = [0u8; 2];
    client.read_exact(&mut head).await?;
    if head[0] != 5 {
        return Ok(());
    }
    let mut methods = vec![0u8; usize::from(head[1])];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        client.write_all(&[5, 0xff]).await?;
        return Ok(());
    }
    client.write_all(&[5, 0]).await?;

    let mut request = [0u8; 4];
    client.read_exact(&mut request).await?;
    let host = match request[3] {
        1 => {
            let mut a = [0u8; 4];
            client.read_exact(&mut a).await?;
            Ipv4Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut a = [0u8; 16];
            client.read_exact(&mut a).await?;
            Ipv6Addr::from(a).to_string()
        }
        _ => return reply(&mut client, REPLY_ADDRESS_TYPE_NOT_SUPPORTED).await,
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).await?;
    let port = u16::from_be_bytes(port);
    if request[1] != 1 {
        return reply(&mut client, REPLY_COMMAND_NOT_SUPPORTED).await;
    }

    let addresses = match resolve(&host, port, rules.connect_timeout).await {
        Some(a) if !a.is_empty() => a,
        _ => {
            rules.record(&host, FailureKind::Unresolved);
            return reply(&mut client, REPLY_HOST_UNREACHABLE).await;
        }
    };
    // Every address must pass, so a name cannot smuggle a local one in beside a public one.
    for address in &addresses {
        if let Err(class) = address_policy::check(address.ip(), rules.allow_local, &rules.own) {
            let ip = address.ip();
            rules.record(&host, FailureKind::Refused { ip, class });
            return reply(&mut client, REPLY_NOT_ALLOWED).await;
        }
    }
    let mut failure = FailureKind::Unreachable;
    let mut upstream = None;
    for address in &addresses {
        match tokio::time::timeout(rules.connect_timeout, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => {
                upstream = Some(stream);
                break;
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                failure = FailureKind::ConnectionRefused;
            }
            Ok(Err(_)) => failure = FailureKind::Unreachable,
            Err(_) => failure = FailureKind::TimedOut,
        }
    }
    let Some(mut upstream) = upstream else {
        let code = match failure {
            FailureKind::ConnectionRefused => REPLY_CONNECTION_REFUSED,
            FailureKind::TimedOut => REPLY_TTL_EXPIRED,
            FailureKind::Unreachable => REPLY_HOST_UNREACHABLE,
            _ => REPLY_GENERAL_FAILURE,
        };
        rules.record(&host, failure);
        return reply(&mut client, code).await;
    };
    reply(&mut client, REPLY_OK).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// The addresses of `host` (an IP literal, possibly in brackets, or a name).
async fn resolve(host: &str, port: u16, limit: Duration) -> Option<Vec<SocketAddr>> {
    if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Some(vec![SocketAddr::new(ip, port)]);
    }
    let lookup = tokio::net::lookup_host((host, port));
    match tokio::time::timeout(limit, lookup).await {
        Ok(Ok(addresses)) => Some(addresses.collect()),
        _ => None,
    }
}

async fn reply(client: &mut TcpStream, code: u8) -> std::io::Result<()> {
    client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SOCKS5 CONNECT to `host` (a name) through `guard`; returns the reply code.
    async fn connect_via(guard: &AddressGuard, host: &str, port: u16) -> (u8, TcpStream) {
        let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, guard.port))
            .await
            .unwrap();
        s.write_all(&[5, 1, 0]).await.unwrap();
        let mut m = [0u8; 2];
        s.read_exact(&mut m).await.unwrap();
        assert_eq!(m, [5, 0]);
        let mut req = vec![5, 1, 0, 3, u8::try_from(host.len()).unwrap()];
        req.extend_from_slice(host.as_bytes());
        req.extend_from_slice(&port.to_be_bytes());
        s.write_all(&req).await.unwrap();
        let mut r = [0u8; 10];
        s.read_exact(&mut r).await.unwrap();
        (r[1], s)
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_unless_allowed() {
        let server = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = server.local_addr().unwrap().port();

        let strict = AddressGuard::start(false, Duration::from_secs(5), Vec::new())
            .await
            .unwrap();
        let (code, _) = connect_via(&strict, "localhost", port).await;
        assert_eq!(code, REPLY_NOT_ALLOWED);
        let (code, _) = connect_via(&strict, "169.254.169.254", 80).await;
        assert_eq!(code, REPLY_NOT_ALLOWED);
        let failures = strict.take_failures();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(matches!(
            failures[0].kind,
            FailureKind::Refused {
                class: AddressClass::Loopback,
                ..
            }
        ));
        assert!(failures[0]
            .refusal()
            .unwrap()
            .contains("--browser-allow-local"));
        assert!(strict.take_failures().is_empty());

        let open = AddressGuard::start(true, Duration::from_secs(5), Vec::new())
            .await
            .unwrap();
        let (code, mut s) = connect_via(&open, "127.0.0.1", port).await;
        assert_eq!(code, REPLY_OK);
        let (mut inner, _) = server.accept().await.unwrap();
        s.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        inner.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        // The metadata address stays refused even so.
        let (code, _) = connect_via(&open, "169.254.169.254", 80).await;
        assert_eq!(code, REPLY_NOT_ALLOWED);
    }

    #[tokio::test]
    async fn a_closed_port_is_told_apart_from_a_refusal() {
        let closed = {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            l.local_addr().unwrap().port()
        };
        let open = AddressGuard::start(true, Duration::from_secs(5), Vec::new())
            .await
            .unwrap();
        let (code, _) = connect_via(&open, "127.0.0.1", closed).await;
        assert_eq!(code, REPLY_CONNECTION_REFUSED);
        let failures = open.take_failures();
        assert_eq!(failures[0].net_error(), "net::ERR_CONNECTION_REFUSED");
        assert!(failures[0].refusal().is_none());
    }
}
