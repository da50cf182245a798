//! `log_digest`: a multi-step job on a log: the lines of one level copied into their own
//! file (unchanged, in order), their count into another, and their distinct messages,
//! sorted, into a third; sometimes all inside a new folder.

use super::logs::AppLog;
use super::text::{py, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "log_digest",
    category: Category::Multi,
    language: "en",
    about: "from a log: the lines of one level copied into their own file, their count into \
            another, their distinct messages sorted into a third, sometimes in a new folder",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let file = names.file(rng, words::LOG_STEMS, "log");
    let n = rng.range(10, 40) as usize;
    let log = AppLog::generate(rng, n);
    let level = *rng.pick(&["ERROR", "ERROR", "WARN"]);
    let lower = level.to_lowercase();
    let folder = if rng.chance(40) {
        Some(names.file(rng, &["digest", "triage", "incident", "review"], ""))
    } else {
        None
    };
    let at = |f: &str| match &folder {
        Some(d) => format!("{d}/{f}"),
        None => f.to_string(),
    };
    let lines_f = at(&format!("{lower}s.log"));
    let count_f = at(&format!("{lower}_count.txt"));
    let kinds_f = at(&format!("{lower}_messages.txt"));
    let chosen: Vec<&super::logs::LogLine> =
        log.lines.iter().filter(|l| l.level == level).collect();
    let copied: Vec<String> = chosen.iter().map(|l| log.line(l)).collect();
    let mut kinds: Vec<String> = chosen.iter().map(|l| l.message.clone()).collect();
    kinds.sort();
    kinds.dedup();
    let token = log.level_token(level);
    let mut b = Builder::new(
        FAMILY.name,
        FAMILY.category,
        if folder.is_some() {
            "in_folder"
        } else {
            "beside"
        },
    );
    b.input(&file, &log.text())
        .lines_are(&lines_f, &copied, true)
        .number_is(&count_f, chosen.len() as f64, 0.0)
        .lines_are(&kinds_f, &kinds, true);
    let mk = folder
        .as_ref()
        .map_or(String::new(), |d| format!("Make a folder {d}. "));
    let mk_short = folder
        .as_ref()
        .map_or(String::new(), |d| format!("mkdir {d}; "));
    b.phrased(
        rng,
        vec![
            format!(
                "{mk}Copy every {level} line of {file} into {lines_f}, unchanged and in order. Write \
                 how many there are into {count_f}. Then write the distinct {level} messages (the \
                 text after `{token}`), sorted alphabetically, one per line, into {kinds_f}."
            ),
            format!(
                "{mk_short}{file}: {level} lines as they are -> {lines_f}; their count -> {count_f}; \
                 unique messages (after {token}) sorted a-z -> {kinds_f}"
            ),
            format!(
                "Triage time. {mk}From {file}, I need three files: {lines_f} with just the {level} \
                 lines (exactly as logged, same order), {count_f} with the number of those lines, \
                 and {kinds_f} listing each different message once (the part after {token}), in \
                 alphabetical order."
            ),
        ],
    )
    .reference(&format!(
        "import os, re\nlines = [l for l in open({f}).read().splitlines() if l.strip()]\nsel = [l for l in lines if re.match({re}, l).group(2) == {lv}]\nmsgs = sorted(set(re.match({re}, l).group(3) for l in sel))\nfor p in [{a}, {c}, {k}]:\n    if os.path.dirname(p):\n        os.makedirs(os.path.dirname(p), exist_ok=True)\nopen({a}, 'w').write('\\n'.join(sel) + '\\n')\nopen({c}, 'w').write(str(len(sel)) + '\\n')\nopen({k}, 'w').write('\\n'.join(msgs) + '\\n')\n",
        f = py(&file),
        re = py(log.py_regex()),
        lv = py(level),
        a = py(&lines_f),
        c = py(&count_f),
        k = py(&kinds_f)
    ));
    b.build()
}
