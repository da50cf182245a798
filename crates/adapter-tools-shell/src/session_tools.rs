//! The session tools: `shell_view`, `shell_wait`, `shell_write` and `shell_kill`, over
//! the commands [`ShellSessions`] keeps for the calling run.
//!
//! Every reply starts with `session shN: STATUS` and shows only the output produced since
//! the previous reply about that session (see [`crate::report`]).

use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use domain::ports::{Tool, ToolContext, ToolEffect, ToolFamily, ToolOutput};
use domain::tools::args::{IntRange, NumberArg};
use domain::ToolError;

use crate::process::{Proc, WriteError};
use crate::report::session_report;
use crate::sessions::ShellSessions;
use crate::{args, SHELL_KILL, SHELL_VIEW, SHELL_WAIT, SHELL_WRITE};

/// The range of `shell_wait`'s `seconds`.
pub(crate) const WAIT_SECONDS: IntRange = IntRange::between(1, 600);
/// How long `shell_write` may take to hand its input over.
const WRITE_LIMIT: Duration = Duration::from_secs(5);
/// After a write: how long to wait for the first reaction, for a pause in the output, and
/// at most in all.
const REACTION_FIRST: Duration = Duration::from_secs(1);
const REACTION_QUIET: Duration = Duration::from_millis(200);
const REACTION_MAX: Duration = Duration::from_secs(3);
/// How long `shell_kill` waits for the killed command to be reaped and read to its end.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// Arguments of `shell_view`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellViewArgs {
    /// From shell_exec, e.g. sh1.
    pub id: String,
}

/// Arguments of `shell_wait`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellWaitArgs {
    /// From shell_exec, e.g. sh1.
    pub id: String,
    // Most seconds to wait (the description says it).
    #[schemars(with = "u64")]
    pub seconds: NumberArg,
}

/// Arguments of `shell_write`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellWriteArgs {
    /// From shell_exec, e.g. sh1.
    pub id: String,
    // Text to type.
    pub input: String,
    // Send Enter after the input (its default, true, is in the schema).
    #[serde(default = "yes")]
    pub press_enter: bool,
}

/// Arguments of `shell_kill`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellKillArgs {
    /// From shell_exec, e.g. sh1.
    pub id: String,
}

fn yes() -> bool {
    true
}

/// Shows a session's status and new output.
#[derive(Debug, Clone)]
pub struct ShellViewTool {
    sessions: ShellSessions,
}

/// Waits for a session's command to end.
#[derive(Debug, Clone)]
pub struct ShellWaitTool {
    sessions: ShellSessions,
}

/// Types into a session's stdin.
#[derive(Debug, Clone)]
pub struct ShellWriteTool {
    sessions: ShellSessions,
}

/// Kills a session's command.
#[derive(Debug, Clone)]
pub struct ShellKillTool {
    sessions: ShellSessions,
}

impl ShellViewTool {
    pub fn new(sessions: ShellSessions) -> ShellViewTool {
        ShellViewTool { sessions }
    }
}

impl ShellWaitTool {
    pub fn new(sessions: ShellSessions) -> ShellWaitTool {
        ShellWaitTool { sessions }
    }
}

impl ShellWriteTool {
    pub fn new(sessions: ShellSessions) -> ShellWriteTool {
        ShellWriteTool { sessions }
    }
}

impl ShellKillTool {
    pub fn new(sessions: ShellSessions) -> ShellKillTool {
        ShellKillTool { sessions }
    }
}

#[async_trait]
impl Tool for ShellViewTool {
    fn name(&self) -> &str {
        SHELL_VIEW
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::ShellSession
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }

    fn description(&self) -> &str {
        "Show a shell session's status and new output, without waiting."
    }

    fn parameters(&self) -> Value {
        args::schema::<ShellViewArgs>()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellViewArgs = args::parse(SHELL_VIEW, args)?;
        let session = self.sessions.get(&ctx.run_id, &args.id)?;
        Ok(session_report(&session.id, &session.proc, None))
    }
}

#[async_trait]
impl Tool for ShellWaitTool {
    fn name(&self) -> &str {
        SHELL_WAIT
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::ShellSession
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }

    fn description(&self) -> &str {
        "Wait up to `seconds` for a shell session to end; returns its status and new output."
    }

    fn parameters(&self) -> Value {
        let mut schema = args::schema::<ShellWaitArgs>();
        WAIT_SECONDS.declare(&mut schema, "seconds");
        schema
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellWaitArgs = args::parse(SHELL_WAIT, args)?;
        let seconds = WAIT_SECONDS
            .check(SHELL_WAIT, "seconds", &args.seconds)
            .map_err(|e| match e {
                ToolError::InvalidArguments(m) => {
                    ToolError::InvalidArguments(format!("{m} (shell_view looks without waiting)"))
                }
                other => other,
            })?;
        let session = self.sessions.get(&ctx.run_id, &args.id)?;
        let limit = Duration::from_secs(seconds);
        tokio::select! {
            () = session.proc.ended() => {}
            () = tokio::time::sleep(limit) => {}
            () = ctx.cancel.cancelled() => {}
        }
        Ok(session_report(&session.id, &session.proc, None))
    }
}

