//! The eval's results as Markdown: one row per task run, totals, the failures with their
//! causes, and the labelled section of docs/eval.md (re-running a label replaces its
//! section; the others stay, so the file compares models and servers side by side).

use std::fmt::Write as _;

use super::outcome::Usage;

/// One task run.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub task: String,
    /// completed | failed | killed | no outcome
    pub status: String,
    /// The checker's verdict.
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

/// What the section's heading states about the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Setup {
    pub label: String,
    /// e.g. "embedded (in-process llama.cpp)" or "http://127.0.0.1:8000/v1, model X".
    pub endpoint: String,
    pub model_file: String,
    pub model_sha256: String,
    pub mode: String,
    pub timeout_secs: u64,
    pub extra_args: String,
    pub date: String,
    pub commit: String,
    /// Markdown from `bench::machine()`.
    pub machine: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Totals {
    pub passed: usize,
    pub total: usize,
    pub median_wall_secs: f64,
    pub median_llm_calls: f64,
    /// Runs that changed an input the task did not ask to change.
    pub inputs_changed: usize,
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
    pub(crate) fn of(rows: &[Row]) -> Totals {
        let walls: Vec<f64> = rows.iter().map(|r| r.wall_secs).collect();
        let cached = rows
            .iter()
            .filter_map(|r| r.usage.cached_prompt_tokens)
            .reduce(|a, b| a + b);
        Totals {
            passed: rows.iter().filter(|r| r.verdict.is_ok()).count(),
            total: rows.len(),
            median_wall_secs: median(walls.clone()),
            median_llm_calls: median(rows.iter().map(|r| r.usage.llm_calls as f64).collect()),
            inputs_changed: rows.iter().filter(|r| !r.changed_inputs.is_empty()).count(),
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

    /// Prompt plus completion tokens per second spent in LLM calls.
    pub(crate) fn tokens_per_llm_sec(&self) -> Option<f64> {
        (self.llm_secs > 0.0)
            .then(|| (self.prompt_tokens + self.completion_tokens) as f64 / self.llm_secs)
    }

    /// Cached prompt tokens as a share of all prompt tokens, when reported.
    pub(crate) fn cache_share(&self) -> Option<f64> {
        self.cached_prompt_tokens
            .filter(|_| self.prompt_tokens > 0)
            .map(|c| 100.0 * c as f64 / self.prompt_tokens as f64)
    }
}

/// A table cell: one line, no pipes.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn cached(n: Option<u64>) -> String {
    n.map_or_else(|| "–".to_string(), |n| n.to_string())
}

/// The results table.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| task | status | verdict | cause | wall s | LLM s | LLM calls | prompt | cached | completion |\n\
         | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
            cell(&r.task),
            cell(&r.status),
            if r.verdict.is_ok() { "pass" } else { "fail" },
            r.cause.as_ref().map_or("", |(name, _)| name.as_str()),
            r.wall_secs,
            r.llm_secs,
            r.usage.llm_calls,
            r.usage.prompt_tokens,
            cached(r.usage.cached_prompt_tokens),
            r.usage.completion_tokens,
        );
    }
    s
}

/// Totals, as one paragraph.
pub(crate) fn totals_line(t: &Totals) -> String {
    format!(
        "**{}/{} passed ({:.0} %)**; per task a median of {:.1} s wall and {} LLM calls; \
         **{} run(s) changed an input**, {} ended `completed` without their output; \
         {} LLM calls taking {:.0} s of {:.0} s wall ({}); tokens: {} prompt ({} cached{}), \
         {} completion, {} in all.\n",
        t.passed,
        t.total,
        t.pass_rate(),
        t.median_wall_secs,
        t.median_llm_calls,
        t.inputs_changed,
        t.completed_without_output,
        t.llm_calls,
        t.llm_secs,
        t.wall_secs,
        t.tokens_per_llm_sec().map_or_else(
            || "no timing".to_string(),
            |r| format!("{r:.0} tokens/s through the model")
        ),
        t.prompt_tokens,
        cached(t.cached_prompt_tokens),
        t.cache_share()
            .map_or_else(String::new, |p| format!(", {p:.0} %")),
        t.completion_tokens,
        t.prompt_tokens + t.completion_tokens,
    )
}

