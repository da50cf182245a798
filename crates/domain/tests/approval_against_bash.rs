//! The approval rules' reader of command lines against real bash (issue 41, High 1 and
//! Medium 7; docs/approvals.md, "What a shell rule sees").
//!
//! Each form of the table runs in real bash (`bash -c FORM`, as the shell tool runs it),
//! inside bubblewrap, where every program of `/usr/bin` is a stub that only records its
//! name, arguments and environment; bash's own `command_not_found_handle` records the
//! rest. Nothing acts: the stubs do nothing, the workspace is a fresh temporary folder,
//! and its files are compared before and after (a change is a write bash made itself).
//!
//! Then, for each form:
//! - when the reader lets it run unasked under its allow rules (read-only mode), every
//!   program bash ran must itself be allowed by those rules, with the arguments bash gave
//!   it (quoted back into a plain command line and judged again), with no variable in its
//!   environment that the form set, and the workspace must be unchanged;
//! - when the reader lets it run under `--deny 'shell_exec(rm*)'`, no program bash ran may
//!   be one that rule refuses or is unsure of.
//!
//! The table also says what each form is: plain forms must be allowed (and bash must run
//! the allowed program), attacks must be shown by bash to do something else (so that the
//! row proves something) and must not be allowed.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use domain::model::approval::{
    ApprovalMode, ApprovalPolicy, ApprovalRule, CallToJudge, Verdict, WrittenFiles,
};
use domain::ports::{ToolEffect, ToolFamily};
use serde_json::json;

/// What a row of the table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Plain: the reader must allow it, and bash runs only what the rules allow.
    Plain,
    /// Under the allow rules: bash runs something the rules do not allow (or writes), and
    /// the reader must not allow it.
    Attack,
    /// Under the deny rule on `rm`: bash itself runs `rm` (a stub), and the reader must not
    /// let it run unasked.
    RunsRm,
    /// No claim beyond the differential checks (the hazard is inside a program, which a
    /// stub does not act out: `env -S`, `sed e`, `taskset`; the unit tests judge those).
    Any,
}

use Kind::{Any, Attack, Plain, RunsRm};

const GIT_STATUS: &[&str] = &["shell_exec(git status*)"];

