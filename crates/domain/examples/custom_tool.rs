//! A custom tool: `word_count`, written here against the `Tool` port, offered to the run's
//! general agent with `Runtime::builder(..).tool(..)`. The model is scripted (it calls the
//! tool, then ends its step with what it read), so the example runs offline; a real program
//! passes adapter-openai's or adapter-llama's client instead.
//!
//! `cargo run -p planwright-domain --example custom_tool`
#![allow(clippy::print_stdout)] // An example's output is its report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use domain::testing::replies::{call, done};
use domain::testing::ScriptedLlm;
use domain::{async_trait, CancellationToken, Mode, RunConfig, RunRequest, RunStatus, Runtime};
use domain::{Tool, ToolContext, ToolError, ToolOutput};
use serde_json::{json, Value};

/// Counts the words of a text.
#[derive(Default)]
struct WordCount {
    calls: AtomicUsize,
}

#[async_trait]
impl Tool for WordCount {
    fn name(&self) -> &str {
        "word_count"
    }

    fn description(&self) -> &str {
        "Count the words of a text."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to count."}},
            "required": ["text"]
        })
    }

    /// It only reads its argument: safe to run again after an interruption.
    fn idempotent(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = args["text"]
            .as_str()
            .ok_or_else(|| ToolError::InvalidArguments("`text` must be a string".into()))?;
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(ToolOutput::ok(format!(
            "{} words",
            text.split_whitespace().count()
        )))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sentence = "the quick brown fox jumps";
    // What a model would answer: call the tool, then end the step with its result.
    let model = ScriptedLlm::new(vec![
        call("word_count", json!({ "text": sentence })),
        done("The sentence has 5 words."),
    ]);
    let tool = Arc::new(WordCount::default());
    let runtime = Runtime::builder(Arc::new(model))
        .tool(Arc::clone(&tool) as Arc<dyn Tool>)
        .config(RunConfig {
            mode: Mode::Direct,
            ..RunConfig::default()
        })
        .build();
    let workspace = std::env::temp_dir();
    let request = RunRequest {
        run_id: runtime.new_run_id(),
        task: format!("Count the words of '{sentence}' with the word_count tool"),
        workspace,
    };
    let outcome = runtime.run(request, CancellationToken::new()).await?;
    println!("{:?}: {}", outcome.status, outcome.summary);
    if outcome.status != RunStatus::Completed || tool.calls.load(Ordering::Relaxed) != 1 {
        return Err(
            format!("expected a completed run that called word_count once: {outcome:?}").into(),
        );
    }
    Ok(())
}
