//! The eval's results as Markdown: per split and per category, right / total, the runs
//! that ended `completed` or `verified` but were wrong, the runs that changed an input,
//! median LLM calls and wall time; right / total per family; the dev split's failures with
//! their causes (the test split's by family and cause only); and the labelled section of
//! docs/eval.md (re-running a label replaces its section).

use std::fmt::Write as _;

use super::instance::Category;
use super::outcome::Usage;
use super::splits::Split;

/// One instance run.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// `family-NN`.
    pub id: String,
    pub family: String,
    pub category: Category,
    pub split: Split,
    /// completed | failed | killed | no outcome
    pub status: String,
    /// The run's outcome said `"verified": true`.
    pub verified: bool,
    /// The checks' verdict.
    pub verdict: Result<(), String>,
    /// For a failed verdict: the cause's name and its evidence.
    pub cause: Option<(String, String)>,
    pub wall_secs: f64,
    /// Time spent inside LLM calls.
    pub llm_secs: f64,
    pub usage: Usage,
    /// Seeded files the task did not ask to change that the run changed, with how.
    pub changed_inputs: Vec<String>,
    /// The run ended `completed` with one of the task's outputs missing or empty.
    pub completed_without_output: bool,
}

impl Row {
    fn right(&self) -> bool {
        self.verdict.is_ok()
    }
}

/// What the section's heading states about the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Setup {
    pub label: String,
    /// e.g. "embedded (in-process llama.cpp)" or "http://127.0.0.1:8000/v1, model X".
    pub endpoint: String,
    pub model_file: String,
    pub model_sha256: String,
    pub mode: String,
    /// The `--actions` passed, or the binary's default.
    pub actions: String,
    pub timeout_secs: u64,
    pub extra_args: String,
    pub date: String,
    pub commit: String,
    pub per_family: usize,
    pub families: usize,
    /// The seed of each split run.
    pub seeds: Vec<(Split, u64)>,
    /// How the checks' programs ran (`checks::sandbox_note`).
    pub check_programs: String,
    /// Markdown from `bench::machine()`.
    pub machine: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Totals {
    pub passed: usize,
    pub total: usize,
    pub median_wall_secs: f64,
    pub median_llm_calls: f64,
    /// Runs that changed an input the task did not ask to change.
    pub inputs_changed: usize,
    /// Runs that ended `completed` but were wrong.
    pub completed_wrong: usize,
    /// Runs whose outcome said `verified` but were wrong.
    pub verified_wrong: usize,
    /// Runs that ended `completed` with an output missing or empty.
    pub completed_without_output: usize,
    pub wall_secs: f64,
    pub llm_secs: f64,
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    pub cached_prompt_tokens: Option<u64>,
    pub completion_tokens: u64,
}

/// The median of `values` (0 for none).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

impl Totals {
    pub(crate) fn of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Totals {
        let rows: Vec<&Row> = rows.into_iter().collect();
        let walls: Vec<f64> = rows.iter().map(|r| r.wall_secs).collect();
        let cached = rows
            .iter()
            .filter_map(|r| r.usage.cached_prompt_tokens)
            .reduce(|a, b| a + b);
        Totals {
            passed: rows.iter().filter(|r| r.right()).count(),
            total: rows.len(),
            median_wall_secs: median(walls.clone()),
            median_llm_calls: median(rows.iter().map(|r| r.usage.llm_calls as f64).collect()),
            inputs_changed: rows.iter().filter(|r| !r.changed_inputs.is_empty()).count(),
            completed_wrong: rows
                .iter()
                .filter(|r| r.status == "completed" && !r.right())
                .count(),
            verified_wrong: rows.iter().filter(|r| r.verified && !r.right()).count(),
            completed_without_output: rows.iter().filter(|r| r.completed_without_output).count(),
            wall_secs: walls.iter().sum(),
            llm_secs: rows.iter().map(|r| r.llm_secs).sum(),
            llm_calls: rows.iter().map(|r| r.usage.llm_calls).sum(),
            prompt_tokens: rows.iter().map(|r| r.usage.prompt_tokens).sum(),
            cached_prompt_tokens: cached,
            completion_tokens: rows.iter().map(|r| r.usage.completion_tokens).sum(),
        }
    }