/// A form: its command line, the allow rules it is judged under, what it is.
type Form = (&'static str, &'static [&'static str], Kind);

fn table() -> Vec<Form> {
    vec![
        // Plain forms that stay allowed.
        ("git status", GIT_STATUS, Plain),
        ("git status --short", GIT_STATUS, Plain),
        ("git status -s -b", GIT_STATUS, Plain),
        ("  git   status  -s", GIT_STATUS, Plain),
        ("/usr/bin/git status", GIT_STATUS, Plain),
        ("cd sub && git status", GIT_STATUS, Plain),
        ("git status; git status --porcelain", GIT_STATUS, Plain),
        ("(git status)", GIT_STATUS, Plain),
        ("{ git status; }", GIT_STATUS, Plain),
        ("git status 2>/dev/null", GIT_STATUS, Plain),
        ("git status -- a.txt", GIT_STATUS, Plain),
        ("git status 'a b.txt' \"c.txt\"", GIT_STATUS, Plain),
        ("git status sub/*.txt", GIT_STATUS, Plain),
        ("git status -- *.txt", GIT_STATUS, Plain),
        ("set -e; git status", GIT_STATUS, Plain),
        ("set -euo pipefail; git status", GIT_STATUS, Plain),
        ("true && git status || false", GIT_STATUS, Plain),
        ("git status # $(touch P)", GIT_STATUS, Plain),
        ("git status \\\n  --short", GIT_STATUS, Plain),
        ("git status <<'EOF'\n$(touch P)\nEOF", GIT_STATUS, Plain),
        ("git status <<EOF\nplain $HOME ${HOME}\nEOF", GIT_STATUS, Plain),
        ("ls -la", &["shell_exec(ls*)"], Plain),
        ("ls -la | wc -l", &["shell_exec(ls*)", "shell_exec(wc*)"], Plain),
        ("cat a.txt", &["shell_exec(cat*)"], Plain),
        ("cat *.txt", &["shell_exec(cat*)"], Plain),
        ("grep -n foo *.txt", &["shell_exec(grep*)"], Plain),
        ("grep -rn foo .", &["shell_exec(grep*)"], Plain),
        ("sed -n 1,5p f", &["shell_exec(sed -n*)"], Plain),
        ("sed -n '/foo/p' a.txt", &["shell_exec(sed -n*)"], Plain),
        ("sed -n -e 1p -e 3p f", &["shell_exec(sed -n*)"], Plain),
        ("sed -n 1p -- *.txt", &["shell_exec(sed -n*)"], Plain),
        ("find . -name '*.rs'", &["shell_exec(find*)"], Plain),
        ("find . -type f -name '*.txt' -print", &["shell_exec(find*)"], Plain),
        ("git diff --stat", &["shell_exec(git diff*)"], Plain),
        ("git diff -- a.txt", &["shell_exec(git diff*)"], Plain),
        ("git log --oneline -5", &["shell_exec(git log*)"], Plain),
        ("git log -p --format=%H", &["shell_exec(git log*)"], Plain),
        // High 1: the red team's forms under `git status*`, and their neighbours.
        ("env '--split-string=touch P'", GIT_STATUS, Attack),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch P' git status",
            GIT_STATUS,
            Attack,
        ),
        ("EVIL='touch P' git --config-env=core.fsmonitor=EVIL status", GIT_STATUS, Attack),
        ("PS4='$(touch P)'; set -x; git status", GIT_STATUS, Attack),
        ("x='$(touch P)'; : ${x@P}; git status", GIT_STATUS, Attack),
        ("git status ${x:-$\\\n(touch P)}", GIT_STATUS, Attack),
        ("git status \"${x:-$\\\n(touch P)}\"", GIT_STATUS, Attack),
        ("git status <<EOF\n$\\\n(touch P)\nEOF", GIT_STATUS, Attack),
        ("git status <<EOF\n$(touch P)\nEOF", GIT_STATUS, Attack),
        ("git status <<EOF\n`touch P`\nEOF", GIT_STATUS, Attack),
        ("x='a[$(touch P)]'; : $[x]; git status", GIT_STATUS, Attack),
        ("\\time -o P git status", GIT_STATUS, Attack),
        ("time git status; touch P", GIT_STATUS, Attack),
        ("git status $(touch P)", GIT_STATUS, Attack),
        ("git status `touch P`", GIT_STATUS, Attack),
        ("git status $\\\n(touch P)", GIT_STATUS, Attack),
        ("x='a[$(touch P)]'; git status ${!x}", GIT_STATUS, Attack),
        ("git status ${a[$(touch P)]}", GIT_STATUS, Attack),
        ("x=abc; git status ${x:$(touch P)}", GIT_STATUS, Attack),
        ("A=1 git status", GIT_STATUS, Attack),
        ("export GIT_DIR=/tmp; git status", GIT_STATUS, Attack),
        ("trap 'touch P' EXIT; git status", GIT_STATUS, Attack),
        ("eval 'git status; touch P'", GIT_STATUS, Attack),
        ("mapfile -C 'touch P #' -c 1 < f; git status", GIT_STATUS, Attack),
        ("readarray -C 'touch P #' -c 1 < f; git status", GIT_STATUS, Attack),
        ("printf -v 'a[$(touch P)]' 1; git status", GIT_STATUS, Attack),
        ("test -v 'a[$(touch P)]'; git status", GIT_STATUS, Attack),
        ("[[ -v 'a[$(touch P)]' ]]; git status", GIT_STATUS, Attack),
        ("declare -n r='a[$(touch P)]'; : $r; git status", GIT_STATUS, Attack),
        ("read 'a[$(touch P)]' < f; git status", GIT_STATUS, Attack),
        ("declare 'a[$(touch P)]=1'; git status", GIT_STATUS, Attack),
        ("declare -i n; n='a[$(touch P)]'; git status", GIT_STATUS, Attack),
        ("shopt -s expand_aliases\nalias git='touch P'\ngit status", GIT_STATUS, Attack),
        ("hash -p /usr/bin/touch git; git status", GIT_STATUS, Attack),
        ("nice git status", GIT_STATUS, Attack),
        ("timeout 5 git status", GIT_STATUS, Attack),
        ("taskset 1 git status", GIT_STATUS, Attack),
        ("flock /tmp/l git status", GIT_STATUS, Attack),
        ("unshare git status", GIT_STATUS, Attack),
        ("script -qc 'git status' /dev/null", GIT_STATUS, Attack),
        ("setpriv git status", GIT_STATUS, Attack),
        ("env git status", GIT_STATUS, Attack),
        ("env -i git status", GIT_STATUS, Attack),
        ("xargs git status < f", GIT_STATUS, Attack),
        ("sudo git status", GIT_STATUS, Attack),
        ("chroot / git status", GIT_STATUS, Attack),
        ("nohup git status", GIT_STATUS, Attack),
        ("stdbuf -o0 git status", GIT_STATUS, Attack),
        ("busybox git status", GIT_STATUS, Attack),
        ("command -p git status; touch P", GIT_STATUS, Attack),
        ("bash -c 'git status'", GIT_STATUS, Attack),
        ("bash -lc 'git status'", GIT_STATUS, Attack),
        ("find . -maxdepth 0 -exec git status \\;", GIT_STATUS, Attack),
        ("git -c core.fsmonitor='touch P' status", GIT_STATUS, Attack),
        ("git -p status", GIT_STATUS, Attack),
        ("git status --output=P", GIT_STATUS, Attack),
        ("git status > P", GIT_STATUS, Attack),
        ("git status; echo pwned > P", GIT_STATUS, Attack),
        ("git status && touch P", GIT_STATUS, Attack),
        ("git status | touch P", GIT_STATUS, Attack),
        ("git status & touch P", GIT_STATUS, Attack),
        ("git status\ntouch P", GIT_STATUS, Attack),
        ("git status * ", GIT_STATUS, Attack),
        ("echo \"$'\" ; touch P; echo \"'\"", GIT_STATUS, Attack),
        ("cat <<\\\n-EOF\nx\nEOF\ntouch P\n-EOF", GIT_STATUS, Attack),
        ("git status {--output=P,x}", GIT_STATUS, Attack),
        ("git status $'--output=P'", GIT_STATUS, Attack),
        // A home folder: harmless here, but a word only known when it runs.
        ("git status ~", GIT_STATUS, Any),
        // Medium 13: rules that look read-only.
        ("sed -n '1e touch P' f", &["shell_exec(sed -n*)"], Attack),
        ("sed -n 1p *.txt", &["shell_exec(sed -n*)"], Attack),
        ("find . -exec touch P \\;", &["shell_exec(find*)"], Attack),
        ("find * -name x", &["shell_exec(find*)"], Attack),
        ("GIT_EXTERNAL_DIFF='touch P' git diff", &["shell_exec(git diff*)"], Attack),
        ("git -c diff.external='touch P' diff", &["shell_exec(git diff*)"], Attack),
        ("git diff *", &["shell_exec(git diff*)"], Attack),
        ("GIT_PAGER='touch P' git log", &["shell_exec(git log*)"], Attack),
        ("git log; touch P", &["shell_exec(git log*)"], Attack),
        // Stub-opaque hazards: judged by the unit tests, checked here for the differential.
        ("sed -n 'w P' f", &["shell_exec(sed -n*)"], Any),
        ("sed -n -i 1p f", &["shell_exec(sed -n*)"], Any),
        ("find . -delete", &["shell_exec(find*)"], Any),
        ("find . -fprint P", &["shell_exec(find*)"], Any),
        ("git diff --output=P", &["shell_exec(git diff*)"], Any),
        ("git log --ext-diff -p", &["shell_exec(git log*)"], Any),
        // Medium 7: under a deny rule on `rm`, forms where bash itself runs rm.
        ("trap 'rm x' EXIT", &[], RunsRm),
        ("hash -p /bin/rm ls; ls x", &[], RunsRm),
        ("mapfile -C 'rm x #' -c 1 < f", &[], RunsRm),
        ("shopt -s expand_aliases\nalias ls='rm x'\nls", &[], RunsRm),
        ("x='$(rm x)'; : ${x@P}", &[], RunsRm),
        ("PS4='$(rm x)'; set -x; true", &[], RunsRm),
        ("printf -v 'a[$(rm x)]' 1", &[], RunsRm),
        ("test -v 'a[$(rm x)]'", &[], RunsRm),
        ("x='a[$(rm x)]'; : $[x]", &[], RunsRm),
        ("[ -v 'a[$(rm x)]' ]", &[], RunsRm),
        ("read 'a[$(rm x)]' < f", &[], RunsRm),
        ("declare 'a[$(rm x)]=1'", &[], RunsRm),
        ("x='a[$(rm x)]'; echo ${!x}", &[], RunsRm),
        ("echo ${a[$(rm x)]}", &[], RunsRm),
        ("echo ${y:-$\\\n(rm x)}", &[], RunsRm),
        ("cat <<EOF\n$\\\n(rm x)\nEOF", &[], RunsRm),
        ("echo $\\\n(rm x)", &[], RunsRm),
        ("echo \"$'\" ; rm x; echo \"'\"", &[], RunsRm),
        ("cat <<\\\n-EOF\nx\nEOF\nrm x\n-EOF", &[], RunsRm),
        ("trap 'rm x' DEBUG; true", &[], RunsRm),
        ("compgen -C 'rm x' y", &[], RunsRm),
        ("cat <<EOF\n$(rm x)\nEOF", &[], RunsRm),
        ("eval 'rm x'", &[], RunsRm),
        ("f() { rm x; }; f", &[], RunsRm),
        ("\\rm x", &[], RunsRm),
        ("r''m x", &[], RunsRm),
        ("/bin/rm x", &[], RunsRm),
        ("echo `rm x`", &[], RunsRm),
        // Medium 7 forms whose rm runs inside another program (a stub here).
        ("env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls", &[], Any),
        ("env '--split-string=rm x'", &[], Any),
        ("/lib64/ld-linux-x86-64.so.2 /bin/rm x", &[], Any),
        ("taskset 1 rm x", &[], Any),
        ("flock /tmp/l rm x", &[], Any),
        ("unshare rm x", &[], Any),
        ("script -qc 'rm x' /dev/null", &[], Any),
        ("setpriv rm x", &[], Any),
        ("git -c alias.x='!rm x' x", &[], Any),
        ("sed e f", &[], Any),
        ("echo 'rm x' | sed e", &[], Any),
        ("ls -la", &[], Any),
        ("B=2 ls", &[], Any),
    ]
}

/// Names of variables bash or the harness put in every program's environment.
const BASELINE_ENV: &[&str] = &["PATH", "HOME", "BASH_ENV", "PWD", "SHLVL", "OLDPWD", "_"];

/// Programs to stub beyond those of the host's `/usr/bin` (which may lack some).
const EXTRA_PROGRAMS: &[&str] = &[
    "git", "sed", "find", "grep", "cat", "ls", "wc", "rm", "touch", "env", "time", "nice",
    "timeout", "taskset", "flock", "unshare", "script", "setpriv", "xargs", "sudo", "chroot",
    "nohup", "stdbuf", "busybox", "sh", "bash", "id",
];

/// The recording stub: its name (as run), its arguments, and the names of its
/// environment, each field ended by RS (\036), the environment by \035, the record by \034.
/// Each process writes its own file (`/log/calls.PID`): the programs of a pipeline run at
/// once, and their records written to one file interleave.
const STUB: &str = "#!/opt/dash\n\
{ printf '%s\\036' \"${0##*/}\" \"$@\"; printf '\\035'; export -p; printf '\\034'; } >> /log/calls.$$\n";

/// Read by bash before the form (`BASH_ENV`): programs not found are recorded too.
const PRELUDE: &str = "command_not_found_handle() {\n\
{ printf '%s\\036' \"$@\"; printf '\\035'; export -p; printf '\\034'; } >> /log/calls.$BASHPID\n\
return 127\n}\n";

/// One program bash ran.
#[derive(Debug)]
struct Exec {
    argv: Vec<String>,
    env: Vec<String>,
}

/// What bash did with one form.
#[derive(Debug)]
struct Run {
    execs: Vec<Exec>,
    /// Workspace files added, changed or removed (by bash itself: the stubs write nothing
    /// there).
    changed: Vec<String>,
}

struct Harness {
    root: PathBuf,
}

impl Harness {
    fn new() -> Harness {
        let root = std::env::temp_dir().join(format!(
            "planwright-approval-against-bash-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let stubs = root.join("stubs");
        std::fs::create_dir_all(&stubs).expect("stubs folder");
        std::fs::write(root.join("stub"), STUB).expect("stub");
        std::fs::set_permissions(root.join("stub"), std::fs::Permissions::from_mode(0o755))
            .expect("stub is executable");
        std::fs::write(root.join("prelude"), PRELUDE).expect("prelude");
        let mut names: Vec<String> = EXTRA_PROGRAMS.iter().map(|s| s.to_string()).collect();
        for dir in ["/usr/bin", "/usr/sbin"] {
            if let Ok(entries) = std::fs::read_dir(dir) {
                names.extend(
                    entries
                        .flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned()),
                );
            }
        }
        names.sort();
        names.dedup();
        for name in names {
            let _ = std::os::unix::fs::symlink("/opt/stub", stubs.join(name));
        }
        Harness { root }
    }

    /// Runs `form` with `bash -c` in a fresh workspace.
    fn run(&self, form: &str) -> Run {
        let work = self.root.join("work");
        let log = self.root.join("log");
        for dir in [&work, &log] {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir_all(dir).expect("folder");
        }
        seed(&work);
        let before = snapshot(&work);
        let mut bwrap = Command::new("timeout");
        bwrap
            .arg("20")
            .arg("bwrap")
            .args(["--unshare-all", "--die-with-parent", "--new-session"])
            .args(["--ro-bind", "/usr/lib", "/usr/lib"]);
        if Path::new("/usr/lib64").exists() {
            bwrap.args(["--ro-bind", "/usr/lib64", "/usr/lib64"]);
        }
        let stubs = self.root.join("stubs");
        bwrap
            .args(["--symlink", "usr/lib", "/lib"])
            .args(["--symlink", "usr/lib64", "/lib64"])
            .args(["--symlink", "usr/bin", "/bin"])
            .args(["--symlink", "usr/sbin", "/sbin"])
            .arg("--ro-bind")
            .args([stubs.as_os_str(), "/usr/bin".as_ref()])
            .arg("--ro-bind")
            .args([stubs.as_os_str(), "/usr/sbin".as_ref()])
            .args(["--ro-bind", "/usr/bin/bash", "/opt/bash"])
            .args(["--ro-bind", "/usr/bin/dash", "/opt/dash"])
            .arg("--ro-bind")
            .args([self.root.join("stub").as_os_str(), "/opt/stub".as_ref()])
            .arg("--ro-bind")
            .args([
                self.root.join("prelude").as_os_str(),
                "/opt/prelude".as_ref(),
            ])
            .arg("--bind")
            .args([work.as_os_str(), "/work".as_ref()])
            .arg("--bind")
            .args([log.as_os_str(), "/log".as_ref()])
            .args([
                "--chdir", "/work", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            ])
            .args(["/opt/bash", "-c", form])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", "/work")
            .env("BASH_ENV", "/opt/prelude");
        let out = bwrap.output().expect("bwrap runs");
        assert_ne!(
            out.status.code(),
            Some(124),
            "{form:?} did not end within 20 s"
        );
        // Every process's records, one file each (see `STUB`).
        let mut files: Vec<_> = std::fs::read_dir(&log)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        // In the order the processes started (their ids, as numbers).
        let pid = |f: &std::path::PathBuf| {
            f.extension()
                .and_then(|e| e.to_str()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        files.sort_by_key(pid);
        let calls: Vec<u8> = files
            .iter()
            .flat_map(|f| std::fs::read(f).unwrap_or_default())
            .collect();
        let after = snapshot(&work);
        let mut changed: Vec<String> = before
            .keys()
            .chain(after.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .cloned()
            .collect();
        changed.dedup();
        Run {
            execs: parse_calls(&String::from_utf8_lossy(&calls)),
            changed,
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The workspace every form starts from: `f` holds a line (for `mapfile`, `read`, `sed e`),
/// `-i.txt` and `--output=P.txt` are files a glob may hand to a program as options.
fn seed(work: &Path) {
    for (name, content) in [
        ("a.txt", "foo\nbar\n"),
        ("b.txt", "foo\n"),
        ("f", "rm x\n"),
        ("x", "keep\n"),
        ("-i.txt", "an option in disguise\n"),
        ("--output=P.txt", "another\n"),
        ("sub/c.txt", "c\n"),
    ] {
        let path = work.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(path, content).expect("seed file");
    }
}

/// Every file under `dir` (relative path → content).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if path.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// The stubs' records.
fn parse_calls(text: &str) -> Vec<Exec> {
    text.split('\u{1c}')
        .filter(|r| !r.trim().is_empty())
        .map(|record| {
            let (args, env) = record.split_once('\u{1d}').unwrap_or((record, ""));
            let argv = args.split('\u{1e}').map(str::to_string).collect::<Vec<_>>();
            let argv = argv[..argv.len().saturating_sub(1)].to_vec();
            let env = env
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("export ")
                        .or_else(|| l.strip_prefix("declare -x "))
                })
                .map(|l| l.split(['=', ' ']).next().unwrap_or_default().to_string())
                .filter(|n| !n.is_empty())
                .collect();
            Exec { argv, env }
        })
        .collect()
}

fn rules(texts: &[&str]) -> Vec<ApprovalRule> {
    texts
        .iter()
        .map(|r| r.parse().expect("a valid rule"))
        .collect()
}

fn judge(policy: &ApprovalPolicy, command: &str) -> Verdict {
    let args = json!({ "command": command });
    policy.judge(&CallToJudge {
        tool: "shell_exec",
        arguments: &args,
        effect: ToolEffect::Acts,
        family: ToolFamily::Shell,
        workspace: Some("/work"),
        written: &WrittenFiles::default(),
    })
}

/// `argv` as a plain command line: every word single-quoted.
fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why what bash did is more than `policy` allows (empty when it is not).
fn beyond_allowed(policy: &ApprovalPolicy, run: &Run) -> Vec<String> {
    let mut why = Vec::new();
    for exec in &run.execs {
        let line = quoted(&exec.argv);
        if judge(policy, &line) != Verdict::Run {
            why.push(format!("bash ran `{line}`, which the rules do not allow"));
        }
        for name in &exec.env {
            if !BASELINE_ENV.contains(&name.as_str()) {
                why.push(format!(
                    "bash ran `{line}` with `{name}` in its environment"
                ));
            }
        }
    }
    for file in &run.changed {
        why.push(format!("bash wrote `{file}`"));
    }
    why
}

/// Issue 41, High 1 and Medium 7: what the reader lets run unasked, bash runs as the reader
/// read it; every attack of the table is shown by bash and refused or asked by the reader.
#[test]
fn the_reader_allows_only_what_real_bash_runs_as_allowed() {
    let found = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-all", "true"])
        .status()
        .map_err(|e| format!("bubblewrap is not installed: {e}"))
        .and_then(|s| {
            s.success()
                .then_some(())
                .ok_or_else(|| "bubblewrap cannot make a sandbox here".to_string())
        })
        .and_then(|()| {
            ["/usr/bin/bash", "/usr/bin/dash"]
                .iter()
                .all(|p| Path::new(p).exists())
                .then_some(())
                .ok_or_else(|| "bash or dash is not in /usr/bin".to_string())
        });
    if test_support::require_or_skip(found).is_none() {
        return;
    }
    let harness = Harness::new();
    let deny = ApprovalPolicy {
        mode: ApprovalMode::Auto,
        deny: rules(&["shell_exec(rm*)"]),
        ..ApprovalPolicy::default()
    };
    let table = table();
    assert!(table.len() >= 100, "{} forms", table.len());
    let mut failures = Vec::new();
    for (form, allow, kind) in table {
        let run = harness.run(form);
        let allowing = ApprovalPolicy {
            mode: ApprovalMode::ReadOnly,
            allow: rules(allow),
            ..ApprovalPolicy::default()
        };
        let allowed = !allow.is_empty() && judge(&allowing, form) == Verdict::Run;
        let beyond = if allow.is_empty() {
            Vec::new()
        } else {
            beyond_allowed(&allowing, &run)
        };
        if allowed && !beyond.is_empty() {
            failures.push(format!(
                "{form:?} is allowed by {allow:?}, but {}",
                beyond.join("; ")
            ));
        }
        let ran_denied: Vec<String> = run
            .execs
            .iter()
            .map(|e| quoted(&e.argv))
            .filter(|line| judge(&deny, line) != Verdict::Run)
            .collect();
        let not_denied = judge(&deny, form) == Verdict::Run;
        if not_denied && !ran_denied.is_empty() {
            failures.push(format!(
                "{form:?} runs unasked under `shell_exec(rm*)`, but bash ran {ran_denied:?}"
            ));
        }
        match kind {
            Plain if !allowed => failures.push(format!("{form:?} is not allowed by {allow:?}")),
            Plain if run.execs.is_empty() => {
                failures.push(format!(
                    "{form:?}: bash ran no program (the harness is off)"
                ));
            }
            Attack if beyond.is_empty() => failures.push(format!(
                "{form:?}: bash did nothing beyond {allow:?}, so the row proves nothing ({run:?})"
            )),
            Attack if allowed => failures.push(format!("{form:?} is allowed by {allow:?}")),
            RunsRm
                if !run
                    .execs
                    .iter()
                    .any(|e| e.argv.first().is_some_and(|p| p == "rm")) =>
            {
                failures.push(format!(
                    "{form:?}: bash did not run rm, so the row proves nothing ({run:?})"
                ));
            }
            RunsRm if not_denied => {
                failures.push(format!("{form:?} runs unasked under `shell_exec(rm*)`"));
            }
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
