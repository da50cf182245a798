//! The step graph, pure: which steps may start now ([`ready_steps`]) and which can no longer
//! run ([`settle_one`]), over a [`StepIndex`] of the plan. No async, no I/O: the scheduler
//! (`engine::scheduler`) drives it and writes the events.

use std::collections::{HashMap, HashSet};

use crate::model::plan::{Plan, StepStatus};

/// Position of each step id, rebuilt only when the plan's shape changes (a revision bumps
/// the version), so lookups on the hot path neither scan nor allocate.
#[derive(Debug, Default)]
pub(crate) struct StepIndex {
    version: u32,
    len: usize,
    map: HashMap<String, usize>,
}

impl StepIndex {
    pub fn refresh(&mut self, plan: &Plan) {
        if self.version == plan.version() && self.len == plan.steps().len() && !self.map.is_empty()
        {
            return;
        }
        self.version = plan.version();
        self.len = plan.steps().len();
        self.map = plan
            .steps()
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
    }

    /// Where step `id` is in the plan.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.map.get(id).copied()
    }

    pub fn status(&self, plan: &Plan, id: &str) -> Option<StepStatus> {
        self.map.get(id).map(|&i| plan.steps()[i].status())
    }

    pub fn result<'p>(&self, plan: &'p Plan, id: &str) -> &'p str {
        self.map
            .get(id)
            .and_then(|&i| plan.steps()[i].result.as_deref())
            .unwrap_or("")
    }
}

/// Steps that may start now, in plan order (only the first one for sequential styles).
pub(crate) fn ready_steps(
    plan: &Plan,
    parallel: bool,
    busy: &HashSet<String>,
    index: &StepIndex,
) -> Vec<usize> {
    let status = |id: &str| index.status(plan, id);
    let mut ready = Vec::new();
    for (i, step) in plan.steps().iter().enumerate() {
        if step.status() != StepStatus::NotStarted || busy.contains(&step.id) {
            continue;
        }
        let deps_done = step
            .depends_on
            .iter()
            .all(|d| status(d) == Some(StepStatus::Completed));
        let condition_met = step.condition.as_ref().is_none_or(|c| {
            status(&c.step) == Some(StepStatus::Completed)
                && c.is_met_by(index.result(plan, &c.step))
        });
        let rollback_due = step.rollback_of.as_ref().is_none_or(|t| {
            matches!(status(t), Some(StepStatus::Failed | StepStatus::Blocked)) && !busy.contains(t)
        });
        if deps_done && condition_met && rollback_due {
            ready.push(i);
            if !parallel {
                break;
            }
        }
    }
    ready
}