    pub(crate) fn pass_rate(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            100.0 * self.passed as f64 / self.total as f64
        }
    }

    /// `right/total (NN %)`, or `–` for no runs.
    pub(crate) fn rate_cell(&self) -> String {
        if self.total == 0 {
            "–".to_string()
        } else {
            format!("{}/{} ({:.0} %)", self.passed, self.total, self.pass_rate())
        }
    }

    /// Prompt plus completion tokens per second spent in LLM calls.
    pub(crate) fn tokens_per_llm_sec(&self) -> Option<f64> {
        (self.llm_secs > 0.0)
            .then(|| (self.prompt_tokens + self.completion_tokens) as f64 / self.llm_secs)
    }
}

/// A table cell: one line, no pipes.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// `12` or `12.5`.
fn figure(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

/// The per-category table of one split's rows.
pub(crate) fn category_table(rows: &[&Row]) -> String {
    let mut s = String::from(
        "| category | right | completed but wrong | verified but wrong | inputs changed | \
         median LLM calls | median wall s |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut line = |name: &str, t: Totals| {
        if t.total == 0 {
            let _ = writeln!(s, "| {name} | – | – | – | – | – | – |");
            return;
        }
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {:.1} |",
            t.rate_cell(),
            t.completed_wrong,
            t.verified_wrong,
            t.inputs_changed,
            figure(t.median_llm_calls),
            t.median_wall_secs
        );
    };
    for c in Category::ALL {
        line(
            c.name(),
            Totals::of(rows.iter().copied().filter(|r| r.category == c)),
        );
    }
    line("**all**", Totals::of(rows.iter().copied()));
    s
}

