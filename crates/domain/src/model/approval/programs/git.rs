//! git's options and commands that run other programs or write files (issue 41: `git -c
//! core.fsmonitor=…`, `--config-env`, a `!` alias, `--output=`, `--ext-diff`,
//! `--upload-pack`, `grep -O`…). Git takes any unambiguous prefix of a long option, so a
//! prefix of a hazardous one counts as it.

use super::options::{long, may_be};
use super::Effects;
use crate::model::approval::shell::Word;

/// Options before the command that take a value in the next word (or after `=`).
const GLOBAL_WITH_VALUE: &[&str] = &[
    "git-dir",
    "work-tree",
    "namespace",
    "super-prefix",
    "attr-source",
    "list-cmds",
    "config-env",
];

/// Options before the command that change nothing an allow rule would not vouch for.
const GLOBAL_PLAIN: &[&str] = &[
    "no-pager",
    "no-replace-objects",
    "literal-pathspecs",
    "glob-pathspecs",
    "noglob-pathspecs",
    "icase-pathspecs",
    "no-optional-locks",
    "bare",
    "version",
    "help",
    "html-path",
    "man-path",
    "info-path",
    "no-lazy-fetch",
    "no-advice",
];

/// Long options (of any command) that make git run another program.
const RUNS_CODE: &[&str] = &[
    "ext-diff",
    "upload-pack",
    "receive-pack",
    "exec",
    "exec-path",
    "open-files-in-pager",
    "config",
    "config-env",
    "template",
    "extcmd",
    "tool",
    "gui",
    "smtp-server",
    "to-cmd",
    "cc-cmd",
    "sequence-editor",
];

/// Long options (of any command) that write a file.
const WRITES: &[&str] = &["output", "output-directory", "separate-git-dir"];

/// Commands that run programs of the configuration's or the caller's choosing.
const RUNNING_COMMANDS: &[&str] = &[
    "difftool",
    "mergetool",
    "filter-branch",
    "filter-repo",
    "instaweb",
    "send-email",
    "daemon",
    "shell",
    "upload-pack",
    "receive-pack",
    "upload-archive",
    "archimport",
    "cvsimport",
    "cvsserver",
    "cvsexportcommit",
    "svn",
    "p4",
    "web--browse",
    "credential",
    "remote-ext",
    "remote-fd",
];

/// Configuration keys that only say who the user is or how output looks.
const HARMLESS_KEYS: &[&str] = &[
    "user.name",
    "user.email",
    "init.defaultbranch",
    "color.ui",
    "pull.rebase",
    "push.default",
    "fetch.prune",
    "advice.detachedhead",
    "commit.gpgsign",
    "tag.gpgsign",
];

pub(super) fn effects(args: &[Word], out: &mut Effects) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if !text.starts_with('-') || text == "-" {
            break;
        }
        i += 1;
        if text == "--" {
            break;
        }
        if let Some((name, value)) = long(text) {
            if may_be(name, "config-env") || may_be(name, "exec-path") && value.is_some() {
                out.unseen(format!(
                    "`git {text}`: git reads configuration or programs from its command line, \
                     which can run commands (core.fsmonitor, pagers, `!` aliases)"
                ));
            } else if GLOBAL_PLAIN.contains(&name) || name == "exec-path" {
                continue;
            } else if may_be(name, "paginate") {
                out.not_allowable("`git --paginate` runs a pager");
            } else {
                out.not_allowable(format!(
                    "`git {text}` reads another repository or is not understood here"
                ));
            }
            if value.is_none() && GLOBAL_WITH_VALUE.iter().any(|full| may_be(name, full)) {
                i += 1;
            }
            continue;
        }
        match text {
            "-C" => i += 1,
            "-P" | "-h" | "-v" => {}
            "-p" => out.not_allowable("`git -p` runs a pager"),
            _ if text.starts_with("-c") => {
                out.unseen(
                    "`git -c`: configuration given on the command line can run commands \
                     (core.fsmonitor, core.pager, `!` aliases)",
                );
                if text == "-c" {
                    i += 1;
                }
            }
            _ => out.not_allowable(format!("the git option `{text}` is not understood here")),
        }
    }
    let Some(command) = args.get(i) else { return };
    let command = command.text.as_str();
    let rest = args.get(i + 1..).unwrap_or_default();
    if RUNNING_COMMANDS.contains(&command) {
        out.unseen(format!("`git {command}` runs other programs"));
    }
    match command {
        "config" => config(rest, out),
        "bisect" if rest.first().is_some_and(|w| w.text == "run") => {
            out.unseen("`git bisect run` runs a command");
        }
        "submodule" if rest.iter().any(|w| w.text == "foreach") => {
            out.unseen("`git submodule foreach` runs a command");
        }
        _ => {}
    }
    command_options(command, rest, out);
}

