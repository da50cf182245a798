//! With `Sandbox::Bwrap` configured but no working bwrap, commands are refused with the
//! reason: they never run unsandboxed.
//!
//! A test binary of its own: it changes `PATH` for the whole process.
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use adapter_tools_shell::{bwrap_available, shell_toolkit, Sandbox, ShellToolsConfig};
use common::ctx;
use domain::ToolError;
use serde_json::json;

/// `shell_exec` in the bwrap sandbox must fail, mentioning `expected`, and run nothing.
async fn assert_refused(expected: &str) {
    let kit = shell_toolkit(&ShellToolsConfig {
        sandbox: Sandbox::Bwrap {
            allow_network: false,
        },
        ..ShellToolsConfig::default()
    });
    let ws = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let err = kit.tools[0]
            .execute(json!({"command": "echo ran > ran.txt"}), &ctx(ws.path()))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ToolError::Failed(m)
                if m.contains(expected) && m.contains("never run without it")),
            "{err:?}"
        );
    }
    assert!(!ws.path().join("ran.txt").exists());
}

#[tokio::test]
async fn a_missing_or_broken_bwrap_refuses_every_command() {
    // No bwrap at all.
    let empty = tempfile::tempdir().unwrap();
    std::env::set_var("PATH", empty.path());
    let reason = bwrap_available().unwrap_err();
    assert!(reason.contains("`bwrap` was not found on PATH"), "{reason}");
    assert!(reason.contains("apt-get install bubblewrap"), "{reason}");
    assert_refused("not found on PATH").await;

    // A bwrap that cannot create namespaces, as on kernels restricting user namespaces.
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(setsid, bin.path().join("setsid")).unwrap();
    std::env::set_var("PATH", bin.path());
    let reason = bwrap_available().unwrap_err();
    assert!(reason.contains("cannot create a sandbox here"), "{reason}");
    assert!(
        reason.contains("setting up uid map: Permission denied"),
        "{reason}"
    );
    assert!(reason.contains("user namespaces"), "{reason}");
    assert_refused("uid map").await;
}
