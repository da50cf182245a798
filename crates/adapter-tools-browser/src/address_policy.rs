//! Which network addresses the browser may connect to (docs/security.md, "The browser"):
//! public addresses always, unless they are this machine's own; loopback, private and
//! shared ranges and this machine's addresses only when the run allows local pages
//! (`--browser-allow-local`); link-local (cloud metadata), unspecified, multicast and
//! broadcast addresses never.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::own_addresses::OwnAddresses;

/// The switch that lifts the refusal of local addresses, named in every refusal.
pub const ALLOW_LOCAL_SWITCH: &str = "--browser-allow-local (browser_allow_local = true)";

/// Why an address is not an ordinary public one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressClass {
    /// 127.0.0.0/8, ::1: this machine (Planwright's own server, databases, DevTools...).
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7: the local network.
    Private,
    /// 169.254/16, fe80::/10: link-local, where cloud metadata services answer.
    LinkLocal,
    /// 0.0.0.0/8, ::: "this host" (reaches loopback on Linux).
    Unspecified,
    /// Multicast and broadcast addresses.
    Multicast,
    /// An address of one of this machine's interfaces, or one it serves on, in a range
    /// that is otherwise public.
    ThisMachine,
}

impl AddressClass {
    /// The class of `ip`, or `None` for a public address. IPv4-mapped and IPv4-compatible
    /// IPv6 addresses are judged as the IPv4 address they carry.
    pub(crate) fn of(ip: IpAddr) -> Option<AddressClass> {
        match ip {
            IpAddr::V4(v4) => class_v4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => class_v4(v4),
                None => class_v6(v6),
            },
        }
    }

    /// Whether `--browser-allow-local` lifts the refusal of this class.
    pub(crate) fn allowed_locally(self) -> bool {
        matches!(
            self,
            AddressClass::Loopback | AddressClass::Private | AddressClass::ThisMachine
        )
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            AddressClass::Loopback => "a loopback address (this machine)",
            AddressClass::Private => "a private-network address",
            AddressClass::LinkLocal => {
                "a link-local address (where cloud metadata services answer)"
            }
            AddressClass::Unspecified => "an unspecified address (this machine)",
            AddressClass::Multicast => "a multicast or broadcast address",
            AddressClass::ThisMachine => "an address of this machine",
        }
    }
}

/// Whether the browser may connect to `ip` under a policy that does (or does not) allow
/// local addresses, on a machine whose own addresses are `own`; `Err` names the class
/// refused.
pub(crate) fn check(ip: IpAddr, allow_local: bool, own: &OwnAddresses) -> Result<(), AddressClass> {
    let class =
        AddressClass::of(ip).or_else(|| own.contains(ip).then_some(AddressClass::ThisMachine));
    match class {
        None => Ok(()),
        Some(class) if allow_local && class.allowed_locally() => Ok(()),
        Some(class) => Err(class),
    }
}

/// The model-facing text of a refused connection to `host` (which resolved to `ip`).
pub(crate) fn refusal_text(host: &str, ip: IpAddr, class: AddressClass) -> String {
    let resolved = if host.trim_matches(['[', ']']) == ip.to_string() {
        String::new()
    } else {
        format!(" (it resolves to {ip})")
    };
    let lift = if class.allowed_locally() {
        format!("; a run started with {ALLOW_LOCAL_SWITCH} may open local pages")
    } else {
        "; this is refused even with --browser-allow-local".to_string()
    };
    format!(
        "the browser refused to connect to {host}{resolved}: it is {}. The browser only opens \
         public addresses{lift}",
        class.describe()
    )
}

fn class_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if a == 0 {
        Some(AddressClass::Unspecified)
    } else if ip.is_link_local() {
        Some(AddressClass::LinkLocal)
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some(AddressClass::Private)
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some(AddressClass::Multicast)
    } else {
        None
    }
}

fn class_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if ip.is_unspecified() {
        Some(AddressClass::Unspecified)
    } else if first & 0xffc0 == 0xfe80 {
        Some(AddressClass::LinkLocal)
    } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
        // Unique local (fc00::/7) and the old site-local range (fec0::/10).
        Some(AddressClass::Private)
    } else if ip.is_multicast() {
        Some(AddressClass::Multicast)
    } else if let Some(v4) = ipv4_compatible(ip) {
        // ::a.b.c.d (deprecated, but some stacks still route it to the IPv4 address).
        class_v4(v4)
    } else {
        None
    }
}

/// The IPv4 address in `::a.b.c.d`, if `ip` has that form.
fn ipv4_compatible(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = ip.octets();
    (o[..12] == [0; 12]).then(|| Ipv4Addr::new(o[12], o[13], o[14], o[15]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        AddressClass::of(s.parse().unwrap())
    }

    #[test]
    fn every_range_is_classed() {
        use AddressClass::*;
        for (ip, want) in [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.1.2", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::127.0.0.1", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("100.64.0.1", Some(Private)),
            ("fc00::1", Some(Private)),
            ("fd12:3456::1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("224.0.0.1", Some(Multicast)),
            ("255.255.255.255", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("93.184.216.34", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("8.8.8.8", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn allow_local_lifts_loopback_private_and_this_machine_only() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let own = OwnAddresses::new(vec![ip("198.51.100.9")]);
        let check = |s: &str, allow| check(ip(s), allow, &own);
        assert_eq!(check("127.0.0.1", false), Err(AddressClass::Loopback));
        assert_eq!(check("127.0.0.1", true), Ok(()));
        assert_eq!(check("192.168.0.2", true), Ok(()));
        assert_eq!(check("8.8.8.8", false), Ok(()));
        assert_eq!(check("198.51.100.9", false), Err(AddressClass::ThisMachine));
        assert_eq!(check("198.51.100.9", true), Ok(()));
        assert_eq!(check("169.254.169.254", true), Err(AddressClass::LinkLocal));
        assert_eq!(check("0.0.0.0", true), Err(AddressClass::Unspecified));
    }

    #[test]
    fn refusals_name_the_switch_when_it_would_help() {
        let t = refusal_text(
            "localhost",
            "127.0.0.1".parse().unwrap(),
            AddressClass::Loopback,
        );
        assert!(t.contains("localhost (it resolves to 127.0.0.1)"), "{t}");
        assert!(t.contains("loopback"), "{t}");
        assert!(t.contains("--browser-allow-local"), "{t}");
        let t = refusal_text(
            "169.254.169.254",
            "169.254.169.254".parse().unwrap(),
            AddressClass::LinkLocal,
        );
        assert!(!t.contains("resolves"), "{t}");
        assert!(t.contains("even with --browser-allow-local"), "{t}");
    }
}
