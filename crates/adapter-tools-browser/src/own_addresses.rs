//! This machine's own addresses (docs/security.md, "The browser"): every address of every
//! network interface, read from the kernel's tables (`/proc/net/fib_trie`'s local host
//! routes for IPv4, `/proc/net/if_inet6` for IPv6; no crate, no `unsafe`), and the
//! addresses the process was told it serves on ([`crate::BrowserConfig::this_machine`]).
//! A page on the machine's public address, or `planwright serve --addr 0.0.0.0` reached
//! through it, is this machine as much as 127.0.0.1 is.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a reading of the interfaces is reused.
const FRESH_FOR: Duration = Duration::from_secs(2);

/// The addresses of this machine, read again once [`FRESH_FOR`] has passed.
pub(crate) struct OwnAddresses {
    /// Given at start (what the process serves on).
    given: Vec<IpAddr>,
    read: Mutex<Option<(Instant, Vec<IpAddr>)>>,
}

impl OwnAddresses {
    pub(crate) fn new(given: Vec<IpAddr>) -> OwnAddresses {
        OwnAddresses {
            given,
            read: Mutex::new(None),
        }
    }

    /// Whether `ip` (an IPv4-mapped IPv6 address as its IPv4 one) is this machine's.
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        if self.given.iter().any(|g| canonical(*g) == ip) {
            return true;
        }
        let Ok(mut read) = self.read.lock() else {
            return interface_addresses().contains(&ip);
        };
        let stale = read.as_ref().is_none_or(|(at, _)| at.elapsed() > FRESH_FOR);
        if stale {
            *read = Some((Instant::now(), interface_addresses()));
        }
        read.as_ref().is_some_and(|(_, all)| all.contains(&ip))
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Every address of every interface of this machine (of its network namespace).
pub(crate) fn interface_addresses() -> Vec<IpAddr> {
    let mut all: Vec<IpAddr> = std::fs::read_to_string("/proc/net/fib_trie")
        .map(|t| local_v4(&t))
        .unwrap_or_default()
        .into_iter()
        .map(IpAddr::V4)
        .collect();
    all.extend(
        std::fs::read_to_string("/proc/net/if_inet6")
            .map(|t| local_v6(&t))
            .unwrap_or_default()
            .into_iter()
            .map(IpAddr::V6),
    );
    all.sort();
    all.dedup();
    all
}

/// The local IPv4 addresses in `/proc/net/fib_trie`: each leaf `|-- A.B.C.D` followed by a
/// `/32 host LOCAL` route is an address of an interface.
fn local_v4(text: &str) -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut leaf: Option<Ipv4Addr> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(ip) = line.strip_prefix("|-- ") {
            leaf = ip.trim().parse().ok();
        } else if line.starts_with("/32 host LOCAL") {
            if let Some(ip) = leaf {
                if !out.contains(&ip) {
                    out.push(ip);
                }
            }
        } else if line.starts_with("+--") {
            leaf = None;
        }
    }
    out
}

/// The IPv6 addresses in `/proc/net/if_inet6`: the first field of each line, 32 hex digits.
fn local_v6(text: &str) -> Vec<Ipv6Addr> {
    text.lines()
        .filter_map(|line| {
            let hex = line.split_whitespace().next()?;
            (hex.len() == 32)
                .then(|| u128::from_str_radix(hex, 16).ok())
                .flatten()
                .map(Ipv6Addr::from)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIB_TRIE: &str = "Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
        +-- 192.0.2.0/30 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
        |-- 192.0.2.255
           /32 link BROADCAST
Local:
  +-- 0.0.0.0/0 3 0 5
           |-- 192.0.2.2
              /32 host LOCAL
           |-- 203.0.113.7
              /32 host LOCAL
";

    const IF_INET6: &str = "\
00000000000000000000000000000001 01 80 10 80       lo
fd000000000000000000000000000002 04 40 00 82     eth0
20010db8000000000000000000000042 04 40 00 82     eth0
";

    #[test]
    fn the_kernels_tables_give_every_interfaces_addresses() {
        let v4: Vec<String> = local_v4(FIB_TRIE).iter().map(|ip| ip.to_string()).collect();
        assert_eq!(v4, ["127.0.0.1", "192.0.2.2", "203.0.113.7"]);
        let v6: Vec<String> = local_v6(IF_INET6).iter().map(|ip| ip.to_string()).collect();
        assert_eq!(v6, ["::1", "fd00::2", "2001:db8::42"]);
    }

    #[test]
    fn given_addresses_count_and_mapped_ones_are_judged_as_ipv4() {
        let own = OwnAddresses::new(vec!["198.51.100.9".parse().unwrap()]);
        assert!(own.contains("198.51.100.9".parse().unwrap()));
        assert!(own.contains("::ffff:198.51.100.9".parse().unwrap()));
        assert!(!own.contains("198.51.100.10".parse().unwrap()));
        // The loopback interface is always there on Linux.
        assert!(own.contains("127.0.0.1".parse().unwrap()));
    }
}