/// Failures counted by cause, most frequent first: `wrong answer 5, loop 2`.
fn causes(rows: &[&Row]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| !r.right()) {
        let name = r.cause.as_ref().map_or("unknown", |(c, _)| c.as_str());
        match counts.iter_mut().find(|(c, _)| c == name) {
            Some((_, n)) => *n += 1,
            None => counts.push((name.to_string(), 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
        .iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each failure: with its evidence when `detailed` (dev), else its family, category and
/// cause only (test: the instance's data stays out of the report).
pub(crate) fn failures(rows: &[&Row], detailed: bool) -> String {
    let mut s = String::new();
    for r in rows.iter().filter(|r| !r.right()) {
        let (cause, evidence) = r
            .cause
            .as_ref()
            .map_or(("unknown", ""), |(c, e)| (c.as_str(), e.as_str()));
        if detailed {
            let checker = r.verdict.as_ref().err().map_or("", String::as_str);
            let _ = write!(s, "- `{}` ({}) — **{cause}**: {evidence}", r.id, r.status);
            if !evidence.contains(checker) {
                let _ = write!(s, " (checks: {checker})");
            }
            s.push('\n');
        } else {
            let _ = writeln!(
                s,
                "- `{}` ({}, {}) — {cause}",
                r.id,
                r.category.name(),
                r.status
            );
        }
    }
    s
}

/// Right / total per family, one column per split that ran.
pub(crate) fn family_table(rows: &[Row], splits: &[Split]) -> String {
    let mut families: Vec<(&str, Category)> = Vec::new();
    for r in rows {
        if !families.iter().any(|(f, _)| *f == r.family) {
            families.push((r.family.as_str(), r.category));
        }
    }
    let mut s = String::from("| family | category |");
    for sp in splits {
        let _ = write!(s, " {} |", sp.name());
    }
    s.push_str("\n| --- | --- |");
    for _ in splits {
        s.push_str(" ---: |");
    }
    s.push('\n');
    for (f, c) in families {
        let _ = write!(s, "| {} | {} |", cell(f), c.name());
        for sp in splits {
            let t = Totals::of(rows.iter().filter(|r| r.family == f && r.split == *sp));
            let _ = write!(s, " {}/{} |", t.passed, t.total);
        }
        s.push('\n');
    }
    s
}

/// Calls, time and tokens over all rows, as one paragraph.
pub(crate) fn usage_line(t: &Totals) -> String {
    format!(
        "{} LLM calls taking {:.0} s of {:.0} s wall ({}); tokens: {} prompt ({} cached), {} \
         completion; {} run(s) ended `completed` with an output missing or empty.\n",
        t.llm_calls,
        t.llm_secs,
        t.wall_secs,
        t.tokens_per_llm_sec().map_or_else(
            || "no timing".to_string(),
            |r| format!("{r:.0} tokens/s through the model")
        ),
        t.prompt_tokens,
        t.cached_prompt_tokens
            .map_or_else(|| "–".to_string(), |n| n.to_string()),
        t.completion_tokens,
        t.completed_without_output,
    )
}

fn begin_marker(label: &str) -> String {
    format!("<!-- eval: {label} -->")
}

fn end_marker(label: &str) -> String {
    format!("<!-- /eval: {label} -->")
}

/// The labelled section, markers included. The test split comes first: it is the one
/// figures are quoted from.
pub(crate) fn section(setup: &Setup, rows: &[Row], show_test_failures: bool) -> String {
    let mut s = begin_marker(&setup.label);
    let seeds = setup
        .seeds
        .iter()
        .map(|(sp, seed)| format!("{} {seed}", sp.name()))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = write!(
        s,
        "\n## {}\n\n| | |\n| --- | --- |\n| endpoint | {} |\n| model file | `{}` |\n\
         | sha256 | `{}` |\n| mode | {} |\n| actions | {} |\n| time limit | {} s per task |\n\
         | extra args | {} |\n| instances | {} per family per split, {} families |\n\
         | seeds | {} |\n| check programs | {} |\n| date | {} |\n| planwright commit | {} |\n\n",
        setup.label,
        cell(&setup.endpoint),
        cell(&setup.model_file),
        cell(&setup.model_sha256),
        cell(&setup.mode),
        cell(&setup.actions),
        setup.timeout_secs,
        if setup.extra_args.is_empty() {
            "none".to_string()
        } else {
            format!("`{}`", cell(&setup.extra_args))
        },
        setup.per_family,
        setup.families,
        seeds,
        cell(&setup.check_programs),
        cell(&setup.date),
        cell(&setup.commit),
    );
    let mut splits: Vec<Split> = setup.seeds.iter().map(|(sp, _)| *sp).collect();
    splits.sort_by_key(|sp| std::cmp::Reverse(*sp));
    for sp in &splits {
        let of_split: Vec<&Row> = rows.iter().filter(|r| r.split == *sp).collect();
        let seed = setup
            .seeds
            .iter()
            .find(|(x, _)| x == sp)
            .map_or(0, |(_, n)| *n);
        let how = match sp {
            Split::Test => format!("seed {seed}: `--seed {seed}` makes the same instances"),
            Split::Dev => format!("seed {seed}, fixed"),
        };
        let _ = write!(s, "### {} split ({how})\n\n", capital(sp.name()));
        s.push_str(&category_table(&of_split));
        let c = causes(&of_split);
        if !c.is_empty() {
            let _ = write!(s, "\nCauses of the failures: {c}.\n");
        }
        let detailed = *sp == Split::Dev || show_test_failures;
        let f = failures(&of_split, detailed);
        if !f.is_empty() {
            let _ = write!(
                s,
                "\n<details><summary>{} failures</summary>\n\n{f}\n</details>\n",
                sp.name()
            );
        }
        s.push('\n');
    }
    s.push_str("### Per family\n\n");
    s.push_str(&family_table(rows, &splits));
    s.push('\n');
    s.push_str(&usage_line(&Totals::of(rows)));
    s.push('\n');
    // The machine table, one heading level down inside the section.
    s.push_str(&setup.machine.replacen("## Machine", "### Machine", 1));
    s.push_str(&end_marker(&setup.label));
    s.push('\n');
    s
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// Whether `label` heads a mode × model table (`matrix_label`), not one run's section.
fn is_matrix(label: &str) -> bool {
    label.ends_with("mode × model")
}

/// The labels of `doc`'s marked sections, in order.
fn labels(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(at) = rest.find("<!-- eval: ") {
        let after = &rest[at + "<!-- eval: ".len()..];
        let Some(end) = after.find(" -->") else { break };
        out.push(after[..end].to_string());
        rest = &after[end..];
    }
    out
}

/// `doc` without the marked section of `label` (and the blank line after it).
fn without(doc: &str, label: &str) -> String {
    let (begin, end) = (begin_marker(label), end_marker(label));
    let Some(start) = doc.find(&begin) else {
        return doc.to_string();
    };
    let Some(stop) = doc[start..].find(&end) else {
        return doc.to_string();
    };
    let mut after = start + stop + end.len();
    while doc[after..].starts_with('\n') {
        after += 1;
    }
    format!("{}{}", &doc[..start], &doc[after..])
}

/// `doc` with `section` as the one section of its kind (one run's, or the mode × model
/// table): the section of `label` replaced, or the earlier sections of that kind taken out
/// and `section` appended. docs/eval.md shows the current results; every run's figures,
/// per family too, stay in docs/eval-history.jsonl.
pub(crate) fn merge(doc: &str, label: &str, section: &str) -> String {
    let mut doc = doc.to_string();
    for other in labels(&doc) {
        if other != label && is_matrix(&other) == is_matrix(label) {
            doc = without(&doc, &other);
        }
    }
    let doc = doc.as_str();
    let begin = begin_marker(label);
    let end = end_marker(label);
    if let Some(start) = doc.find(&begin) {
        if let Some(stop) = doc[start..].find(&end) {
            let mut after = start + stop + end.len();
            if doc[after..].starts_with('\n') {
                after += 1;
            }
            return format!("{}{section}{}", &doc[..start], &doc[after..]);
        }
    }
    let mut out = doc.to_string();
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
    }
    out.push_str(section);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, category: Category, split: Split, ok: bool, wall: f64) -> Row {
        Row {
            id: id.to_string(),
            family: id.split('-').next().unwrap_or(id).to_string(),
            category,
            split,
            status: "completed".to_string(),
            verified: false,
            verdict: if ok {
                Ok(())
            } else {
                Err("sum.txt holds \"10\", expected the number 9".to_string())
            },
            cause: (!ok).then(|| {
                (
                    "wrong answer".to_string(),
                    "sum.txt holds \"10\", expected the number 9".to_string(),
                )
            }),
            wall_secs: wall,
            llm_secs: wall / 2.0,
            usage: Usage {
                llm_calls: 3,
                prompt_tokens: 1000,
                cached_prompt_tokens: Some(500),
                completion_tokens: 50,
            },
            changed_inputs: Vec::new(),
            completed_without_output: false,
        }
    }

    fn rows() -> Vec<Row> {
        let mut rows = vec![
            row("csv_extract-01", Category::Single, Split::Test, true, 10.0),
            row("csv_extract-02", Category::Single, Split::Test, false, 30.0),
            row("bug_fix-01", Category::Edit, Split::Test, false, 20.0),
            row("split_csv-01", Category::Multi, Split::Test, true, 40.0),
            row("csv_extract-01", Category::Single, Split::Dev, false, 12.0),
            row("bug_fix-01", Category::Edit, Split::Dev, true, 8.0),
        ];
        rows[1].verified = true;
        rows[2].status = "failed".to_string();
        rows[2].verified = true;
        rows[2].cause = Some(("loop".to_string(), "s1: turn limit".to_string()));
        rows[2].changed_inputs = vec!["test_x.py (deleted)".to_string()];
        rows[3].usage.llm_calls = 9;
        rows
    }

    #[test]
    fn totals_count_completed_and_verified_wrong_and_medians() {
        let rows = rows();
        let test: Vec<&Row> = rows.iter().filter(|r| r.split == Split::Test).collect();
        let t = Totals::of(test.iter().copied());
        assert_eq!((t.passed, t.total), (2, 4));
        assert_eq!(t.completed_wrong, 1, "the failed run is not completed");
        assert_eq!(t.verified_wrong, 2);
        assert_eq!(t.inputs_changed, 1);
        assert_eq!(t.median_llm_calls, 3.0);
        assert_eq!(t.median_wall_secs, 25.0);
        assert_eq!(t.rate_cell(), "2/4 (50 %)");
        assert_eq!(Totals::of(Vec::<&Row>::new()).rate_cell(), "–");
    }

    #[test]
    fn the_category_table_has_a_row_per_category_and_all() {
        let rows = rows();
        let test: Vec<&Row> = rows.iter().filter(|r| r.split == Split::Test).collect();
        let table = category_table(&test);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[2], "| single | 1/2 (50 %) | 1 | 1 | 0 | 3 | 20.0 |");
        assert_eq!(lines[3], "| edit | 0/1 (0 %) | 0 | 1 | 1 | 3 | 20.0 |");
        assert_eq!(lines[4], "| multi | 1/1 (100 %) | 0 | 0 | 0 | 9 | 40.0 |");
        let no_multi: Vec<&Row> = test
            .iter()
            .copied()
            .filter(|r| r.category != Category::Multi)
            .collect();
        assert!(category_table(&no_multi).contains("| multi | – | – | – | – | – | – |"));
        assert!(
            lines[5].starts_with("| **all** | 2/4 (50 %) | 1 | 2 | 1 | 3 |"),
            "{}",
            lines[5]
        );
    }

    /// The test split's failures name family, category and cause, never the checks'
    /// evidence (which holds the instance's data); the dev split's give the evidence.
    #[test]
    fn a_section_hides_the_test_splits_data_and_shows_the_devs() {
        let setup = Setup {
            label: "qwen 1.5b".into(),
            mode: "auto".into(),
            actions: "binary's default".into(),
            per_family: 2,
            families: 3,
            seeds: vec![(Split::Dev, 7), (Split::Test, 99)],
            machine: "## Machine\n\n| CPU | x |\n\n".into(),
            ..Setup::default()
        };
        let rows = rows();
        let s = section(&setup, &rows, false);
        assert!(
            s.starts_with("<!-- eval: qwen 1.5b -->\n## qwen 1.5b\n"),
            "{s}"
        );
        assert!(s.ends_with("<!-- /eval: qwen 1.5b -->\n"), "{s}");
        let test_at = s
            .find("### Test split (seed 99: `--seed 99`")
            .expect("test split");
        let dev_at = s.find("### Dev split (seed 7, fixed)").expect("dev split");
        assert!(test_at < dev_at, "test first");
        let test_part = &s[test_at..dev_at];
        assert!(
            test_part.contains("- `csv_extract-02` (single, completed) — wrong answer"),
            "{s}"
        );
        assert!(!test_part.contains("expected the number"), "{s}");
        assert!(
            s[dev_at..]
                .contains("- `csv_extract-01` (completed) — **wrong answer**: sum.txt holds"),
            "{s}"
        );
        assert!(
            s.contains("Causes of the failures: loop 1, wrong answer 1."),
            "{s}"
        );
        assert!(s.contains("| family | category | test | dev |"), "{s}");
        assert!(s.contains("| csv_extract | single | 1/2 | 0/1 |"), "{s}");
        assert!(s.contains("### Machine"), "{s}");
        let shown = section(&setup, &rows, true);
        assert!(shown.contains("- `csv_extract-02` (completed) — **wrong answer**: sum.txt"));
    }

    #[test]
    fn merge_keeps_one_section_of_each_kind() {
        let one = "<!-- eval: a -->\nA1\n<!-- /eval: a -->\n";
        let two = "<!-- eval: b -->\nB1\n<!-- /eval: b -->\n";
        let table = "<!-- eval: a: mode × model -->\nT\n<!-- /eval: a: mode × model -->\n";
        let doc = merge("# Eval\n\nintro\n", "a", one);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{one}"));
        let doc = merge(&doc, "a: mode × model", table);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{one}\n{table}"));
        // A new run's section takes the place of the last run's; the table stays.
        let doc = merge(&doc, "b", two);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{table}\n{two}"));
        let new_b = "<!-- eval: b -->\nB2\n<!-- /eval: b -->\n";
        let doc = merge(&doc, "b", new_b);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{table}\n{new_b}"));
        assert_eq!(merge("", "a", one), one);
    }
}
