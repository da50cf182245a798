//! The command line's options as the runner's and the server's plain settings
//! ([`RunSettings`], `server::ServeSettings`, ...): the one place the clap types are turned
//! into theirs.

use std::path::PathBuf;
use std::time::Duration;

use runner::database::Database;
use runner::RunSettings;

use server::tokens::TokenCommand as TokenAction;
use server::{McpServeSettings, ServeSettings, WorkerSettings};

use super::mcp::McpServeArgs;
use super::{RunOptions, ServeArgs, TokenCommand, WorkerArgs};

impl RunOptions {
    /// These options as the runner reads them.
    pub fn settings(&self) -> RunSettings {
        RunSettings {
            mode: self.mode,
            model: self.model.clone(),
            workspace: self.workspace.clone(),
            max_steps: self.max_steps,
            max_step_time: Duration::from_secs(self.max_step_secs),
            max_calls_per_reply: self.max_calls_per_reply,
            schedule: self.schedule,
            parallel: self.parallel,
            retries: self.retries,
            retry_delay: Duration::from_millis(self.retry_delay_ms),
            max_revisions: self.max_revisions,
            revise: self.revise,
            max_todos: self.max_todos,
            verify: self.verify,
            model_path: self.model_path.clone(),
            approval: self.approval,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            allow_input_edits: self.allow_input_edits,
            protect: self.protect.clone(),
            actions: self.actions,
            verify_answers: self.verify_answers,
            checkpoints: runner::CheckpointSettings {
                enabled: self.checkpoints,
                ignore: self.checkpoint_ignore.clone(),
                max_file_mib: self.checkpoint_max_file_mib,
            },
            sandbox: self.sandbox,
            sandbox_network: self.sandbox_network,
            sandbox_vcs_writes: self.sandbox_vcs_writes,
            shell_env: self.shell_env.clone(),
            disabled_tools: self.disabled_tools.clone(),
            search: self.search,
            searxng_url: self.searxng_url.clone(),
            search_timeout_secs: self.search_timeout_secs,
            chromium: self.chromium.clone(),
            browser_allow_local: self.browser_allow_local,
            ca_certs: self.ca_certs.clone(),
            max_tokens: self.max_tokens,
            max_plan_steps: self.max_plan_steps,
            summary: self.summary,
            lease: Duration::from_secs(self.lease_secs.into()),
            provider: self.provider.clone(),
            provider_tables: self.provider_tables.clone(),
            mcp_servers: self.mcp_servers.clone(),
            notices: self.notices,
            config_file: self.config_file.clone(),
            api_key_env: self.api_key_env.clone(),
            base_url: self.base_url.clone(),
            stream: self.stream,
            llm_max_reply_mib: self.llm_max_reply_mib,
            tool_protocol: self.tool_protocol,
            record: self.record.clone(),
            replay: self.replay.clone(),
        }
    }
}

impl ServeArgs {
    /// `serve`'s settings; `quiet`: `-q`.
    pub fn settings(&self, db: &Database, quiet: bool) -> ServeSettings {
        ServeSettings {
            addr: self.addr,
            max_connections: self.max_connections,
            header_timeout: Duration::from_secs(self.header_timeout_secs.into()),
            ask_timeout: Duration::from_secs(self.ask_timeout_secs.into()),
            workers: self.workers,
            workspace_root: workspace_root(self.workspace_root.as_ref(), db),
            token: self.token.clone(),
            metrics_public: self.metrics_public,
            run: self.opts.settings(),
            quiet,
        }
    }
}

impl WorkerArgs {
    /// `worker`'s settings; `quiet`: `-q`.
    pub fn settings(&self, db: &Database, quiet: bool) -> WorkerSettings {
        WorkerSettings {
            concurrency: self.concurrency,
            ask_timeout: Duration::from_secs(self.ask_timeout_secs.into()),
            workspace_root: workspace_root(self.workspace_root.as_ref(), db),
            metrics_addr: self.metrics_addr,
            run: self.opts.settings(),
            quiet,
        }
    }
}

impl McpServeArgs {
    /// `mcp serve`'s settings.
    pub fn settings(&self, db: &Database) -> McpServeSettings {
        McpServeSettings {
            workers: self.workers,
            ask_timeout: Duration::from_secs(self.ask_timeout_secs.into()),
            workspace_root: workspace_root(self.workspace_root.as_ref(), db),
            run: self.opts.settings(),
        }
    }
}

impl From<TokenCommand> for TokenAction {
    fn from(command: TokenCommand) -> TokenAction {
        match command {
            TokenCommand::Add { name, scopes } => TokenAction::Add { name, scopes },
            TokenCommand::List => TokenAction::List,
            TokenCommand::Remove { name } => TokenAction::Remove { name },
        }
    }
}

/// `--workspace-root`, or beside the database where `run` keeps its runs
/// (`Database::runs_root`): a server started in a folder writes nothing there unless its
/// database is there.
pub fn workspace_root(given: Option<&PathBuf>, db: &Database) -> PathBuf {
    given.cloned().unwrap_or_else(|| db.runs_root())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};

    /// The runner's defaults are the command line's: an embedder starting from
    /// `RunSettings::default()` gets what `planwright run` does without options.
    #[test]
    fn the_runner_defaults_are_the_command_line_defaults() {
        let Ok(cli) = Cli::try_parse_from(["planwright", "run", "task"]) else {
            panic!("parses");
        };
        let Command::Run(args) = cli.command else {
            panic!("not run");
        };
        let from_cli = format!("{:?}", args.opts.settings());
        let default = format!("{:?}", runner::RunSettings::default());
        assert_eq!(from_cli, default);
    }
}
