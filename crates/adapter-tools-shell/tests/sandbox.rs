//! `Sandbox::Bwrap` against a real bubblewrap.
//!
//! Each test first checks that bwrap works here; if not it is skipped with the reason on
//! stderr, except under `CI=true`, where it fails (CI installs the Debian package
//! `bubblewrap`).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use adapter_tools_shell::{
    bwrap_available, shell_toolkit, Sandbox, ShellToolkit, ShellToolsConfig, SHELL_EXEC, SHELL_KILL,
};
use common::{bwrap_usable, ctx, pids_named, wait_until};
use domain::ports::{Tool, ToolContext, ToolOutput};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(15);

fn kit(allow_network: bool) -> ShellToolkit {
    shell_toolkit(&ShellToolsConfig {
        sandbox: Sandbox::Bwrap { allow_network },
        ..ShellToolsConfig::default()
    })
}

fn tool(kit: &ShellToolkit, name: &str) -> Arc<dyn Tool> {
    kit.tools.iter().find(|t| t.name() == name).unwrap().clone()
}

async fn exec(kit: &ShellToolkit, command: &str, ctx: &ToolContext) -> ToolOutput {
    tool(kit, SHELL_EXEC)
        .execute(json!({ "command": command }), ctx)
        .await
        .unwrap()
}

/// A uniquely named file or folder path that is removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn in_home(tag: &str) -> Scratch {
        let home = std::fs::canonicalize(std::env::var_os("HOME").unwrap()).unwrap();
        Scratch(home.join(format!(
            ".planwright-sandbox-test-{tag}-{}",
            std::process::id()
        )))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A folder outside the workspace that the sandbox can see (read-only): not under /tmp,
/// which the sandbox replaces with an empty tmpfs.
fn visible_outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn bwrap_available_names_the_program() {
    if !bwrap_usable("bwrap_available_names_the_program") {
        return;
    }
    let path = bwrap_available().unwrap();
    assert!(path.is_absolute() && path.ends_with("bwrap"), "{path:?}");
}

#[tokio::test]
async fn only_the_workspace_is_writable() {
    if !bwrap_usable("only_the_workspace_is_writable") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let visible = visible_outside_dir();
    let hidden = tempfile::tempdir().unwrap(); // under /tmp: not even visible
    let home_file = Scratch::in_home("write");
    let command = format!(
        "touch inside.txt && mkdir -p sub && echo data > sub/f && echo inside-ok; \
         touch '{v}/x' || echo visible-refused; \
         ls '{h}' || echo hidden-absent; \
         touch '{h}/x' || echo hidden-refused; \
         touch '{home}' || echo home-refused; \
         touch /etc/planwright-x || echo etc-refused; \
         touch /tmp/scratch && echo tmp-private-ok; \
         exit 3",
        v = visible.path().display(),
        h = hidden.path().display(),
        home = home_file.0.display(),
    );
    let out = exec(&kit(false), &command, &ctx(ws.path())).await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.starts_with("exit code: 3"), "{}", out.content);
    for marker in [
        "inside-ok",
        "visible-refused",
        "hidden-absent",
        "hidden-refused",
        "home-refused",
        "etc-refused",
        "tmp-private-ok",
    ] {
        assert!(out.content.contains(marker), "{marker}: {}", out.content);
    }
    assert!(
        out.content.contains("Read-only file system"),
        "{}",
        out.content
    );
    assert!(ws.path().join("inside.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sub/f")).unwrap(),
        "data\n"
    );
    assert!(!visible.path().join("x").exists());
    assert!(!hidden.path().join("x").exists());
    assert!(!home_file.0.exists());
    assert!(!Path::new("/etc/planwright-x").exists());
    assert!(!Path::new("/tmp/scratch").exists());
}

#[tokio::test]
async fn the_home_folder_is_hidden() {
    if !bwrap_usable("the_home_folder_is_hidden") {
        return;
    }
    let secret = Scratch::in_home("secret");
    std::fs::write(&secret.0, "home secret\n").unwrap();
    let ws = tempfile::tempdir().unwrap();
    let command = format!(
        "cat '{s}'; echo \"entries: $(ls -A \"$HOME\" | wc -l)\"",
        s = secret.0.display()
    );
    // Unsandboxed, the file is there (the test would prove nothing otherwise).
    let plain = shell_toolkit(&ShellToolsConfig::default());
    let out = exec(&plain, &command, &ctx(ws.path())).await;
    assert!(out.content.contains("home secret"), "{}", out.content);

    let out = exec(&kit(false), &command, &ctx(ws.path())).await;
    assert!(!out.content.contains("home secret"), "{}", out.content);
    assert!(
        out.content.contains("No such file or directory"),
        "{}",
        out.content
    );
    assert!(out.content.contains("entries: 0"), "{}", out.content);
}

