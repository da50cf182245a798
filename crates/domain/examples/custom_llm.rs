//! A custom LLM provider: anything that implements the `LlmClient` port (one `chat` call:
//! messages and tool schemas in, text or tool calls out) runs Planwright, and the domain's
//! code does not change with it. adapter-openai (any OpenAI-compatible server) and
//! adapter-llama (an embedded GGUF model) are two such providers; here are two more, written
//! in this file: `Canned` answers by what it is asked (plan, step, summary), and `Logged`
//! wraps any provider and prints each call. The same `run_task` runs on either.
//!
//! `cargo run -p planwright-domain --example custom_llm [canned|logged]`
#![allow(clippy::print_stdout)] // An example's output is its report.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use domain::llm::{CallPurpose, ChatRequest, ChatResponse, ToolCall, Usage};
use domain::{async_trait, CancellationToken, LlmClient, LlmError, Mode, RunConfig};
use domain::{RunOutcome, RunRequest, RunStatus, Runtime};
use serde_json::json;

/// A provider that answers from rules: a two-step plan, each step done at once, a one-line
/// summary. A real provider would send the request to a model instead.
#[derive(Default)]
struct Canned {
    next_call: AtomicU32,
}

impl Canned {
    fn tool_call(&self, name: &str, arguments: serde_json::Value) -> ChatResponse {
        ChatResponse {
            tool_calls: vec![ToolCall {
                id: format!("call_{}", self.next_call.fetch_add(1, Ordering::Relaxed)),
                name: name.into(),
                arguments: arguments.to_string(),
            }],
            usage: Usage {
                prompt_tokens: 100,
                completion_tokens: 10,
                cached_prompt_tokens: 0,
            },
            ..ChatResponse::default()
        }
    }
}

#[async_trait]
impl LlmClient for Canned {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        Ok(match request.purpose {
            // The flow planner is offered the `planning` tool and must create the plan.
            CallPurpose::Plan => self.tool_call(
                "planning",
                json!({
                    "command": "create",
                    "title": "Greet the team",
                    "steps": ["Choose a greeting", "Say why it suits a team"]
                }),
            ),
            // An executor ends its step with `complete_step`.
            CallPurpose::Execute => self.tool_call(
                "complete_step",
                json!({"success": true, "result": "Hello, team: short and warm."}),
            ),
            CallPurpose::Summarize | CallPurpose::Other => ChatResponse {
                content: Some("The team was greeted.".into()),
                ..ChatResponse::default()
            },
        })
    }
}

/// Any provider, with each call printed: a decorator is a provider too.
struct Logged<L>(L);

#[async_trait]
impl<L: LlmClient> LlmClient for Logged<L> {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let purpose = request.purpose;
        let reply = self.0.chat(request).await;
        match &reply {
            Ok(r) => println!(
                "  {purpose:?} call: {} tool call(s), {} prompt tokens",
                r.tool_calls.len(),
                r.usage.prompt_tokens
            ),
            Err(e) => println!("  {purpose:?} call failed: {e}"),
        }
        reply
    }
}

/// The same code whatever the provider: it only sees `Arc<dyn LlmClient>`.
async fn run_task(llm: Arc<dyn LlmClient>) -> Result<RunOutcome, domain::Error> {
    let runtime = Runtime::builder(llm)
        .config(RunConfig {
            mode: Mode::Flow,
            ..RunConfig::default()
        })
        .build();
    let request = RunRequest {
        run_id: runtime.new_run_id(),
        task: "Greet the team".into(),
        workspace: std::env::temp_dir(),
    };
    runtime.run(request, CancellationToken::new()).await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let wanted = std::env::args().nth(1);
    let providers: Vec<&str> = match wanted.as_deref() {
        Some(name) => vec![name],
        None => vec!["canned", "logged"],
    };
    for name in providers {
        let llm: Arc<dyn LlmClient> = match name {
            "canned" => Arc::new(Canned::default()),
            "logged" => Arc::new(Logged(Canned::default())),
            other => return Err(format!("unknown provider '{other}' (canned, logged)").into()),
        };
        println!("provider {name}:");
        let outcome = run_task(llm).await?;
        println!(
            "  {:?}: {}",
            outcome.status,
            outcome.summary.replace('\n', " ")
        );
        if outcome.status != RunStatus::Completed || outcome.plan.steps().len() != 2 {
            return Err(format!("expected a completed two-step run: {outcome:?}").into());
        }
    }
    Ok(())
}
