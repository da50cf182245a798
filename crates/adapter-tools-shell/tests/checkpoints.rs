//! `LocalCheckpoints` on real files (docs/checkpoints.md): what a checkpoint stores, what a
//! diff shows, what an undo puts back and when it refuses.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use adapter_tools_shell::{CheckpointLimits, LocalCheckpoints};
use domain::ports::{
    CheckpointAt, CheckpointError, CheckpointId, ConflictReason, DiffContent, FileChange,
    LeftOutReason, RestoreRequest, WorkspaceCheckpoints,
};

const RUN: &str = "run_1";

struct Setup {
    _root: tempfile::TempDir,
    ws: PathBuf,
    runs: PathBuf,
    cp: LocalCheckpoints,
}

fn setup_with(limits: CheckpointLimits) -> Setup {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("workspace");
    let runs = root.path().join("runs");
    fs::create_dir_all(&ws).unwrap();
    let cp = LocalCheckpoints::new(&runs).with_limits(limits);
    Setup {
        _root: root,
        ws,
        runs,
        cp,
    }
}

fn setup() -> Setup {
    setup_with(CheckpointLimits::default())
}

impl Setup {
    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.ws.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.ws.join(rel)).ok()
    }
    /// Sets `rel`'s modification time an hour back (older than any checkpoint's start).
    fn age(&self, rel: &str) {
        let file = fs::File::options()
            .write(true)
            .open(self.ws.join(rel))
            .unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }
    fn set_time(&self, rel: &str, time: SystemTime) {
        fs::File::options()
            .write(true)
            .open(self.ws.join(rel))
            .unwrap()
            .set_modified(time)
            .unwrap();
    }
    async fn take(&self) -> domain::ports::Checkpoint {
        self.cp
            .checkpoint(
                RUN,
                &self.ws,
                &CheckpointAt::Step {
                    step_id: "s1".into(),
                    attempt: 1,
                },
            )
            .await
            .unwrap()
    }
    /// Contents in the store: files of their own, and those the packs' indexes list.
    fn objects(&self) -> usize {
        let store = self.runs.join(RUN).join("checkpoints");
        let packed: usize = fs::read_dir(store.join("packs"))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "idx"))
                    .map(|e| {
                        let index: serde_json::Map<String, serde_json::Value> =
                            serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
                        index.len()
                    })
                    .sum()
            })
            .unwrap_or(0);
        count_files(&store.join("objects")) + packed
    }
    async fn undo(
        &self,
        target: &CheckpointId,
        run_left: Option<&CheckpointId>,
        force: bool,
    ) -> Result<domain::ports::Restored, CheckpointError> {
        self.cp
            .restore(
                RUN,
                &self.ws,
                &RestoreRequest {
                    target: target.clone(),
                    run_left: run_left.cloned(),
                    force,
                },
            )
            .await
    }
}

fn count_files(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| {
            if e.path().is_dir() {
                count_files(&e.path())
            } else {
                1
            }
        })
        .sum()
}

#[tokio::test]
async fn an_unchanged_tree_costs_no_new_content_and_keeps_its_id() {
    let s = setup();
    s.write("a.txt", "alpha\n");
    s.write("dir/b.txt", "beta\n");
    s.write("dir/copy.txt", "alpha\n");
    let first = s.take().await;
    assert_eq!(first.files, 3);
    assert_eq!(first.stored_bytes, 11, "the same content is stored once");
    // Two contents and the listings of the two folders ("" and "dir").
    assert_eq!(s.objects(), 4);
    assert!(first.complete);
    let second = s.take().await;
    assert_eq!(second.id, first.id);
    assert_eq!(second.stored_bytes, 0);
    assert_eq!(s.objects(), 4);
    // Checkpoints live out of the workspace.
    assert!(s.runs.join(RUN).join("checkpoints").is_dir());
    assert_eq!(fs::read_dir(&s.ws).unwrap().count(), 2);
    assert!(s.cp.space_used(RUN).await.unwrap() > 11);
}

