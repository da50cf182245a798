//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use domain::model::approval::{ApprovalMode, ApprovalRule};
use domain::{Actions, Mode, Revise, Schedule, SummaryStyle};

use runner::caller::Scope;
use runner::database::Database;
use runner::{SandboxMode, SearchChoice, ToolProtocol};

mod age;
pub mod heading;
pub mod mcp;
pub mod settings;
mod values;

pub use mcp::McpCommand;

use values::{approval_rule, tool_pattern, NamedParser, ProviderParser};

/// Planwright: an LLM agent runtime that plans, acts with real tools, verifies and adapts.
#[derive(Debug, Parser)]
// `about` is the doc comment above (what Planwright is), not the package's description.
#[command(name = "planwright", version, long_about = None)]
pub struct Cli {
    /// Where runs, plans and events live: a SQLite file, or a PostgreSQL URL
    /// (`postgres://user@host/db`) shared by any number of servers and workers.
    #[arg(
        long,
        global = true,
        env = "PLANWRIGHT_DB",
        default_value = "./.planwright/planwright.db"
    )]
    pub db: Database,

    /// The config file to read instead of `./planwright.toml`; the user's
    /// `~/.config/planwright/config.toml` is still read beneath it (docs/configuration.md).
    #[arg(long, global = true, value_name = "FILE", env = "PLANWRIGHT_CONFIG")]
    pub config: Option<PathBuf>,

    /// Use the config files' `[profiles.NAME]` tables over their top level.
    #[arg(long, global = true, value_name = "NAME", env = "PLANWRIGHT_PROFILE")]
    pub profile: Option<String>,

    /// Read this folder's `planwright.toml` and `.planwright/` for this run although the
    /// folder is not trusted (`planwright trust` trusts it for good); its pinned values
    /// (where data goes, what runs, what protects your files) must still have been accepted
    /// (docs/security.md).
    #[arg(long, global = true)]
    pub trust_project: bool,

    #[command(flatten)]
    pub verbosity: Verbosity,

    #[command(subcommand)]
    pub command: Command,
}

/// How much Planwright says on stderr (`-q`, `-v`, `-vv`); beats PLANWRIGHT_LOG and RUST_LOG.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct Verbosity {
    /// Only errors and the final result: no live view, no warnings.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// More log lines on stderr: -v info, -vv debug.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan and execute a task, then print a summary.
    Run(RunArgs),
    /// Continue a run that was killed or cancelled, from its last durable point.
    Resume(ResumeArgs),
    /// Serve the HTTP API, the live event stream and the web page.
    Serve(ServeArgs),
    /// The named API tokens of `planwright serve`: one per client, each seeing only its own
    /// runs within its scopes (docs/security.md, "Clients").
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Claim queued runs from the database and run them, until SIGTERM; any number of
    /// workers (and servers) may share one database.
    Worker(WorkerArgs),
    /// The tools offered to the model, and why any is not.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Model Context Protocol: the config files' MCP servers (list, check), and Planwright
    /// itself as an MCP server for other agents (serve).
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Inspect stored runs.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// The settings in effect and where each comes from; a starter config file.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Trust a folder's `planwright.toml` and `.planwright/`: shows the values that decide
    /// where data goes, what runs or what protects your files, in full, and records them with
    /// the folder in your config file; a new or changed one, or a `planwright.toml` that
    /// appears later, is refused until this command is run again (docs/security.md).
    Trust {
        /// The folder [default: the working folder].
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
    /// Print a shell completion script on stdout (e.g. `planwright completions bash >
    /// ~/.local/share/bash-completion/completions/planwright`).
    Completions {
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Check each part Planwright uses and say how to fix what is missing.
    Doctor(DoctorArgs),
}

impl Command {
    /// The run options of a command that builds runs (`run`, `resume`, `serve`, `worker`,
    /// `mcp serve`, `tools list`, `doctor`), for what the config files add to them.
    pub fn run_options_mut(&mut self) -> Option<&mut RunOptions> {
        match self {
            Command::Run(args) => Some(&mut args.opts),
            Command::Resume(args) => Some(&mut args.opts),
            Command::Serve(args) => Some(&mut args.opts),
            Command::Worker(args) => Some(&mut args.opts),
            Command::Doctor(args) => Some(&mut args.opts),
            Command::Tools {
                command: ToolsCommand::List { opts },
            } => Some(opts),
            Command::Mcp {
                command: mcp::McpCommand::Serve(args),
            } => Some(&mut args.opts),
            _ => None,
        }
    }
}

/// The shells `planwright completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// `planwright doctor`: the options that say where things are, as `run` and `serve` read them.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Folder of the runs' workspaces, as for `serve` [default: `.planwright/runs` beside
    /// the database].
    #[arg(long, env = "PLANWRIGHT_WORKSPACE_ROOT")]
    pub workspace_root: Option<PathBuf>,

    /// Seconds the LLM endpoint has to answer `GET /models`.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=120))]
    pub timeout_secs: u64,

    #[command(flatten)]
    pub opts: RunOptions,
}

