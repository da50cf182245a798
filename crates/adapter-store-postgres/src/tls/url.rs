//! What of a connection string is ours, not tokio-postgres's: libpq's `sslrootcert`
//! parameter (tokio-postgres refuses parameters it does not know) and the `sslmode` values
//! `verify-ca` / `verify-full` (it only knows `disable`, `prefer` and `require`). Both forms
//! are read: the URL (`postgres://...?sslmode=require&sslrootcert=/ca.pem`) and libpq's
//! key=value form (`host=db sslmode=require sslrootcert='/ca.pem'`). See docs/scaling.md.

use std::path::PathBuf;

/// Where the certificate of the CA that signed the server's comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootCert {
    /// `sslrootcert=/path/ca.pem`: a PEM file, trusted beside the platform's roots.
    File(PathBuf),
    /// `sslrootcert=system` (libpq 16's spelling): the platform's roots only.
    System,
}

/// A connection string as tokio-postgres accepts it, and what was taken out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    pub(crate) url: String,
    pub(crate) root_cert: Option<RootCert>,
}

/// Takes `sslrootcert` out of `url` and reads `sslmode=verify-ca|verify-full` as
/// `require` (which verifies the certificate and the host name here). A string that does
/// not parse is returned unchanged, for tokio-postgres to report.
pub(crate) fn split(url: &str) -> Split {
    let trimmed = url.trim_start();
    let is_url = ["postgres://", "postgresql://"].iter().any(|scheme| {
        trimmed
            .get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    });
    let split = if is_url {
        split_url(url)
    } else {
        split_key_values(url)
    };
    split.unwrap_or_else(|| Split {
        url: url.to_string(),
        root_cert: None,
    })
}

fn root_cert(value: &str) -> Option<RootCert> {
    match value {
        "" => None,
        "system" => Some(RootCert::System),
        path => Some(RootCert::File(PathBuf::from(path))),
    }
}

fn ssl_mode(value: &str) -> &str {
    match value {
        "verify-ca" | "verify-full" => "require",
        other => other,
    }
}

fn split_url(url: &str) -> Option<Split> {
    let Some((base, query)) = url.split_once('?') else {
        return Some(Split {
            url: url.to_string(),
            root_cert: None,
        });
    };
    let mut root = None;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match percent_decode(key)?.as_str() {
            "sslrootcert" => root = root_cert(&percent_decode(value)?),
            "sslmode" => kept.push(format!("{key}={}", ssl_mode(&percent_decode(value)?))),
            _ => kept.push(pair.to_string()),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Some(Split {
        url,
        root_cert: root,
    })
}

/// `%2F` → `/`; `None` when an escape is malformed or the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// libpq's `key = value` pairs, values bare or in single quotes with `\` escapes; written
/// back with every value quoted.
fn split_key_values(s: &str) -> Option<Split> {
    let mut root = None;
    let mut kept = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        chars.next_if_eq(&'=')?;
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next()? {
                    '\'' => break,
                    '\\' => value.push(chars.next()?),
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                value.push(if c == '\\' { chars.next()? } else { c });
            }
        }
        match key.as_str() {
            "sslrootcert" => root = root_cert(&value),
            "sslmode" => kept.push((key, ssl_mode(&value).to_string())),
            _ => kept.push((key, value)),
        }
    }
    let url = kept
        .iter()
        .map(|(key, value)| {
            let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
            format!("{key}='{quoted}'")
        })
        .collect::<Vec<_>>()
        .join(" ");
    Some(Split {
        url,
        root_cert: root,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> Option<RootCert> {
        Some(RootCert::File(PathBuf::from(path)))
    }

    #[test]
    fn sslrootcert_is_taken_out_of_a_url_and_the_rest_kept() {
        let parsed = split("postgres://u:p@db:5432/runs?sslmode=require&sslrootcert=%2Fetc%2Fca%20x.pem&connect_timeout=5");
        assert_eq!(
            parsed.url,
            "postgres://u:p@db:5432/runs?sslmode=require&connect_timeout=5"
        );
        assert_eq!(parsed.root_cert, file("/etc/ca x.pem"));
        let system = split_url("postgresql://db/runs?sslrootcert=system").expect("parses");
        assert_eq!(system.url, "postgresql://db/runs");
        assert_eq!(system.root_cert, Some(RootCert::System));
        assert_eq!(
            split("postgres://db/runs"),
            Split {
                url: "postgres://db/runs".into(),
                root_cert: None
            }
        );
    }

    #[test]
    fn verify_full_and_verify_ca_are_read_as_require() {
        assert_eq!(
            split("postgres://db/runs?sslmode=verify-full").url,
            "postgres://db/runs?sslmode=require"
        );
        assert_eq!(
            split("host=db sslmode=verify-ca").url,
            "host='db' sslmode='require'"
        );
        assert_eq!(
            split("postgres://db/runs?sslmode=prefer").url,
            "postgres://db/runs?sslmode=prefer"
        );
    }

    #[test]
    fn the_key_value_form_keeps_quoted_values_and_escapes() {
        let parsed = split(r"host=db  password='a\'b c' sslrootcert = '/my ca.pem' dbname=x");
        assert_eq!(parsed.url, r"host='db' password='a\'b c' dbname='x'");
        assert_eq!(parsed.root_cert, file("/my ca.pem"));
    }

    #[test]
    fn what_does_not_parse_is_left_to_tokio_postgres() {
        assert_eq!(split("host='db").url, "host='db");
        assert_eq!(split("postgres://db/x?a=%zz").url, "postgres://db/x?a=%zz");
    }
}
