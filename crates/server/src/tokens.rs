//! The server's tokens (docs/security.md, "Clients"): its own admin token and the named
//! tokens of `server-tokens.toml`, a file beside `server-token` (mode 0600) that keeps, per
//! client name, its scopes and the SHA-256 of its token, never the token. `planwright token
//! add|list|remove` edits the file; a running server reads it again whenever it changes.
//!
//! ```toml
//! [tokens."alice"]
//! scopes = ["submit", "read", "approve"]
//! sha256 = "9f86d0…"
//! created_at = "2026-11-26T03:00:00+00:00"
//! ```

use domain::model::names::Named;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::auth::constant_time_eq;
use crate::ServeError;
use runner::service::{Caller, Scope};

/// Name of the file of named tokens, beside `server-token`.
pub const TOKENS_FILE: &str = "server-tokens.toml";

/// Longest client name.
const MAX_NAME: usize = 64;

/// One named token as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub scopes: Vec<Scope>,
    /// Hex SHA-256 of the token.
    pub sha256: String,
    #[serde(default)]
    pub created_at: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    tokens: BTreeMap<String, Entry>,
}

/// Hex SHA-256 of `token`.
fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A client name: 1 to 64 of `A-Z a-z 0-9 . _ -`.
fn check_name(name: &str) -> Result<(), ServeError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(ServeError::Config(format!(
            "'{name}' is not a client name: use 1 to {MAX_NAME} letters, digits, '.', '_' or '-'"
        )))
    }
}

/// Reads the file; a missing file has no tokens.
fn read(file: &Path) -> Result<BTreeMap<String, Entry>, ServeError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => {
            return Err(ServeError::Config(format!(
                "cannot read {}: {e}",
                file.display()
            )))
        }
    };
    let parsed: TokensFile = toml::from_str(&text)
        .map_err(|e| ServeError::Config(format!("{} is not readable: {e}", file.display())))?;
    for name in parsed.tokens.keys() {
        check_name(name)?;
    }
    Ok(parsed.tokens)
}

/// The file's text for `tokens` (names and scopes are plain words, hashes hex: no escaping).
fn render(tokens: &BTreeMap<String, Entry>) -> String {
    let mut out = String::from(
        "# Named API tokens of `planwright serve` (docs/security.md, \"Clients\"), written by\n\
         # `planwright token add`: only hashes, never the tokens.\n",
    );
    for (name, entry) in tokens {
        let scopes: Vec<String> = entry
            .scopes
            .iter()
            .map(|s| format!("\"{}\"", s.name()))
            .collect();
        let _ = write!(
            out,
            "\n[tokens.\"{name}\"]\nscopes = [{}]\nsha256 = \"{}\"\n",
            scopes.join(", "),
            entry.sha256
        );
        if let Some(at) = &entry.created_at {
            let _ = writeln!(out, "created_at = \"{at}\"");
        }
    }
    out
}

/// Replaces the file by `tokens`, mode 0600, through a temporary file and a rename.
fn write(file: &Path, tokens: &BTreeMap<String, Entry>) -> Result<(), ServeError> {
    use std::os::unix::fs::OpenOptionsExt;
    let folder = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|e| ServeError::Config(format!("cannot create {}: {e}", folder.display())))?;
    let temp = folder.join(format!(".{TOKENS_FILE}.{}", std::process::id()));
    let failed =
        |e: std::io::Error| ServeError::Config(format!("cannot write {}: {e}", file.display()));
    let _ = std::fs::remove_file(&temp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .map_err(failed)?;
    f.write_all(render(tokens).as_bytes()).map_err(failed)?;
    f.sync_all().map_err(failed)?;
    std::fs::rename(&temp, file).map_err(failed)
}