/// Each failure with its cause and evidence.
pub(crate) fn failures(rows: &[Row]) -> String {
    let mut s = String::new();
    for r in rows.iter().filter(|r| r.verdict.is_err()) {
        let checker = r.verdict.as_ref().err().map_or("", String::as_str);
        let (cause, evidence) = r
            .cause
            .as_ref()
            .map_or(("unknown", ""), |(c, e)| (c.as_str(), e.as_str()));
        let _ = write!(s, "- `{}` — **{cause}**: {evidence}", r.task);
        if !evidence.contains(checker) {
            let _ = write!(s, " (checker: {checker})");
        }
        s.push('\n');
    }
    s
}

fn begin_marker(label: &str) -> String {
    format!("<!-- eval: {label} -->")
}

fn end_marker(label: &str) -> String {
    format!("<!-- /eval: {label} -->")
}

/// The labelled section, markers included.
pub(crate) fn section(setup: &Setup, rows: &[Row]) -> String {
    let mut s = begin_marker(&setup.label);
    let _ = write!(
        s,
        "\n## {}\n\n| | |\n| --- | --- |\n| endpoint | {} |\n| model file | `{}` |\n\
         | sha256 | `{}` |\n| mode | {} |\n| time limit | {} s per task |\n| extra args | {} |\n\
         | date | {} |\n| planwright commit | {} |\n\n",
        setup.label,
        cell(&setup.endpoint),
        cell(&setup.model_file),
        cell(&setup.model_sha256),
        cell(&setup.mode),
        setup.timeout_secs,
        if setup.extra_args.is_empty() {
            "none".to_string()
        } else {
            format!("`{}`", cell(&setup.extra_args))
        },
        cell(&setup.date),
        cell(&setup.commit),
    );
    s.push_str(&table(rows));
    s.push('\n');
    s.push_str(&totals_line(&Totals::of(rows)));
    let failed = failures(rows);
    if !failed.is_empty() {
        s.push_str("\nFailures and their causes:\n\n");
        s.push_str(&failed);
    }
    s.push('\n');
    // The machine table, one heading level down inside the section.
    s.push_str(&setup.machine.replacen("## Machine", "### Machine", 1));
    s.push_str(&end_marker(&setup.label));
    s.push('\n');
    s
}