/// What `run` and `resume` print on stdout (`--output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputArg {
    /// The summary text (or one JSON object with --json).
    Text,
    /// Every event as one JSON line as it happens (as `runs events --json` prints them),
    /// nothing else.
    Jsonl,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print every setting in effect and where it comes from (flag, environment, file,
    /// profile, default).
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Write a commented starter `./planwright.toml` (every key, commented out).
    Init {
        /// Overwrite an existing `./planwright.toml`.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub opts: RunOptions,

    /// Answer the model's `message_ask_user` questions with TEXT, in order (repeat the flag
    /// for several); once they are used up, questions go to the terminal as usual.
    #[arg(help_heading = heading::SAFETY, long = "answer", value_name = "TEXT")]
    pub answers: Vec<String>,

    /// What to print on stdout.
    #[arg(help_heading = heading::OUTPUT, long, value_enum, default_value = "text", conflicts_with = "json")]
    pub output: OutputArg,

    /// The task, in plain words.
    #[arg(required = true, num_args = 1.., value_name = "TASK")]
    pub task: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run to continue (see `planwright runs list`).
    pub run_id: String,

    /// Options as for `run`; the mode and the workspace are the run's own.
    #[command(flatten)]
    pub opts: RunOptions,

    /// What to print on stdout.
    #[arg(help_heading = heading::OUTPUT, long, value_enum, default_value = "text", conflicts_with = "json")]
    pub output: OutputArg,
}

/// `planwright serve`: the run options are the defaults of every run it starts.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port. The bound address is printed on
    /// stderr as `listening on http://ADDR`.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: std::net::SocketAddr,

    /// Open connections at most (event streams included); past it the oldest connection without a whole request is closed to make room.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_connections: u32,

    /// Seconds a client has to send a request's headers before its connection is closed.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub header_timeout_secs: u32,

    /// Seconds a run waits for the answer to `message_ask_user` before the question fails;
    /// while it waits, its slot is free for another run.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u32).range(1..=604_800))]
    pub ask_timeout_secs: u32,

    /// Runs this server executes at once; further runs wait in the durable queue. 0: the
    /// server only queues runs and serves them, `planwright worker` processes run them
    /// [default: 4 with a SQLite file, 0 with PostgreSQL].
    #[arg(long = "workers", visible_alias = "max-concurrent-runs",
          value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub workers: Option<u32>,

    /// Folder of the runs' workspaces (`<root>/<run_id>/workspace`) [default:
    /// `.planwright/runs` beside the database, as `run` keeps them; for PostgreSQL the
    /// user's state folder]. With workers on other machines it must be a shared filesystem
    /// mounted at the same path on every one of them (docs/scaling.md).
    #[arg(long, env = "PLANWRIGHT_WORKSPACE_ROOT")]
    pub workspace_root: Option<PathBuf>,

    /// Bearer token required by the API [default: generated at first start and kept in
    /// `server-token` beside the database]. Required to listen on a non-loopback address.
    #[arg(long, env = "PLANWRIGHT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Serve the Prometheus `/metrics` without the token (docs/observability.md).
    #[arg(long)]
    pub metrics_public: bool,

    /// Defaults of the runs the server starts (a request may override mode and model).
    #[command(flatten)]
    pub opts: RunOptions,
}

