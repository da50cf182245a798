//! Plan text as the flow design shows it (docs/design.md, "The flow style"): title and
//! id, progress, per-status counts and numbered steps with markers and notes.

use std::fmt::Write;

use crate::model::plan::Plan;

/// The full human- and model-readable view of a plan.
pub fn render_plan_text(plan: &Plan) -> String {
    let mut out = String::new();
    let header = format!("Plan: {} (ID: {})", plan.title, plan.id);
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", "=".repeat(header.chars().count()));
    out.push('\n');
    let c = plan.counts();
    let total = plan.steps.len();
    let pct = if total == 0 {
        0.0
    } else {
        c.completed as f64 * 100.0 / total as f64
    };
    let _ = writeln!(
        out,
        "Progress: {}/{} steps completed ({:.1}%)",
        c.completed, total, pct
    );
    let _ = writeln!(
        out,
        "Status: {} completed, {} in progress, {} blocked, {} failed, {} skipped, {} not started",
        c.completed, c.in_progress, c.blocked, c.failed, c.skipped, c.not_started
    );
    out.push('\n');
    out.push_str("Steps:\n");
    for (i, step) in plan.steps.iter().enumerate() {
        let _ = writeln!(out, "{i}. {} {}", step.status.marker(), step.display_text());
        if !step.notes.trim().is_empty() {
            let _ = writeln!(out, "   Notes: {}", step.notes.trim());
        }
    }
    out
}

/// Title, progress and one line per step: what an executor sees of the plan. No plan id:
/// the executor has no use for it, and weak models passed it as a shell session id.
pub fn render_plan_header_and_digest(plan: &Plan) -> String {
    let c = plan.counts();
    let total = plan.steps.len();
    let mut out = String::with_capacity(64 + plan.steps.len() * 48);
    let _ = write!(
        out,
        "Plan: {}\nProgress: {}/{} steps completed\n",
        plan.title, c.completed, total
    );
    write_digest(&mut out, plan);
    out
}

/// One line per step: `0. [✓] text`, for compact digests and the live CLI view.
pub fn render_plan_digest(plan: &Plan) -> String {
    let mut out = String::with_capacity(plan.steps.len() * 48);
    write_digest(&mut out, plan);
    out
}

/// Appends the digest lines to `out` (no allocation per step: this runs at every dispatch).
fn write_digest(out: &mut String, plan: &Plan) {
    for (i, step) in plan.steps.iter().enumerate() {
        let _ = write!(out, "{i}. {} ", step.status.marker());
        if let Some(k) = &step.kind {
            out.push('[');
            out.push_str(k);
            out.push_str("] ");
        }
        out.push_str(&step.description);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::StepStatus;

    fn sample() -> Plan {
        let texts: Vec<String> = [
            "[SEARCH] Collect user behaviour data",
            "Clean and preprocess the data",
            "[CODE] Analyse the data",
            "Write the report",
            "Publish it",
            "Announce it",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut p = Plan::from_texts("plan_1703123456", "Analyse user behaviour", "g", &texts)
            .expect("valid plan");
        for (id, to) in [
            ("s1", vec![StepStatus::InProgress, StepStatus::Completed]),
            ("s2", vec![StepStatus::InProgress, StepStatus::Completed]),
            ("s3", vec![StepStatus::InProgress]),
            ("s4", vec![StepStatus::InProgress, StepStatus::Blocked]),
            ("s5", vec![StepStatus::InProgress, StepStatus::Failed]),
            ("s6", vec![StepStatus::Skipped]),
        ] {
            for st in to {
                p.transition(id, st).expect("legal transition");
            }
        }
        p.steps[0].notes = "42 files collected".into();
        p
    }

    #[test]
    fn plan_text_snapshot() {
        insta::assert_snapshot!(render_plan_text(&sample()));
    }

    #[test]
    fn plan_digest_snapshot() {
        insta::assert_snapshot!(render_plan_digest(&sample()));
    }

    #[test]
    fn header_and_digest_snapshot() {
        insta::assert_snapshot!(render_plan_header_and_digest(&sample()));
    }

    #[test]
    fn progress_of_an_untouched_plan_is_zero() {
        let p = Plan::from_texts("p", "t", "g", &["a".to_string()]).expect("valid plan");
        assert!(render_plan_text(&p).contains("Progress: 0/1 steps completed (0.0%)"));
    }
}