/// `doc` with the section of `label` replaced by `section`, or `section` appended.
pub(crate) fn merge(doc: &str, label: &str, section: &str) -> String {
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

    fn row(task: &str, ok: bool, wall: f64, cached: Option<u64>) -> Row {
        Row {
            task: task.to_string(),
            status: if ok { "completed" } else { "failed" }.to_string(),
            verdict: if ok {
                Ok(())
            } else {
                Err("sum.txt is missing".to_string())
            },
            cause: (!ok).then(|| ("loop".to_string(), "s1: turn limit | reached".to_string())),
            wall_secs: wall,
            llm_secs: wall / 2.0,
            usage: Usage {
                llm_calls: 3,
                prompt_tokens: 1000,
                cached_prompt_tokens: cached,
                completion_tokens: 50,
            },
            changed_inputs: Vec::new(),
            completed_without_output: false,
        }
    }

    #[test]
    fn totals_count_passes_median_and_cache_share() {
        let rows = [
            row("a", true, 10.0, Some(600)),
            row("b", false, 30.0, Some(200)),
            row("c", true, 20.0, None),
            row("d", true, 40.0, None),
        ];
        let mut rows = rows;
        rows[1].usage.llm_calls = 9;
        rows[1].changed_inputs = vec!["a.txt (deleted)".into()];
        rows[2].status = "completed".into();
        rows[2].completed_without_output = true;
        let t = Totals::of(&rows);
        assert_eq!((t.passed, t.total), (3, 4));
        assert_eq!(t.median_llm_calls, 3.0);
        assert_eq!((t.inputs_changed, t.completed_without_output), (1, 1));
        assert_eq!(Totals::of(&rows[..2]).median_llm_calls, 6.0);
        assert_eq!(t.pass_rate(), 75.0);
        assert_eq!(t.median_wall_secs, 25.0);
        assert_eq!(t.llm_calls, 18);
        assert_eq!(t.prompt_tokens, 4000);
        assert_eq!(t.cached_prompt_tokens, Some(800));
        assert_eq!(t.cache_share(), Some(20.0));
        assert_eq!(t.llm_secs, 50.0);
        assert_eq!(t.tokens_per_llm_sec(), Some(4200.0 / 50.0));
        let odd = Totals::of(&rows[..3]);
        assert_eq!(odd.median_wall_secs, 20.0);
        let none = Totals::of(&[row("x", true, 1.0, None)]);
        assert_eq!(none.cache_share(), None);
        assert!(
            totals_line(&none).contains("(– cached)"),
            "{}",
            totals_line(&none)
        );
        assert_eq!(Totals::of(&[]).pass_rate(), 0.0);
    }

    #[test]
    fn the_table_has_one_row_per_run_and_escapes_pipes() {
        let text = table(&[
            row("sum", false, 12.34, None),
            row("hello", true, 5.0, Some(7)),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("| task | status | verdict | cause | wall s"));
        assert_eq!(
            lines[2],
            "| sum | failed | fail | loop | 12.3 | 6.2 | 3 | 1000 | – | 50 |"
        );
        assert_eq!(
            lines[3],
            "| hello | completed | pass |  | 5.0 | 2.5 | 3 | 1000 | 7 | 50 |"
        );
        let f = failures(&[row("sum", false, 1.0, None)]);
        assert_eq!(
            f,
            "- `sum` — **loop**: s1: turn limit | reached (checker: sum.txt is missing)\n"
        );
    }

    #[test]
    fn a_section_names_its_setup_and_sits_between_markers() {
        let setup = Setup {
            label: "qwen 0.5b".into(),
            endpoint: "embedded".into(),
            model_file: "q.gguf".into(),
            model_sha256: "abc".into(),
            mode: "flow".into(),
            timeout_secs: 300,
            machine: "## Machine\n\n| CPU | x |\n\n".into(),
            ..Setup::default()
        };
        let s = section(&setup, &[row("sum", true, 1.0, None)]);
        assert!(
            s.starts_with("<!-- eval: qwen 0.5b -->\n## qwen 0.5b\n"),
            "{s}"
        );
        assert!(s.ends_with("<!-- /eval: qwen 0.5b -->\n"), "{s}");
        for part in [
            "`q.gguf`",
            "`abc`",
            "| mode | flow |",
            "300 s",
            "### Machine",
            "1/1 passed",
        ] {
            assert!(s.contains(part), "{part} missing from {s}");
        }
        assert!(!s.contains("Failures"));
    }

    #[test]
    fn merge_replaces_its_own_label_and_keeps_the_others() {
        let one = "<!-- eval: a -->\nA1\n<!-- /eval: a -->\n";
        let two = "<!-- eval: b -->\nB1\n<!-- /eval: b -->\n";
        let doc = merge("# Eval\n\nintro\n", "a", one);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{one}"));
        let doc = merge(&doc, "b", two);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{one}\n{two}"));
        let new_a = "<!-- eval: a -->\nA2\n<!-- /eval: a -->\n";
        let doc = merge(&doc, "a", new_a);
        assert_eq!(doc, format!("# Eval\n\nintro\n\n{new_a}\n{two}"));
        assert_eq!(merge("", "a", one), one);
    }
}
