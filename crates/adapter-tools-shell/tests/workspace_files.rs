//! The workspace port on real temporary folders: listing, facts, digests, copies kept out of
//! the workspace, restores, and paths that must stay inside (docs/security.md, "Input files").
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use adapter_tools_shell::LocalWorkspaceFiles;
use domain::ports::{WorkspaceError, WorkspaceFiles};

fn seed(ws: &Path) {
    fs::write(ws.join("data.txt"), "1\n2\n").unwrap();
    fs::create_dir_all(ws.join("sub/deep")).unwrap();
    fs::write(ws.join("sub/deep/b.csv"), "a,b\n").unwrap();
    fs::create_dir_all(ws.join(".git")).unwrap();
    fs::write(ws.join(".git/HEAD"), "ref").unwrap();
    fs::create_dir_all(ws.join(".planwright")).unwrap();
    fs::write(ws.join(".planwright/planwright.db"), "db").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", ws.join("link")).unwrap();
}

#[tokio::test]
async fn lists_regular_files_sorted_without_links_git_or_run_data() {
    let ws = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    seed(ws.path());
    let port = LocalWorkspaceFiles::new(copies.path());
    let listing = port.list(ws.path(), 100).await.unwrap();
    let paths: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["data.txt", "sub/deep/b.csv"]);
    assert!(!listing.truncated);
    assert_eq!(listing.files[0].size, 4);
    assert!(listing.files[0].modified_ns > 0);
    let limited = port.list(ws.path(), 1).await.unwrap();
    assert_eq!(limited.files.len(), 1);
    assert!(limited.truncated);
}

#[tokio::test]
async fn facts_digests_and_heads() {
    let ws = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    seed(ws.path());
    let port = LocalWorkspaceFiles::new(copies.path());
    let facts = port.stat(ws.path(), "data.txt").await.unwrap().unwrap();
    assert_eq!((facts.path.as_str(), facts.size), ("data.txt", 4));
    assert_eq!(port.stat(ws.path(), "missing.txt").await.unwrap(), None);
    assert_eq!(port.stat(ws.path(), "sub").await.unwrap(), None, "a folder");
    assert_eq!(port.stat(ws.path(), "link").await.unwrap(), None, "a link");
    let d = port.digest(ws.path(), "data.txt").await.unwrap().unwrap();
    assert_eq!(d.len(), 64);
    fs::write(ws.path().join("same.txt"), "1\n2\n").unwrap();
    assert_eq!(port.digest(ws.path(), "same.txt").await.unwrap(), Some(d));
    assert_eq!(port.digest(ws.path(), "nope").await.unwrap(), None);
    let head = port.head(ws.path(), "data.txt", 2).await.unwrap().unwrap();
    assert_eq!(head, b"1\n");
    for outside in ["../x", "/etc/passwd", "a/../../x"] {
        assert!(
            matches!(
                port.stat(ws.path(), outside).await,
                Err(WorkspaceError::Io(_))
            ),
            "{outside}"
        );
    }
}

#[tokio::test]
async fn a_kept_copy_restores_an_overwritten_deleted_or_replaced_input() {
    let ws = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    seed(ws.path());
    let port = LocalWorkspaceFiles::new(copies.path());
    let digest = port
        .keep_copy("run_1", ws.path(), "sub/deep/b.csv")
        .await
        .unwrap();
    let kept = copies.path().join("run_1/inputs/sub/deep/b.csv");
    assert_eq!(
        fs::read_to_string(&kept).unwrap(),
        "a,b\n",
        "kept outside the workspace"
    );
    assert_eq!(
        port.digest(ws.path(), "sub/deep/b.csv").await.unwrap(),
        Some(digest)
    );

    fs::write(ws.path().join("sub/deep/b.csv"), "destroyed").unwrap();
    port.restore("run_1", ws.path(), "sub/deep/b.csv")
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(ws.path().join("sub/deep/b.csv")).unwrap(),
        "a,b\n"
    );

    fs::remove_dir_all(ws.path().join("sub")).unwrap();
    port.restore("run_1", ws.path(), "sub/deep/b.csv")
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(ws.path().join("sub/deep/b.csv")).unwrap(),
        "a,b\n"
    );

    fs::remove_file(ws.path().join("sub/deep/b.csv")).unwrap();
    fs::create_dir(ws.path().join("sub/deep/b.csv")).unwrap();
    port.restore("run_1", ws.path(), "sub/deep/b.csv")
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(ws.path().join("sub/deep/b.csv")).unwrap(),
        "a,b\n"
    );
    let leftovers: Vec<String> = fs::read_dir(ws.path().join("sub/deep"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, ["b.csv"], "no staging file left behind");

    assert!(matches!(
        port.restore("run_1", ws.path(), "data.txt").await,
        Err(WorkspaceError::NoCopy(p)) if p == "data.txt"
    ));
    port.discard_copies("run_1").await.unwrap();
    assert!(
        !copies.path().join("run_1").exists(),
        "an empty run folder goes too"
    );
    port.discard_copies("run_1").await.unwrap();
    // A run folder that holds the workspace stays.
    port.keep_copy("run_2", ws.path(), "data.txt")
        .await
        .unwrap();
    fs::create_dir_all(copies.path().join("run_2/workspace")).unwrap();
    port.discard_copies("run_2").await.unwrap();
    assert!(!copies.path().join("run_2/inputs").exists());
    assert!(copies.path().join("run_2/workspace").is_dir());
}

