//! Bash builtins that evaluate text or change what later commands do (issue 41, Medium 7):
//! a subscript in a variable name is evaluated as arithmetic, and arithmetic on a name
//! whose value holds `a[$(cmd)]` runs `cmd` (`printf -v 'a[$(cmd)]'`, `test -v`, `read`,
//! `declare`, `unset`, `mapfile`, `wait -p`, `getopts`); `declare -i` and `let` evaluate
//! arithmetic; `declare -n` evaluates a name later; `mapfile -C` runs a callback; `alias`,
//! `hash -p` and `enable` change what a name runs; `fc` runs history. Those are code the
//! rules do not see (a deny rule is unsure). Setting variables (`read`, `export`…) changes
//! the shell for later commands, which no allow rule vouches for. `eval`, `trap`, `source`
//! are read by `command.rs` (their text is a script).

use super::options::cluster;
use super::Effects;
use crate::model::approval::shell::{is_name, Word};
use crate::model::approval::variables::is_risky_variable;

const WITH_EFFECTS: &[&str] = &[
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "unset",
    "read",
    "mapfile",
    "readarray",
    "printf",
    "test",
    "[",
    "let",
    "alias",
    "hash",
    "enable",
    "shopt",
    "compgen",
    "complete",
    "fc",
    "bind",
    "wait",
    "getopts",
];

pub(super) fn is_builtin_with_effects(program: &str) -> bool {
    WITH_EFFECTS.contains(&program)
}

pub(super) fn effects(program: &str, args: &[Word], out: &mut Effects) {
    match program {
        "declare" | "typeset" | "local" | "export" | "readonly" => declare(program, args, out),
        "unset" => {
            out.not_allowable("`unset` changes the shell's variables");
            for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                variable(program, arg, out);
            }
        }
        "read" => {
            out.not_allowable("`read` sets variables");
            let mut words = args.iter();
            while let Some(arg) = words.next() {
                match cluster(&arg.text, "adinNptu") {
                    Some(letters) => {
                        if let Some((letter, None)) = letters.last() {
                            if "adinNptu".contains(*letter) {
                                let value = words.next();
                                if *letter == 'a' {
                                    value.into_iter().for_each(|v| variable(program, v, out));
                                }
                            }
                        }
                    }
                    None => variable(program, arg, out),
                }
            }
        }
        "mapfile" | "readarray" => {
            out.not_allowable(format!("`{program}` sets an array"));
            let mut words = args.iter();
            while let Some(arg) = words.next() {
                match cluster(&arg.text, "dnOsuCc") {
                    Some(letters) => {
                        if letters.iter().any(|(l, _)| *l == 'C') {
                            out.unseen(format!("`{program} -C` runs a callback"));
                        }
                        if let Some((letter, None)) = letters.last() {
                            if "dnOsuCc".contains(*letter) {
                                words.next();
                            }
                        }
                    }
                    None => variable(program, arg, out),
                }
            }
        }
        "printf" => {
            if let Some(first) = args.first() {
                if let Some(name) = first.text.strip_prefix("-v") {
                    out.not_allowable("`printf -v` sets a variable");
                    match (name.is_empty(), args.get(1)) {
                        (true, Some(next)) => variable(program, next, out),
                        (true, None) => {}
                        (false, _) => variable(
                            program,
                            &Word {
                                text: name.to_string(),
                                ..first.clone()
                            },
                            out,
                        ),
                    }
                }
            }
        }
        "test" | "[" => {
            for pair in args.windows(2) {
                if pair[0].text == "-v" {
                    variable(program, &pair[1], out);
                }
            }
        }
        "wait" => {
            for pair in args.windows(2) {
                if pair[0].text == "-p" {
                    out.not_allowable("`wait -p` sets a variable");
                    variable(program, &pair[1], out);
                }
            }
        }
        "getopts" => {
            out.not_allowable("`getopts` sets variables");
            if let Some(name) = args.get(1) {
                variable(program, name, out);
            }
        }
        "let" => out.unseen("`let` evaluates arithmetic, which may run commands"),
        "alias" if args.iter().any(|a| a.text.contains('=') || a.dynamic) => {
            out.unseen("`alias` makes a name run commands the rules do not see");
        }
        "hash" => {
            let sets_path = args
                .iter()
                .any(|a| cluster(&a.text, "pt").is_some_and(|l| l.iter().any(|(c, _)| *c == 'p')));
            if sets_path {
                out.unseen("`hash -p` makes a name run another program");
            }
        }
        "enable" => out.unseen("`enable` loads the shell's builtins or turns them off"),
        "shopt" => out.not_allowable("`shopt` changes how the shell reads commands"),
        "compgen" | "complete" => {
            let runs = args.iter().any(|a| {
                cluster(&a.text, "").is_some_and(|l| l.iter().any(|(c, _)| matches!(c, 'C' | 'F')))
            });
            if runs {
                out.unseen(format!("`{program} -C` / `-F` runs a command or function"));
            }
            out.not_allowable(format!("`{program}` changes the shell's completion"));
        }
        "fc" => out.unseen("`fc` runs commands from the history"),
        "bind" => {
            if args.iter().any(|a| a.text.starts_with("-x")) {
                out.unseen("`bind -x` runs a command on a key");
            }
            out.not_allowable("`bind` changes the shell's keys");
        }
        _ => {}
    }
}

