//! Wiring: builds the adapters picked by cargo features and plugs them into the domain.

use std::sync::Arc;

use domain::ports::{LlmClient, RunStore};
use domain::tools::builtin::ToolSet;
use domain::{Actions, ExecutorAgent, RunConfig, Runtime};

use crate::{RunSettings, RunnerError};
use domain::model::approval::ApprovalPolicy;

/// The LLM client of a run, and what to check once the run is over.
pub struct LlmSetup {
    pub client: Arc<dyn LlmClient>,
    recorder: Option<Arc<adapter_replay::RecordingLlm>>,
    replay: Option<Arc<adapter_replay::ReplayLlm>>,
}

impl LlmSetup {
    /// What went wrong with `--replay` (a divergence, or recorded requests never made) or
    /// `--record` (a line that could not be written); the run then exits 1.
    pub fn problem(&self) -> Option<String> {
        self.replay
            .as_ref()
            .and_then(|r| r.verdict())
            .or_else(|| self.recorder.as_ref().and_then(|r| r.failure()))
    }
}

/// The run's LLM: the cassette with `--replay` (no network, no key), else the client of the
/// provider the options pick (`crate::providers`), wrapped in a recorder with `--record`.
pub fn llm(args: &RunSettings) -> Result<LlmSetup, RunnerError> {
    if let Some(path) = &args.replay {
        let replay = adapter_replay::ReplayLlm::open(path)
            .map_err(|e| RunnerError::Config(format!("cannot replay: {e}")))?;
        let replay = Arc::new(replay);
        return Ok(LlmSetup {
            client: replay.clone(),
            recorder: None,
            replay: Some(replay),
        });
    }
    let connected = crate::providers::connect(args)?;
    let (client, api_key) = (connected.client, connected.secret);
    let Some(path) = &args.record else {
        return Ok(LlmSetup {
            client,
            recorder: None,
            replay: None,
        });
    };
    let recorder = adapter_replay::RecordingLlm::create(path, client, Some(&args.model))
        .map_err(|e| RunnerError::Config(format!("cannot record: {e}")))?
        .with_secrets(api_key);
    let recorder = Arc::new(recorder);
    Ok(LlmSetup {
        client: recorder.clone(),
        recorder: Some(recorder),
        replay: None,
    })
}

/// Adds a family of tools to the set and records it as offered.
#[cfg(any(feature = "tools-shell", feature = "tools-browser", feature = "search"))]
fn offer(
    set: ToolSet,
    families: &mut Vec<ToolFamily>,
    family: &'static str,
    tools: Vec<Arc<dyn domain::ports::Tool>>,
) -> ToolSet {
    families.push(ToolFamily {
        family,
        tools: tools.iter().map(|t| t.name().to_string()).collect(),
        not_offered: None,
    });
    set.extend(tools)
}

/// How the approval rules resolve symbolic links in paths (docs/approvals.md, "Paths"): as
/// the file tools do, when they are built in.
#[cfg(feature = "tools-shell")]
fn approval_paths() -> domain::model::approval::PathResolver {
    domain::model::approval::PathResolver::new(Arc::new(
        adapter_tools_shell::workspace::WorkspacePaths,
    ))
}

#[cfg(not(feature = "tools-shell"))]
fn approval_paths() -> domain::model::approval::PathResolver {
    domain::model::approval::PathResolver::default()
}

/// Whether each tool family is offered, and why not when it is not (`planwright tools list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFamily {
    pub family: &'static str,
    pub tools: Vec<String>,
    /// `None` when offered; else why not.
    pub not_offered: Option<String>,
}

/// The project's config file, read-only to sandboxed commands.
pub const PROJECT_FILE: &str = "planwright.toml";