/// The index: a file whose size and time did not change since the last checkpoint (and
/// changed well before it) is not read again.
#[tokio::test]
async fn a_file_with_the_same_size_and_time_is_not_read_again() {
    let s = setup();
    s.write("big.txt", "1234");
    s.age("big.txt");
    let old_time = fs::metadata(s.ws.join("big.txt"))
        .unwrap()
        .modified()
        .unwrap();
    let first = s.take().await;
    // Same size, same (old) time, other content: taken from the index, not read.
    s.write("big.txt", "abcd");
    s.set_time("big.txt", old_time);
    let second = s.take().await;
    assert_eq!(second.id, first.id, "not read: the index said unchanged");
    assert_eq!(second.stored_bytes, 0);
    // Another time: read again.
    s.set_time("big.txt", old_time + Duration::from_secs(1));
    let third = s.take().await;
    assert_ne!(third.id, first.id);
    assert_eq!(third.stored_bytes, 4);
}

/// A file changed just before a checkpoint (within a coarse clock's tick) is read again by
/// the next one even when its size and time look the same.
#[tokio::test]
async fn a_file_changed_just_before_a_checkpoint_is_read_again() {
    let s = setup();
    s.write("fresh.txt", "1234");
    let first = s.take().await;
    let time = fs::metadata(s.ws.join("fresh.txt"))
        .unwrap()
        .modified()
        .unwrap();
    s.write("fresh.txt", "abcd");
    s.set_time("fresh.txt", time);
    let second = s.take().await;
    assert_ne!(second.id, first.id);
}

#[tokio::test]
async fn the_diff_shows_added_deleted_modified_binary_and_too_large_files() {
    let s = setup_with(CheckpointLimits {
        max_file_bytes: 100,
        ..CheckpointLimits::default()
    });
    s.write("notes.txt", "one\ntwo\nthree\n");
    s.write("gone.txt", "bye\n");
    s.write("img.bin", [0u8, 1, 2, 3]);
    s.write("huge.txt", "x".repeat(200));
    let before = s.take().await;
    assert_eq!(
        before
            .left_out
            .iter()
            .map(|l| (l.path.as_str(), l.reason))
            .collect::<Vec<_>>(),
        [("huge.txt", LeftOutReason::TooLarge)]
    );
    s.write("notes.txt", "one\nTWO\nthree\n");
    fs::remove_file(s.ws.join("gone.txt")).unwrap();
    s.write("new/added.txt", "hello\n");
    s.write("img.bin", [0u8, 9, 9]);
    s.write("huge.txt", "y".repeat(300));
    let after = s.take().await;
    let diff = s.cp.diff(RUN, &before.id, &after.id).await.unwrap();
    let files: Vec<(&str, FileChange)> = diff
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.change))
        .collect();
    assert_eq!(
        files,
        [
            ("gone.txt", FileChange::Deleted),
            ("huge.txt", FileChange::Modified),
            ("img.bin", FileChange::Modified),
            ("new/added.txt", FileChange::Added),
            ("notes.txt", FileChange::Modified),
        ]
    );
    let content = |p: &str| {
        diff.files
            .iter()
            .find(|f| f.path == p)
            .unwrap()
            .content
            .clone()
    };
    assert_eq!(
        content("notes.txt"),
        DiffContent::Text {
            unified:
                "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
                    .into()
        }
    );
    assert_eq!(
        content("new/added.txt"),
        DiffContent::Text {
            unified: "--- /dev/null\n+++ b/new/added.txt\n@@ -0,0 +1 @@\n+hello\n".into()
        }
    );
    assert_eq!(
        content("img.bin"),
        DiffContent::Binary {
            old_size: Some(4),
            new_size: Some(3)
        }
    );
    assert_eq!(
        content("huge.txt"),
        DiffContent::NotKept {
            old_size: Some(200),
            new_size: Some(300)
        }
    );
    assert!(
        matches!(content("gone.txt"), DiffContent::Text { unified } if unified.contains("-bye"))
    );
    assert_eq!(diff.paths(FileChange::Added), ["new/added.txt"]);
    let unknown = CheckpointId::new("ffffffffffffffffffffffff");
    assert_eq!(
        s.cp.diff(RUN, &unknown, &after.id).await,
        Err(CheckpointError::NotFound(unknown))
    );
}

