//! Small helpers the generators share: unique random file names, sentences, numbers
//! written as a user would, and Python literals for the reference solutions.

use crate::eval::rng::Rng;

/// Hands out file names that differ from every name handed out before.
#[derive(Debug, Default)]
pub(crate) struct Names {
    used: Vec<String>,
}

impl Names {
    /// A new name from `stems` with the extension `ext` (empty: none), in one of the
    /// shapes people give their files (`orders.csv`, `orders_2024.csv`, `my-orders.csv`).
    pub(crate) fn file(&mut self, rng: &mut Rng, stems: &[&str], ext: &str) -> String {
        for attempt in 0.. {
            let stem = *rng.pick(stems);
            let shaped = match rng.below(if attempt < 20 { 7 } else { 1 }) {
                0..=2 => stem.to_string(),
                3 => format!("{stem}_{}", rng.range(2019, 2026)),
                4 => format!(
                    "{stem}-{}",
                    rng.pick(&["jan", "feb", "mar", "q1", "q2", "q3", "v2"])
                ),
                5 => format!("my_{stem}"),
                _ => format!("{stem}{}", rng.range(1, 99)),
            };
            let name = if ext.is_empty() {
                shaped
            } else {
                format!("{shaped}.{ext}")
            };
            if self.take(&name) {
                return name;
            }
        }
        unreachable!("an unbounded loop returns")
    }

    /// A new name without English words around the stem (`ventes.csv`, `ventes_2024.csv`,
    /// `ventes3.csv`), for files in another language.
    pub(crate) fn plain(&mut self, rng: &mut Rng, stems: &[&str], ext: &str) -> String {
        for attempt in 0.. {
            let stem = *rng.pick(stems);
            let shaped = match rng.below(if attempt < 20 { 4 } else { 1 }) {
                0 | 1 => stem.to_string(),
                2 => format!("{stem}_{}", rng.range(2019, 2026)),
                _ => format!("{stem}{}", rng.range(2, 9)),
            };
            let name = format!("{shaped}.{ext}");
            if self.take(&name) {
                return name;
            }
        }
        unreachable!("an unbounded loop returns")
    }

    /// A new name usable as a module name (`stats.py`, `stats_utils.py`, `stats2.py`).
    pub(crate) fn module(&mut self, rng: &mut Rng, stems: &[&str], ext: &str) -> String {
        for attempt in 0.. {
            let stem = *rng.pick(stems);
            let shaped = match rng.below(if attempt < 20 { 5 } else { 1 }) {
                0..=2 => stem.to_string(),
                3 => format!("{stem}_{}", rng.pick(&["utils", "lib", "core", "tools"])),
                _ => format!("{stem}{}", rng.range(2, 9)),
            };
            let name = format!("{shaped}.{ext}");
            if self.take(&name) {
                return name;
            }
        }
        unreachable!("an unbounded loop returns")
    }

    /// Reserves `name`; false when it was handed out before.
    pub(crate) fn take(&mut self, name: &str) -> bool {
        let lower = name.to_lowercase();
        if self.used.contains(&lower) {
            return false;
        }
        self.used.push(lower);
        true
    }
}

/// A sentence of `n` words drawn from `words`, the first capitalised, ending with a full
/// stop.
pub(crate) fn sentence(rng: &mut Rng, words: &[&str], n: usize) -> String {
    let mut out: Vec<String> = (0..n).map(|_| rng.pick(words).to_string()).collect();
    if let Some(first) = out.first_mut() {
        *first = capitalised(first);
    }
    format!("{}.", out.join(" "))
}

/// `word` with its first letter upper-cased.
pub(crate) fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A number as a person writes it: `12`, `12.5`, `12.25` (at most two decimals).
pub(crate) fn num(x: f64) -> String {
    let r = (x * 100.0).round() / 100.0;
    if (r - r.round()).abs() < 1e-9 {
        format!("{}", r.round() as i64)
    } else {
        let s = format!("{r:.2}");
        s.trim_end_matches('0').to_string()
    }
}

/// A money amount with two decimals (`4.50`).
pub(crate) fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// Lines joined with `\n`, with a final newline.
pub(crate) fn lines<S: AsRef<str>>(items: &[S]) -> String {
    let mut s: String = items
        .iter()
        .map(|l| l.as_ref())
        .collect::<Vec<_>>()
        .join("\n");
    s.push('\n');
    s
}

/// A Python string literal for `text` (JSON's escapes are Python's).
pub(crate) fn py(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "''".to_string())
}

/// A Python list literal of strings.
pub(crate) fn py_list<S: AsRef<str>>(items: &[S]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|s| py(s.as_ref()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Python lines that read the CSV `file` (separator `sep`) into `rows`, a list of dicts.
pub(crate) fn py_csv_rows(file: &str, sep: char) -> String {
    format!(
        "import csv\nwith open({}, newline='', encoding='utf-8') as f:\n    rows = list(csv.DictReader(f, delimiter={}))\n",
        py(file),
        py(&sep.to_string())
    )
}

/// Python lines that write `expr` (a str expression) plus a newline into `file`.
pub(crate) fn py_write(file: &str, expr: &str) -> String {
    format!(
        "with open({}, 'w', encoding='utf-8') as f:\n    f.write({expr} + '\\n')\n",
        py(file)
    )
}

/// A Python function `num(x)` writing a number as [`num`] does.
pub(crate) const PY_NUM: &str = "def num(x):\n    r = round(x, 2)\n    return str(int(r)) if r == int(r) else ('%.2f' % r).rstrip('0')\n";

/// English ordinal: 1st, 2nd, 3rd, 4th, 11th, 22nd.
pub(crate) fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_numbers_read_as_written() {
        let mut rng = Rng::new(3);
        let mut names = Names::default();
        let made: Vec<String> = (0..30)
            .map(|_| names.file(&mut rng, &["a", "b"], "csv"))
            .collect();
        let mut dedup = made.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), made.len());
        assert!(!names.take(&made[0].to_uppercase()));
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(1.23456), "1.23");
        assert_eq!(money(450), "4.50");
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(13), "13th");
        assert_eq!(py("a\"b\nc"), "\"a\\\"b\\nc\"");
        assert_eq!(capitalised("élan"), "Élan");
    }
}