/// `declare`, `typeset`, `local`, `export`, `readonly`: `-n` (a name evaluated later) and
/// `-i` (later assignments evaluated as arithmetic) are code the rules do not see; so is a
/// name with a subscript, or one that changes what runs.
fn declare(program: &str, args: &[Word], out: &mut Effects) {
    out.not_allowable(format!("`{program}` changes the shell's variables"));
    for arg in args {
        let text = arg.text.as_str();
        if text.starts_with('-') || text.starts_with('+') {
            if text.contains('n') {
                out.unseen(format!("`{program} -n` makes a name refer to another"));
            }
            if text.contains('i') {
                out.unseen(format!(
                    "`{program} -i` evaluates later assignments as arithmetic"
                ));
            }
            continue;
        }
        let name = text.split_once('=').map_or(text, |(name, _)| name);
        let name = name.strip_suffix('+').unwrap_or(name);
        variable(
            program,
            &Word {
                text: name.to_string(),
                ..arg.clone()
            },
            out,
        );
    }
}

/// A variable name a builtin sets or reads: a subscript (`a[$(cmd)]`) is evaluated as
/// arithmetic; a name only known when it runs, or one that changes what runs (`PS4`,
/// `PATH`), is code the rules do not see.
fn variable(program: &str, name: &Word, out: &mut Effects) {
    let text = name.text.as_str();
    if name.dynamic {
        out.unseen(format!(
            "`{program}` on a name only known when it runs (`{text}`)"
        ));
    } else if text.contains('[') {
        out.unseen(format!(
            "`{program}` on `{text}`: an array subscript is evaluated as arithmetic, which may \
             run commands"
        ));
    } else if is_risky_variable(text) {
        out.unseen(format!(
            "`{program}` sets `{text}`, which changes what runs"
        ));
    } else if !is_name(text) && !text.is_empty() {
        out.not_allowable(format!("`{program}` on `{text}`, not a plain name"));
    }
}

/// Whether `set`'s arguments only turn options on or off that change what no command does:
/// `-e`, `-u`, `-f`, `-C` (and `+`), `-o`/`+o` `pipefail`, `errexit`, `nounset`, `noglob`,
/// `noclobber`. Not `set -x`: its trace expands `PS4`, which may run commands.
pub(crate) fn safe_set(args: &[Word]) -> bool {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        let Some(letters) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            return false;
        };
        for (i, letter) in letters.char_indices() {
            match letter {
                'e' | 'u' | 'f' | 'C' => {}
                // `-o NAME` (also at the end of a cluster: `-euo pipefail`).
                'o' if i + 1 == letters.len() => match words.next().map(|w| w.text.as_str()) {
                    Some("pipefail" | "errexit" | "nounset" | "noglob" | "noclobber") => {}
                    _ => return false,
                },
                _ => return false,
            }
        }
        if letters.is_empty() {
            return false;
        }
    }
    true
}
