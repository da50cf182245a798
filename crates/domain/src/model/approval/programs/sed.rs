//! sed's options (GNU sed): `-i` writes the files it reads, `-f` reads a script the rules
//! do not see, and the scripts themselves may run commands (`e`, `s///e`) or write files
//! (`w`, `W`, `s///w`): see [`super::sed_script`]. `--sandbox` makes sed itself refuse
//! those commands.

use super::options::{cluster, long, may_be};
use super::sed_script;
use super::Effects;
use crate::model::approval::shell::Word;

/// GNU sed's long options; those taking a value are marked.
const LONG: &[(&str, Value)] = &[
    ("quiet", Value::No),
    ("silent", Value::No),
    ("expression", Value::Script),
    ("file", Value::File),
    ("in-place", Value::InPlace),
    ("line-length", Value::Number),
    ("null-data", Value::No),
    ("zero-terminated", Value::No),
    ("separate", Value::No),
    ("sandbox", Value::No),
    ("unbuffered", Value::No),
    ("regexp-extended", Value::No),
    ("posix", Value::No),
    ("debug", Value::No),
    ("follow-symlinks", Value::No),
    ("binary", Value::No),
    ("help", Value::No),
    ("version", Value::No),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    Script,
    File,
    /// An optional suffix, attached only.
    InPlace,
    Number,
}

pub(super) fn effects(args: &[Word], out: &mut Effects) {
    // Each script, and whether part of it is only known when it runs.
    let mut scripts: Vec<(String, bool)> = Vec::new();
    // `-e` or `-f` given: the operands are all files.
    let mut script_given = false;
    let mut operands: Vec<&Word> = Vec::new();
    let mut sandbox = false;
    let mut in_place = false;
    let mut only_operands = false;
    let mut words = args.iter();
    let script_of =
        |word: Option<&Word>, attached: Option<&str>, dynamic: bool| match (attached, word) {
            (Some(script), _) => Some((script.to_string(), dynamic)),
            (None, Some(word)) => Some((word.text.clone(), word.dynamic)),
            (None, None) => None,
        };
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        if only_operands || text == "-" || !text.starts_with('-') {
            operands.push(arg);
            continue;
        }
        if text == "--" {
            only_operands = true;
            continue;
        }
        if let Some((name, attached)) = long(text) {
            let matching: Vec<&(&str, Value)> =
                LONG.iter().filter(|(full, _)| may_be(name, full)).collect();
            let [(full, value)] = matching[..] else {
                out.not_allowable(format!("the sed option `{text}` is not understood"));
                continue;
            };
            let next = if attached.is_none() && !matches!(value, Value::No | Value::InPlace) {
                words.next()
            } else {
                None
            };
            match value {
                Value::No => sandbox |= *full == "sandbox",
                Value::InPlace => in_place = true,
                Value::Script => {
                    script_given = true;
                    scripts.extend(script_of(next, attached, arg.dynamic));
                }
                Value::File => {
                    script_given = true;
                    out.unseen("`sed -f` runs a script from a file the rules do not read");
                }
                Value::Number => {}
            }
            continue;
        }
        let Some(letters) = cluster(text, "iefl") else {
            out.not_allowable(format!("the sed option `{text}` is not understood"));
            continue;
        };
        for (letter, attached) in letters {
            let next = if attached.is_none() && matches!(letter, 'e' | 'f' | 'l') {
                words.next()
            } else {
                None
            };
            match letter {
                'n' | 'E' | 'r' | 's' | 'u' | 'z' | 'b' => {}
                'i' => in_place = true,
                'e' => {
                    script_given = true;
                    scripts.extend(script_of(next, attached, arg.dynamic));
                }
                'f' => {
                    script_given = true;
                    out.unseen("`sed -f` runs a script from a file the rules do not read");
                }
                'l' => {}
                other => {
                    out.not_allowable(format!("the sed option `-{other}` is not understood"));
                }
            }
        }
    }
    if !script_given && !operands.is_empty() {
        let script = operands.remove(0);
        scripts.push((script.text.clone(), script.dynamic));
    }
    if in_place {
        out.not_allowable("`sed -i` writes the files it reads");
        for file in operands {
            out.writes(file);
        }
    }
    if sandbox {
        // sed refuses `e`, `w` and `r` itself: its scripts run and write nothing.
        return;
    }
    for (script, dynamic) in scripts {
        script_effects(&script, out, dynamic);
    }
}

/// The effects of one sed script (`dynamic`: part of it is only known when it runs).
fn script_effects(script: &str, out: &mut Effects, dynamic: bool) {
    if dynamic {
        out.unseen("a sed script only known when it runs (it may run commands with `e`)");
        return;
    }
    match sed_script::read(script) {
        Ok(read) => {
            if read.runs_commands {
                out.unseen("sed's `e` (or `s///e`) runs commands");
            }
            if !read.writes.is_empty() {
                out.not_allowable("sed's `w` writes files");
                out.writes.extend(read.writes);
            }
        }
        Err(why) => out.unseen(format!(
            "a sed script the rules cannot read ({why}); it may run commands with `e`"
        )),
    }
}
