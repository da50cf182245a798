//! The sandbox's `/etc` in one mount (docs/security.md, "The bubblewrap sandbox").
//!
//! bwrap makes every read-only bind with a mount, a read of the mount table and a remount;
//! one per allow-listed `/etc` file ([`ETC_FILES`]) about doubled a sandboxed command's start
//! (docs/benchmarks.md, "Containment"). Instead, a private folder (the *stage*) holds
//! copies of the allow-listed files and an empty folder for each allow-listed folder; bwrap
//! binds the stage read-only as `/etc`, then each allow-listed folder, as it is, over its
//! empty stand-in:
//!
//! ```text
//! --ro-bind $TMPDIR/planwright-etc-<pid>-<n>/etc /etc  --ro-bind-try /etc/ssl /etc/ssl  …
//! ```
//!
//! The command sees the same names and contents as with a bind per file, and nothing else
//! of `/etc`. The copies stay current: before every command the sources are looked at
//! (device, inode, size, change and modification times, of the entry and of what a symbolic
//! link points to), and a stage whose sources changed, appeared or vanished is replaced by
//! a new one. A stage is made in a new folder of mode 0700; stages of Planwright processes
//! that are gone are removed when the first stage is made. Where no stage can be made, or
//! the workspace and the stage overlap, the sandbox binds each file as before.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once, PoisonError};

/// The `/etc` entries a command may read: name resolution, users and groups (no
/// passwords), certificates, the dynamic linker's cache, time zone, shell start-up files,
/// Debian's alternatives and the interpreters' own settings. Missing ones are skipped.
pub(crate) const ETC_FILES: [&str; 28] = [
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/hostname",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/bash.bashrc",
    "/etc/profile",
    "/etc/inputrc",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/protocols",
    "/etc/services",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/python3",
    "/etc/perl",
];

/// Prefix of every stage folder's name in the temporary folder.
const PREFIX: &str = "planwright-etc-";

/// What the sandbox binds for `/etc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EtcView {
    /// The folder bound read-only as `/etc`.
    pub stage: PathBuf,
    /// Top-level folders of the host's `/etc`, bound read-only over their stand-ins.
    pub folders: Vec<PathBuf>,
    /// The folder holding the stage (0700), which a workspace must not overlap.
    root: PathBuf,
}

/// The current stage for a command working in `workspace`, made or renewed as needed;
/// `None` where bwrap should bind each file itself.
pub(crate) fn for_workspace(workspace: &Path) -> Option<EtcView> {
    static CURRENT: Mutex<Option<Stage>> = Mutex::new(None);
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    let names = ETC_FILES.map(|f| f.trim_start_matches("/etc/"));
    let stamps = stamps(Path::new("/etc"), &names);
    let fresh = current.as_ref().is_some_and(|s| s.stamps == stamps);
    if !fresh {
        static SWEPT: Once = Once::new();
        let temp = std::env::temp_dir();
        SWEPT.call_once(|| sweep(&temp));
        *current = match build(Path::new("/etc"), &names, &temp, stamps) {
            Ok(stage) => Some(stage),
            Err(e) => {
                tracing::debug!(error = %e, "no /etc stage: bwrap binds each /etc file");
                None
            }
        };
    }
    let view = current.as_ref()?.view.clone();
    let overlap = workspace.starts_with(&view.root) || view.root.starts_with(workspace);
    (!overlap).then_some(view)
}

/// A stage and the sources it was copied from.
#[derive(Debug)]
struct Stage {
    view: EtcView,
    stamps: Vec<Stamp>,
}

/// What a source looked like: `None` when missing; else the entry's own (device, inode,
/// size, change time, modification time) and those of what it points to.
type Stamp = Option<([i64; 6], [i64; 6])>;

fn stamp_of(meta: &std::fs::Metadata) -> [i64; 6] {
    [
        meta.dev() as i64,
        meta.ino() as i64,
        meta.size() as i64,
        meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        i64::from(meta.mode()),
    ]
}

fn stamps(source: &Path, names: &[&str]) -> Vec<Stamp> {
    names
        .iter()
        .map(|name| {
            let path = source.join(name);
            let own = std::fs::symlink_metadata(&path).ok()?;
            let target = std::fs::metadata(&path).ok()?;
            Some((stamp_of(&own), stamp_of(&target)))
        })
        .collect()
}