#[tokio::test]
async fn a_workspace_inside_the_home_folder_stays_writable() {
    if !bwrap_usable("a_workspace_inside_the_home_folder_stays_writable") {
        return;
    }
    let secret = Scratch::in_home("beside");
    std::fs::write(&secret.0, "home secret\n").unwrap();
    let ws = Scratch::in_home("workspace");
    std::fs::create_dir(&ws.0).unwrap();
    let command = format!(
        "echo made > made.txt && echo wrote; cat '{s}' || echo secret-hidden",
        s = secret.0.display()
    );
    let out = exec(&kit(false), &command, &ctx(&ws.0)).await;
    assert!(out.content.starts_with("exit code: 0"), "{}", out.content);
    assert!(out.content.contains("wrote"), "{}", out.content);
    assert!(out.content.contains("secret-hidden"), "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(ws.0.join("made.txt")).unwrap(),
        "made\n"
    );
}

/// Reads are contained too: the project around the workspace, another workspace beside
/// it, the root's home, `/etc/shadow` and the host's processes do not exist inside.
#[tokio::test]
async fn nothing_outside_the_workspace_can_be_read() {
    if !bwrap_usable("nothing_outside_the_workspace_can_be_read") {
        return;
    }
    // A project with the workspace inside it and a secret beside the workspace.
    let project = visible_outside_dir();
    let ws = project.path().join("ws");
    let other_ws = project.path().join("other-run");
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(&other_ws).unwrap();
    std::fs::write(project.path().join("server-token"), "token-beside\n").unwrap();
    std::fs::write(other_ws.join("notes.txt"), "other-run-data\n").unwrap();
    std::fs::write(ws.join("mine.txt"), "my-data\n").unwrap();
    let command = format!(
        "cat mine.txt; cat '{p}/server-token'; cat '{o}/notes.txt'; \
         head -c 40 /etc/shadow; ls /root; ls /home; \
         echo \"procs: $(ls /proc | grep -c '^[0-9]')\"; cat /etc/passwd | head -1",
        p = project.path().display(),
        o = other_ws.display(),
    );
    // Unsandboxed every one of them is readable (the test would prove nothing otherwise).
    let plain = shell_toolkit(&ShellToolsConfig::default());
    let out = exec(&plain, &command, &ctx(&ws)).await;
    assert!(out.content.contains("token-beside"), "{}", out.content);
    assert!(out.content.contains("other-run-data"), "{}", out.content);

    let out = exec(&kit(false), &command, &ctx(&ws)).await;
    assert!(out.content.contains("my-data"), "{}", out.content);
    for secret in [
        "token-beside",
        "other-run-data",
        "root:$",
        "root:*",
        "root:!",
    ] {
        assert!(!out.content.contains(secret), "{secret}: {}", out.content);
    }
    assert!(out.content.contains("root:x:0:0"), "{}", out.content);
    // bwrap's init, bash, ls and grep at most: no host process is visible.
    let procs: u32 = out
        .content
        .split("procs: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(procs <= 6, "{}", out.content);
}

#[tokio::test]
async fn there_is_no_network_unless_allowed() {
    if !bwrap_usable("there_is_no_network_unless_allowed") {
        return;
    }
    // A listener on the host's loopback: connecting needs no accept() (the kernel
    // completes the handshake into the backlog).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = tempfile::tempdir().unwrap();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let out = exec(&kit(false), &command, &ctx(ws.path())).await;
    assert!(out.is_error, "{}", out.content);
    assert!(!out.content.contains("connected"), "{}", out.content);
    assert!(
        out.content.contains("Connection refused"),
        "{}",
        out.content
    );

    let out = exec(&kit(true), &command, &ctx(ws.path())).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("connected"), "{}", out.content);
}

#[tokio::test]
async fn even_root_has_no_capabilities_inside() {
    if !bwrap_usable("even_root_has_no_capabilities_inside") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = exec(
        &kit(false),
        "grep CapEff /proc/self/status; mount -o remount,rw / && echo remounted; \
         touch /planwright-x || echo still-read-only",
        &ctx(ws.path()),
    )
    .await;
    assert!(
        out.content.contains("CapEff:\t0000000000000000"),
        "{}",
        out.content
    );
    assert!(!out.content.contains("remounted"), "{}", out.content);
    assert!(out.content.contains("still-read-only"), "{}", out.content);
    assert!(!Path::new("/planwright-x").exists());
}