/// The first not-started step that can no longer run, with its new status and why.
pub(crate) fn settle_one(
    plan: &Plan,
    stop_on_give_up: bool,
    busy: &HashSet<String>,
    index: &StepIndex,
    given_up: &dyn Fn(&Plan, usize) -> bool,
) -> Option<(String, StepStatus, String)> {
    let status = |id: &str| index.status(plan, id);
    let gave_up = |id: &str| index.position(id).is_some_and(|i| given_up(plan, i));
    let first_given_up = (0..plan.steps().len()).find(|&i| given_up(plan, i));
    for step in plan.steps() {
        if step.status() != StepStatus::NotStarted || busy.contains(&step.id) {
            continue;
        }
        let verdict = if let Some(target) = &step.rollback_of {
            match status(target) {
                Some(StepStatus::Completed | StepStatus::Skipped) => Some((
                    StepStatus::Skipped,
                    format!("'{target}' did not fail; no rollback needed"),
                )),
                _ => None,
            }
        } else if let (true, Some(i)) = (stop_on_give_up, first_given_up) {
            let failed = &plan.steps()[i];
            Some((
                StepStatus::Skipped,
                format!(
                    "an earlier step did not complete: step {i} (\"{}\") {}: {}",
                    failed.description,
                    failed.status(),
                    failed.error.as_deref().unwrap_or("")
                ),
            ))
        } else if let Some(d) = step.depends_on.iter().find(|d| gave_up(d)) {
            Some((
                StepStatus::Blocked,
                format!("dependency '{d}' did not complete"),
            ))
        } else if let Some(d) = step
            .depends_on
            .iter()
            .find(|d| status(d) == Some(StepStatus::Skipped))
        {
            Some((StepStatus::Skipped, format!("dependency '{d}' was skipped")))
        } else if let Some(c) = &step.condition {
            match status(&c.step) {
                Some(StepStatus::Completed) => {
                    (!c.is_met_by(index.result(plan, &c.step))).then(|| {
                        (
                            StepStatus::Skipped,
                            format!(
                                "condition not met: the result of '{}' does not contain \"{}\"",
                                c.step, c.contains
                            ),
                        )
                    })
                }
                Some(StepStatus::Failed | StepStatus::Blocked | StepStatus::Skipped)
                    if !busy.contains(&c.step) =>
                {
                    Some((
                        StepStatus::Skipped,
                        format!("condition step '{}' did not complete", c.step),
                    ))
                }
                _ => None,
            }
        } else {
            None
        };
        if let Some((to, why)) = verdict {
            return Some((step.id.clone(), to, why));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::StepSpec;

    /// s1, s2 after s1, s3 after s1, s4 after s2 and s3.
    fn diamond() -> Plan {
        let spec = |text: &str, deps: &[&str]| StepSpec {
            id: None,
            text: text.to_string(),
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
        };
        Plan::from_specs(
            "p",
            "t",
            "g",
            &[
                spec("a", &[]),
                spec("b", &["s1"]),
                spec("c", &["s1"]),
                spec("d", &["s2", "s3"]),
            ],
        )
        .expect("valid plan")
    }

    fn index(plan: &Plan) -> StepIndex {
        let mut index = StepIndex::default();
        index.refresh(plan);
        index
    }

    #[test]
    fn ready_steps_wait_for_their_dependencies_and_sequential_styles_take_one() {
        let mut plan = diamond();
        let none = HashSet::new();
        assert_eq!(ready_steps(&plan, true, &none, &index(&plan)), vec![0]);
        plan.transition("s1", StepStatus::InProgress)
            .expect("legal");
        plan.complete_step("s1", "ok".into(), Vec::new())
            .expect("legal");
        assert_eq!(ready_steps(&plan, true, &none, &index(&plan)), vec![1, 2]);
        assert_eq!(ready_steps(&plan, false, &none, &index(&plan)), vec![1]);
        let busy: HashSet<String> = ["s2".to_string()].into();
        assert_eq!(ready_steps(&plan, true, &busy, &index(&plan)), vec![2]);
    }

    #[test]
    fn a_failed_step_blocks_its_dependents_or_skips_the_rest_of_a_sequential_plan() {
        let mut plan = diamond();
        plan.transition("s1", StepStatus::InProgress)
            .expect("legal");
        plan.end_step("s1", StepStatus::Failed, "boom")
            .expect("legal");
        let none = HashSet::new();
        let given_up = |p: &Plan, i: usize| {
            matches!(
                p.steps()[i].status(),
                StepStatus::Failed | StepStatus::Blocked
            )
        };
        let parallel = settle_one(&plan, false, &none, &index(&plan), &given_up);
        let (id, to, why) = parallel.expect("a dependent to settle");
        assert_eq!((id.as_str(), to), ("s2", StepStatus::Blocked));
        assert!(why.contains("'s1'"), "{why}");
        let sequential = settle_one(&plan, true, &none, &index(&plan), &given_up);
        let (id, to, why) = sequential.expect("the rest to skip");
        assert_eq!((id.as_str(), to), ("s2", StepStatus::Skipped));
        assert!(why.contains("boom"), "{why}");
        assert!(ready_steps(&plan, true, &none, &index(&plan)).is_empty());
    }
}
