//! Every path argument stays inside the workspace.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use adapter_tools_shell::workspace::resolve;
use adapter_tools_shell::{FileListTool, FileReadTool, FileStrReplaceTool, FileWriteTool};
use common::ctx;
use domain::ports::{Tool, ToolContext};
use domain::ToolError;
use serde_json::{json, Value};

/// A workspace plus a sibling folder outside it holding `secret.txt`, both in a private
/// folder (so what the tools must not create beside the workspace is checked there, not in
/// a /tmp shared with other programs).
struct Setup {
    _root: tempfile::TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let ws = base.join("workspace");
    let outside = base.join("outside");
    fs::create_dir(&ws).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
    fs::write(ws.join("inside.txt"), "inside\n").unwrap();
    Setup {
        _root: root,
        ws,
        outside,
    }
}

fn assert_refused(result: Result<impl std::fmt::Debug, ToolError>, what: &str) {
    match result {
        Err(ToolError::Refused(message)) => assert!(!message.is_empty()),
        other => panic!("{what}: expected Refused, got {other:?}"),
    }
}

/// Calls every path-taking tool with `path`; all must refuse.
async fn all_tools_refuse(ctx: &ToolContext, path: &str) {
    let calls: [(&dyn Tool, Value); 4] = [
        (&FileReadTool::new(), json!({"path": path})),
        (
            &FileWriteTool::new(),
            json!({"path": path, "content": "pwned"}),
        ),
        (
            &FileStrReplaceTool::new(),
            json!({"path": path, "old": "top", "new": "no"}),
        ),
        (&FileListTool::new(), json!({"path": path})),
    ];
    for (tool, args) in calls {
        assert_refused(
            tool.execute(args, ctx).await,
            &format!("{} {path}", tool.name()),
        );
    }
}