/// The executor's tools, and a line per family saying what is offered and why not.
/// The shell tools' own output caps sit below the executor's observation budget, so a
/// tool's labelled sections (exit code, stdout, stderr, "continue at line N") survive.
pub fn tools(
    opts: &RunSettings,
    observation_budget: usize,
) -> Result<(ToolSet, Vec<ToolFamily>), RunnerError> {
    // Without any tool feature nothing is added.
    #[allow(unused_mut)]
    let mut set = ToolSet::new();
    #[allow(unused_mut)]
    let mut families: Vec<ToolFamily> = Vec::new();
    #[cfg(feature = "tools-shell")]
    {
        let sandbox = match crate::sandbox::resolve(opts.sandbox, opts.notices)? {
            crate::sandbox::Effective::None => adapter_tools_shell::Sandbox::None,
            crate::sandbox::Effective::Bwrap => adapter_tools_shell::Sandbox::Bwrap {
                allow_network: opts.sandbox_network,
            },
        };
        let toolkit = adapter_tools_shell::shell_toolkit(&adapter_tools_shell::ShellToolsConfig {
            max_output_bytes: observation_budget * 3 / 8,
            max_read_bytes: observation_budget * 3 / 4,
            sandbox,
            env: adapter_tools_shell::ShellEnv {
                pass: opts.shell_env.clone(),
            },
            read_only: protected_paths(opts),
            ..Default::default()
        });
        set = offer(set, &mut families, "shell and files", toolkit.tools);
    }
    #[cfg(not(feature = "tools-shell"))]
    let _ = observation_budget;
    #[cfg(feature = "tools-browser")]
    {
        let browsers = adapter_tools_browser::Browsers::new(adapter_tools_browser::BrowserConfig {
            chromium: opts.chromium.clone(),
            allow_local: opts.browser_allow_local,
            this_machine: crate::served_on::addresses(),
            ..Default::default()
        });
        match browsers.is_available() {
            Ok(_) => set = offer(set, &mut families, "browser", browsers.tools()),
            Err(why) => families.push(ToolFamily {
                family: "browser",
                tools: Vec::new(),
                not_offered: Some(why),
            }),
        }
    }
    #[cfg(feature = "search")]
    {
        let configured = adapter_search::SearchConfig::from_env().and_then(|mut config| {
            // The options read the same variables, and a config file's values besides.
            if let Some(search) = opts.search {
                config.provider = Some(domain::model::names::Named::name(search).to_string());
            }
            if let Some(url) = &opts.searxng_url {
                config.searxng_url = Some(url.clone());
            }
            if let Some(secs) = opts.search_timeout_secs {
                config.timeout_secs = Some(secs as f64);
            }
            config.extra_root_certs = crate::ca_certs::read(opts)
                .map_err(|e| adapter_search::ConfigError::InvalidCaCert(e.to_string()))?;
            config.build()
        });
        match configured {
            Ok(Some(provider)) => {
                let tool: Arc<dyn domain::ports::Tool> =
                    Arc::new(domain::tools::builtin::WebSearch::new(provider));
                set = offer(set, &mut families, "web search", vec![tool]);
            }
            Ok(None) => families.push(ToolFamily {
                family: "web search",
                tools: Vec::new(),
                not_offered: Some(if opts.search == Some(crate::SearchChoice::None) {
                    "turned off (--search none)".to_string()
                } else {
                    "no search provider: set --searxng-url (SEARXNG_URL), BRAVE_API_KEY or \
                     TAVILY_API_KEY"
                        .to_string()
                }),
            }),
            Err(e) => {
                return Err(RunnerError::Config(format!(
                    "web search is misconfigured: {e}"
                )))
            }
        }
    }
    let (set, removed) = set.without(&opts.disabled_tools);
    for family in families.iter_mut().filter(|f| f.not_offered.is_none()) {
        family.tools.retain(|t| !removed.contains(t));
        if family.tools.is_empty() {
            family.not_offered = Some("turned off by --disabled-tools".into());
        }
    }
    Ok((set, families))
}

/// The plan-size cap when `--max-plan-steps` is not given: a few steps for the embedded
/// model, many for an OpenAI-compatible endpoint.
fn default_max_plan_steps(args: &RunSettings) -> usize {
    if uses_embedded_model(args) {
        domain::SMALL_MODEL_PLAN_STEPS
    } else {
        domain::LARGE_MODEL_PLAN_STEPS
    }
}

