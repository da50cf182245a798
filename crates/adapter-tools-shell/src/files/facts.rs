//! Data facts: what code counts in a file, shown after its content so that a small model
//! copies a figure instead of counting in its head (docs/direct.md, "Data facts").
//!
//! One bracketed line, by kind of file:
//! - CSV / TSV: rows below the header, and each column numbered as awk numbers it, with
//!   its sum, least and greatest value when all of it is numbers, or its values and how
//!   often each occurs when they are few:
//!   `[columns: $1=date, $2=region (north ×2, south ×1), $3=amount (numbers: sum 225,
//!   min 30, max 120); 3 rows below the header, 4 lines in all]`;
//! - JSON: the lists it holds and their lengths: `[json: .features is a list of 4 items]`;
//! - other text: lines and words as `wc` counts them, the sum, least and greatest when
//!   all its words are numbers, and for a table-like text (a log:
//!   most lines have 3 or more space-separated fields) the repeated values of its first
//!   fields: `[text: 9 lines, 90 words; $1: 10.0.0.7 ×4, 192.168.1.10 ×3]`.
//!
//! Files over [`FACTS_MAX_BYTES`] get none. [`is_facts_line`] recognises these lines, so a
//! write can refuse content that copied one.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

/// Larger files get no facts (they are read in parts anyway).
pub(crate) const FACTS_MAX_BYTES: u64 = 1024 * 1024;
/// At most this many different values are listed with their counts.
const MAX_LISTED_VALUES: usize = 6;
/// Lists of a JSON document named, and how deep its objects are walked.
const MAX_JSON_LISTS: usize = 8;
const MAX_JSON_DEPTH: usize = 4;
/// Leading space-separated fields of a table-like text that are looked at.
const TEXT_FIELDS: usize = 4;
/// A one-line text with fewer words gets no facts (`ok`, a name, a number).
const MIN_WORDS_OF_ONE_LINE: usize = 5;
/// Files of code: their words are not data.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "sh", "bash", "rs", "js", "ts", "c", "h", "cpp", "go", "java", "rb", "pl", "php", "html",
    "css", "toml", "yaml", "yml", "xml", "ini", "conf", "cfg", "mk", "sql",
];

/// The facts line of the file at `path` (`rel`: its workspace-relative name), if any.
pub(crate) fn facts(path: &Path, rel: &str) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > FACTS_MAX_BYTES || meta.len() == 0 {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    let ext = rel
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "csv" => table_facts(&text, ','),
        "tsv" => table_facts(&text, '\t'),
        "json" => json_facts(&text),
        e if CODE_EXTENSIONS.contains(&e) => None,
        _ => text_facts(&text),
    }
}

/// Whether `line` is one of the facts lines this module writes (or the `[columns: …]` /
/// `[json: …]` / `[text: …]` start of one).
pub(crate) fn is_facts_line(line: &str) -> bool {
    let line = line.trim();
    line.ends_with(']')
        && ["[columns: ", "[json: ", "[text: "]
            .iter()
            .any(|p| line.starts_with(p))
}

fn table_facts(text: &str, separator: char) -> Option<String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = split_row(lines.next()?, separator);
    if header.iter().any(|n| n.is_empty()) {
        return None;
    }
    let rows: Vec<Vec<String>> = lines.map(|l| split_row(l, separator)).collect();
    let columns: Vec<String> = header
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let values: Vec<&str> = rows
                .iter()
                .filter_map(|r| r.get(i).map(String::as_str))
                .collect();
            match column_summary(&values) {
                Some(summary) => format!("${}={name} ({summary})", i + 1),
                None => format!("${}={name}", i + 1),
            }
        })
        .collect();
    // `wc -l` counts the header too: "how many lines" is then a figure to copy.
    let all_lines = text.lines().count();
    let rows_note = match rows.len() {
        1 => format!("1 row below the header, {all_lines} lines in all"),
        n => format!("{n} rows below the header, {all_lines} lines in all"),
    };
    Some(format!("[columns: {}; {rows_note}]", columns.join(", ")))
}

/// One CSV/TSV row split into fields (double quotes group a field, `""` is a quote).
fn split_row(line: &str, separator: char) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields.iter().map(|f| f.trim().to_string()).collect()
}

/// What a column holds: numbers (sum, min, max), a few values with their counts, or
/// nothing worth saying (all different, or all the same).
fn column_summary(values: &[&str]) -> Option<String> {
    let present: Vec<&str> = values.iter().copied().filter(|v| !v.is_empty()).collect();
    if present.is_empty() {
        return None;
    }
    let numbers: Option<Vec<f64>> = present.iter().map(|v| number(v)).collect();
    if let Some(numbers) = numbers {
        let sum: f64 = numbers.iter().sum();
        let min = numbers.iter().copied().fold(f64::INFINITY, f64::min);
        let max = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        return Some(format!(
            "numbers: sum {}, min {}, max {}",
            shown(sum),
            shown(min),
            shown(max)
        ));
    }
    counted(&present).map(|listed| listed.join(", "))
}