/// The supervisor in front of bwrap sets the limits and joins the pids cgroup for the
/// sandboxed command too; bwrap's `--new-session` puts it in a session of the sandbox's
/// own, without Planwright's terminal.
#[tokio::test]
async fn a_sandboxed_command_is_limited_and_alone_in_its_session() {
    if !bwrap_usable("a_sandboxed_command_is_limited_and_alone_in_its_session") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = exec(
        &kit(false),
        "echo \"f=$(ulimit -f) d=$(ulimit -d) u=$(ulimit -u)\"; \
         grep -c /planwright- /proc/self/cgroup; \
         read -r stat </proc/$$/stat; set -- ${stat##*) }; \
         echo \"pid=$$ session=$4 tty=$5\"",
        &ctx(ws.path()),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.contains("f=1048576 d=4194304 u=2048"),
        "{}",
        out.content
    );
    // The session is the sandbox's own (led by its init, pid 1 inside, or the command),
    // with no controlling terminal.
    let pid = out
        .content
        .split("pid=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap();
    assert!(
        out.content.contains("session=1 tty=0")
            || out.content.contains(&format!("session={pid} tty=0")),
        "{}",
        out.content
    );
    // In a pids cgroup of its own wherever Planwright has one (root in CI).
    let in_cgroup = out.content.lines().any(|l| l.trim() == "1");
    assert!(in_cgroup || !test_support::under_ci(), "{}", out.content);
}

#[tokio::test]
async fn a_sandboxed_session_dies_with_everything_it_started() {
    if !bwrap_usable("a_sandboxed_session_dies_with_everything_it_started") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let ctx = ctx(ws.path());
    let kit = kit(false);
    let tag = format!("pw-sandbox-test-{}", std::process::id());
    let (a, b, c) = (format!("{tag}-a"), format!("{tag}-b"), format!("{tag}-c"));
    // `b` leaves the process group (setsid): only the pid namespace catches it.
    let command =
        format!("(exec -a {a} sleep 300) & setsid bash -c 'exec -a {b} sleep 300' & echo up; wait");
    let out = tool(&kit, SHELL_EXEC)
        .execute(json!({"command": command, "wait_secs": 1}), &ctx)
        .await
        .unwrap();
    assert!(
        out.content
            .starts_with("still running after 1 s; session id: sh1"),
        "{}",
        out.content
    );
    wait_until("the sandboxed processes", LIMIT, || {
        pids_named(&a).len() == 1 && pids_named(&b).len() == 1
    })
    .await;
    let killed = tool(&kit, SHELL_KILL)
        .execute(json!({"id": "sh1"}), &ctx)
        .await
        .unwrap();
    assert!(
        killed
            .content
            .starts_with("session sh1: killed on request; process group killed"),
        "{}",
        killed.content
    );
    wait_until("the sandboxed processes to die", LIMIT, || {
        pids_named(&a).is_empty() && pids_named(&b).is_empty()
    })
    .await;

    // The same for a session closed with its run.
    let command = format!("(exec -a {c} sleep 300) & wait");
    tool(&kit, SHELL_EXEC)
        .execute(json!({"command": command, "wait_secs": 1}), &ctx)
        .await
        .unwrap();
    wait_until("the second session", LIMIT, || pids_named(&c).len() == 1).await;
    assert_eq!(kit.sessions.close_run("run_1").await, 1);
    wait_until("the second session to die", LIMIT, || {
        pids_named(&c).is_empty()
    })
    .await;
}

#[tokio::test]
async fn background_processes_do_not_outlive_a_sandboxed_command() {
    if !bwrap_usable("background_processes_do_not_outlive_a_sandboxed_command") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let marker = format!("pw-sandbox-bg-{}", std::process::id());
    let out = exec(
        &kit(false),
        &format!("(exec -a {marker} sleep 300) & echo started"),
        &ctx(ws.path()),
    )
    .await;
    assert!(out.content.starts_with("exit code: 0"), "{}", out.content);
    wait_until("the background process to die", LIMIT, || {
        pids_named(&marker).is_empty()
    })
    .await;
}

/// Issue 29: with the project as the workspace (`--workspace .`), a sandboxed command
/// cannot plant or change the project's config or state; the rest stays writable.
#[tokio::test]
async fn the_projects_config_and_state_are_read_only_inside_the_workspace() {
    if !bwrap_usable("the_projects_config_and_state_are_read_only_inside_the_workspace") {
        return;
    }
    let dir = visible_outside_dir();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(ws.join("planwright.toml"), "model = \"m\"\n").unwrap();
    std::fs::create_dir(ws.join(".planwright")).unwrap();
    let kit = shell_toolkit(&ShellToolsConfig {
        sandbox: Sandbox::Bwrap {
            allow_network: false,
        },
        read_only: vec![ws.join("planwright.toml"), ws.join(".planwright")],
        ..ShellToolsConfig::default()
    });
    let out = exec(
        &kit,
        "printf '[mcp_servers.x]\\ncommand = \"sh\"\\n' >> planwright.toml; \
         touch .planwright/planted; rm -rf .planwright; echo fine > fine.txt",
        &ctx(&ws),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.join("planwright.toml")).unwrap(),
        "model = \"m\"\n",
        "{}",
        out.content
    );
    assert!(ws.join(".planwright").is_dir(), "{}", out.content);
    assert!(!ws.join(".planwright/planted").exists(), "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(ws.join("fine.txt")).unwrap(),
        "fine\n"
    );
}