/// How executors act when `--actions` is not given (docs/code-actions.md): the embedded
/// model through programs only (a small model does better with one way to act: docs/eval.md,
/// "Code or tools"); an endpoint's model is offered `code_run` beside the shell and file
/// tools. A replayed cassette is taken as recorded from an endpoint (one recorded on the
/// embedded model replays with `--actions code`).
pub fn default_actions(args: &RunSettings) -> Actions {
    args.actions
        .unwrap_or(if args.replay.is_none() && uses_embedded_model(args) {
            Actions::Code
        } else {
            Actions::Both
        })
}

/// Whether the options pick the embedded model (no endpoint configured, or `--provider local`).
fn uses_embedded_model(args: &RunSettings) -> bool {
    crate::providers::picks_embedded(args)
}

pub fn runtime(
    llm: Arc<dyn LlmClient>,
    store: Arc<dyn RunStore>,
    args: &RunSettings,
    runs_root: &std::path::Path,
) -> Result<Runtime, RunnerError> {
    let mut config = RunConfig {
        mode: args.mode,
        summary: args.summary,
        max_plan_steps: match args.max_plan_steps {
            Some(n) => n as usize,
            None => default_max_plan_steps(args),
        },
        schedule: args.schedule,
        parallelism: args.parallel as usize,
        retries: args.retries,
        retry_delay: args.retry_delay,
        max_revisions: args.max_revisions,
        revise: args.revise,
        max_todos: args.max_todos as usize,
        verify: args.verify,
        max_tokens: args.max_tokens,
        lease: domain::LeaseConfig {
            owner: crate::owner::owner_id().to_string(),
            ttl: args.lease,
        },
        allow_input_edits: args.allow_input_edits,
        protect: args.protect.clone(),
        actions: default_actions(args),
        verification: args.verify_answers,
        approvals: ApprovalPolicy {
            mode: args.approval,
            allow: args.allow.clone(),
            deny: args.deny.clone(),
            paths: approval_paths(),
        },
        trace: trace_labels(args),
        ..RunConfig::default()
    };
    config.limits.max_turns = args.max_steps;
    config.limits.max_step_time = (!args.max_step_time.is_zero()).then_some(args.max_step_time);
    config.limits.max_calls_per_reply = args.max_calls_per_reply as usize;
    // A success claimed before anything of the run acted is sent back once for the embedded
    // model, which otherwise types answers it should compute; an endpoint's model may answer
    // at once (its run is then simply not verified: docs/verification.md).
    config.limits.nudges.claim_before_acting = args.replay.is_none() && uses_embedded_model(args);
    let (toolbox, _) = tools(args, config.limits.max_observation_bytes)?;
    if toolbox.names().is_empty() {
        return Err(RunnerError::Config(if args.disabled_tools.is_empty() {
            "this planwright was built without tools (enable the `tools-shell` feature)".into()
        } else {
            "--disabled-tools leaves the model no tool".into()
        }));
    }
    Ok(Runtime::builder(llm.clone())
        .executor(ExecutorAgent {
            name: "general".into(),
            description: "A general-purpose agent working in the run's workspace.".into(),
            kinds: Vec::new(),
            llm,
            toolbox: crate::mcp::executor_toolbox(toolbox, &args.disabled_tools, &args.mcp_servers),
        })
        .store(store)
        .workspace_files(workspace_files(runs_root))
        .workspace_checkpoints(workspace_checkpoints(runs_root, args))
        .span_contexts(crate::telemetry::span_contexts())
        .config(config)
        .build())
}

