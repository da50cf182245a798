//! What some programs' arguments make them do beyond what a rule's pattern shows
//! (docs/approvals.md, "What allow rules allow"): options that run other code (`git -c
//! core.fsmonitor=…`, sed's `e`, `find -exec`), write files (`--output=`, `sed -i`, sed's
//! `w`, `find -fprint`), change the shell (`set -x`, `read`, `declare`), or that this
//! reader does not understand. An allow rule never allows such a command, whatever its
//! pattern (`shell_exec(git log*)` does not allow `git log --output=x`); code that runs
//! unseen makes a deny rule unsure (asked).
//!
//! The tables are an allow-list where they can be (the `find` primaries and sed commands
//! understood, the options of a glob-safe program) and a list of known hazards elsewhere
//! (git's options); for programs not named here, the rule's pattern is all there is.

mod builtins;
mod find;
mod git;
mod options;
mod sed;
mod sed_script;
mod tools;

use super::shell::Word;

pub(crate) use builtins::safe_set;

/// What a command's arguments make it do, beyond running its program.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    /// Code runs that the rules cannot see: a deny rule is unsure of the command, and no
    /// allow rule allows it.
    pub unseen_code: Vec<String>,
    /// Not for an allow rule to let through (a file written, the shell's state changed, an
    /// option not understood); deny rules judge the command as usual.
    pub not_allowable: Vec<String>,
    /// Files it writes, as written on the command line (deny file rules judge them).
    pub writes: Vec<String>,
    /// Files it writes whose names are only known when it runs (`--output=$F`, `sed -i
    /// secre*/a`): a deny file rule is unsure of them.
    pub unseen_writes: Vec<String>,
}

impl Effects {
    fn unseen(&mut self, why: impl Into<String>) {
        self.unseen_code.push(why.into());
    }

    fn not_allowable(&mut self, why: impl Into<String>) {
        self.not_allowable.push(why.into());
    }

    fn writes(&mut self, file: &Word) {
        self.writes_as(file, &file.text);
    }

    /// `file`, all of `word` or what follows an option in it (`--output=F`, `-oF`), is
    /// written. A glob's literal text is compared too (`secret/*` is refused by
    /// `file_write(secret/**)` outright).
    fn writes_as(&mut self, word: &Word, file: &str) {
        if word.dynamic || word.glob {
            self.unseen_writes.push(file.to_string());
        }
        if !word.dynamic {
            self.writes.push(file.to_string());
        }
    }
}

/// The effects of `program` (a normalised name) run with `args`.
pub(crate) fn effects(program: &str, args: &[Word]) -> Effects {
    let mut out = Effects::default();
    match program {
        "git" => git::effects(args, &mut out),
        "sed" | "gsed" => sed::effects(args, &mut out),
        "find" => find::effects(args, &mut out),
        _ if builtins::is_builtin_with_effects(program) => {
            builtins::effects(program, args, &mut out);
        }
        _ => tools::effects(program, args, &mut out),
    }
    out
}

/// Programs that run another program given in their arguments, with options this reader
/// follows: deny rules judge the program they run; no allow rule allows them.
pub(crate) const WRAPPERS: &[&str] = &[
    "sudo", "doas", "run0", "env", "nohup", "time", "exec", "builtin", "command", "setsid", "nice",
    "ionice", "stdbuf", "chronic", "unbuffer", "timeout", "xargs", "watch", "eval", "busybox",
];

/// Programs that run another program (or a shell string) with options this reader does not
/// follow: deny rules are unsure of them (asked), no allow rule allows them.
const OPAQUE_WRAPPERS: &[&str] = &[
    "taskset",
    "flock",
    "unshare",
    "script",
    "setpriv",
    "chroot",
    "nsenter",
    "runuser",
    "su",
    "sg",
    "newgrp",
    "chrt",
    "prlimit",
    "numactl",
    "cgexec",
    "systemd-run",
    "fakeroot",
    "proot",
    "firejail",
    "bwrap",
    "strace",
    "ltrace",
    "valgrind",
    "catchsegv",
    "pkexec",
    "daemonize",
    "start-stop-daemon",
    "parallel",
    "entr",
    "faketime",
    "torsocks",
    "proxychains",
    "proxychains4",
    "tsocks",
    "at",
    "batch",
    "expect",
    "dbus-run-session",
    "xvfb-run",
    "rlwrap",
    "nocache",
    "eatmydata",
    "chpst",
    "setarch",
    "linux32",
    "linux64",
    "capsh",
    "toybox",
    "ssh-agent",
    "sem",
    "flatpak-spawn",
];

/// Whether `program` runs another program in a way this reader does not follow: the
/// wrappers above and the dynamic loader (`ld.so`, `ld-linux-x86-64.so.2`: it runs any
/// program file, whatever its name).
pub(crate) fn is_opaque_wrapper(program: &str) -> bool {
    OPAQUE_WRAPPERS.contains(&program)
        || program == "ld.so"
        || (program.starts_with("ld-") && program.contains(".so"))
}

/// Programs whose options neither run code nor write files: an unquoted glob (`*.txt`)
/// among their arguments, which may expand to a name starting with `-`, is harmless.
const GLOB_SAFE: &[&str] = &[
    "cat",
    "ls",
    "grep",
    "egrep",
    "fgrep",
    "head",
    "tail",
    "wc",
    "file",
    "stat",
    "du",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "nl",
    "tac",
    "rev",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "strings",
    "od",
    "hexdump",
    "column",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "comm",
    "cut",
    "paste",
    "diff",
    "cmp",
    "echo",
];

/// Whether an unquoted glob leading a word (`*.txt`) is harmless as an argument of
/// `program`: its options do nothing an allow rule would not vouch for.
pub(crate) fn glob_safe(program: &str) -> bool {
    GLOB_SAFE.contains(&program)
}

/// The folders whose programs an absolute path may name and still be the program of that
/// name (`/usr/bin/git` is `git`, `/tmp/x/git` is not).
pub(crate) fn in_system_folder(path: &str) -> bool {
    let Some((folder, name)) = path.rsplit_once('/') else {
        return false;
    };
    !name.is_empty()
        && matches!(
            folder,
            "/usr/bin" | "/bin" | "/usr/local/bin" | "/usr/sbin" | "/sbin" | "/usr/local/sbin"
        )
}