#[tokio::test]
async fn the_checkpoint_cap_records_what_does_not_fit_as_too_large() {
    let s = setup_with(CheckpointLimits {
        max_checkpoint_bytes: 10,
        ..CheckpointLimits::default()
    });
    s.write("a.txt", "12345678");
    s.write("b.txt", "abcdefgh");
    let taken = s.take().await;
    assert_eq!(taken.stored_bytes, 8);
    assert_eq!(taken.left_out.len(), 1);
    assert_eq!(taken.left_out[0].path, "b.txt");
    assert_eq!(taken.left_out[0].reason, LeftOutReason::TooLarge);
    assert!(taken.complete, "too large is not incomplete");
}

#[tokio::test]
async fn undo_brings_back_an_overwritten_file_and_removes_created_ones() {
    let s = setup();
    s.write("data.txt", "original\n");
    fs::set_permissions(
        s.ws.join("data.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let before_step = s.take().await;
    s.write("data.txt", "clobbered\n");
    s.write("out/new/result.txt", "made by the step\n");
    s.write("made.txt", "also new\n");
    let run_end = s.take().await;

    let restored = s
        .undo(&before_step.id, Some(&run_end.id), false)
        .await
        .unwrap();
    assert_eq!(s.read("data.txt").as_deref(), Some("original\n"));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &fs::metadata(s.ws.join("data.txt")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o755);
    assert!(
        !s.ws.join("out").exists(),
        "the folders the step made go too"
    );
    assert!(!s.ws.join("made.txt").exists());
    assert_eq!(restored.written, ["data.txt"]);
    assert_eq!(restored.removed, ["made.txt", "out/new/result.txt"]);
    assert!(restored.forced.is_empty());
    // No staging file is left behind.
    assert_eq!(fs::read_dir(&s.ws).unwrap().count(), 1);

    // The undo can be undone: its own checkpoint holds what it replaced.
    s.undo(&restored.before.id, None, false).await.unwrap();
    assert_eq!(s.read("data.txt").as_deref(), Some("clobbered\n"));
    assert_eq!(
        s.read("out/new/result.txt").as_deref(),
        Some("made by the step\n")
    );
}

#[tokio::test]
async fn undo_refuses_to_overwrite_a_change_made_after_the_run_unless_forced() {
    let s = setup();
    s.write("data.txt", "original\n");
    s.write("other.txt", "the user's\n");
    let before_step = s.take().await;
    s.write("data.txt", "by the run\n");
    let run_end = s.take().await;
    // After the run: someone edits the file the run changed, and another one.
    s.write("data.txt", "edited after the run\n");
    s.write("other.txt", "edited too\n");

    let err = s
        .undo(&before_step.id, Some(&run_end.id), false)
        .await
        .unwrap_err();
    let CheckpointError::Conflicts { conflicts, before } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].path, "data.txt");
    assert_eq!(conflicts[0].reason, ConflictReason::ChangedAfterRun);
    assert!(
        err.to_string().contains("data.txt (changed after the run)"),
        "{err}"
    );
    assert!(!before.as_str().is_empty());
    assert_eq!(
        s.read("data.txt").as_deref(),
        Some("edited after the run\n"),
        "nothing changed"
    );

    let restored = s
        .undo(&before_step.id, Some(&run_end.id), true)
        .await
        .unwrap();
    assert_eq!(s.read("data.txt").as_deref(), Some("original\n"));
    assert_eq!(restored.forced.len(), 1);
    // A file the run did not change keeps the later edit.
    assert_eq!(s.read("other.txt").as_deref(), Some("edited too\n"));
}