#[tokio::test]
async fn copies_of_runs_stay_apart_and_run_ids_cannot_climb_out() {
    let ws = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    seed(ws.path());
    let port = LocalWorkspaceFiles::new(copies.path().join("runs"));
    port.keep_copy("run_1", ws.path(), "data.txt")
        .await
        .unwrap();
    port.keep_copy("../evil", ws.path(), "data.txt")
        .await
        .unwrap();
    assert!(copies.path().join("runs/run_1/inputs/data.txt").is_file());
    assert!(copies.path().join("runs/_evil/inputs/data.txt").is_file());
    port.discard_copies("run_1").await.unwrap();
    assert!(copies.path().join("runs/_evil/inputs/data.txt").is_file());
}

/// Issue 41, High 2: the model ran `mv sub sub.bak && ln -s /outside sub`; restoring the
/// input `sub/data.txt` wrote `/outside/data.txt` (and a staging file there). The restore
/// must put the input back in a real `sub/` folder and leave the outside folder alone.
#[tokio::test]
async fn an_input_restore_never_writes_through_a_folder_swapped_for_a_link() {
    let ws = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(ws.path().join("sub")).unwrap();
    fs::write(ws.path().join("sub/data.txt"), "the user's input\n").unwrap();
    fs::write(outside.path().join("data.txt"), "outside, not ours\n").unwrap();
    let port = LocalWorkspaceFiles::new(copies.path());
    port.keep_copy("run_1", ws.path(), "sub/data.txt")
        .await
        .unwrap();

    // The model's command.
    fs::rename(ws.path().join("sub"), ws.path().join("sub.bak")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("sub")).unwrap();

    // What the runtime sees of the input: gone (a link is in its way), not the outside file.
    assert_eq!(port.stat(ws.path(), "sub/data.txt").await.unwrap(), None);
    assert_eq!(port.digest(ws.path(), "sub/data.txt").await.unwrap(), None);
    assert_eq!(
        port.head(ws.path(), "sub/data.txt", 100).await.unwrap(),
        None
    );
    let _ = port.restore("run_1", ws.path(), "sub/data.txt").await;

    let mut there: Vec<String> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    there.sort();
    assert_eq!(there, ["data.txt"], "nothing created outside");
    assert_eq!(
        fs::read_to_string(outside.path().join("data.txt")).unwrap(),
        "outside, not ours\n",
        "the outside file is untouched"
    );
    let sub = fs::symlink_metadata(ws.path().join("sub")).unwrap();
    assert!(sub.is_dir(), "the input is back in a real folder");
    assert_eq!(
        fs::read_to_string(ws.path().join("sub/data.txt")).unwrap(),
        "the user's input\n"
    );
    assert_eq!(
        fs::read_to_string(ws.path().join("sub.bak/data.txt")).unwrap(),
        "the user's input\n",
        "what the model moved stays where it put it"
    );
}

/// Issue 41 (Low): `chmod 000` on an input changes neither its size nor its time, so it was
/// not noticed; its permissions are among its facts now, and a restore puts them back.
#[tokio::test]
async fn an_inputs_permissions_are_seen_and_put_back() {
    use std::os::unix::fs::PermissionsExt;
    let ws = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    seed(ws.path());
    let data = ws.path().join("data.txt");
    fs::set_permissions(&data, fs::Permissions::from_mode(0o640)).unwrap();
    let port = LocalWorkspaceFiles::new(copies.path());
    let before = port.stat(ws.path(), "data.txt").await.unwrap().unwrap();
    assert_eq!(before.mode, Some(0o640));
    let listed = port.list(ws.path(), 10).await.unwrap();
    assert_eq!(listed.files[0].mode, Some(0o640));
    port.keep_copy("run_1", ws.path(), "data.txt")
        .await
        .unwrap();

    fs::set_permissions(&data, fs::Permissions::from_mode(0o000)).unwrap();
    let after = port.stat(ws.path(), "data.txt").await.unwrap().unwrap();
    assert_eq!(
        (after.size, after.modified_ns),
        (before.size, before.modified_ns)
    );
    assert_eq!(after.mode, Some(0o000));
    port.restore("run_1", ws.path(), "data.txt").await.unwrap();
    let mode = fs::metadata(&data).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o640);
    assert_eq!(fs::read_to_string(&data).unwrap(), "1\n2\n");
}
