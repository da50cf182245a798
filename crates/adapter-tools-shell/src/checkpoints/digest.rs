//! Digests as the checkpoint store names contents: SHA-256 in lower-case hex.

use sha2::{Digest, Sha256};

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The store's name for `bytes`.
pub(crate) fn of(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}