/// An undo cut short (its journal still there, some paths already put back), run again,
/// finishes: what it put back is already as the target has it, not a conflict.
#[tokio::test]
async fn an_interrupted_undo_run_again_finishes_without_conflicts() {
    let s = setup();
    s.write("a.txt", "a0\n");
    s.write("b.txt", "b0\n");
    let target = s.take().await;
    s.write("a.txt", "a1\n");
    s.write("b.txt", "b1\n");
    let run_end = s.take().await;
    // An undo that put a.txt back, then stopped: its journal is still there.
    let journal = s.runs.join(RUN).join("checkpoints").join("restore.json");
    fs::write(
        &journal,
        format!(r#"{{"target":"{}","paths":["a.txt","b.txt"]}}"#, target.id),
    )
    .unwrap();
    s.write("a.txt", "a0\n");
    let restored = s.undo(&target.id, Some(&run_end.id), false).await.unwrap();
    assert_eq!(restored.written, ["b.txt"]);
    assert_eq!(s.read("b.txt").as_deref(), Some("b0\n"));
    assert!(!journal.exists());
}

#[tokio::test]
async fn ignored_folders_and_git_objects_are_neither_recorded_nor_touched() {
    let s = setup();
    s.write("src/main.rs", "fn main() {}\n");
    s.write(".git/objects/ab/cdef", "object");
    s.write(".planwright/runs/r/x", "run data");
    s.write("target/debug/app", "binary");
    s.write("web/node_modules/x/index.js", "x");
    let before = s.take().await;
    assert_eq!(before.files, 1);
    s.write(".git/objects/ab/cdef", "object 2");
    s.write(".git/objects/cd/new", "new object");
    s.write("target/debug/app", "binary 2");
    s.write("src/main.rs", "fn main() { changed() }\n");
    let after = s.take().await;
    let diff = s.cp.diff(RUN, &before.id, &after.id).await.unwrap();
    assert_eq!(diff.paths(FileChange::Modified), ["src/main.rs"]);
    assert!(diff.paths(FileChange::Added).is_empty(), "{diff:?}");
    s.undo(&before.id, Some(&after.id), false).await.unwrap();
    assert_eq!(s.read("src/main.rs").as_deref(), Some("fn main() {}\n"));
    assert_eq!(s.read(".git/objects/ab/cdef").as_deref(), Some("object 2"));
    assert_eq!(s.read(".git/objects/cd/new").as_deref(), Some("new object"));
    assert_eq!(s.read("target/debug/app").as_deref(), Some("binary 2"));

    // A configurable list.
    let s = setup_with(CheckpointLimits {
        ignore: vec!["cache/".into(), "secret.env".into()],
        ..CheckpointLimits::default()
    });
    s.write("cache/a", "a");
    s.write("deep/secret.env", "k");
    s.write("target/kept", "t");
    assert_eq!(s.take().await.files, 1);
}

/// Issue 41, High 5: `core.fsmonitor` and a `post-checkout` hook planted in `.git` (by an
/// unsandboxed command, or one allowed to write it) were neither shown by `runs diff` nor
/// undone by `runs undo`: the checkpoints left all of `.git` out. Its config, hooks and refs
/// are recorded now; only its object store is left out.
#[tokio::test]
async fn git_config_hooks_and_refs_are_recorded_shown_and_undone() {
    let s = setup();
    s.write(".git/config", "[core]\n\tbare = false\n");
    s.write(".git/HEAD", "ref: refs/heads/main\n");
    s.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    s.write(".hg/hgrc", "[ui]\n");
    let before = s.take().await;
    assert_eq!(before.files, 4);
    s.write(
        ".git/config",
        "[core]\n\tbare = false\n\tfsmonitor = touch /tmp/P\n",
    );
    s.write(".git/hooks/post-checkout", "#!/bin/sh\ntouch P\n");
    s.write(".git/refs/heads/evil", "0123\n");
    s.write(".hg/hgrc", "[hooks]\nupdate = touch P\n");
    let after = s.take().await;
    let diff = s.cp.diff(RUN, &before.id, &after.id).await.unwrap();
    assert_eq!(
        diff.paths(FileChange::Added),
        [".git/hooks/post-checkout", ".git/refs/heads/evil"]
    );
    assert_eq!(
        diff.paths(FileChange::Modified),
        [".git/config", ".hg/hgrc"]
    );
    let shown = format!("{diff:?}");
    assert!(shown.contains("fsmonitor = touch /tmp/P"), "{shown}");
    s.undo(&before.id, Some(&after.id), false).await.unwrap();
    assert_eq!(
        s.read(".git/config").as_deref(),
        Some("[core]\n\tbare = false\n")
    );
    assert!(!s.ws.join(".git/hooks/post-checkout").exists());
    assert!(!s.ws.join(".git/refs").exists());
    assert_eq!(s.read(".hg/hgrc").as_deref(), Some("[ui]\n"));
}

/// `git` in `ws`, with no repository above `ws` counted (`GIT_CEILING_DIRECTORIES`).
fn git_in(ws: &Path, args: &[&str]) -> Option<std::process::Output> {
    std::process::Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_CEILING_DIRECTORIES", ws.parent().unwrap())
        .output()
        .ok()
}

/// Issue 41 (High 5), docs/security.md "Open gaps": a workspace without `.git` has none to
/// bind read-only, so a run can make one (`git init`) with `core.fsmonitor` set; the
/// checkpoints record it like any file and an undo takes the repository away again.
#[tokio::test]
async fn a_repository_a_run_creates_is_shown_and_undone() {
    let s = setup();
    let git = git_in(&s.ws, &["--version"]).filter(|o| o.status.success());
    if test_support::require_or_skip(git.ok_or("git is not installed")).is_none() {
        return;
    }
    s.write("notes.txt", "hello\n");
    let before = s.take().await;
    for args in [
        &["init", "-q"][..],
        &["config", "core.fsmonitor", "touch planted"],
    ] {
        assert!(
            git_in(&s.ws, args).unwrap().status.success(),
            "git {args:?}"
        );
    }
    s.write(".git/hooks/post-checkout", "#!/bin/sh\ntouch planted\n");
    let after = s.take().await;
    let diff = s.cp.diff(RUN, &before.id, &after.id).await.unwrap();
    let added = diff.paths(FileChange::Added);
    for path in [".git/HEAD", ".git/config", ".git/hooks/post-checkout"] {
        assert!(added.contains(&path), "{path} in {added:?}");
    }
    assert!(format!("{diff:?}").contains("fsmonitor = touch planted"));
    s.undo(&before.id, Some(&after.id), false).await.unwrap();
    for path in [".git/HEAD", ".git/config", ".git/hooks/post-checkout"] {
        assert!(!s.ws.join(path).exists(), "{path} left");
    }
    let status = git_in(&s.ws, &["rev-parse", "--git-dir"]).unwrap();
    assert!(!status.status.success(), "still a repository");
    assert_eq!(s.read("notes.txt").as_deref(), Some("hello\n"));
}

/// Issue 41 (Low): `chmod 000` changes neither size nor time; the checkpoints recorded the
/// executable bit only, so the change was neither shown nor undone.
#[tokio::test]
async fn a_chmod_is_recorded_shown_and_undone() {
    use std::os::unix::fs::PermissionsExt;
    let s = setup();
    s.write("data.txt", "1\n2\n");
    fs::set_permissions(s.ws.join("data.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    let before = s.take().await;
    fs::set_permissions(s.ws.join("data.txt"), fs::Permissions::from_mode(0o000)).unwrap();
    let after = s.take().await;
    assert_ne!(before.id, after.id);
    let diff = s.cp.diff(RUN, &before.id, &after.id).await.unwrap();
    assert_eq!(diff.paths(FileChange::Modified), ["data.txt"]);
    assert_eq!(
        diff.files[0].content,
        DiffContent::Mode {
            executable: false,
            old_mode: Some(0o640),
            new_mode: Some(0o000),
        }
    );
    s.undo(&before.id, Some(&after.id), false).await.unwrap();
    let mode = fs::metadata(s.ws.join("data.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o640);
    assert_eq!(s.read("data.txt").as_deref(), Some("1\n2\n"));
}

#[tokio::test]
async fn links_are_recorded_as_links_and_special_files_and_odd_names_are_listed() {
    let s = setup();
    s.write("real.txt", "real\n");
    std::os::unix::fs::symlink("/etc/passwd", s.ws.join("outside")).unwrap();
    std::os::unix::fs::symlink("real.txt", s.ws.join("inside")).unwrap();
    nix::unistd::mkfifo(&s.ws.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let odd = s.ws.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt"));
    fs::write(&odd, "latin-1 name").unwrap();
    let before = s.take().await;
    assert_eq!(before.files, 3, "real.txt and two links");
    let mut left: Vec<(String, LeftOutReason)> = before
        .left_out
        .iter()
        .map(|l| (l.path.clone(), l.reason))
        .collect();
    left.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        left,
        [
            ("caf\u{fffd}.txt".to_string(), LeftOutReason::NameNotUtf8),
            ("pipe".to_string(), LeftOutReason::Special)
        ]
    );
    // The run points a link elsewhere and removes the other; an undo makes them again as
    // links, never writing through them.
    fs::remove_file(s.ws.join("outside")).unwrap();
    fs::remove_file(s.ws.join("inside")).unwrap();
    std::os::unix::fs::symlink("/tmp", s.ws.join("inside")).unwrap();
    let after = s.take().await;
    let diff = s.cp.diff(RUN, &before.id, &after.id).await.unwrap();
    let inside = diff.files.iter().find(|f| f.path == "inside").unwrap();
    assert_eq!(
        inside.content,
        DiffContent::Link {
            old_target: Some("real.txt".into()),
            new_target: Some("/tmp".into())
        }
    );
    s.undo(&before.id, Some(&after.id), false).await.unwrap();
    assert_eq!(
        fs::read_link(s.ws.join("outside")).unwrap(),
        Path::new("/etc/passwd")
    );
    assert_eq!(
        fs::read_link(s.ws.join("inside")).unwrap(),
        Path::new("real.txt")
    );
    assert!(odd.exists(), "a name that is not UTF-8 is left alone");
}

#[tokio::test]
async fn a_checkpoint_the_store_could_not_keep_is_incomplete_and_cannot_be_restored() {
    use sha2::{Digest, Sha256};
    let s = setup();
    // Bigger than what goes into a pack: a file of its own in `objects/`.
    let content = "kept?\n".repeat(20_000);
    s.write("a.txt", &content);
    // The folder the content would go to is a file: the store cannot write it (as a full
    // disk would refuse it).
    let digest: String = Sha256::digest(content.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let objects = s.runs.join(RUN).join("checkpoints").join("objects");
    fs::create_dir_all(&objects).unwrap();
    fs::write(objects.join(&digest[..2]), "in the way").unwrap();
    let taken = s.take().await;
    assert!(!taken.complete);
    assert_eq!(taken.left_out[0].reason, LeftOutReason::NotStored);
    assert_eq!(
        s.undo(&taken.id, None, true).await.unwrap_err(),
        CheckpointError::Incomplete(taken.id.clone())
    );
}

#[tokio::test]
async fn a_file_not_kept_cannot_be_put_back_and_is_named() {
    let s = setup_with(CheckpointLimits {
        max_file_bytes: 4,
        ..CheckpointLimits::default()
    });
    s.write("big.txt", "0123456789");
    let before = s.take().await;
    s.write("big.txt", "overwritten!");
    let after = s.take().await;
    let err = s
        .undo(&before.id, Some(&after.id), false)
        .await
        .unwrap_err();
    let CheckpointError::Conflicts { conflicts, .. } = err else {
        panic!("{err:?}");
    };
    assert_eq!(conflicts[0].path, "big.txt");
    assert_eq!(conflicts[0].reason, ConflictReason::NotKept);
    let forced = s.undo(&before.id, Some(&after.id), true).await.unwrap();
    assert!(forced.written.is_empty());
    assert_eq!(
        s.read("big.txt").as_deref(),
        Some("overwritten!"),
        "left as it is"
    );
}

/// What a checkpoint leaves in memory (the index, the folders' listings) gives the same
/// checkpoint the files on disk give, and is not used once the run's checkpoints were
/// discarded by someone else.
#[tokio::test]
async fn a_checkpoint_remembered_in_memory_is_the_one_the_disk_gives() {
    let s = setup();
    for folder in ["a", "b", "c"] {
        for n in 0..5 {
            let rel = format!("{folder}/f{n}.txt");
            s.write(&rel, format!("{folder} {n}\n"));
            s.age(&rel);
        }
    }
    let first = s.take().await;
    s.write("b/f2.txt", "changed\n");
    let second = s.take().await;
    assert_ne!(second.id, first.id);
    assert_eq!(second.stored_bytes, 8, "only the changed content is read");
    let from_disk = LocalCheckpoints::new(&s.runs);
    let again = from_disk
        .checkpoint(RUN, &s.ws, &CheckpointAt::RunEnd)
        .await
        .unwrap();
    assert_eq!(again.id, second.id, "memory and disk agree");
    s.undo(&first.id, Some(&second.id), false).await.unwrap();
    assert_eq!(s.read("b/f2.txt").as_deref(), Some("b 2\n"));
    // Discarded by another process: this one's memory names contents no longer stored.
    from_disk.discard(RUN).await.unwrap();
    let fresh = s.take().await;
    assert_eq!(fresh.files, 15);
    assert!(fresh.stored_bytes > 0, "every file read again");
    s.write("a/f0.txt", "gone\n");
    s.take().await;
    s.undo(&fresh.id, None, true).await.unwrap();
    assert_eq!(s.read("a/f0.txt").as_deref(), Some("a 0\n"));
}

#[tokio::test]
async fn discard_removes_a_runs_checkpoints() {
    let s = setup();
    s.write("a.txt", "a");
    s.take().await;
    assert!(s.cp.space_used(RUN).await.unwrap() > 0);
    s.cp.discard(RUN).await.unwrap();
    assert_eq!(s.cp.space_used(RUN).await.unwrap(), 0);
    assert!(!s.runs.join(RUN).exists());
    assert_eq!(
        s.read("a.txt").as_deref(),
        Some("a"),
        "the workspace is not touched"
    );
}

/// Every file under `dir` holding `needle`.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if meta.is_file()
            && fs::read(&path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
        {
            found.push(path);
        }
    }
    found
}

/// Issue 41, High 3: a session left running swapped folder `d` for a link to a host folder
/// between two checkpoints; the host's file went into the checkpoint store, `runs diff`
/// printed it and `runs undo --to-step 1 --force` wrote it into the workspace. Here a
/// thread swaps `d` and a link to the host folder as fast as it can while checkpoints are
/// taken: no checkpoint may read through the link.
#[tokio::test]
async fn a_folder_swapped_for_a_link_never_brings_host_files_in() {
    const SECRET: &[u8] = b"HOST SECRET 8d1f";
    let s = setup();
    let host = tempfile::tempdir().unwrap();
    fs::write(host.path().join("secret.txt"), SECRET).unwrap();
    fs::write(host.path().join("own.txt"), SECRET).unwrap();
    s.write("d/own.txt", "the workspace's own\n");
    s.write("keep.txt", "kept\n");
    std::os::unix::fs::symlink(host.path(), s.ws.join("swap")).unwrap();
    let first = s.take().await;

    let swapper = test_support::Swapper::start(&s.ws.join("d"), &s.ws.join("swap"));
    let mut taken = Vec::new();
    while taken.len() < 60 || swapper.swaps() < 1000 {
        taken.push(s.take().await);
    }
    // The run ends with `d` a link to the host folder.
    swapper.stop(false);
    assert!(fs::symlink_metadata(s.ws.join("d")).unwrap().is_symlink());
    let end = s.take().await;

    let store = s.runs.join(RUN).join("checkpoints");
    assert_eq!(
        files_holding(&store, SECRET),
        Vec::<PathBuf>::new(),
        "host content in the checkpoint store"
    );
    for cp in taken.iter().chain([&end]) {
        let diff = s.cp.diff(RUN, &first.id, &cp.id).await.unwrap();
        let shown = format!("{diff:?}");
        assert!(!shown.contains("HOST SECRET"), "{shown}");
        assert!(
            !diff.files.iter().any(|f| f.path.starts_with("d/secret")),
            "{shown}"
        );
    }
    // Undo to a checkpoint taken while the swapping went on, forced: the workspace gets
    // its own files back and nothing of the host.
    for cp in taken.iter().step_by(7) {
        s.undo(&cp.id, Some(&end.id), true).await.unwrap();
        assert_eq!(files_holding(&s.ws, SECRET), Vec::<PathBuf>::new());
        s.undo(&end.id, None, true).await.unwrap();
    }
    s.undo(&first.id, Some(&end.id), true).await.unwrap();
    assert!(fs::symlink_metadata(s.ws.join("d")).unwrap().is_dir());
    assert_eq!(
        s.read("d/own.txt").as_deref(),
        Some("the workspace's own\n")
    );
    assert_eq!(files_holding(&s.ws, SECRET), Vec::<PathBuf>::new());
    let mut host_names: Vec<String> = fs::read_dir(host.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    host_names.sort();
    assert_eq!(
        host_names,
        ["own.txt", "secret.txt"],
        "the host folder untouched"
    );
    assert_eq!(fs::read(host.path().join("own.txt")).unwrap(), SECRET);
}

/// Issue 41, High 2, the undo's side: after `mv sub sub.bak && ln -s /outside sub`, an undo
/// to before the run gives back the real `sub/` and its file, removes what the run made,
/// and neither reads nor writes the folder the link points at.
#[tokio::test]
async fn an_undo_after_a_folder_swapped_for_a_link_gives_the_folder_back() {
    let s = setup();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("data.txt"), "outside, not ours\n").unwrap();
    s.write("sub/data.txt", "the user's input\n");
    let first = s.take().await;
    fs::rename(s.ws.join("sub"), s.ws.join("sub.bak")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.ws.join("sub")).unwrap();
    let end = s.take().await;
    let diff = s.cp.diff(RUN, &first.id, &end.id).await.unwrap();
    assert_eq!(diff.paths(FileChange::Added), ["sub", "sub.bak/data.txt"]);
    assert!(
        !format!("{diff:?}").contains("outside, not ours"),
        "{diff:?}"
    );

    let restored = s.undo(&first.id, Some(&end.id), false).await.unwrap();
    assert_eq!(restored.written, ["sub/data.txt"]);
    assert!(fs::symlink_metadata(s.ws.join("sub")).unwrap().is_dir());
    assert_eq!(
        s.read("sub/data.txt").as_deref(),
        Some("the user's input\n")
    );
    assert!(!s.ws.join("sub.bak").exists());
    let names: Vec<String> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["data.txt"]);
    assert_eq!(
        fs::read_to_string(outside.path().join("data.txt")).unwrap(),
        "outside, not ours\n"
    );
}
