//! A run on the in-memory store: `MemoryStore` keeps runs, plans and events like the SQLite
//! and PostgreSQL stores do, with nothing on disk. The caller keeps a handle on it and reads
//! the journal back through the `RunStore` port when the run is over. The model is scripted.
//!
//! `cargo run -p planwright-domain --example memory_store`
#![allow(clippy::print_stdout)] // An example's output is its report.

use std::sync::Arc;

use domain::testing::replies::{create_plan, done, text};
use domain::testing::ScriptedLlm;
use domain::{CancellationToken, MemoryStore, Mode, RunConfig, RunRequest, RunStatus, RunStore};
use domain::{Runtime, StepStatus};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedLlm::new(vec![
        create_plan(&["Think of a name for the cat", "Explain the choice"]),
        done("Miso."),
        done("It is short and sounds warm."),
        text("The cat is called Miso: short and warm."),
    ]);
    let store = Arc::new(MemoryStore::new());
    let runtime = Runtime::builder(Arc::new(model))
        .store(Arc::clone(&store) as Arc<dyn RunStore>)
        .config(RunConfig {
            mode: Mode::Flow,
            ..RunConfig::default()
        })
        .build();
    let run_id = runtime.new_run_id();
    let request = RunRequest {
        run_id: run_id.clone(),
        task: "Name the cat".into(),
        workspace: std::env::temp_dir(),
    };
    runtime.run(request, CancellationToken::new()).await?;

    // Everything below is read from the store, as another part of a program would.
    let record = store
        .get_run(&run_id)
        .await?
        .ok_or("the run was not stored")?;
    println!(
        "run {} ({}): {:?}",
        record.run_id, record.task, record.status
    );
    let plan = store
        .latest_plan(&run_id)
        .await?
        .ok_or("no plan was stored")?;
    for step in plan.steps() {
        println!("  [{:?}] {}", step.status(), step.description);
    }
    let events = store.events(&run_id, 0).await?;
    println!(
        "{} events, the last: {}",
        events.len(),
        events.last().map_or("none", |e| e.kind.name())
    );
    let all_done = plan
        .steps()
        .iter()
        .all(|s| s.status() == StepStatus::Completed);
    if record.status != RunStatus::Completed || !all_done || events.is_empty() {
        return Err(format!("expected a completed run with its journal: {record:?}").into());
    }
    Ok(())
}
