//! Planwright's state folder, `.planwright/` (the database, the server's token, the runs'
//! workspaces): used only when Planwright created it for this folder or the user trusts the
//! folder (docs/security.md, "Project configuration and trust"): a trusted folder's is
//! adopted (marked) when the front end reads the trust, so no process-wide setting holds it. Planwright marks a state
//! folder it creates with a digest of the folder's canonical path keyed with a secret of
//! the user's (`state-key` beside the user's config file), so a copied or committed
//! `.planwright/` carries no valid mark; a folder or file owned by another user is refused.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::RunnerError;

/// The state folder's name.
pub const STATE_FOLDER: &str = ".planwright";

/// The mark Planwright leaves in a state folder it created.
const MARKER: &str = "created-by-planwright";

/// The user's secret the marks are keyed with, beside the user's config file.
const KEY_FILE: &str = "state-key";

/// The folders the user trusts (canonical paths, as text): the user's recorded ones and
/// `--trust-project`'s, read by the front end from the config files and handed to
/// [`adopt_trusted`].
#[derive(Debug, Clone, Default)]
pub struct Trusted {
    pub recorded: BTreeSet<String>,
    pub this_run: Option<String>,
}

/// Adopts the state folders of the `trusted` folders that exist unmarked (copied or
/// committed with the project): marks them as Planwright's, as `planwright trust` does, so
/// that [`guard`] uses them. Nothing is kept in the process: a state folder is used only
/// when it carries the mark. Returns what it could not adopt (another user's folder, an
/// unwritable one), for the front end to say.
pub fn adopt_trusted(trusted: &Trusted) -> Vec<String> {
    let mut problems = Vec::new();
    for folder in trusted.recorded.iter().chain(trusted.this_run.as_ref()) {
        let state = Path::new(folder).join(STATE_FOLDER);
        if let Err(e) = adopt(&state) {
            problems.push(e.to_string());
        }
    }
    problems
}

/// The user's Planwright config folder: `$XDG_CONFIG_HOME/planwright` (an absolute
/// `XDG_CONFIG_HOME` only, as the XDG spec says), else `$HOME/.config/planwright`; it holds
/// the user's config file and the key of the state folders' marks.
pub fn user_config_dir() -> Option<PathBuf> {
    xdg_folder("XDG_CONFIG_HOME", &[".config"])
}

/// The user's Planwright state folder: `$XDG_STATE_HOME/planwright` (absolute only), else
/// `$HOME/.local/state/planwright`; it keeps what goes with runs whose database is not a
/// local file ([`crate::database::Database::runs_root`]).
pub fn user_state_dir() -> Option<PathBuf> {
    xdg_folder("XDG_STATE_HOME", &[".local", "state"])
}

/// `$VARIABLE/planwright` when the variable holds an absolute path (as the XDG spec says),
/// else `planwright` under `$HOME` joined with `under_home`.
fn xdg_folder(variable: &str, under_home: &[&str]) -> Option<PathBuf> {
    let xdg = std::env::var_os(variable)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
        Some(
            under_home
                .iter()
                .fold(PathBuf::from(home), |p, d| p.join(d)),
        )
    })?;
    Some(base.join("planwright"))
}

/// Makes sure that the state folder `path` lies in, if any, may be used: created (and
/// marked) when missing; else owned by this user and marked by Planwright for this folder
/// (a trusted folder's was marked when the front end read the trust, [`adopt_trusted`]).
/// A `path` outside a state folder must only not belong to another user.
pub fn guard(path: &Path) -> Result<(), RunnerError> {
    let absolute = absolute(path)?;
    let Some(folder) = state_folder_of(&absolute) else {
        return check_owner(&absolute);
    };
    if !folder.exists() {
        std::fs::create_dir_all(&folder)
            .map_err(|e| RunnerError::Config(format!("cannot create {}: {e}", folder.display())))?;
        return mark(&folder);
    }
    check_owner(&folder)?;
    check_owner(&absolute)?;
    if is_marked(&folder) {
        return Ok(());
    }
    let project = folder.parent().unwrap_or(Path::new("/"));
    Err(RunnerError::Config(format!(
        "{} was not created by Planwright for this folder (copied or committed?), so its \
         database, token and workspaces are not used; `planwright trust {}` trusts the folder \
         and adopts it (docs/security.md)",
        folder.display(),
        project.display()
    )))
}