/// `planwright worker`: the run options are the defaults of every run it claims (a queued
/// run's own mode and model win).
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Runs this worker executes at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,

    /// Seconds a run waits for the answer to `message_ask_user` before the question fails.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u32).range(1..=604_800))]
    pub ask_timeout_secs: u32,

    /// Folder of the runs' workspaces, as the servers' `--workspace-root` (the same
    /// default): a claimed run whose workspace lies elsewhere is refused
    /// (docs/security.md).
    #[arg(long, env = "PLANWRIGHT_WORKSPACE_ROOT")]
    pub workspace_root: Option<PathBuf>,

    /// Serve the Prometheus `/metrics` on this address (no token: bind it where only the
    /// scraper reaches; docs/observability.md).
    #[arg(long)]
    pub metrics_addr: Option<std::net::SocketAddr>,

    #[command(flatten)]
    pub opts: RunOptions,
}

/// Options shared by `run`, `resume` and `serve`.
#[derive(Debug, Clone, Args)]
pub struct RunOptions {
    /// Model name sent to the OpenAI-compatible endpoint.
    #[arg(help_heading = heading::MODEL, long, env = "PLANWRIGHT_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,

    /// The embedded model for `--provider local`: a GGUF file, or a name of the catalogue
    /// (qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, smollm2-135m; `cargo xtask model --list`)
    /// [default: qwen2.5-coder-1.5b].
    #[arg(help_heading = heading::MODEL, long, env = "PLANWRIGHT_MODEL_PATH")]
    pub model_path: Option<PathBuf>,

    /// The model provider: an OpenAI-compatible server preset (sets the base URL and the
    /// server's quirks; OPENAI_BASE_URL still overrides the URL), `anthropic` for Anthropic's
    /// Messages API (ANTHROPIC_API_KEY, docs/anthropic.md), or `local`, the embedded model.
    /// Without it, the endpoint OPENAI_API_KEY or OPENAI_BASE_URL names, else the embedded
    /// model.
    #[arg(help_heading = heading::MODEL, long, value_parser = ProviderParser, env = "PLANWRIGHT_PROVIDER")]
    pub provider: Option<String>,

    /// The environment variable holding the API key, read instead of OPENAI_API_KEY (and
    /// the preset's own key variables): config files name the variable, never the key.
    #[arg(help_heading = heading::MODEL, long, value_name = "NAME", env = "PLANWRIGHT_API_KEY_ENV")]
    pub api_key_env: Option<String>,

    /// Endpoint of the OpenAI-compatible server, e.g. http://localhost:11434/v1
    /// (overrides OPENAI_BASE_URL and the preset's URL).
    #[arg(help_heading = heading::MODEL, long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Ask the server to stream its replies (server-sent events).
    #[arg(help_heading = heading::MODEL, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set, value_name = "BOOL")]
    pub stream: bool,

    /// Largest reply read from the OpenAI-compatible server, in MiB: reading stops past it
    /// and the call fails (not retried), so a runaway reply never fills the memory.
    #[arg(help_heading = heading::MODEL, long, value_name = "MIB", env = "PLANWRIGHT_LLM_MAX_REPLY_MIB", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub llm_max_reply_mib: u32,