#[tokio::test]
async fn climbing_out_is_refused_everywhere() {
    let s = setup();
    let ctx = ctx(&s.ws);
    let outside_name = s.outside.file_name().unwrap().to_str().unwrap().to_string();
    let secret_abs = s.outside.join("secret.txt").display().to_string();
    for path in [
        "..",
        "../x",
        "../../etc/passwd",
        "/etc/passwd",
        "/",
        &format!("../{outside_name}/secret.txt"),
        &secret_abs,
        "sub/../../x",
        "missing/../../x",
    ] {
        all_tools_refuse(&ctx, path).await;
    }
    assert_eq!(
        fs::read_to_string(s.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert!(!s.ws.parent().unwrap().join("x").exists());
}

#[tokio::test]
async fn refusal_message_names_the_path() {
    let s = setup();
    let err = FileReadTool::new()
        .execute(json!({"path": "../x"}), &ctx(&s.ws))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::Refused(
            "path '../x' resolves outside the workspace; only paths inside the workspace \
             folder can be used"
                .to_string()
        )
    );
}

#[tokio::test]
async fn absolute_paths_inside_the_workspace_are_allowed() {
    let s = setup();
    let ctx = ctx(&s.ws);
    let abs = s.ws.join("dir/abs.txt").display().to_string();
    let out = FileWriteTool::new()
        .execute(json!({"path": abs, "content": "via absolute"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.attachments, ["dir/abs.txt"]);
    let out = FileReadTool::new()
        .execute(json!({"path": abs}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "via absolute\n");
}

#[tokio::test]
async fn symlink_to_a_file_outside_is_refused_for_read_and_write() {
    let s = setup();
    symlink(s.outside.join("secret.txt"), s.ws.join("link.txt")).unwrap();
    all_tools_refuse(&ctx(&s.ws), "link.txt").await;
    assert_eq!(
        fs::read_to_string(s.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn symlinked_folder_outside_is_refused() {
    let s = setup();
    symlink(&s.outside, s.ws.join("linkdir")).unwrap();
    let ctx = ctx(&s.ws);
    for path in [
        "linkdir",
        "linkdir/secret.txt",
        "linkdir/new.txt",
        "linkdir/new/deeper.txt",
    ] {
        all_tools_refuse(&ctx, path).await;
    }
    assert!(!s.outside.join("new.txt").exists());
    assert!(!s.outside.join("new").exists());
}

#[tokio::test]
async fn dangling_symlink_pointing_outside_is_refused() {
    let s = setup();
    symlink(s.outside.join("not-yet.txt"), s.ws.join("dangling")).unwrap();
    all_tools_refuse(&ctx(&s.ws), "dangling").await;
    assert!(!s.outside.join("not-yet.txt").exists());
}

#[tokio::test]
async fn symlinks_within_the_workspace_are_fine() {
    let s = setup();
    fs::create_dir(s.ws.join("real")).unwrap();
    fs::write(s.ws.join("real/data.txt"), "data\n").unwrap();
    symlink(s.ws.join("real"), s.ws.join("alias")).unwrap();
    let ctx = ctx(&s.ws);
    let out = FileReadTool::new()
        .execute(json!({"path": "alias/data.txt"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "data\n");
    let out = FileWriteTool::new()
        .execute(json!({"path": "alias/more.txt", "content": "m"}), &ctx)
        .await
        .unwrap();
    // Attachments name the real location.
    assert_eq!(out.attachments, ["real/more.txt"]);
}

#[tokio::test]
async fn writing_through_missing_folders_creates_them() {
    let s = setup();
    let out = FileWriteTool::new()
        .execute(
            json!({"path": "./new/deep/../x.txt", "content": "no"}),
            &ctx(&s.ws),
        )
        .await;
    assert_refused(out, "'..' through a missing folder");
    let out = FileWriteTool::new()
        .execute(
            json!({"path": "new/deep/x.txt", "content": "yes"}),
            &ctx(&s.ws),
        )
        .await
        .unwrap();
    assert_eq!(out.attachments, ["new/deep/x.txt"]);
    assert_eq!(
        fs::read_to_string(s.ws.join("new/deep/x.txt")).unwrap(),
        "yes"
    );
}

#[tokio::test]
async fn a_workspace_given_through_a_symlink_works() {
    let s = setup();
    let holder = tempfile::tempdir().unwrap();
    let via = holder.path().join("ws-link");
    symlink(&s.ws, &via).unwrap();
    let ctx = ctx(&via);
    let out = FileWriteTool::new()
        .execute(json!({"path": "w.txt", "content": "ok"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.attachments, ["w.txt"]);
    let abs_via_link = via.join("w.txt").display().to_string();
    let out = FileReadTool::new()
        .execute(json!({"path": abs_via_link}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "ok\n");
}

#[test]
fn resolve_directly() {
    let s = setup();
    let ws: &Path = &s.ws;
    assert_eq!(resolve(ws, "inside.txt").unwrap(), ws.join("inside.txt"));
    assert_eq!(resolve(ws, "a/b/c").unwrap(), ws.join("a/b/c"));
    assert_eq!(
        resolve(ws, &ws.join("inside.txt").display().to_string()).unwrap(),
        ws.join("inside.txt")
    );
    for bad in ["..", "../../etc/passwd", "/etc/passwd"] {
        let err = resolve(ws, bad).unwrap_err();
        assert_eq!(
            err,
            ToolError::Refused(format!(
                "path '{bad}' resolves outside the workspace; only paths inside the workspace \
                 folder can be used"
            ))
        );
    }
}

/// The project's config and state stay read-only to the file tools, even in a workspace that
/// holds them (`--workspace .`) and even when the file does not exist yet (issue 29).
#[tokio::test]
async fn the_file_tools_leave_the_projects_config_and_state_alone() {
    let s = setup();
    let ctx = ctx(&s.ws);
    fs::create_dir(s.ws.join(".planwright")).unwrap();
    let protected = vec![s.ws.join("planwright.toml"), s.ws.join(".planwright")];
    let write = FileWriteTool::new().with_read_only(protected.clone());
    for path in [
        "planwright.toml",
        "./planwright.toml",
        ".planwright/planwright.db",
        "./.planwright/x",
    ] {
        let err = write
            .execute(
                json!({"path": path, "content": "[mcp_servers.x]\ncommand = \"sh\"\n"}),
                &ctx,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ToolError::Refused(m) if m.contains("read-only to tools")),
            "{path}: {err:?}"
        );
    }
    assert!(!s.ws.join("planwright.toml").exists());
    fs::write(s.ws.join("planwright.toml"), "model = \"m\"\n").unwrap();
    let err = FileStrReplaceTool::new()
        .with_read_only(protected)
        .execute(
            json!({"path": "planwright.toml", "old": "m", "new": "x"}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err:?}");
    assert_eq!(
        fs::read_to_string(s.ws.join("planwright.toml")).unwrap(),
        "model = \"m\"\n"
    );
    write
        .execute(json!({"path": "notes.txt", "content": "fine"}), &ctx)
        .await
        .unwrap();
    // The default workspace lies inside the state folder (`.planwright/runs/R/workspace`):
    // it is the run's own, and its files can be written.
    let inner = s.ws.join(".planwright/runs/r1/workspace");
    fs::create_dir_all(&inner).unwrap();
    write
        .execute(
            json!({"path": "t.txt", "content": "ok"}),
            &common::ctx(&inner),
        )
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(inner.join("t.txt")).unwrap(), "ok");
}

/// Issue 41, High 5 and item 3: what the runner passes as read-only for every workspace
/// (relative paths: its own `planwright.toml`, `.planwright/`, `.git`, `.hg`, `.svn`) is
/// refused to `file_write` and `file_str_replace` in any workspace; a file tool cannot plant
/// a git hook or `core.fsmonitor` around the sandbox.
#[tokio::test]
async fn the_file_tools_leave_every_workspaces_version_control_and_config_alone() {
    let s = setup();
    let ctx = ctx(&s.ws);
    fs::create_dir_all(s.ws.join(".git/hooks")).unwrap();
    fs::write(s.ws.join(".git/config"), "[core]\n").unwrap();
    let protected: Vec<PathBuf> = [".git", ".hg", ".svn", "planwright.toml", ".planwright"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let write = FileWriteTool::new().with_read_only(protected.clone());
    for path in [
        ".git/hooks/post-checkout",
        "./.git/config",
        ".hg/hgrc",
        "planwright.toml",
        ".planwright/x",
    ] {
        let err = write
            .execute(
                json!({"path": path, "content": "#!/bin/sh\ntouch P\n"}),
                &ctx,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ToolError::Refused(m) if m.contains("read-only to tools")),
            "{path}: {err:?}"
        );
    }
    let err = FileStrReplaceTool::new()
        .with_read_only(protected)
        .execute(
            json!({"path": ".git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = touch P"}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err:?}");
    assert_eq!(
        fs::read_to_string(s.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!s.ws.join(".git/hooks/post-checkout").exists());
    write
        .execute(
            json!({"path": "src/gitignore.txt", "content": "fine"}),
            &ctx,
        )
        .await
        .unwrap();
}
