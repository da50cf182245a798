//! The `tls-server-end-point` channel binding of RFC 5929 (what PostgreSQL's
//! SCRAM-SHA-256-PLUS binds to): the server certificate hashed with the hash of its
//! signature algorithm, SHA-256 for MD5 and SHA-1. Only the algorithm's OID is read from
//! the DER, with a few lines here rather than an X.509 crate.

use sha2::{Digest, Sha256, Sha384, Sha512};

/// The hash of `certificate` (DER) for channel binding, or `None` when its signature
/// algorithm names no hash or the DER does not parse.
pub(crate) fn server_end_point(certificate: &[u8]) -> Option<Vec<u8>> {
    let hash = signature_hash(signature_algorithm(certificate)?)?;
    Some(match hash {
        Hash::Sha256 => Sha256::digest(certificate).to_vec(),
        Hash::Sha384 => Sha384::digest(certificate).to_vec(),
        Hash::Sha512 => Sha512::digest(certificate).to_vec(),
    })
}

#[derive(Debug, PartialEq, Eq)]
enum Hash {
    Sha256,
    Sha384,
    Sha512,
}

/// The content octets of the OID of `signatureAlgorithm` in
/// `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }`.
fn signature_algorithm(der: &[u8]) -> Option<&[u8]> {
    let (certificate, _) = element(der, SEQUENCE)?;
    let (_tbs, rest) = element(certificate, SEQUENCE)?;
    let (algorithm, _) = element(rest, SEQUENCE)?;
    let (oid, _) = element(algorithm, OID)?;
    Some(oid)
}

const SEQUENCE: u8 = 0x30;
const OID: u8 = 0x06;

/// One DER element of type `tag` at the start of `input`: its content, and what follows.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&found, rest) = input.split_first()?;
    if found != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 {
            return None;
        }
        let (bytes, rest) = (rest.get(..count)?, rest.get(count..)?);
        let length = bytes
            .iter()
            .fold(0usize, |length, &b| (length << 8) | usize::from(b));
        (length, rest)
    };
    Some((rest.get(..length)?, rest.get(length..)?))
}

/// The hash of a signature algorithm, as RFC 5929 section 4.1 picks it.
fn signature_hash(oid: &[u8]) -> Option<Hash> {
    // 1.2.840.113549.1.1.{4,5,11,12,13}: {md5,sha1,sha256,sha384,sha512}WithRSAEncryption.
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    // 1.2.840.10045.4.1 (ecdsa-with-SHA1) and 1.2.840.10045.4.3.{2,3,4} (SHA-256/384/512).
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    if let Some(last) = oid.strip_prefix(RSA) {
        return match last {
            [0x04 | 0x05 | 0x0b] => Some(Hash::Sha256),
            [0x0c] => Some(Hash::Sha384),
            [0x0d] => Some(Hash::Sha512),
            _ => None,
        };
    }
    match oid.strip_prefix(ECDSA)? {
        [0x01] | [0x03, 0x02] => Some(Hash::Sha256),
        [0x03, 0x03] => Some(Hash::Sha384),
        [0x03, 0x04] => Some(Hash::Sha512),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_follows_the_signature_algorithm() {
        let oid = |bytes: &[u8]| signature_hash(bytes);
        let rsa = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
        assert_eq!(oid(&[&rsa[..], &[0x0b]].concat()), Some(Hash::Sha256));
        assert_eq!(oid(&[&rsa[..], &[0x05]].concat()), Some(Hash::Sha256));
        assert_eq!(oid(&[&rsa[..], &[0x0c]].concat()), Some(Hash::Sha384));
        // RSASSA-PSS: the hash is in the parameters; no binding.
        assert_eq!(oid(&[&rsa[..], &[0x0a]].concat()), None);
        let ecdsa = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
        assert_eq!(oid(&[&ecdsa[..], &[0x02]].concat()), Some(Hash::Sha256));
        assert_eq!(oid(&[&ecdsa[..], &[0x04]].concat()), Some(Hash::Sha512));
        // Ed25519 (1.3.101.112).
        assert_eq!(oid(&[0x2b, 0x65, 0x70]), None);
    }

    #[test]
    fn the_algorithm_is_read_past_a_long_tbs_certificate() {
        // SEQUENCE { SEQUENCE (300 bytes), SEQUENCE { OID ecdsa-with-SHA384 }, BIT STRING }.
        let mut tbs = vec![0x30, 0x82, 0x01, 0x2c];
        tbs.extend([0u8; 300]);
        let algorithm = [
            0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03,
        ];
        let signature = [0x03, 0x02, 0x00, 0x00];
        let body = [&tbs[..], &algorithm[..], &signature[..]].concat();
        let mut der = vec![0x30, 0x82];
        der.extend(u16::try_from(body.len()).expect("short").to_be_bytes());
        der.extend(&body);
        assert_eq!(signature_algorithm(&der), Some(&algorithm[4..]));
        assert_eq!(server_end_point(&der), Some(Sha384::digest(&der).to_vec()));
        assert_eq!(server_end_point(&der[..20]), None);
    }
}