/// `values` with how often each occurs (`shipped ×5`), most frequent first, when some
/// repeat and there are few of them; `None` otherwise.
fn counted(values: &[&str]) -> Option<Vec<String>> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for v in values {
        match index.get(v) {
            Some(&i) => counts[i].1 += 1,
            None => {
                index.insert(v, counts.len());
                counts.push((v, 1));
            }
        }
    }
    // Few values, most of them repeated: a status, a region, an address; not dates.
    let few = counts.len() <= MAX_LISTED_VALUES && counts.len() <= (values.len() / 2).max(2);
    if counts.len() < 2 || !few || counts.len() == values.len() {
        return None;
    }
    // Stable: equal counts keep the order of first appearance.
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    Some(counts.iter().map(|(v, n)| format!("{v} ×{n}")).collect())
}

/// A plain decimal number (`120`, `-3.5`, `1e3` is not one: it reads as a word).
fn number(text: &str) -> Option<f64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let plain = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|c| *c == '.').count() <= 1
        && !digits.starts_with('.')
        && !digits.ends_with('.');
    plain.then(|| text.parse().ok()).flatten()
}

/// A number as a person writes it: `503`, `12.5`, never `12.500000000000002`.
fn shown(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    let text = format!("{n:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn json_facts(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    let mut lists = Vec::new();
    json_lists(&value, "", 0, &mut lists);
    if lists.is_empty() {
        return None;
    }
    Some(format!("[json: {}]", lists.join("; ")))
}

/// The lists in `value` (at `path`), as "PATH is a list of N items", breadth first.
fn json_lists(value: &Value, path: &str, depth: usize, out: &mut Vec<String>) {
    if out.len() >= MAX_JSON_LISTS || depth > MAX_JSON_DEPTH {
        return;
    }
    match value {
        Value::Array(items) => {
            let at = if path.is_empty() {
                "the document"
            } else {
                path
            };
            let n = items.len();
            out.push(format!(
                "{at} is a list of {n} item{}",
                if n == 1 { "" } else { "s" }
            ));
        }
        Value::Object(map) => {
            for (key, child) in map {
                let plain = key.chars().all(|c| c.is_alphanumeric() || c == '_');
                let child_path = if plain {
                    format!("{path}.{key}")
                } else {
                    format!("{path}[{key:?}]")
                };
                json_lists(child, &child_path, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn text_facts(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let words = text.split_whitespace().count();
    if lines.len() < 2 && words < MIN_WORDS_OF_ONE_LINE {
        return None;
    }
    let mut out = format!(
        "[text: {} line{}, {words} word{}",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        if words == 1 { "" } else { "s" }
    );
    let all: Vec<&str> = text.split_whitespace().collect();
    if all.len() >= 2 {
        if let Some(summary) = column_summary(&all).filter(|s| s.starts_with("numbers")) {
            out.push_str(&format!("; {summary}"));
        }
    }
    let filled: Vec<Vec<&str>> = lines
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| !f.is_empty())
        .collect();
    let table_like =
        filled.len() >= 3 && filled.iter().filter(|f| f.len() >= 3).count() * 5 >= filled.len() * 4;
    if table_like {
        for i in 0..TEXT_FIELDS {
            let values: Vec<&str> = filled.iter().filter_map(|f| f.get(i).copied()).collect();
            if let Some(listed) = counted(&values) {
                out.push_str(&format!("; ${}: {}", i + 1, listed.join(", ")));
            }
        }
    }
    out.push(']');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_plain_decimals() {
        assert_eq!(number("120"), Some(120.0));
        assert_eq!(number("-3.5"), Some(-3.5));
        for not in ["1e3", ".5", "5.", "1.2.3", "", "-", "12a"] {
            assert_eq!(number(not), None, "{not}");
        }
        assert_eq!(shown(0.1 + 0.2), "0.3");
        assert_eq!(shown(503.0), "503");
    }

    #[test]
    fn a_csv_row_with_quotes() {
        assert_eq!(
            split_row(r#"1,"Smith, Ann","say ""hi""""#, ','),
            ["1", "Smith, Ann", r#"say "hi""#]
        );
    }

    #[test]
    fn facts_lines_are_recognised() {
        assert!(is_facts_line("[text: 3 lines, 9 words]"));
        assert!(is_facts_line(
            "[columns: $1=a, $2=b; 2 rows below the header]"
        ));
        assert!(!is_facts_line("[section]"));
        assert!(!is_facts_line("text: 3 lines"));
    }
}
