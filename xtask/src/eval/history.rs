//! docs/eval-history.jsonl: one JSON object per measurement, oldest first. The records of
//! the hand-written suite (before the generated families) were taken from the old
//! docs/eval.md; every eval run appends one record per (mode, model, actions, split), its
//! figures per category and per family, so docs/eval.md need only show the current run.

use std::io::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::instance::Category;
use super::report::{Row, Setup, Totals};
use super::splits::Split;

/// The record of one split of one (mode, model, actions) run.
pub(crate) fn record(setup: &Setup, model: &str, split: Split, seed: u64, rows: &[Row]) -> Value {
    let of_split: Vec<&Row> = rows.iter().filter(|r| r.split == split).collect();
    let t = Totals::of(of_split.iter().copied());
    let mut by_category = serde_json::Map::new();
    for c in Category::ALL {
        let ct = Totals::of(of_split.iter().copied().filter(|r| r.category == c));
        by_category.insert(
            c.name().to_string(),
            json!({"passed": ct.passed, "total": ct.total}),
        );
    }
    let mut by_family = serde_json::Map::new();
    for r in &of_split {
        let entry = by_family
            .entry(r.family.clone())
            .or_insert_with(|| json!({"passed": 0, "total": 0}));
        entry["total"] = json!(entry["total"].as_u64().unwrap_or(0) + 1);
        if r.verdict.is_ok() {
            entry["passed"] = json!(entry["passed"].as_u64().unwrap_or(0) + 1);
        }
    }
    json!({
        "suite": "generated",
        "label": setup.label,
        "date": setup.date,
        "commit": setup.commit,
        "model": model,
        "model_file": setup.model_file,
        "mode": setup.mode,
        "actions": setup.actions,
        "split": split.name(),
        "seed": seed,
        "per_family": setup.per_family,
        "families": setup.families,
        "passed": t.passed,
        "total": t.total,
        "by_category": by_category,
        "by_family": by_family,
        "completed_wrong": t.completed_wrong,
        "verified_wrong": t.verified_wrong,
        "inputs_changed": t.inputs_changed,
        "median_llm_calls": t.median_llm_calls,
        "median_wall_secs": (t.median_wall_secs * 10.0).round() / 10.0,
        "llm_calls": t.llm_calls,
    })
}

/// Appends `records`, one line each, to the history file at `path`.
pub(crate) fn append(path: &Path, records: &[Value]) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
    for r in records {
        writeln!(file, "{r}").map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::outcome::Usage;
    use super::*;

    fn row(split: Split, category: Category, ok: bool) -> Row {
        Row {
            id: "f-01".into(),
            family: "f".into(),
            category,
            split,
            status: "completed".into(),
            verified: true,
            verdict: if ok { Ok(()) } else { Err("x".into()) },
            cause: None,
            wall_secs: 10.0,
            llm_secs: 5.0,
            usage: Usage {
                llm_calls: 4,
                ..Usage::default()
            },
            changed_inputs: Vec::new(),
            completed_without_output: false,
        }
    }

    #[test]
    fn a_record_counts_one_split_by_category_and_lines_append() {
        let setup = Setup {
            label: "l".into(),
            mode: "auto".into(),
            per_family: 1,
            families: 2,
            ..Setup::default()
        };
        let rows = [
            row(Split::Test, Category::Single, true),
            row(Split::Test, Category::Edit, false),
            row(Split::Dev, Category::Edit, false),
        ];
        let r = record(&setup, "qwen", Split::Test, 5, &rows);
        assert_eq!(r["split"], "test");
        assert_eq!(r["seed"], 5);
        assert_eq!(
            (r["passed"].as_u64(), r["total"].as_u64()),
            (Some(1), Some(2))
        );
        assert_eq!(r["by_category"]["edit"], json!({"passed": 0, "total": 1}));
        assert_eq!(r["by_family"], json!({"f": {"passed": 1, "total": 2}}));
        assert_eq!(r["verified_wrong"], 1);
        assert_eq!(r["completed_wrong"], 1);
        assert_eq!(r["median_llm_calls"], 4.0);
        let path = std::env::temp_dir().join(format!("xtask-history-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        append(&path, std::slice::from_ref(&r)).expect("append");
        append(&path, &[json!({"a": 1})]).expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(lines, [r, json!({"a": 1})]);
        let _ = std::fs::remove_file(&path);
    }

    /// The history file holds one JSON object per line, each with a label and a pass
    /// count.
    #[test]
    fn the_history_file_is_one_record_per_line() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/eval-history.jsonl");
        let text = std::fs::read_to_string(&path).expect("docs/eval-history.jsonl");
        let mut n = 0;
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).expect("a JSON line");
            assert!(v["label"].is_string(), "{line}");
            assert!(v["passed"].is_u64() && v["total"].is_u64(), "{line}");
            n += 1;
        }
        assert!(n >= 20, "{n} records");
    }
}
