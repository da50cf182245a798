//! The TLS certificates of the private cluster ([`crate::pg_cluster`]): a CA made for the
//! cluster and a server certificate it signs for `localhost` and 127.0.0.1, made with the
//! `openssl` program (EC P-256 keys: a few milliseconds), valid for two days.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The extensions of both certificates: a CA that only signs, and a server certificate
/// that is no CA (rustls refuses a CA certificate as the server's).
const OPENSSL_CONFIG: &str = "\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = planwright test
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
";

/// The files of a cluster's TLS, in one folder.
pub(crate) struct Certificates {
    /// The CA's certificate (PEM): what a client names with `sslrootcert`.
    pub(crate) ca: PathBuf,
    /// The server's certificate and key (`ssl_cert_file`, `ssl_key_file`; the key mode 0600).
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

/// Whether the `openssl` program can be run.
pub(crate) fn openssl_available() -> bool {
    Command::new("openssl")
        .arg("version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Makes the CA and the server's certificate in `folder`.
pub(crate) fn make(folder: &Path) -> Result<Certificates, String> {
    let file = |name: &str| folder.join(name).to_string_lossy().into_owned();
    let config = folder.join("openssl.cnf");
    std::fs::write(&config, OPENSSL_CONFIG).map_err(|e| format!("{}: {e}", config.display()))?;
    let (config, ca, ca_key) = (file("openssl.cnf"), file("ca.pem"), file("ca.key"));
    let (csr, cert, key) = (file("server.csr"), file("server.pem"), file("server.key"));
    let new_key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-config", &config, "-x509", "-days", "2"],
            &new_key[..],
        ]
        .concat(),
        &[
            "-keyout",
            &ca_key,
            "-out",
            &ca,
            "-extensions",
            "ca",
            "-subj",
            "/CN=planwright test CA",
        ],
    )?;
    openssl(
        &[&["req", "-config", &config, "-new"], &new_key[..]].concat(),
        &["-keyout", &key, "-out", &csr, "-subj", "/CN=localhost"],
    )?;
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-set_serial",
            "2",
        ],
        &[
            "-days",
            "2",
            "-out",
            &cert,
            "-extfile",
            &config,
            "-extensions",
            "server",
        ],
    )?;
    // PostgreSQL refuses a key others may read.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("chmod 600 {key}: {e}"))?;
    Ok(Certificates {
        ca: ca.into(),
        cert: cert.into(),
        key: key.into(),
    })
}

fn openssl(args: &[&str], more: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .args(more)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run openssl (apt-get install openssl): {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "openssl {} failed ({}): {}",
        args.first().copied().unwrap_or_default(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    ))
}
