//! A short real task through the whole domain runtime on the embedded default model:
//! a real bash tool in a temporary workspace, an in-memory store. Asserts the plan is
//! valid, the tool was really called with valid arguments, and the run ends completed or
//! failed with a reason — never a crash, a hang or an invalid call. Skipped (with a note)
//! when the model file is missing, unless `CI=true`.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adapter_llama::{default_model_path, LlamaClient, LlamaConfig};
use async_trait::async_trait;
use domain::error::ToolError;
use domain::ports::{LlmClient, RunStatus, RunStore, SequentialIds, Tool, ToolContext, ToolOutput};
use domain::testing::MemoryStore;
use domain::tools::builtin::ToolSet;
use domain::{ExecutorAgent, Mode, RunConfig, RunRequest, Runtime, StepLimits};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// Runs bash in the workspace; records every call's arguments.
#[derive(Default)]
struct Bash {
    calls: Mutex<Vec<Value>>,
}

#[async_trait]
impl Tool for Bash {
    fn name(&self) -> &str {
        "shell_exec"
    }
    fn description(&self) -> &str {
        "Run a bash command in the workspace folder and return its output."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the bash command"}},
            "required": ["command"]
        })
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.calls.lock().unwrap().push(args.clone());
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::InvalidArguments("`command` is required".into()))?;
        let out = tokio::time::timeout(
            Duration::from_secs(10),
            tokio::process::Command::new("bash")
                .arg("-c")
                .arg(command)
                .current_dir(&ctx.workspace)
                .output(),
        )
        .await
        .map_err(|_| ToolError::Timeout(Duration::from_secs(10)))?
        .map_err(|e| ToolError::Failed(e.to_string()))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(if out.status.success() {
            ToolOutput::ok(text)
        } else {
            ToolOutput::error(format!("exit {}: {text}", out.status))
        })
    }
}

fn model() -> Option<std::path::PathBuf> {
    let path = default_model_path();
    let missing = format!(
        "the model file {} is missing: run `cargo xtask model` first",
        path.display()
    );
    test_support::skip_unless(path.is_file(), missing).then_some(path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_real_task_runs_to_an_end_on_the_default_model() {
    let Some(path) = model() else { return };
    let mut config = LlamaConfig::new(path);
    config.context_tokens = 4096;
    config.max_tokens = 160;
    let llm: Arc<dyn LlmClient> = Arc::new(
        tokio::task::spawn_blocking(move || LlamaClient::load(config))
            .await
            .unwrap()
            .unwrap(),
    );
    let bash = Arc::new(Bash::default());
    let store = Arc::new(MemoryStore::new());
    let runtime = Runtime::builder(Arc::clone(&llm))
        .executor(ExecutorAgent {
            name: "agent".into(),
            description: "Runs shell commands in the workspace.".into(),
            kinds: Vec::new(),
            llm,
            toolbox: Arc::new(ToolSet::new().with(Arc::clone(&bash) as Arc<dyn Tool>)),
        })
        .store(Arc::clone(&store) as Arc<dyn RunStore>)
        .ids(Arc::new(SequentialIds::default()))
        .config(RunConfig {
            mode: Mode::Flow,
            limits: StepLimits {
                max_turns: 3,
                ..StepLimits::default()
            },
            retries: 0,
            retry_delay: Duration::from_millis(0),
            max_revisions: 1,
            planner_attempts: 1,
            // Bounds the run's length on a weak model: it stops cleanly once spent.
            max_tokens: Some(25_000),
            ..RunConfig::default()
        })
        .build();
    let workspace = std::env::temp_dir().join(format!("planwright-llama-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).unwrap();
    let request = RunRequest {
        run_id: runtime.new_run_id(),
        task: "Write hello.txt containing 'hello from planwright' with the shell tool, then read it back and report its content".into(),
        workspace: workspace.clone(),
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(900),
        runtime.run(request, CancellationToken::new()),
    )
    .await
    .expect("the run hung")
    .unwrap();

    eprintln!(
        "status {:?}, error {:?}, steps {:?}, usage {:?}, calls {:?}",
        outcome.status,
        outcome.error,
        outcome
            .plan
            .steps()
            .iter()
            .map(|s| (s.description.clone(), s.status()))
            .collect::<Vec<_>>(),
        outcome.usage,
        bash.calls.lock().unwrap()
    );
    report_file(&workspace.join("hello.txt"));
    let _ = std::fs::remove_dir_all(&workspace);

    assert!(!outcome.plan.steps().is_empty());
    outcome.plan.validate_graph().unwrap();
    let calls = bash.calls.lock().unwrap().clone();
    assert!(!calls.is_empty(), "the shell tool was never called");
    for args in &calls {
        assert!(args["command"].is_string(), "invalid call {args}");
    }
    match outcome.status {
        RunStatus::Completed => {}
        RunStatus::Failed => assert!(
            outcome
                .error
                .as_deref()
                .is_some_and(|e| !e.trim().is_empty()),
            "a failed run must say why"
        ),
        other => panic!("the run ended {other:?}"),
    }
}

fn report_file(path: &Path) {
    match std::fs::read_to_string(path) {
        Ok(text) => eprintln!("hello.txt: {text:?}"),
        Err(_) => eprintln!("hello.txt was not written"),
    }
}
