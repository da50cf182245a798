//! [`RuntimeBuilder`]: a [`Runtime`] from an LLM and what differs from the defaults (the
//! system clock, time-and-random ids, no live listener, nobody to ask, an in-memory store,
//! one general agent with the tools given).

use crate::ports::planning_style::{PlanningStyle, StyleFactory};
use std::sync::Arc;

use crate::engine::config::RunConfig;
use crate::engine::executor::agent::ExecutorAgent;
use crate::engine::runtime::Runtime;
use crate::engine::trace::SpanContexts;
use crate::memory_store::MemoryStore;
use crate::ports::{
    Clock, EventSink, IdGen, LlmClient, NoEventSink, NoUser, RunStore, SystemClock, TimeRandomIds,
    Tool, Toolbox, UserChannel, WorkspaceCheckpoints, WorkspaceFiles,
};
use crate::tools::builtin::ToolSet;
use crate::tools::combined::CombinedToolbox;

/// Name of the agent the builder makes when no [`RuntimeBuilder::executor`] is given.
pub const GENERAL_AGENT: &str = "general";

/// Builds a [`Runtime`]; made by [`Runtime::builder`].
#[must_use]
pub struct RuntimeBuilder {
    llm: Arc<dyn LlmClient>,
    tools: ToolSet,
    toolbox: Option<Arc<dyn Toolbox>>,
    executors: Vec<ExecutorAgent>,
    store: Option<Arc<dyn RunStore>>,
    sink: Arc<dyn EventSink>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    user: Arc<dyn UserChannel>,
    workspace_files: Option<Arc<dyn WorkspaceFiles>>,
    workspace_checkpoints: Option<Arc<dyn WorkspaceCheckpoints>>,
    config: RunConfig,
    style: Option<StyleFactory>,
    span_contexts: Option<SpanContexts>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("tools", &self.tools)
            .field("executors", &self.executors)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A builder whose planner is `llm`, and whose one agent (unless
    /// [`RuntimeBuilder::executor`] adds others) runs steps with `llm` too.
    pub fn builder(llm: Arc<dyn LlmClient>) -> RuntimeBuilder {
        RuntimeBuilder {
            llm,
            tools: ToolSet::new(),
            toolbox: None,
            executors: Vec::new(),
            store: None,
            sink: Arc::new(NoEventSink),
            clock: Arc::new(SystemClock),
            ids: Arc::new(TimeRandomIds),
            user: Arc::new(NoUser),
            workspace_files: None,
            workspace_checkpoints: None,
            style: None,
            span_contexts: None,
            config: RunConfig::default(),
        }
    }
}

impl RuntimeBuilder {
    /// Adds a tool for the general agent; a later tool of the same name replaces it.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools = self.tools.with(tool);
        self
    }

    /// A whole toolbox for the general agent (offered after the tools of
    /// [`RuntimeBuilder::tool`], which win a name both offer).
    pub fn toolbox(mut self, toolbox: Arc<dyn Toolbox>) -> Self {
        self.toolbox = Some(toolbox);
        self
    }

    /// Adds an executor agent; with any, the general agent is not made and the builder's
    /// tools are unused. The first agent is the primary one.
    pub fn executor(mut self, agent: ExecutorAgent) -> Self {
        self.executors.push(agent);
        self
    }

