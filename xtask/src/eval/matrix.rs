//! The mode × model summary: one row per (mode, model) the eval ran, with its pass rate,
//! median LLM calls and wall time, and the runs that changed an input or completed without
//! their output. Written as its own labelled section of docs/eval.md; each row's tasks are in
//! the section its `details` names.

use std::fmt::Write as _;

use super::report::{cell, Totals};

/// One (mode, model) run of the suite.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MatrixRow {
    pub mode: String,
    pub model: String,
    /// The label of the section with this run's tasks.
    pub details: String,
    pub totals: Totals,
}

/// What all the rows share.
#[derive(Debug, Clone, Default)]
pub(crate) struct MatrixSetup {
    pub label: String,
    pub endpoint: String,
    pub timeout_secs: u64,
    pub extra_args: String,
    /// Task runs per (mode, model): tasks × runs.
    pub task_runs: usize,
    pub date: String,
    pub commit: String,
}

/// The labelled section, markers included.
pub(crate) fn section(setup: &MatrixSetup, rows: &[MatrixRow]) -> String {
    let mut s = format!("<!-- eval: {} -->\n## {}\n\n", setup.label, setup.label);
    let _ = write!(
        s,
        "| | |\n| --- | --- |\n| endpoint | {} |\n| time limit | {} s per task |\n\
         | extra args | {} |\n| task runs per row | {} |\n| date | {} |\n\
         | planwright commit | {} |\n\n",
        cell(&setup.endpoint),
        setup.timeout_secs,
        if setup.extra_args.is_empty() {
            "none".to_string()
        } else {
            format!("`{}`", cell(&setup.extra_args))
        },
        setup.task_runs,
        cell(&setup.date),
        cell(&setup.commit),
    );
    s.push_str(
        "| mode | model | passed | median LLM calls | median wall s | inputs changed | \
         completed without output | tasks |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for r in rows {
        let t = &r.totals;
        let _ = writeln!(
            s,
            "| {} | {} | {}/{} ({:.0} %) | {} | {:.1} | {} | {} | {} |",
            cell(&r.mode),
            cell(&r.model),
            t.passed,
            t.total,
            t.pass_rate(),
            t.median_llm_calls,
            t.median_wall_secs,
            t.inputs_changed,
            t.completed_without_output,
            cell(&r.details),
        );
    }
    let _ = writeln!(s, "\n<!-- /eval: {} -->", setup.label);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(passed: usize, calls: f64, changed: usize) -> Totals {
        Totals {
            passed,
            total: 4,
            median_wall_secs: 12.34,
            median_llm_calls: calls,
            inputs_changed: changed,
            completed_without_output: 1,
            wall_secs: 50.0,
            llm_secs: 40.0,
            llm_calls: 20,
            prompt_tokens: 1000,
            cached_prompt_tokens: None,
            completion_tokens: 100,
        }
    }

    #[test]
    fn one_row_per_mode_and_model_between_markers() {
        let setup = MatrixSetup {
            label: "mode × model".into(),
            endpoint: "embedded".into(),
            timeout_secs: 300,
            task_runs: 4,
            ..MatrixSetup::default()
        };
        let rows = [
            MatrixRow {
                mode: "direct".into(),
                model: "qwen2.5-coder-1.5b".into(),
                details: "q15 embedded (direct)".into(),
                totals: totals(3, 4.0, 0),
            },
            MatrixRow {
                mode: "flow".into(),
                model: "qwen2.5-coder-0.5b".into(),
                details: "q05 | embedded (flow)".into(),
                totals: totals(1, 6.5, 2),
            },
        ];
        let s = section(&setup, &rows);
        assert!(s.starts_with("<!-- eval: mode × model -->\n## mode × model\n"));
        assert!(s.ends_with("<!-- /eval: mode × model -->\n"), "{s}");
        assert!(s.contains("| time limit | 300 s per task |"), "{s}");
        assert!(
            s.contains("| direct | qwen2.5-coder-1.5b | 3/4 (75 %) | 4 | 12.3 | 0 | 1 | q15 embedded (direct) |"),
            "{s}"
        );
        assert!(
            s.contains("| flow | qwen2.5-coder-0.5b | 1/4 (25 %) | 6.5 | 12.3 | 2 | 1 | q05 \\| embedded (flow) |"),
            "{s}"
        );
    }
}
