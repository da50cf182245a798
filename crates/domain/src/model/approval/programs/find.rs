//! find's expression (GNU findutils): an allow-list of the tests and actions that only
//! read and print. `-exec`, `-execdir`, `-ok`, `-okdir` run programs (deny rules judge
//! them, `command.rs` looks through them), `-delete` removes files, `-fprint`, `-fprint0`,
//! `-fprintf` and `-fls` write one; anything not listed is not understood.

use super::Effects;
use crate::model::approval::shell::Word;

/// Tests and options taking one value.
const WITH_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-fstype",
    "-used",
    "-context",
    "-printf",
    "-files0-from",
];

/// Tests, actions and operators without a value that only read or print.
const PLAIN: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-executable",
    "-readable",
    "-writable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-d",
    "-mount",
    "-xdev",
    "-noleaf",
    "-follow",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-warn",
    "-nowarn",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "-help",
    "--help",
    "-version",
    "--version",
    "!",
    "(",
    ")",
    ",",
];

/// Actions that write a file named by their value (`-fprintf FILE FORMAT` takes two).
const WRITING: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

pub(super) fn effects(args: &[Word], out: &mut Effects) {
    let mut i = 0;
    // Options before the starting points.
    while let Some(arg) = args.get(i) {
        match arg.text.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    // Starting points: up to the expression.
    while let Some(arg) = args.get(i) {
        let t = arg.text.as_str();
        if (t.starts_with('-') && t.len() > 1) || matches!(t, "!" | "(" | ")" | ",") {
            break;
        }
        i += 1;
    }
    while let Some(arg) = args.get(i) {
        let t = arg.text.as_str();
        i += 1;
        if PLAIN.contains(&t) {
            continue;
        }
        if WITH_VALUE.contains(&t) || is_newer_xy(t) {
            i += 1;
            continue;
        }
        if WRITING.contains(&t) {
            out.not_allowable(format!("`find {t}` writes a file"));
            if let Some(file) = args.get(i) {
                out.writes(file);
            }
            i += if t == "-fprintf" { 2 } else { 1 };
            continue;
        }
        match t {
            "-delete" => out.not_allowable("`find -delete` removes files"),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                out.not_allowable(format!("`find {t}` runs another program"));
                while let Some(arg) = args.get(i) {
                    i += 1;
                    if matches!(arg.text.as_str(), ";" | "+") {
                        break;
                    }
                }
            }
            _ => out.not_allowable(format!("the find expression `{t}` is not understood")),
        }
    }
}

/// `-newerXY` (`-newermt`, `-neweraa`…): a test with one value.
fn is_newer_xy(t: &str) -> bool {
    t.strip_prefix("-newer").is_some_and(|xy| {
        xy.len() == 2 && xy.chars().all(|c| matches!(c, 'a' | 'B' | 'c' | 'm' | 't'))
    })
}
