//! Percent-encoding of the bytes of workspace paths and run ids, as the download route
//! (`/v1/runs/{id}/files/{path}`), the listing's `path_encoded` and the MCP resource URIs
//! carry them: every byte but unreserved characters and `/` as `%XX`, so a file name that
//! is not UTF-8 round-trips exactly.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Percent-encodes everything but unreserved characters and `/`.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The percent-encoded bytes of a path.
pub fn encode_path(path: &Path) -> String {
    encode(path.as_os_str().as_bytes())
}

/// The bytes of a percent-encoded string; `None` when a `%` is not followed by two hex
/// digits.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The text of a percent-encoded string, if it is UTF-8 once decoded.
pub fn decode_text(text: &str) -> Option<String> {
    String::from_utf8(decode(text)?).ok()
}

/// The path of a percent-encoded string, any bytes.
pub fn decode_path(text: &str) -> Option<PathBuf> {
    Some(PathBuf::from(OsString::from_vec(decode(text)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_is_not_utf8_round_trips() {
        let name = Path::new(std::ffi::OsStr::from_bytes(b"out/caf\xff \xe9.txt"));
        let encoded = encode_path(name);
        assert_eq!(encoded, "out/caf%FF%20%E9.txt");
        assert_eq!(decode_path(&encoded).as_deref(), Some(name));
        assert_eq!(decode_text(&encoded), None);
        assert_eq!(decode_text("a%20b"), Some("a b".to_string()));
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%4"), None);
    }
}
