//! The addresses this process serves on (`planwright serve --addr`, `worker
//! --metrics-addr`), told by the front end once it has bound them: the browser's address
//! guard refuses them like this machine's interfaces' addresses (docs/security.md, "The
//! browser"), so a run's browser cannot reach the server that runs it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

static SERVED_ON: Mutex<Vec<IpAddr>> = Mutex::new(Vec::new());

/// Records that this process listens on `addr` (an unspecified address means every
/// interface's, which the guard knows already).
pub fn listening_on(addr: SocketAddr) {
    let ip = match addr.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    if ip.is_unspecified() {
        return;
    }
    if let Ok(mut served) = SERVED_ON.lock() {
        if !served.contains(&ip) {
            served.push(ip);
        }
    }
}

/// The addresses recorded by [`listening_on`].
pub fn addresses() -> Vec<IpAddr> {
    SERVED_ON.lock().map(|s| s.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_addresses_are_kept_once_and_unspecified_ones_left_to_the_interfaces() {
        listening_on("198.51.100.3:8080".parse().unwrap());
        listening_on("198.51.100.3:9090".parse().unwrap());
        listening_on("0.0.0.0:8080".parse().unwrap());
        listening_on("[::ffff:198.51.100.4]:1".parse().unwrap());
        let served = addresses();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            served.iter().filter(|a| **a == ip("198.51.100.3")).count(),
            1
        );
        assert!(served.contains(&ip("198.51.100.4")));
        assert!(!served.iter().any(IpAddr::is_unspecified));
    }
}