/// `planwright token add NAME --scope ...`: a new token, returned (shown once; the file
/// keeps its hash). A name already in use is refused.
pub fn add(folder: &Path, name: &str, scopes: &[Scope]) -> Result<String, ServeError> {
    check_name(name)?;
    let file = folder.join(TOKENS_FILE);
    runner::state_folder::guard(&file)?;
    let mut tokens = read(&file)?;
    if tokens.contains_key(name) {
        return Err(ServeError::Config(format!(
            "a token named '{name}' exists already; `planwright token remove {name}` first"
        )));
    }
    let mut scopes = scopes.to_vec();
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(ServeError::Config(
            "a token needs at least one scope".into(),
        ));
    }
    let token = format!(
        "pw_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    tokens.insert(
        name.to_string(),
        Entry {
            scopes,
            sha256: digest(&token),
            created_at: Some(chrono::Utc::now().to_rfc3339()),
        },
    );
    write(&file, &tokens)?;
    Ok(token)
}

/// `planwright token remove NAME`: revokes the token (a running server refuses it at its
/// next request). False when there was none.
pub fn remove(folder: &Path, name: &str) -> Result<bool, ServeError> {
    let file = folder.join(TOKENS_FILE);
    runner::state_folder::guard(&file)?;
    let mut tokens = read(&file)?;
    if tokens.remove(name).is_none() {
        return Ok(false);
    }
    write(&file, &tokens)?;
    Ok(true)
}

/// `planwright token list`: one line per token (name, scopes, creation time).
pub fn list(folder: &Path) -> Result<String, ServeError> {
    let file = folder.join(TOKENS_FILE);
    runner::state_folder::guard(&file)?;
    let tokens = read(&file)?;
    if tokens.is_empty() {
        return Ok(format!(
            "No named tokens in {} (the server's own token is admin).\n",
            file.display()
        ));
    }
    let mut out = String::new();
    for (name, entry) in &tokens {
        let scopes: Vec<&str> = entry.scopes.iter().map(|s| s.name()).collect();
        let _ = writeln!(
            out,
            "{name:<24} {:<28} {}",
            scopes.join(","),
            entry.created_at.as_deref().unwrap_or("")
        );
    }
    Ok(out)
}

/// What `planwright token` prints: `out` on stdout (the new token alone, for scripts), `note`
/// on stderr.
pub struct Printed {
    pub out: String,
    pub note: Option<String>,
}

/// What `planwright token` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenCommand {
    /// Make a token for the client `name` with `scopes`.
    Add { name: String, scopes: Vec<Scope> },
    /// List the named tokens.
    List,
    /// Revoke the token of `name`.
    Remove { name: String },
}

/// `planwright token add|list|remove` in the state folder `folder`.
pub fn run(folder: &Path, command: TokenCommand) -> Result<Printed, ServeError> {
    match command {
        TokenCommand::Add { name, scopes } => {
            let token = add(folder, &name, &scopes)?;
            let scopes: Vec<&str> = scopes.iter().map(|s| s.name()).collect();
            Ok(Printed {
                out: format!("{token}\n"),
                note: Some(format!(
                    "token '{name}' ({}) added to {}; it is shown only this once",
                    scopes.join(","),
                    folder.join(TOKENS_FILE).display()
                )),
            })
        }
        TokenCommand::List => Ok(Printed {
            out: list(folder)?,
            note: None,
        }),
        TokenCommand::Remove { name } => {
            if remove(folder, &name)? {
                Ok(Printed {
                    out: format!("removed the token '{name}'\n"),
                    note: None,
                })
            } else {
                Err(ServeError::Config(format!("no token named '{name}'")))
            }
        }
    }
}

/// What identifies a version of the file: changed by every write (a rename gives a new
/// inode).
type Stamp = Option<(SystemTime, u64, u64)>;