    /// Where runs, plans and events are kept (default: a new [`MemoryStore`]).
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Who sees each event live, after it is stored (default: nobody).
    pub fn sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.sink = sink;
        self
    }

    /// The clock (default: [`SystemClock`]).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Run and plan ids (default: [`TimeRandomIds`]).
    pub fn ids(mut self, ids: Arc<dyn IdGen>) -> Self {
        self.ids = ids;
        self
    }

    /// Who answers `message_ask_user` and approvals (default: [`NoUser`], nobody).
    pub fn user(mut self, user: Arc<dyn UserChannel>) -> Self {
        self.user = user;
        self
    }

    /// What the runtime sees of workspaces, to protect input files and check named
    /// outputs (docs/security.md, "Input files"); default `None`: neither.
    pub fn workspace_files(mut self, files: Option<Arc<dyn WorkspaceFiles>>) -> Self {
        self.workspace_files = files;
        self
    }

    /// Checkpoints of the workspace before each step's attempt and at the run's end
    /// (docs/checkpoints.md); default `None`: none.
    pub fn workspace_checkpoints(
        mut self,
        checkpoints: Option<Arc<dyn WorkspaceCheckpoints>>,
    ) -> Self {
        self.workspace_checkpoints = checkpoints;
        self
    }

    /// How the trace exporter reads and links spans' contexts (default: none, no link
    /// between a run's lives is kept; docs/observability.md).
    pub fn span_contexts(mut self, contexts: SpanContexts) -> Self {
        self.span_contexts = Some(contexts);
        self
    }

    /// The run's knobs (default: [`RunConfig::default`]).
    pub fn config(mut self, config: RunConfig) -> Self {
        self.config = config;
        self
    }

    /// A planning style of the caller's, used for every run instead of the configured
    /// mode's: `make` builds a fresh one per run (`strategy::custom`, whose module doc is
    /// the contract).
    pub fn planning_style(
        mut self,
        make: impl Fn() -> Box<dyn PlanningStyle> + Send + Sync + 'static,
    ) -> Self {
        self.style = Some(Arc::new(make));
        self
    }

    pub fn build(self) -> Runtime {
        let executors = if self.executors.is_empty() {
            vec![ExecutorAgent {
                name: GENERAL_AGENT.into(),
                description: "A general-purpose agent with the runtime's tools.".into(),
                kinds: Vec::new(),
                llm: Arc::clone(&self.llm),
                toolbox: general_toolbox(self.tools, self.toolbox),
            }]
        } else {
            self.executors
        };
        Runtime {
            planner_llm: self.llm,
            executors,
            store: self
                .store
                .unwrap_or_else(|| Arc::new(MemoryStore::new()) as Arc<dyn RunStore>),
            sink: self.sink,
            clock: self.clock,
            ids: self.ids,
            user: self.user,
            workspace_files: self.workspace_files,
            workspace_checkpoints: self.workspace_checkpoints,
            config: self.config,
            style: self.style,
            span_contexts: self.span_contexts,
        }
    }
}

/// The tools, the toolbox, or both in that order.
fn general_toolbox(tools: ToolSet, toolbox: Option<Arc<dyn Toolbox>>) -> Arc<dyn Toolbox> {
    match toolbox {
        None => Arc::new(tools),
        Some(toolbox) if tools.names().is_empty() => toolbox,
        Some(toolbox) => Arc::new(
            CombinedToolbox::new()
                .then("built-in", Arc::new(tools))
                .then("toolbox", toolbox),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ToolError;
    use crate::ports::{ToolContext, ToolOutput};
    use crate::testing::{EchoToolbox, ScriptedLlm};

    /// A tool named nothing like the toolbox's.
    struct Ping;

    #[async_trait::async_trait]
    impl Tool for Ping {
        fn name(&self) -> &str {
            "ping"
        }
        fn description(&self) -> &str {
            "Answers pong."
        }
        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({"type": "object", "properties": {}})
        }
        async fn execute(
            &self,
            _args: serde_json::Value,
            _ctx: &ToolContext,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::ok("pong"))
        }
    }

    fn llm() -> Arc<dyn LlmClient> {
        Arc::new(ScriptedLlm::new(Vec::new()))
    }

    #[test]
    fn defaults_are_one_general_agent_random_ids_and_a_memory_store() {
        let rt = Runtime::builder(llm()).build();
        assert_eq!(rt.executors.len(), 1);
        assert_eq!(rt.executors[0].name, GENERAL_AGENT);
        assert!(rt.executors[0].toolbox.schemas().is_empty());
        assert_ne!(rt.new_run_id(), rt.new_run_id());
        assert!(rt.workspace_files.is_none());
        assert_eq!(rt.config, RunConfig::default());
    }

    #[test]
    fn tools_and_a_toolbox_are_both_offered_to_the_general_agent() {
        let rt = Runtime::builder(llm())
            .toolbox(Arc::new(EchoToolbox::new()))
            .build();
        let echo_names: Vec<String> = rt.executors[0]
            .toolbox
            .schemas()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(!echo_names.is_empty());
        let rt = Runtime::builder(llm())
            .tool(Arc::new(Ping))
            .toolbox(Arc::new(EchoToolbox::new()))
            .build();
        let names: Vec<String> = rt.executors[0]
            .toolbox
            .schemas()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names.len(), echo_names.len() + 1, "{names:?}");
        assert!(names.iter().any(|n| n == "ping"), "{names:?}");
    }

    #[test]
    fn given_executors_replace_the_general_agent() {
        let agent =
            crate::testing::runs::agent("coder", &["CODE"], llm(), Arc::new(ToolSet::new()));
        let rt = Runtime::builder(llm()).executor(agent).build();
        let names: Vec<&str> = rt.executors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["coder"]);
    }
}
