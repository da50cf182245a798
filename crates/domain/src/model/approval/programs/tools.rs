//! Other common programs whose options run code or write files: `sort -o`, `tar
//! --to-command`, `rg --pre`, `fd --exec`, `man -P`, `rsync -e`, `ssh -o ProxyCommand`,
//! `curl -o`. A long option counts also cut to a prefix (getopt reads `--outp` as
//! `--output`); a short one when its letter is anywhere in a cluster.

use super::options::{long, may_be};
use super::Effects;
use crate::model::approval::shell::Word;

/// A program's hazardous options: long names and short letters that run code, and those
/// that write a file (given as their value).
struct Hazards {
    runs_long: &'static [&'static str],
    runs_short: &'static str,
    writes_long: &'static [&'static str],
    writes_short: &'static str,
}

fn hazards(program: &str) -> Option<Hazards> {
    Some(match program {
        "sort" => Hazards {
            runs_long: &["compress-program"],
            runs_short: "",
            writes_long: &["output"],
            writes_short: "o",
        },
        "tar" | "gtar" | "bsdtar" => Hazards {
            runs_long: &[
                "to-command",
                "use-compress-program",
                "checkpoint-action",
                "info-script",
                "new-volume-script",
                "rsh-command",
                "rmt-command",
                "index-file",
            ],
            runs_short: "IF",
            writes_long: &[],
            writes_short: "",
        },
        "rg" => Hazards {
            runs_long: &["pre"],
            runs_short: "",
            writes_long: &[],
            writes_short: "",
        },
        "fd" | "fdfind" => Hazards {
            runs_long: &["exec", "exec-batch"],
            runs_short: "xX",
            writes_long: &[],
            writes_short: "",
        },
        "man" => Hazards {
            runs_long: &["pager", "html", "preprocessor"],
            runs_short: "PHp",
            writes_long: &[],
            writes_short: "",
        },
        "rsync" => Hazards {
            runs_long: &["rsh", "rsync-path"],
            runs_short: "e",
            writes_long: &[],
            writes_short: "",
        },
        "ssh" | "scp" | "sftp" => Hazards {
            runs_long: &[],
            runs_short: "oFSJ",
            writes_long: &[],
            writes_short: "",
        },
        "curl" => Hazards {
            runs_long: &["config"],
            runs_short: "K",
            writes_long: &[
                "output",
                "output-dir",
                "remote-name",
                "remote-name-all",
                "dump-header",
                "cookie-jar",
                "trace",
                "trace-ascii",
                "stderr",
                "libcurl",
                "etag-save",
                "hsts",
                "alt-svc",
            ],
            writes_short: "oODc",
        },
        "zip" => Hazards {
            runs_long: &["unzip-command"],
            runs_short: "",
            writes_long: &[],
            writes_short: "",
        },
        _ => return None,
    })
}

pub(super) fn effects(program: &str, args: &[Word], out: &mut Effects) {
    let Some(h) = hazards(program) else { return };
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        if text == "--" {
            return;
        }
        if let Some((name, value)) = long(text) {
            if h.runs_long.iter().any(|full| may_be(name, full)) {
                out.unseen(format!("`{program} {text}` runs another program"));
            }
            if h.writes_long.iter().any(|full| may_be(name, full)) {
                out.not_allowable(format!("`{program} {text}` writes a file"));
                match value {
                    Some(file) => out.writes_as(arg, file),
                    None => {
                        if let Some(file) = words.next() {
                            out.writes(file);
                        }
                    }
                }
            }
            continue;
        }
        let Some(letters) = text.strip_prefix('-').filter(|l| !l.is_empty()) else {
            continue;
        };
        if let Some(letter) = letters.chars().find(|c| h.runs_short.contains(*c)) {
            out.unseen(format!("`{program} -{letter}` runs another program"));
        }
        if let Some((_, attached)) = letters.split_once(|c| h.writes_short.contains(c)) {
            out.not_allowable(format!("`{program} {text}` writes a file"));
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