#[async_trait]
impl Tool for ShellWriteTool {
    fn name(&self) -> &str {
        SHELL_WRITE
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::ShellSession
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }

    fn description(&self) -> &str {
        "Type `input` into a shell session's stdin, then Enter; returns its reaction."
    }

    fn parameters(&self) -> Value {
        args::schema::<ShellWriteArgs>()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellWriteArgs = args::parse(SHELL_WRITE, args)?;
        let session = self.sessions.get(&ctx.run_id, &args.id)?;
        let mut bytes = args.input.into_bytes();
        if args.press_enter {
            bytes.push(b'\n');
        }
        if bytes.is_empty() {
            return Err(ToolError::InvalidArguments(
                "shell_write: nothing to write: input is empty and press_enter is false"
                    .to_string(),
            ));
        }
        let id = &session.id;
        let proc = &session.proc;
        // Registered before writing, so a reaction arriving at once is not missed.
        let reaction = proc.activity();
        match proc.write_stdin(&bytes, WRITE_LIMIT).await {
            Ok(()) => {}
            Err(WriteError::Closed) => {
                let report = session_report(id, proc, None);
                return Err(ToolError::Failed(format!(
                    "session {id} has ended; nothing was written (start a new command with \
                     shell_exec). {}",
                    report.content
                )));
            }
            Err(WriteError::ClosedByCommand) => {
                return Err(ToolError::Failed(format!(
                    "session {id}: the command closed its stdin, so nothing can be written to \
                     it; use shell_view, shell_wait or shell_kill"
                )))
            }
            Err(WriteError::Stalled) => {
                return Err(ToolError::Failed(format!(
                    "session {id}: the command is not reading its stdin; gave up after {} s \
                     (part of the input may have been written)",
                    WRITE_LIMIT.as_secs()
                )))
            }
            Err(WriteError::Io(e)) => {
                return Err(ToolError::Failed(format!(
                    "session {id}: writing to the command's stdin failed: {e}"
                )))
            }
        }
        await_reaction(proc, reaction, &ctx.cancel).await;
        let lead = format!(
            "wrote {} byte{} to its stdin",
            bytes.len(),
            if bytes.len() == 1 { "" } else { "s" }
        );
        Ok(session_report(id, proc, Some(lead)))
    }
}

/// Waits for the first output after a write (or the end), then for a short pause in the
/// output, all within a few seconds, so the reply shows the command's reaction.
async fn await_reaction(
    proc: &Proc,
    first: tokio::sync::futures::Notified<'_>,
    cancel: &tokio_util::sync::CancellationToken,
) {
    let started = Instant::now();
    let reacted = tokio::select! {
        result = tokio::time::timeout(REACTION_FIRST, first) => result.is_ok(),
        () = cancel.cancelled() => false,
    };
    if !reacted {
        return;
    }
    while proc.is_running() && started.elapsed() < REACTION_MAX {
        let more = proc.activity();
        let quiet = REACTION_QUIET.min(REACTION_MAX.saturating_sub(started.elapsed()));
        if tokio::time::timeout(quiet, more).await.is_err() {
            return;
        }
    }
}

#[async_trait]
impl Tool for ShellKillTool {
    fn name(&self) -> &str {
        SHELL_KILL
    }
    fn family(&self) -> ToolFamily {
        ToolFamily::ShellSession
    }
    fn effect(&self) -> ToolEffect {
        ToolEffect::Acts
    }

    fn description(&self) -> &str {
        "Kill a shell session and all it started; returns its last output."
    }

    fn parameters(&self) -> Value {
        args::schema::<ShellKillArgs>()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellKillArgs = args::parse(SHELL_KILL, args)?;
        let session = self.sessions.get(&ctx.run_id, &args.id)?;
        let proc = &session.proc;
        let lead = if proc.is_running() {
            tracing::info!(run_id = %ctx.run_id, session = %session.id, "shell_kill");
            proc.kill();
            if tokio::time::timeout(KILL_GRACE, proc.ended())
                .await
                .is_err()
            {
                tracing::warn!(session = %session.id, "killed session did not end in time");
            }
            None
        } else {
            Some("it had already ended; nothing was killed".to_string())
        };
        Ok(session_report(&session.id, proc, lead))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn press_enter_defaults_to_true() {
        let args: ShellWriteArgs =
            args::parse(SHELL_WRITE, json!({"id": "sh1", "input": "y"})).unwrap();
        assert!(args.press_enter);
        let schema = args::schema::<ShellWriteArgs>();
        assert_eq!(schema["required"], json!(["id", "input"]));
        assert_eq!(schema["properties"]["press_enter"]["default"], true);
        let wait = args::schema::<ShellWaitArgs>();
        assert_eq!(wait["required"], json!(["id", "seconds"]));
        assert_eq!(
            ShellWaitTool::new(ShellSessions::new()).parameters()["properties"]["seconds"],
            json!({"type": "integer", "minimum": 1, "maximum": 600})
        );
    }
}