    /// How tools are offered to the model: the server's native tool calling, or a text
    /// protocol for models without it.
    #[arg(help_heading = heading::MODEL,
        long,
        value_parser = NamedParser::<ToolProtocol>::new(),
        env = "PLANWRIGHT_TOOL_PROTOCOL",
        default_value = "native"
    )]
    pub tool_protocol: ToolProtocol,

    /// Write every LLM request/response pair of the run to FILE (JSON lines, key redacted).
    #[arg(help_heading = heading::MODEL, long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,

    /// Serve the LLM from a file written by --record, with no network and no key; a run
    /// whose requests differ from the recorded ones fails naming the first difference.
    #[arg(help_heading = heading::MODEL, long, value_name = "FILE")]
    pub replay: Option<PathBuf>,

    /// Planning style; `auto` picks direct for small tasks (docs/direct.md).
    #[arg(help_heading = heading::PLANNING, long, value_parser = NamedParser::<Mode>::new(), default_value = "auto")]
    pub mode: Mode,

    /// How ready steps of a dag are released.
    #[arg(help_heading = heading::PLANNING, long, value_parser = NamedParser::<Schedule>::new(), default_value = "event")]
    pub schedule: Schedule,

    /// Steps running at once in the dag style.
    #[arg(help_heading = heading::PLANNING, long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel: u32,

    /// Plan revisions (re-plans and plan-act revisions) allowed per run.
    #[arg(help_heading = heading::PLANNING, long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub max_revisions: u32,

    /// When plan-act revises the plan after a successful step.
    #[arg(help_heading = heading::PLANNING, long, value_parser = NamedParser::<Revise>::new(), default_value = "on-failure")]
    pub revise: Revise,

    /// Most items on the todo style's list.
    #[arg(help_heading = heading::PLANNING, long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub max_todos: u32,

    /// Ask a verifier call to confirm each step the executor reports done.
    #[arg(help_heading = heading::PLANNING, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set, value_name = "BOOL")]
    pub verify: bool,

    /// How the model acts: `code` (whole programs, `code_run`), `tools` (the shell and file
    /// tools) or `both` [default: code on the embedded model, both on an endpoint]
    /// (docs/code-actions.md).
    #[arg(help_heading = heading::PLANNING, long, value_parser = NamedParser::<Actions>::new())]
    pub actions: Option<Actions>,

    /// Check a completed run's answer by reproducing it with an independent program in a
    /// copy of the workspace; the result says `verified` only when they agree
    /// (docs/verification.md).
    #[arg(help_heading = heading::PLANNING, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub verify_answers: bool,

    /// Most steps a planner may put in a plan; a longer plan keeps its first steps (with an
    /// event) [default: 6 for the embedded model, 30 for an OpenAI-compatible endpoint].
    #[arg(help_heading = heading::PLANNING, long, value_parser = clap::value_parser!(u32).range(1..=200))]
    pub max_plan_steps: Option<u32>,

    /// How the final summary is written: `auto` (from the recorded facts when they say
    /// everything, else an LLM call), `facts` (never an LLM call), `llm` (always one).
    #[arg(help_heading = heading::PLANNING, long, value_parser = NamedParser::<SummaryStyle>::new(), default_value = "auto")]
    pub summary: SummaryStyle,

    /// Where shell commands run.
    #[arg(help_heading = heading::TOOLS, long, value_parser = NamedParser::<SandboxMode>::new(), default_value = "auto",
          env = "PLANWRIGHT_SANDBOX")]
    pub sandbox: SandboxMode,

    /// Let sandboxed shell commands use the network.
    #[arg(help_heading = heading::TOOLS, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set, value_name = "BOOL")]
    pub sandbox_network: bool,

    /// Let sandboxed shell commands and the file tools change the workspace's `.git`, `.hg`
    /// and `.svn` folders (read-only by default: a hook or `core.fsmonitor` planted there
    /// runs as you at your next `git status`; docs/security.md, "Version control").
    #[arg(help_heading = heading::TOOLS, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set, value_name = "BOOL")]
    pub sandbox_vcs_writes: bool,

    /// Pass this environment variable on to shell commands (repeatable). They otherwise
    /// see only PATH, locale, terminal, time zone and user name, with HOME set to the
    /// workspace: never Planwright's keys or tokens.
    #[arg(help_heading = heading::TOOLS,
        long = "shell-env",
        value_name = "NAME",
        env = "PLANWRIGHT_SHELL_ENV",
        value_delimiter = ','
    )]
    pub shell_env: Vec<String>,

    /// Tools never offered to the model: names or patterns, e.g. `browser_*,web_search`
    /// (repeatable or comma-separated; `planwright tools list` shows what is left).
    #[arg(help_heading = heading::TOOLS,
        long = "disabled-tools",
        value_name = "PATTERN",
        env = "PLANWRIGHT_DISABLED_TOOLS",
        value_delimiter = ',',
        value_parser = tool_pattern
    )]
    pub disabled_tools: Vec<String>,

    /// Who serves `web_search` [default: the first configured of SEARXNG_URL,
    /// TAVILY_API_KEY, BRAVE_API_KEY; none: not offered].
    #[arg(help_heading = heading::TOOLS, long, value_parser = NamedParser::<SearchChoice>::new(), env = "PLANWRIGHT_SEARCH")]
    pub search: Option<SearchChoice>,

    /// Root of the SearxNG instance serving `web_search`, e.g. http://localhost:8888.
    #[arg(help_heading = heading::TOOLS, long, value_name = "URL", env = "SEARXNG_URL")]
    pub searxng_url: Option<String>,

    /// Seconds one web search may take [default: 20].
    #[arg(help_heading = heading::TOOLS, long, env = "PLANWRIGHT_SEARCH_TIMEOUT",
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub search_timeout_secs: Option<u64>,

    /// Chromium's program for the browser tools [default: chromium or chromium-browser on
    /// PATH].
    #[arg(help_heading = heading::TOOLS, long, value_name = "PATH", env = "PLANWRIGHT_CHROMIUM")]
    pub chromium: Option<PathBuf>,

    /// Let the browser tools open loopback and private-network addresses (local test pages,
    /// e.g. http://127.0.0.1:8000). Link-local addresses (cloud metadata) and file: stay
    /// refused (docs/security.md, "The browser").
    #[arg(help_heading = heading::TOOLS, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set, value_name = "BOOL")]
    pub browser_allow_local: bool,

    /// A CA certificate (PEM file) to trust beside the system's roots when talking to the LLM
    /// endpoint or the web search provider: a company proxy's or a local server's. Repeatable.
    #[arg(help_heading = heading::TOOLS, long = "ca-cert", env = "PLANWRIGHT_CA_CERT", value_delimiter = ',')]
    pub ca_certs: Vec<PathBuf>,

    /// What tool calls may run without asking a person: `auto` (all), `ask` (shell commands
    /// and writes wait for yes / no / always), `read-only` (they are refused; the run goes
    /// on reading and browsing). --allow and --deny rules apply in every mode
    /// (docs/approvals.md).
    #[arg(help_heading = heading::SAFETY, long, value_parser = NamedParser::<ApprovalMode>::new(), default_value = "auto",
          env = "PLANWRIGHT_APPROVAL")]
    pub approval: ApprovalMode,

    /// Let matching tool calls run without asking, e.g. `shell_exec(git status*)`,
    /// `file_write(src/**)` (repeatable).
    #[arg(help_heading = heading::SAFETY, long = "allow", value_name = "RULE", value_parser = approval_rule)]
    pub allow: Vec<ApprovalRule>,

    /// Refuse matching tool calls, e.g. `shell_exec(rm -rf*)`; deny wins over allow
    /// (repeatable).
    #[arg(help_heading = heading::SAFETY, long = "deny", value_name = "RULE", value_parser = approval_rule)]
    pub deny: Vec<ApprovalRule>,

    /// Let the run change and delete the files that were in the workspace before it
    /// started (its inputs) without a call naming them first; otherwise a change no call
    /// named in its `changes` is undone (docs/security.md, "Input files").
    #[arg(help_heading = heading::SAFETY, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_input_edits: bool,

    /// Files of the workspace no call may change, move or delete, named or not, e.g.
    /// `*.lock`, `src/**` (repeatable; docs/security.md, "Input files").
    #[arg(help_heading = heading::SAFETY, long = "protect", value_name = "GLOB")]
    pub protect: Vec<String>,

    /// Workspace folder for the run's files [default: <run_id>/workspace under the runs
    /// folder beside the database: ./.planwright/runs/ for the default one].
    #[arg(help_heading = heading::FILES, long)]
    pub workspace: Option<PathBuf>,

    /// Record the workspace before each step and when the run ends, so that `planwright
    /// runs diff` shows and `planwright runs undo` undoes what the run changed
    /// (docs/checkpoints.md).
    #[arg(help_heading = heading::FILES, long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub checkpoints: bool,

    /// Left out of the workspace checkpoints besides `.planwright` and the object stores of
    /// `.git`, `.hg` and `.svn`: `NAME/` a folder of that name anywhere, `NAME` a file or
    /// folder of that name, `a/b` that path (comma-separated; no wildcards).
    #[arg(help_heading = heading::FILES, long, value_name = "PATTERN", value_delimiter = ',',
          default_values = ["target/", "node_modules/"])]
    pub checkpoint_ignore: Vec<String>,

    /// A file bigger than this (MiB) is recorded by the checkpoints (a change is seen) but
    /// its content is not kept: it cannot be shown nor undone.
    #[arg(help_heading = heading::FILES, long, value_name = "MIB", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub checkpoint_max_file_mib: u32,

    /// Print one JSON object with the outcome on stdout instead of the summary text.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub json: bool,

    /// Stop the run cleanly once this many tokens (prompt + completion) are spent.
    #[arg(help_heading = heading::LIMITS, long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: Option<u64>,

    /// Most LLM turns an executor may take for one plan step.
    #[arg(help_heading = heading::LIMITS, long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_steps: u32,

    /// Wall-time limit of one attempt of a step, in seconds (checked between LLM turns);
    /// 0: no limit.
    #[arg(help_heading = heading::LIMITS, long, default_value_t = 1800,
          value_parser = clap::value_parser!(u64).range(0..=604_800))]
    pub max_step_secs: u64,

    /// Tool calls run from one model answer; further calls in the same answer are not run
    /// (the model is told).
    #[arg(help_heading = heading::LIMITS, long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_calls_per_reply: u32,

    /// Retries of a failed step before its fallback and a re-plan.
    #[arg(help_heading = heading::LIMITS, long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub retries: u32,

    /// Backoff before retry n, in milliseconds (multiplied by n).
    #[arg(help_heading = heading::LIMITS, long, default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub retry_delay_ms: u64,

    /// Seconds a run's lease lasts without renewal (renewed every third of it). After a crash
    /// elsewhere (another host or container), the run can be taken over once it expires.
    #[arg(help_heading = heading::LIMITS, long, env = "PLANWRIGHT_LEASE_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub lease_secs: u32,

    /// The config files' `[providers.NAME]` tables in effect (docs/configuration.md,
    /// "Provider tables"): no option of their own, set from the loaded files before the
    /// command runs (`Command::run_options_mut`).
    #[arg(skip)]
    pub provider_tables: std::collections::BTreeMap<String, domain::ports::ProviderTable>,

    /// The config files' MCP servers (docs/mcp.md): no option of their own, set from the
    /// loaded files before the command runs (`Command::run_options_mut`).
    #[arg(skip)]
    pub mcp_servers: runner::mcp::McpServers,

    /// Where the runs' notices go (the terminal, `terminal::notice`): set before the
    /// command runs.
    #[arg(skip)]
    pub notices: runner::notice::Notices,

    /// The config file `--config` named, read-only to the run's tools when it lies in the
    /// workspace: set from the global option before the command runs.
    #[arg(skip)]
    pub config_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token for the client NAME and print it once on stdout; the server keeps only
    /// its hash (in `server-tokens.toml` beside `server-token`) and accepts it at once.
    Add {
        /// The client's name, recorded as the owner of the runs it creates.
        #[arg(value_name = "NAME")]
        name: String,
        /// What the token may do, comma-separated: submit (create and cancel its runs),
        /// read (see its runs and their files), approve (answer its runs), admin (every run).
        #[arg(
            long = "scope",
            value_parser = NamedParser::<Scope>::new(),
            value_delimiter = ',',
            default_value = "submit,read,approve"
        )]
        scopes: Vec<Scope>,
    },
    /// List the named tokens: name, scopes, creation time (never the tokens).
    List,
    /// Revoke the token of NAME (a running server refuses it from its next request).
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List every tool offered to the model and why any family is not offered.
    List {
        #[command(flatten)]
        opts: RunOptions,
    },
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List runs, newest first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one run: plan with markers, step results, token usage.
    Show {
        run_id: String,
        #[arg(long)]
        json: bool,
    },
    /// Print a run's event log.
    Events {
        run_id: String,
        /// Keep printing new events until the run ends (follows a run of another process).
        #[arg(long)]
        follow: bool,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Delete a run, its plans and events, its workspace checkpoints (and its workspace
    /// when it is the default one).
    Delete { run_id: String },
    /// Delete the workspace checkpoints of the runs that ended more than AGE ago (the runs
    /// stay; `runs diff` and `runs undo` no longer reach them).
    Prune {
        /// A number and d, h or m: 30d, 12h, 90m.
        #[arg(long, value_name = "AGE", value_parser = age::age)]
        older_than: std::time::Duration,
    },
    /// Show what a run changed in its workspace (or one step): a unified diff for text
    /// files, a line for binary, too large and kept-out ones (docs/checkpoints.md).
    Diff {
        run_id: String,
        /// Only this step's changes (its number in `planwright runs show`, from 0).
        #[arg(long, value_name = "N")]
        step: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Put the workspace back as it was before the run (or before a step). Refuses a live
    /// run, and files changed after the run ended unless --force; the undo can be undone.
    Undo {
        run_id: String,
        /// Back to before this step (its number in `planwright runs show`, from 0).
        #[arg(long, value_name = "N", conflicts_with = "checkpoint")]
        to_step: Option<u32>,
        /// Back to this checkpoint of the run: the one an earlier undo printed, to undo it.
        #[arg(long, value_name = "ID")]
        checkpoint: Option<String>,
        /// Overwrite the files changed after the run ended instead of refusing.
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
}