/// What stays read-only to sandboxed commands and the file tools whatever the workspace and
/// whether or not the folder is trusted (docs/security.md, "Project configuration and trust",
/// "Version control"): the project's config and state, the file `PLANWRIGHT_CONFIG` names (a
/// repository's `.envrc` may name one inside the project), the user's config folder, the
/// config file named by `--config` when it lies in the workspace; and in every workspace
/// (relative paths) its own `planwright.toml` and `.planwright/`, and its `.git`, `.hg` and
/// `.svn` unless `--sandbox-vcs-writes`.
#[cfg(feature = "tools-shell")]
pub fn protected_paths(opts: &RunSettings) -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let mut paths = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        paths.push(cwd.join(PROJECT_FILE));
        paths.push(cwd.join(crate::state_folder::STATE_FOLDER));
        if let Some(named) = std::env::var_os("PLANWRIGHT_CONFIG").filter(|v| !v.is_empty()) {
            paths.push(cwd.join(named));
        }
    }
    if let Some(dir) = crate::state_folder::user_config_dir() {
        paths.push(dir);
    }
    paths.extend(
        opts.config_file
            .iter()
            .filter_map(|f| std::path::absolute(f).ok()),
    );
    paths.push(PathBuf::from(PROJECT_FILE));
    paths.push(PathBuf::from(crate::state_folder::STATE_FOLDER));
    if !opts.sandbox_vcs_writes {
        paths.extend(adapter_tools_shell::VCS_FOLDERS.iter().map(PathBuf::from));
    }
    paths
}

/// What the runtime sees of workspaces (input protection, grounded outputs; docs/security.md,
/// "Input files"): the local filesystem, keeping the copies of run R's inputs in
/// `<runs_root>/R/inputs`, beside its default workspace `<runs_root>/R/workspace`. `None`
/// without the shell tools.
pub fn workspace_files(
    runs_root: &std::path::Path,
) -> Option<Arc<dyn domain::ports::WorkspaceFiles>> {
    #[cfg(feature = "tools-shell")]
    {
        let root = std::path::absolute(runs_root).unwrap_or_else(|_| runs_root.to_path_buf());
        Some(Arc::new(adapter_tools_shell::LocalWorkspaceFiles::new(
            root,
        )))
    }
    #[cfg(not(feature = "tools-shell"))]
    {
        let _ = runs_root;
        None
    }
}

/// The workspace checkpoints of runs whose metadata lives under `runs_root` (run R's in
/// `<runs_root>/R/checkpoints`, beside its input copies; docs/checkpoints.md), with the
/// settings' ignore list and cap; `None` when turned off (`--checkpoints=false`) or without
/// the shell tools.
pub fn workspace_checkpoints(
    runs_root: &std::path::Path,
    args: &RunSettings,
) -> Option<Arc<dyn domain::ports::WorkspaceCheckpoints>> {
    if !args.checkpoints.enabled {
        return None;
    }
    checkpoint_store(runs_root, args)
}

/// The checkpoints already kept under `runs_root`, to read (`runs diff`), undo (`runs
/// undo`) or discard (`runs delete`) whether or not new runs take them; `None` without the
/// shell tools.
pub fn checkpoint_store(
    runs_root: &std::path::Path,
    args: &RunSettings,
) -> Option<Arc<dyn domain::ports::WorkspaceCheckpoints>> {
    #[cfg(feature = "tools-shell")]
    {
        let root = std::path::absolute(runs_root).unwrap_or_else(|_| runs_root.to_path_buf());
        let limits = adapter_tools_shell::CheckpointLimits {
            max_file_bytes: u64::from(args.checkpoints.max_file_mib) << 20,
            ignore: args.checkpoints.ignore.clone(),
            ..adapter_tools_shell::CheckpointLimits::default()
        };
        Some(Arc::new(
            adapter_tools_shell::LocalCheckpoints::new(root).with_limits(limits),
        ))
    }
    #[cfg(not(feature = "tools-shell"))]
    {
        let _ = (runs_root, args);
        None
    }
}

/// What a run's spans say about its model: the provider (`--provider`'s name; `replay` for
/// a cassette, else the name of the provider the options pick), the model, and whether
/// message content is captured (`telemetry::capture_message_content`).
fn trace_labels(args: &RunSettings) -> domain::engine::trace::TraceLabels {
    let provider = crate::providers::label(args);
    domain::engine::trace::TraceLabels {
        provider,
        model: args.model.clone(),
        capture_message_content: crate::telemetry::capture_message_content(),
    }
}
