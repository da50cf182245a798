//! A run on SQLite with its events streamed: every event is stored in the SQLite file first,
//! then handed to the runtime's `EventSink`, which here prints it as a JSON line as it
//! happens (what `planwright run --json` and the server's SSE stream are built on). When the
//! run is over the file is opened again and its journal read back. The model is scripted.
//!
//! `cargo run -p planwright-store-sqlite --example sqlite_events [FILE]` (default: a
//! temporary folder's `runs.db`)
#![allow(clippy::print_stdout)] // An example's output is its report.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use adapter_store_sqlite::SqliteStore;
use domain::testing::replies::{create_plan, done, text};
use domain::testing::ScriptedLlm;
use domain::{CancellationToken, Event, EventSink, Mode, RunConfig, RunRequest, RunStatus};
use domain::{RunStore, Runtime};

/// Prints each event as one JSON line, and counts them.
#[derive(Default)]
struct JsonLines {
    seen: AtomicU64,
}

impl EventSink for JsonLines {
    fn publish(&self, event: &Event) {
        self.seen.fetch_add(1, Ordering::Relaxed);
        match serde_json::to_string(event) {
            Ok(line) => println!("{line}"),
            Err(e) => println!("event {} not printable: {e}", event.seq),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let path = match std::env::args().nth(1) {
        Some(file) => file.into(),
        None => folder.path().join("runs.db"),
    };
    let model = ScriptedLlm::new(vec![
        create_plan(&["Think of a name for the cat", "Explain the choice"]),
        done("Miso."),
        done("It is short and sounds warm."),
        text("The cat is called Miso: short and warm."),
    ]);
    let sink = Arc::new(JsonLines::default());
    let runtime = Runtime::builder(Arc::new(model))
        .store(Arc::new(SqliteStore::open(&path)?))
        .sink(Arc::clone(&sink) as Arc<dyn EventSink>)
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
    let outcome = runtime.run(request, CancellationToken::new()).await?;
    drop(runtime);

    // The journal outlives the process: open the file again and read it back.
    let store = SqliteStore::open(&path)?;
    let stored = store.events(&run_id, 0).await?;
    let streamed = sink.seen.load(Ordering::Relaxed);
    println!(
        "{:?}; {streamed} events streamed, {} stored in {}",
        outcome.status,
        stored.len(),
        path.display()
    );
    if outcome.status != RunStatus::Completed || stored.len() as u64 != streamed {
        return Err("expected a completed run whose every streamed event is stored".into());
    }
    Ok(())
}