fn stamp(file: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

/// The named tokens as last read, and the version of the file they come from.
#[derive(Default)]
struct Loaded {
    stamp: Stamp,
    tokens: BTreeMap<String, Entry>,
}

/// The tokens a server accepts: its own (admin) and the named ones of its tokens file.
pub struct TokenBook {
    admin: Option<String>,
    file: Option<PathBuf>,
    loaded: Mutex<Loaded>,
}

impl TokenBook {
    /// `admin` and the tokens of `folder`'s `server-tokens.toml`. The file is checked (and
    /// read) now: one another user owns, or a copied state folder's, is refused.
    pub fn new(admin: String, folder: &Path) -> Result<TokenBook, ServeError> {
        let file = folder.join(TOKENS_FILE);
        runner::state_folder::guard(&file)?;
        let stamp = stamp(&file);
        let tokens = read(&file)?;
        if !tokens.is_empty() {
            tracing::info!(count = tokens.len(), file = %file.display(), "named API tokens");
        }
        Ok(TokenBook {
            admin: Some(admin),
            file: Some(file),
            loaded: Mutex::new(Loaded { stamp, tokens }),
        })
    }

    /// No token at all (a worker, `mcp serve` on stdio: no HTTP).
    pub fn none() -> TokenBook {
        TokenBook {
            admin: None,
            file: None,
            loaded: Mutex::new(Loaded::default()),
        }
    }

    /// The client `presented` identifies, if any.
    pub fn client_for(&self, presented: &str) -> Option<Caller> {
        if presented.is_empty() {
            return None;
        }
        if let Some(admin) = &self.admin {
            if constant_time_eq(presented.as_bytes(), admin.as_bytes()) {
                return Some(Caller::admin());
            }
        }
        let file = self.file.as_ref()?;
        let hash = digest(presented);
        let mut loaded = self.loaded.lock().ok()?;
        let now = stamp(file);
        if now != loaded.stamp {
            // Changed (added, removed, replaced): read it again. An unreadable file accepts
            // no named token until it is fixed.
            loaded.tokens = match read(file) {
                Ok(tokens) => tokens,
                Err(e) => {
                    tracing::error!(error = %e, "named API tokens refused until the file is fixed");
                    BTreeMap::new()
                }
            };
            loaded.stamp = now;
        }
        let mut found = None;
        for (name, entry) in &loaded.tokens {
            if constant_time_eq(hash.as_bytes(), entry.sha256.as_bytes()) {
                found = Some(Caller::named(name, &entry.scopes));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_keeps_hashes_only_and_a_change_is_seen_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        let book = TokenBook::new("admin-token-123".into(), folder).unwrap();
        assert_eq!(book.client_for("admin-token-123"), Some(Caller::admin()));
        assert_eq!(book.client_for(""), None);

        let alice = add(folder, "alice", &[Scope::Read, Scope::Submit, Scope::Read]).unwrap();
        let text = std::fs::read_to_string(folder.join(TOKENS_FILE)).unwrap();
        assert!(!text.contains(&alice), "the token itself is never stored");
        assert!(text.contains(&digest(&alice)));
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(folder.join(TOKENS_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Added after the server started: known at its next request.
        assert_eq!(
            book.client_for(&alice),
            Some(Caller::named("alice", &[Scope::Submit, Scope::Read]))
        );
        assert_eq!(book.client_for("pw_not-a-token"), None);
        assert!(
            add(folder, "alice", &[Scope::Read]).is_err(),
            "names are unique"
        );
        let bob = add(folder, "bob", &[Scope::Approve]).unwrap();
        assert!(list(folder).unwrap().contains("bob"));
        // Revoked: refused at once.
        assert!(remove(folder, "alice").unwrap());
        assert!(!remove(folder, "alice").unwrap());
        assert_eq!(book.client_for(&alice), None);
        assert_eq!(
            book.client_for(&bob),
            Some(Caller::named("bob", &[Scope::Approve]))
        );
        assert!(TokenBook::none().client_for("").is_none());
    }

    #[test]
    fn bad_names_scopes_and_files_are_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "a b", "x\"y", "ü", &"n".repeat(65)] {
            let err = add(dir.path(), bad, &[Scope::Read]).unwrap_err();
            assert!(
                err.to_string().contains("not a client name"),
                "{bad}: {err}"
            );
        }
        assert!(add(dir.path(), "none", &[]).is_err());
        std::fs::write(
            dir.path().join(TOKENS_FILE),
            "[tokens.x]\nscopes = [\"everything\"]\nsha256 = \"00\"\n",
        )
        .unwrap();
        let err = TokenBook::new("admin-token-123".into(), dir.path())
            .err()
            .unwrap();
        assert!(err.to_string().contains(TOKENS_FILE), "{err}");
    }
}
