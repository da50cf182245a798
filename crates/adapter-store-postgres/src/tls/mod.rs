//! TLS to PostgreSQL on rustls, the one TLS stack of the workspace (aws-lc-rs provider, the
//! platform's roots through rustls-platform-verifier, as reqwest uses them). Our own small
//! `MakeTlsConnect` ([`stream`]) rather than the tokio-postgres-rustls crate, which would
//! add an X.509 crate and a second `const-oid` for the one OID its channel binding reads.
//!
//! What `sslmode` means here (docs/scaling.md, "TLS"):
//! - `disable`: no TLS;
//! - `prefer` (the default): TLS when the server offers it; its certificate is not checked
//!   (as with libpq), unless `sslrootcert` names a CA;
//! - `require` (and `verify-ca` / `verify-full`, read as `require`): TLS or no connection,
//!   and the certificate must chain to the platform's roots or the `sslrootcert` CA and
//!   name the host. Stricter than libpq's `require`, which checks nothing without a root
//!   certificate.

mod channel_binding;
mod stream;
mod unverified;
mod url;

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::ClientConfig;
use tokio_postgres::config::SslMode;

use crate::error::Error;

pub(crate) use stream::MakeRustls;
pub(crate) use url::{split, RootCert};

/// PostgreSQL's ALPN protocol name (required by PostgreSQL 17's `sslnegotiation=direct`).
const ALPN: &[u8] = b"postgresql";

/// The connector for connections in `mode`, trusting `root_cert` beside the platform's
/// roots.
pub(crate) fn connector(mode: SslMode, root_cert: Option<&RootCert>) -> Result<MakeRustls, Error> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verify = match mode {
        SslMode::Disable => false,
        SslMode::Require => true,
        _ => root_cert.is_some(),
    };
    let verifier: Arc<dyn ServerCertVerifier> = if verify {
        let extra = match root_cert {
            Some(RootCert::File(path)) => read_root_cert(path)?,
            Some(RootCert::System) | None => Vec::new(),
        };
        let verifier =
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, Arc::clone(&provider))
                .map_err(|e| Error::TlsSetup {
                    detail: format!("cannot load the trusted CA certificates: {e}"),
                })?;
        Arc::new(verifier)
    } else {
        Arc::new(unverified::AnyCertificate::new(Arc::clone(&provider)))
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::TlsSetup {
            detail: e.to_string(),
        })?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![ALPN.to_vec()];
    tracing::debug!(?mode, verify, "PostgreSQL TLS connector ready");
    Ok(MakeRustls::new(config))
}

/// The certificates of a PEM file (`sslrootcert`).
fn read_root_cert(path: &Path) -> Result<Vec<CertificateDer<'static>>, Error> {
    let refused = |detail: String| Error::RootCert {
        path: path.to_path_buf(),
        detail,
    };
    let pem = std::fs::read(path).map_err(|e| refused(e.to_string()))?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| refused(format!("not a PEM certificate: {e}")))?;
    if certificates.is_empty() {
        return Err(refused("no PEM certificate in it".into()));
    }
    Ok(certificates)
}

/// Why the server's certificate was refused, when that is what `err` (or what caused it)
/// says: rustls's error, as tokio-rustls wraps it in an `io::Error`.
pub(crate) fn refused_certificate(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(err);
    while let Some(err) = cause {
        let tls = err.downcast_ref::<rustls::Error>().or_else(|| {
            err.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(tls @ rustls::Error::InvalidCertificate(_)) = tls {
            return Some(tls.to_string());
        }
        cause = err.source();
    }
    None
}