/// The options after the command.
fn command_options(command: &str, args: &[Word], out: &mut Effects) {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        if text == "--" {
            return;
        }
        if let Some((name, value)) = long(text) {
            if RUNS_CODE.iter().any(|full| may_be(name, full)) {
                out.unseen(format!("`git {command} {text}` runs another program"));
            } else if WRITES.iter().any(|full| may_be(name, full)) {
                out.not_allowable(format!("`git {command} {text}` writes a file"));
                match value {
                    Some(file) => out.writes_as(arg, file),
                    None => {
                        if let Some(file) = words.next() {
                            out.writes(file);
                        }
                    }
                }
            } else if command == "rebase" && may_be(name, "interactive") {
                out.not_allowable("`git rebase --interactive` runs an editor");
            }
            continue;
        }
        // Short options whose letter runs or writes, by command. A cluster holding the
        // letter anywhere counts (`-no dir`: git reads `-n -o dir`), even where the letter
        // is another option's value: when in doubt, not allowed.
        let Some(letters) = text.strip_prefix('-').filter(|l| !l.is_empty()) else {
            continue;
        };
        let (runs, writes) = match command {
            "grep" => ('O', None),
            "fetch" | "pull" | "ls-remote" => ('u', None),
            "clone" if letters.contains('c') => ('c', None),
            "clone" => ('u', None),
            "rebase" if letters.contains('i') => {
                out.not_allowable("`git rebase -i` runs an editor");
                ('x', None)
            }
            "rebase" => ('x', None),
            "format-patch" | "archive" => ('\0', Some('o')),
            _ => continue,
        };
        if letters.contains(runs) {
            out.unseen(format!("`git {command} -{runs}` runs another program"));
        }
        if let Some((_, attached)) = writes.and_then(|w| letters.split_once(w)) {
            out.not_allowable(format!("`git {command} {text}` writes files"));
            if attached.is_empty() {
                if let Some(file) = words.next() {
                    out.writes(file);
                }
            } else {
                out.writes_as(arg, attached);
            }
        }
    }
}

/// `git config`: reading is harmless; setting a key writes the configuration, and most
/// keys can name a command git runs later (`core.fsmonitor`, `core.pager`, `alias.x=!…`).
fn config(args: &[Word], out: &mut Effects) {
    let reads = args.iter().any(|w| {
        let t = w.text.as_str();
        t.starts_with("--get") || matches!(t, "-l" | "--list" | "get" | "list")
    });
    if reads {
        return;
    }
    let key = args
        .iter()
        .map(|w| w.text.as_str())
        .find(|t| !t.starts_with('-') && *t != "set" && *t != "unset");
    match key {
        Some(key) if HARMLESS_KEYS.contains(&key.to_ascii_lowercase().as_str()) => {
            out.not_allowable("`git config` writes git's configuration");
        }
        _ => out.unseen(
            "`git config` sets configuration, which can name commands git runs later \
             (`core.fsmonitor`, `core.pager`, `alias.x=!…`)",
        ),
    }
}
