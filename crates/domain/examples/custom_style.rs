//! A planning style written outside the crate: `Checklist` makes one step of each line of
//! the task (no planner call) and, when a step fails, drops the steps after it. It
//! implements the public `PlanningStyle` trait (its contract is the doc of
//! `domain::strategy::custom`) and is given with `Runtime::builder(..).planning_style(..)`.
//! The model is scripted, so the example runs offline.
//!
//! `cargo run -p planwright-domain --example custom_style`
#![allow(clippy::print_stdout)] // An example's output is its report.

use std::sync::Arc;

use domain::testing::replies::{done, text};
use domain::testing::ScriptedLlm;
use domain::{async_trait, CancellationToken, Error, Plan, PlanSource, RunRequest, RunStatus};
use domain::{InitialPlan, PlanningStyle, Runtime, StepReport, StepStatus, StyleRequest};

/// One step per non-empty line of the task.
struct Checklist;

#[async_trait]
impl PlanningStyle for Checklist {
    async fn initial_plan(&mut self, request: &StyleRequest) -> Result<InitialPlan, Error> {
        let lines: Vec<String> = request
            .task
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        let plan = Plan::from_texts("plan_1", "Checklist", &request.task, &lines)?;
        Ok(InitialPlan {
            plan,
            source: PlanSource::Task,
            reason: None,
        })
    }

    async fn replan(
        &mut self,
        _plan: &mut Plan,
        failed: &StepReport,
    ) -> Result<Option<String>, Error> {
        Ok(Some(format!(
            "{} failed: the rest is skipped",
            failed.step_id
        )))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedLlm::new(vec![
        done("Bought milk."),
        done("Called Ann."),
        text("Milk bought, Ann called."),
    ]);
    let runtime = Runtime::builder(Arc::new(model))
        .planning_style(|| Box::new(Checklist))
        .build();
    let request = RunRequest {
        run_id: runtime.new_run_id(),
        task: "Buy milk\nCall Ann".into(),
        workspace: std::env::temp_dir(),
    };
    let outcome = runtime.run(request, CancellationToken::new()).await?;
    for step in outcome.plan.steps() {
        println!("  [{:?}] {}", step.status(), step.description);
    }
    let two_done = outcome.plan.steps().len() == 2
        && outcome
            .plan
            .steps()
            .iter()
            .all(|s| s.status() == StepStatus::Completed);
    if outcome.status != RunStatus::Completed || !two_done {
        return Err(format!("expected the two lines done: {outcome:?}").into());
    }
    println!("{}", outcome.summary);
    Ok(())
}