/// `planwright trust`: marks `folder` (a state folder) as Planwright's when it exists and
/// belongs to this user; returns a line saying so.
pub fn adopt(folder: &Path) -> Result<Option<String>, RunnerError> {
    if !folder.is_dir() {
        return Ok(None);
    }
    let folder = std::fs::canonicalize(folder)
        .map_err(|e| RunnerError::Config(format!("cannot resolve {}: {e}", folder.display())))?;
    check_owner(&folder)?;
    if is_marked(&folder) {
        return Ok(None);
    }
    mark(&folder)?;
    Ok(Some(format!(
        "adopted {}: its database, token and workspaces are used from now on\n",
        folder.display()
    )))
}

/// Refuses `path` when it exists and belongs to another user.
pub fn check_owner(path: &Path) -> Result<(), RunnerError> {
    let (Ok(meta), Some(me)) = (std::fs::metadata(path), current_uid()) else {
        return Ok(());
    };
    if meta.uid() == me {
        return Ok(());
    }
    Err(RunnerError::Config(format!(
        "{} belongs to another user (uid {}); Planwright does not use another user's state",
        path.display(),
        meta.uid()
    )))
}

/// This process's user: the owner of its `/proc/self`.
fn current_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// `path` made absolute against the working folder, without `.` components.
fn absolute(path: &Path) -> Result<PathBuf, RunnerError> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| RunnerError::Config(format!("cannot read the working folder: {e}")))?
            .join(path)
    };
    Ok(joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect())
}

/// The state folder among `path` and its ancestors (the nearest).
fn state_folder_of(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == STATE_FOLDER))
        .map(Path::to_path_buf)
}

/// The mark of `folder` for this user.
fn expected_mark(folder: &Path) -> Result<String, RunnerError> {
    let canonical = std::fs::canonicalize(folder)
        .map_err(|e| RunnerError::Config(format!("cannot resolve {}: {e}", folder.display())))?;
    let mut hash = Sha256::new();
    hash.update(b"planwright state folder\0");
    hash.update(user_key()?.as_bytes());
    hash.update([0]);
    hash.update(canonical.as_os_str().as_encoded_bytes());
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        "This folder was created by Planwright (docs/security.md); do not commit it.\n{hex}\n"
    ))
}

fn is_marked(folder: &Path) -> bool {
    let (Ok(found), Ok(expected)) = (
        std::fs::read_to_string(folder.join(MARKER)),
        expected_mark(folder),
    ) else {
        return false;
    };
    found == expected
}

fn mark(folder: &Path) -> Result<(), RunnerError> {
    let text = expected_mark(folder)?;
    write_atomically(&folder.join(MARKER), &text)
        .map_err(|e| RunnerError::Config(format!("cannot mark {}: {e}", folder.display())))
}

/// The user's secret: read, or created (mode 0600) on first use. Without a user config
/// folder (no HOME, no XDG_CONFIG_HOME) the marks are keyed with nothing.
fn user_key() -> Result<String, RunnerError> {
    let Some(dir) = user_config_dir() else {
        return Ok(String::new());
    };
    let path = dir.join(KEY_FILE);
    if let Ok(key) = std::fs::read_to_string(&path) {
        if !key.trim().is_empty() {
            return Ok(key.trim().to_string());
        }
    }
    let unwritable =
        |e: std::io::Error| RunnerError::Config(format!("cannot write {}: {e}", path.display()));
    std::fs::create_dir_all(&dir).map_err(unwritable)?;
    let key = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    // Written aside, then linked in place: two processes starting at once agree on one key.
    let aside = dir.join(format!(".{KEY_FILE}.{}", std::process::id()));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&aside)
            .map_err(unwritable)?;
        f.write_all(key.as_bytes()).map_err(unwritable)?;
    }
    let linked = std::fs::hard_link(&aside, &path);
    let _ = std::fs::remove_file(&aside);
    match linked {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read_to_string(&path)
            .map(|k| k.trim().to_string())
            .map_err(unwritable),
        Err(e) => Err(unwritable(e)),
    }
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let aside = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&aside, text)?;
    std::fs::rename(&aside, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_folder_is_the_nearest_ancestor_named_so() {
        assert_eq!(
            state_folder_of(Path::new("/p/.planwright/runs/x/workspace")),
            Some(PathBuf::from("/p/.planwright"))
        );
        assert_eq!(state_folder_of(Path::new("/p/db.sqlite")), None);
        assert_eq!(
            absolute(Path::new("/p/./.planwright/./x.db")).unwrap(),
            PathBuf::from("/p/.planwright/x.db")
        );
    }
}