/// Copies the files among `names` in `source` into a new stage under `temp`, with an empty
/// folder for each folder among them; `stamps` are the sources' as they were before.
fn build(source: &Path, names: &[&str], temp: &Path, stamps: Vec<Stamp>) -> std::io::Result<Stage> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let root = temp.join(format!("{PREFIX}{}-{n}", std::process::id()));
    // Fails if anything is there already: the folder is new and ours.
    std::fs::DirBuilder::new().mode(0o700).create(&root)?;
    let made = fill(source, names, &root);
    if made.is_err() {
        let _ = std::fs::remove_dir_all(&root);
    }
    let (stage, folders) = made?;
    Ok(Stage {
        view: EtcView {
            stage,
            folders,
            root,
        },
        stamps,
    })
}

fn fill(source: &Path, names: &[&str], root: &Path) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
    let stage = root.join("etc");
    std::fs::DirBuilder::new().mode(0o755).create(&stage)?;
    let mut folders = Vec::new();
    for name in names {
        let from = source.join(name);
        let meta = match std::fs::metadata(&from) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let to = stage.join(name);
        if meta.is_dir() {
            std::fs::DirBuilder::new().mode(0o755).create(&to)?;
            folders.push(from);
        } else {
            std::fs::copy(&from, &to)?;
        }
    }
    Ok((stage, folders))
}

/// Removes the stages of Planwright processes that are gone.
fn sweep(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_copies_the_files_and_stands_in_for_the_folders() {
        let source = tempfile::tempdir().unwrap();
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(source.path().join("passwd"), "root:x:0:0\n").unwrap();
        std::fs::create_dir(source.path().join("ssl")).unwrap();
        std::fs::write(source.path().join("ssl/key"), "secret").unwrap();
        std::fs::write(source.path().join("shadow"), "not listed").unwrap();
        let names = ["passwd", "ssl", "missing"];
        let stage = build(source.path(), &names, temp.path(), Vec::new()).unwrap();
        let etc = &stage.view.stage;
        assert_eq!(
            std::fs::read_to_string(etc.join("passwd")).unwrap(),
            "root:x:0:0\n"
        );
        // The folder is bound over its stand-in, not copied.
        assert!(etc.join("ssl").is_dir());
        assert!(!etc.join("ssl/key").exists());
        assert_eq!(stage.view.folders, vec![source.path().join("ssl")]);
        assert!(!etc.join("missing").exists());
        assert!(!etc.join("shadow").exists());
        let mode = std::fs::metadata(&stage.view.root).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // A second stage is a new folder; an existing one is never reused.
        let again = build(source.path(), &names, temp.path(), Vec::new()).unwrap();
        assert_ne!(again.view.root, stage.view.root);
    }

    #[test]
    fn any_change_to_a_source_shows_in_its_stamp() {
        let source = tempfile::tempdir().unwrap();
        let names = ["hosts", "resolv.conf", "later"];
        std::fs::write(source.path().join("hosts"), "127.0.0.1 a\n").unwrap();
        std::fs::write(source.path().join("target"), "nameserver 1\n").unwrap();
        std::os::unix::fs::symlink("target", source.path().join("resolv.conf")).unwrap();
        let before = stamps(source.path(), &names);
        assert_eq!(before, stamps(source.path(), &names));
        // Rewritten (size), replaced through its link, created.
        std::fs::write(source.path().join("hosts"), "127.0.0.1 a b\n").unwrap();
        let after_write = stamps(source.path(), &names);
        assert_ne!(before[0], after_write[0]);
        std::fs::write(source.path().join("other"), "nameserver 2\n").unwrap();
        std::fs::remove_file(source.path().join("resolv.conf")).unwrap();
        std::os::unix::fs::symlink("other", source.path().join("resolv.conf")).unwrap();
        let after_link = stamps(source.path(), &names);
        assert_ne!(after_write[1], after_link[1]);
        assert_eq!(after_link[2], None);
        std::fs::write(source.path().join("later"), "x").unwrap();
        assert!(stamps(source.path(), &names)[2].is_some());
    }

    #[test]
    fn a_workspace_overlapping_the_stage_gets_no_stage() {
        let Some(view) = for_workspace(Path::new("/nonexistent-workspace")) else {
            return;
        };
        assert!(for_workspace(&view.root.join("ws")).is_none());
        assert!(for_workspace(view.root.parent().unwrap()).is_none());
    }
}
