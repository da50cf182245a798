//! Wiring: builds the adapters picked by cargo features and plugs them into the domain.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use domain::ports::{LlmClient, RunStore, SystemClock};
use domain::tools::ToolSet;
use domain::{ExecutorAgent, RunConfig, Runtime};

use crate::cli::{ModeArg, ReviseArg, RunArgs, ScheduleArg};
use crate::ids::TimeRandomIds;
use crate::view::ConsoleView;
use crate::AppError;

/// The OpenAI-compatible client from `OPENAI_API_KEY` / `OPENAI_BASE_URL`.
#[cfg(feature = "openai")]
pub fn llm(model: &str) -> Result<Arc<dyn LlmClient>, AppError> {
    let key = std::env::var("OPENAI_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty());
    let base = std::env::var("OPENAI_BASE_URL")
        .ok()
        .filter(|b| !b.trim().is_empty());
    if key.is_none() && base.is_none() {
        return Err(AppError::Config(
            "no LLM endpoint configured: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL \
             (any OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama)"
                .into(),
        ));
    }
    let mut config = adapter_openai::OpenAiConfig::new(model);
    config.api_key = key;
    if let Some(base) = base {
        config.base_url = base;
    }
    let client = adapter_openai::OpenAiClient::new(config)
        .map_err(|e| AppError::Config(format!("cannot set up the OpenAI client: {e}")))?;
    Ok(Arc::new(client))
}

#[cfg(not(feature = "openai"))]
pub fn llm(_model: &str) -> Result<Arc<dyn LlmClient>, AppError> {
    Err(AppError::Config(
        "this planwright was built without an LLM adapter (enable the `openai` feature)".into(),
    ))
}

#[cfg(feature = "store-sqlite")]
pub fn store(db: &Path) -> Result<Arc<dyn RunStore>, AppError> {
    let store = adapter_store_sqlite::SqliteStore::open(db)
        .map_err(|e| AppError::Config(format!("cannot open the database {}: {e}", db.display())))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "store-sqlite"))]
pub fn store(_db: &Path) -> Result<Arc<dyn RunStore>, AppError> {
    Err(AppError::Config(
        "this planwright was built without a run store (enable the `store-sqlite` feature)".into(),
    ))
}

/// The executor's tools. Their own output caps sit below the executor's observation budget,
/// so a tool's labelled sections (exit code, stdout, stderr, "continue at line N") survive.
fn tools(observation_budget: usize) -> ToolSet {
    let set = ToolSet::new();
    #[cfg(feature = "tools-shell")]
    let set = set.extend(adapter_tools_shell::shell_tools_with(
        &adapter_tools_shell::ShellToolsConfig {
            max_output_bytes: observation_budget * 3 / 8,
            max_read_bytes: observation_budget * 3 / 4,
            ..Default::default()
        },
    ));
    #[cfg(not(feature = "tools-shell"))]
    let _ = observation_budget;
    set
}

pub fn runtime(
    llm: Arc<dyn LlmClient>,
    store: Arc<dyn RunStore>,
    args: &RunArgs,
) -> Result<Runtime, AppError> {
    let mut config = RunConfig {
        mode: match args.mode {
            ModeArg::Flow => domain::Mode::Flow,
            ModeArg::PlanAct => domain::Mode::PlanAct,
            ModeArg::Todo => domain::Mode::Todo,
            ModeArg::Dag => domain::Mode::Dag,
            ModeArg::Auto => domain::Mode::Auto,
        },
        schedule: match args.schedule {
            ScheduleArg::Event => domain::Schedule::EventDriven,
            ScheduleArg::Superstep => domain::Schedule::Superstep,
        },
        parallelism: args.parallel as usize,
        retries: args.retries,
        retry_delay: Duration::from_millis(args.retry_delay_ms),
        max_revisions: args.max_revisions,
        revise: match args.revise {
            ReviseArg::OnFailure => domain::Revise::OnFailure,
            ReviseArg::EveryStep => domain::Revise::EveryStep,
        },
        max_todos: args.max_todos as usize,
        verify: args.verify,
        max_tokens: args.max_tokens,
        ..RunConfig::default()
    };
    config.limits.max_turns = args.max_steps;
    let toolbox = tools(config.limits.max_observation_bytes);
    if toolbox.names().is_empty() {
        return Err(AppError::Config(
            "this planwright was built without tools (enable the `tools-shell` feature)".into(),
        ));
    }
    Ok(Runtime {
        planner_llm: llm.clone(),
        executors: vec![ExecutorAgent {
            name: "general".into(),
            description:
                "A general-purpose agent with a shell and file tools in the run's workspace.".into(),
            kinds: Vec::new(),
            llm,
            toolbox: Arc::new(toolbox),
        }],
        store,
        sink: Arc::new(ConsoleView::new()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(TimeRandomIds),
        config,
    })
}
