//! One command against a rule's command pattern (docs/approvals.md, "What a shell rule
//! sees"): the program by name, flags as sets (`-rf` = `-r -f` = `-fr`, and for a few
//! common programs `--recursive --force`), operands in order. A pattern ending in `*` is
//! open: more flags and operands may follow.
//!
//! Allow rules match strictly (operands from the first on); deny rules loosely: an open
//! pattern's operands need only appear in order among the command's (`git push*` denies
//! `git -C x push`), and a command with arguments only known when it runs (`rm $X`) may
//! match a pattern of its program.

use super::command::Command;
use super::paths::canonical;
use super::rule::glob;

/// How a command fits a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    Yes,
    /// Could match once its run-time arguments are known.
    Maybe,
    No,
}

/// Whether `cmd` fits `pattern` (`loose`: as deny rules read it).
pub(crate) fn fits(pattern: &Command, cmd: &Command, loose: bool) -> Fit {
    if !glob(&pattern.program, &cmd.program, false) {
        return Fit::No;
    }
    let program = cmd.program.as_str();
    let mut pattern_args: Vec<&str> = pattern.args.iter().map(String::as_str).collect();
    let open = match pattern_args.last() {
        None => ends_with_wildcard(&pattern.program),
        Some(&"*") => {
            pattern_args.pop();
            true
        }
        Some(last) => ends_with_wildcard(last),
    };
    let (want_flags, want_operands) = split(program, &pattern_args, true);
    let (flags, operands) = split(
        program,
        &cmd.args.iter().map(String::as_str).collect::<Vec<_>>(),
        false,
    );
    let flags_fit = want_flags
        .iter()
        .all(|p| flags.iter().any(|f| glob(p, f, false)))
        && (open
            || flags
                .iter()
                .all(|f| want_flags.iter().any(|p| glob(p, f, false))));
    let operand_fits = |p: &String, o: &String| operand_fits(p, o, loose);
    let operands_fit = if open && loose {
        in_order(&want_operands, &operands)
    } else if open {
        operands.len() >= want_operands.len()
            && want_operands
                .iter()
                .zip(&operands)
                .all(|(p, o)| operand_fits(p, o))
    } else {
        operands.len() == want_operands.len()
            && want_operands
                .iter()
                .zip(&operands)
                .all(|(p, o)| operand_fits(p, o))
    };
    if flags_fit && operands_fit {
        Fit::Yes
    } else if loose && cmd.dynamic {
        Fit::Maybe
    } else {
        Fit::No
    }
}

/// One operand against a pattern's: paths compare canonical (`./src/../secret/x` is
/// `secret/x`), an allow by the canonical form only, a deny by either.
fn operand_fits(pattern: &str, operand: &str, loose: bool) -> bool {
    let is_path = |w: &str| w.contains('/') && !w.contains("://");
    if !is_path(operand) && !is_path(pattern) {
        return glob(pattern, operand, false);
    }
    let canonical_fit = glob(
        &canonical(pattern, "", None),
        &canonical(operand, "", None),
        false,
    );
    canonical_fit || (loose && glob(pattern, operand, false))
}

fn ends_with_wildcard(word: &str) -> bool {
    word.ends_with('*') && !word.ends_with("\\*")
}

/// Whether `wanted` appear among `operands` in this order (each at a later place).
fn in_order(wanted: &[String], operands: &[String]) -> bool {
    let mut rest = operands.iter();
    wanted
        .iter()
        .all(|p| rest.any(|o| operand_fits(p, o, true)))
}

/// Programs whose options are words after one `-` (`find -delete`, `java -jar`).
const SINGLE_DASH_WORDS: [&str; 5] = ["find", "java", "gcc", "cc", "clang"];

/// A command's arguments as flags (a set, each `-x` or `--name[=value]`) and operands (in
/// order). In a pattern (`pattern`), a flag word's trailing `*` is the pattern's openness,
/// not part of the flags.
fn split(program: &str, args: &[&str], pattern: bool) -> (Vec<String>, Vec<String>) {
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut only_operands = false;
    for &arg in args {
        if only_operands || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.to_string());
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        let arg = if pattern && ends_with_wildcard(arg) && arg.len() > 2 {
            &arg[..arg.len() - 1]
        } else {
            arg
        };
        if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            match long_alias(program, name) {
                Some(short) if !long.contains('=') => flags.push(format!("-{short}")),
                _ => flags.push(arg.to_string()),
            }
            continue;
        }
        let letters = &arg[1..];
        if SINGLE_DASH_WORDS.contains(&program)
            || !letters.chars().all(|c| c.is_ascii_alphanumeric())
        {
            flags.push(arg.to_string());
            continue;
        }
        for c in letters.chars() {
            flags.push(format!("-{}", short_alias(program, c)));
        }
    }
    flags.sort();
    flags.dedup();
    (flags, operands)
}

/// The short form of a well-known long option of a common program (`rm --recursive` = `-r`).
fn long_alias(program: &str, name: &str) -> Option<char> {
    let table: &[(&str, char)] = match program {
        "rm" => &[
            ("recursive", 'r'),
            ("force", 'f'),
            ("dir", 'd'),
            ("verbose", 'v'),
        ],
        "cp" => &[("recursive", 'r'), ("force", 'f'), ("archive", 'a')],
        "mv" => &[("force", 'f')],
        "chmod" | "chown" | "chgrp" => &[("recursive", 'R')],
        "ln" => &[("symbolic", 's'), ("force", 'f')],
        "git" => &[("force", 'f'), ("delete", 'd')],
        "mkdir" => &[("parents", 'p')],
        "sed" => &[("in-place", 'i')],
        "curl" => &[("output", 'o'), ("insecure", 'k')],
        "kill" | "pkill" => &[("signal", 's')],
        _ => &[],
    };
    table.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// Short options that are the same: `rm -R` = `rm -r`.
fn short_alias(program: &str, c: char) -> char {
    match (program, c) {
        ("rm" | "cp", 'R') => 'r',
        _ => c,
    }
}
