//! `log_extract`: a fact read off a log file: how many lines have a level, the client
//! that made the most requests, how many lines fall in a time range, the message of the
//! first or last error.

use super::logs::{access_log, clock_hm, AppLog};
use super::text::{py, py_write, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "log_extract",
    category: Category::Single,
    language: "en",
    about: "a fact read off a log: how many lines have a given level, the most frequent client \
            address, how many lines fall in a time range, the message of the first or last error",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let file = names.file(rng, words::LOG_STEMS, "log");
    let out = names.file(rng, words::OUT_STEMS, "txt");
    let n = rng.range(8, 30) as usize;
    match rng.below(4) {
        0 => level_count(rng, &file, &out, n),
        1 => top_client(rng, &file, &out, n),
        2 => time_range(rng, &file, &out, n),
        _ => error_message(rng, &file, &out, n),
    }
}

fn parse_lines(log: &AppLog, file: &str) -> String {
    format!(
        "import re\nlines = [re.match({}, l).groups() for l in open({}, encoding='utf-8').read().splitlines() if l.strip()]\n",
        py(log.py_regex()),
        py(file)
    )
}

fn level_count(rng: &mut Rng, file: &str, out: &str, n: usize) -> Instance {
    let log = AppLog::generate(rng, n);
    let level = *rng.pick(&["ERROR", "WARN"]);
    let count = log.lines.iter().filter(|l| l.level == level).count();
    let lower = level.to_lowercase();
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "level_count");
    b.input(file, &log.text())
        .number_is(out, count as f64, 0.0)
        .phrased(
            rng,
            vec![
                format!("How many {level} lines are in {file}? Write just the number into {out}."),
                format!(
                    "Go through {file} and tally the {level} entries; save the tally, as a bare \
                     number, in {out}."
                ),
                format!("{file} - number of {lower}s (level {level}) -> {out}"),
                format!(
                    "Our service wrote {file} overnight. I'd like to know how many {level} \
                     messages there were; please put only that number in {out}."
                ),
            ],
        )
        .reference(&format!(
            "{}{}",
            parse_lines(&log, file),
            py_write(
                out,
                &format!("str(sum(1 for t, lv, m in lines if lv == {}))", py(level))
            )
        ));
    b.build()
}

fn top_client(rng: &mut Rng, file: &str, out: &str, n: usize) -> Instance {
    let (text, _, top) = access_log(rng, n.max(9));
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "top_client");
    b.input(file, &text)
        .text_is(out, &top)
        .phrased(
            rng,
            vec![
                format!(
                    "Which client address shows up most often in {file}? (It is the first field \
                     of each line.) Write only that address into {out}."
                ),
                format!("most frequent client IP in {file} -> {out} (address only)"),
                format!(
                    "Somebody is hammering our site. Find the IP address that appears most often \
                     at the start of the lines of {file} and put it, alone, in {out}."
                ),
            ],
        )
        .reference(&format!(
            "from collections import Counter\nips = [l.split()[0] for l in open({}).read().splitlines() if l.strip()]\n{}",
            py(file),
            py_write(out, "Counter(ips).most_common(1)[0][0]")
        ));
    b.build()
}

fn time_range(rng: &mut Rng, file: &str, out: &str, n: usize) -> Instance {
    let log = AppLog::generate(rng, n);
    let first = log.lines.first().map_or(0, |l| l.secs);
    let last = log.lines.last().map_or(0, |l| l.secs);
    // Whole minutes inside the log's span (no line sits on a whole minute).
    let span_start = first / 60 + 1;
    let span_end = last / 60;
    let a = rng.range(span_start as i64, span_end.max(span_start) as i64) as u32;
    let b_min = rng.range(a as i64, span_end.max(a) as i64) as u32 + 1;
    let (from, to) = (a * 60, b_min * 60);
    let count = log
        .lines
        .iter()
        .filter(|l| l.secs >= from && l.secs <= to)
        .count();
    let (f, t) = (clock_hm(from), clock_hm(to));
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "time_range");
    b.input(file, &log.text())
        .number_is(out, count as f64, 0.0)
        .phrased(
            rng,
            vec![
                format!(
                    "How many lines of {file} were logged between {f} and {t}? Write the count \
                     into {out}."
                ),
                format!("count log lines in {file} with a time from {f} to {t} -> {out}, just the number"),
                format!(
                    "Something went wrong between {f} and {t}. Please count how many entries \
                     {file} has in that window and write only the number to {out}."
                ),
            ],
        )
        .reference(&format!(
            "{}n = sum(1 for t, lv, m in lines if {} <= t <= {})\n{}",
            parse_lines(&log, file),
            py(&format!("{f}:00")),
            py(&format!("{t}:00")),
            py_write(out, "str(n)")
        ));
    b.build()
}

fn error_message(rng: &mut Rng, file: &str, out: &str, n: usize) -> Instance {
    let log = AppLog::generate(rng, n);
    let first = rng.chance(50);
    let errors: Vec<&super::logs::LogLine> =
        log.lines.iter().filter(|l| l.level == "ERROR").collect();
    let chosen = if first {
        errors[0]
    } else {
        errors[errors.len() - 1]
    };
    let token = log.level_token("ERROR");
    let which = if first { "first" } else { "last" };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "error_message");
    b.input(file, &log.text())
        .text_is(out, &chosen.message)
        .phrased(
            rng,
            vec![
                format!(
                    "Find the {which} ERROR line in {file} and write its message (the text after \
                     `{token}`) into {out}."
                ),
                format!(
                    "What did the {which} error in {file} say? Copy just the message part, the \
                     words after {token}, into {out} - no time stamp, no level."
                ),
                format!("{file}: message of the {which} {token} entry -> {out}"),
            ],
        )
        .reference(&format!(
            "{}errs = [m for t, lv, m in lines if lv == 'ERROR']\n{}",
            parse_lines(&log, file),
            py_write(out, &format!("errs[{}]", if first { "0" } else { "-1" }))
        ));
    b.build()
}
