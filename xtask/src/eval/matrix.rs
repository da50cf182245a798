//! The mode × model (× action kind) table: one row per combination the eval ran, with the
//! test split's figures (right in all and per category, `completed` and `verified` but
//! wrong, inputs changed, median LLM calls and wall time) and the dev split's right, when
//! they ran. Written as its own labelled section of docs/eval.md; each row's details are in
//! the section its `details` names.

use std::fmt::Write as _;

use super::instance::Category;
use super::report::{cell, Totals};

/// One (mode, model, actions) run of the suite.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MatrixRow {
    pub mode: String,
    pub model: String,
    pub actions: String,
    /// The label of the section with this run's details.
    pub details: String,
    /// The test split in all and per category (`Category::ALL`'s order); `None`: not run.
    pub test: Option<(Totals, [Totals; 3])>,
    pub dev: Option<Totals>,
}

/// What all the rows share.
#[derive(Debug, Clone, Default)]
pub(crate) struct MatrixSetup {
    pub label: String,
    pub endpoint: String,
    pub timeout_secs: u64,
    pub extra_args: String,
    pub per_family: usize,
    pub families: usize,
    /// The test split's seed, the same for every row.
    pub test_seed: Option<u64>,
    pub date: String,
    pub commit: String,
}

/// The labelled section, markers included.
pub(crate) fn section(setup: &MatrixSetup, rows: &[MatrixRow]) -> String {
    let mut s = format!("<!-- eval: {} -->\n## {}\n\n", setup.label, setup.label);
    let _ = write!(
        s,
        "| | |\n| --- | --- |\n| endpoint | {} |\n| time limit | {} s per task |\n\
         | extra args | {} |\n| instances | {} per family per split, {} families |\n\
         | test seed | {} |\n| date | {} |\n| planwright commit | {} |\n\n",
        cell(&setup.endpoint),
        setup.timeout_secs,
        if setup.extra_args.is_empty() {
            "none".to_string()
        } else {
            format!("`{}`", cell(&setup.extra_args))
        },
        setup.per_family,
        setup.families,
        setup
            .test_seed
            .map_or_else(|| "(test split not run)".to_string(), |n| n.to_string()),
        cell(&setup.date),
        cell(&setup.commit),
    );
    s.push_str("| mode | model | actions | test: right |");
    for c in Category::ALL {
        let _ = write!(s, " {} |", c.name());
    }
    s.push_str(
        " completed but wrong | verified but wrong | inputs changed | median LLM calls | \
         median wall s | dev: right | details |\n| --- | --- | --- | ---: | ---: | ---: | ---: | \
         ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for r in rows {
        let _ = write!(
            s,
            "| {} | {} | {} |",
            cell(&r.mode),
            cell(&r.model),
            cell(&r.actions)
        );
        match &r.test {
            Some((t, per)) => {
                let _ = write!(s, " {} |", t.rate_cell());
                for c in per {
                    let _ = write!(s, " {} |", c.rate_cell());
                }
                let _ = write!(
                    s,
                    " {} | {} | {} | {} | {:.1} |",
                    t.completed_wrong,
                    t.verified_wrong,
                    t.inputs_changed,
                    t.median_llm_calls,
                    t.median_wall_secs
                );
            }
            None => s.push_str(" – | – | – | – | – | – | – | – | – |"),
        }
        let _ = writeln!(
            s,
            " {} | {} |",
            r.dev.map_or_else(|| "–".to_string(), |d| d.rate_cell()),
            cell(&r.details)
        );
    }
    let _ = writeln!(s, "\n<!-- /eval: {} -->", setup.label);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(passed: usize, total: usize) -> Totals {
        Totals {
            passed,
            total,
            median_wall_secs: 12.34,
            median_llm_calls: 4.0,
            inputs_changed: 1,
            completed_wrong: 2,
            verified_wrong: 0,
            ..Totals::default()
        }
    }

    #[test]
    fn one_row_per_combination_with_the_test_split_by_category() {
        let setup = MatrixSetup {
            label: "mode × model".into(),
            endpoint: "embedded".into(),
            timeout_secs: 300,
            per_family: 10,
            families: 26,
            test_seed: Some(77),
            ..MatrixSetup::default()
        };
        let rows = [
            MatrixRow {
                mode: "auto".into(),
                model: "qwen2.5-coder-1.5b".into(),
                actions: "code".into(),
                details: "q15 | code".into(),
                test: Some((totals(6, 10), [totals(3, 5), totals(2, 3), totals(1, 2)])),
                dev: Some(totals(7, 10)),
            },
            MatrixRow {
                mode: "auto".into(),
                model: "qwen2.5-coder-1.5b".into(),
                actions: "tools".into(),
                details: "q15 tools".into(),
                test: None,
                dev: None,
            },
        ];
        let s = section(&setup, &rows);
        assert!(s.starts_with("<!-- eval: mode × model -->\n## mode × model\n"));
        assert!(s.ends_with("<!-- /eval: mode × model -->\n"), "{s}");
        assert!(s.contains("| test seed | 77 |"), "{s}");
        assert!(
            s.contains("| auto | qwen2.5-coder-1.5b | code | 6/10 (60 %) | 3/5 (60 %) | 2/3 (67 %) | 1/2 (50 %) | 2 | 0 | 1 | 4 | 12.3 | 7/10 (70 %) | q15 \\| code |"),
            "{s}"
        );
        assert!(s.contains("| auto | qwen2.5-coder-1.5b | tools | – | – | – | – | – | – | – | – | – | – | q15 tools |"), "{s}");
        let header = s
            .lines()
            .find(|l| l.starts_with("| mode |"))
            .expect("header");
        let sep = s
            .lines()
            .find(|l| l.starts_with("| --- | --- | --- |"))
            .expect("separator");
        assert_eq!(header.matches('|').count(), sep.matches('|').count());
    }
}