/// The relative read-only paths the runner passes for every workspace (runner `wiring.rs`,
/// `protected_paths`): its own config and state and, unless writes are allowed, its
/// version control.
fn every_workspaces(vcs_writes: bool) -> Vec<PathBuf> {
    let mut paths = vec![
        PathBuf::from("planwright.toml"),
        PathBuf::from(".planwright"),
    ];
    if !vcs_writes {
        paths.extend(adapter_tools_shell::VCS_FOLDERS.iter().map(PathBuf::from));
    }
    paths
}

fn git(ws: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap()
}

/// Issue 41, High 5: inside the sandbox the model set `core.fsmonitor` and a `post-checkout`
/// hook in the workspace's `.git`; the user's next `git status` ran it. By default `.git`
/// (and `.hg`, `.svn`) is bound read-only over the workspace; allowed, the command may.
/// Issue 41, item 3: a workspace's own `planwright.toml` and `.planwright/` are read-only
/// too, whichever folder the workspace is.
#[tokio::test]
async fn version_control_is_read_only_inside_the_sandbox_unless_allowed() {
    if !bwrap_usable("version_control_is_read_only_inside_the_sandbox_unless_allowed")
        || std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_err()
    {
        return;
    }
    let plant = "git config core.fsmonitor 'touch /tmp/P'; \
                 printf '#!/bin/sh\\ntouch P\\n' > .git/hooks/post-checkout; \
                 chmod +x .git/hooks/post-checkout; \
                 echo planted >> planwright.toml; touch .planwright/planted; \
                 echo '[hooks]' > .hg/hgrc; echo fine > fine.txt";
    for vcs_writes in [false, true] {
        let dir = visible_outside_dir();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        assert!(git(&ws, &["init", "-q"]).status.success());
        let config_before = std::fs::read_to_string(ws.join(".git/config")).unwrap();
        std::fs::write(ws.join("planwright.toml"), "model = \"m\"\n").unwrap();
        std::fs::create_dir(ws.join(".planwright")).unwrap();
        std::fs::create_dir(ws.join(".hg")).unwrap();
        let kit = shell_toolkit(&ShellToolsConfig {
            sandbox: Sandbox::Bwrap {
                allow_network: false,
            },
            read_only: every_workspaces(vcs_writes),
            ..ShellToolsConfig::default()
        });
        let out = exec(&kit, plant, &ctx(&ws)).await;
        let fsmonitor = git(&ws, &["config", "--get", "core.fsmonitor"]);
        let hook = ws.join(".git/hooks/post-checkout");
        if vcs_writes {
            assert_eq!(
                String::from_utf8_lossy(&fsmonitor.stdout).trim(),
                "touch /tmp/P",
                "{}",
                out.content
            );
            assert!(hook.is_file(), "{}", out.content);
            assert!(ws.join(".hg/hgrc").is_file(), "{}", out.content);
        } else {
            assert!(!fsmonitor.status.success(), "{}", out.content);
            assert_eq!(
                std::fs::read_to_string(ws.join(".git/config")).unwrap(),
                config_before
            );
            assert!(!hook.exists(), "{}", out.content);
            assert!(!ws.join(".hg/hgrc").exists(), "{}", out.content);
        }
        // Planwright's own files stay read-only either way.
        assert_eq!(
            std::fs::read_to_string(ws.join("planwright.toml")).unwrap(),
            "model = \"m\"\n",
            "{}",
            out.content
        );
        assert!(!ws.join(".planwright/planted").exists(), "{}", out.content);
        assert_eq!(
            std::fs::read_to_string(ws.join("fine.txt")).unwrap(),
            "fine\n"
        );
    }
}
