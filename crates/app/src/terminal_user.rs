//! The human in the loop on a terminal: `message_ask_user` questions and tool-call approvals
//! (`--approval ask`) are asked on stderr and answered on stdin — only when stdin is a
//! terminal. Otherwise (a pipe, /dev/null, a closed
//! stdin) the question fails at once with a clear reason; nothing ever blocks on it.

use std::io::{BufRead, IsTerminal, Write};

use async_trait::async_trait;
use domain::model::approval::ApprovalDecision;
use domain::ports::{ApprovalRequest, AskUserError, UserChannel};

#[derive(Debug, Default)]
pub struct TerminalUser;

#[async_trait]
impl UserChannel for TerminalUser {
    /// Notifications reach the terminal as `user_notified` events, through the live view.
    async fn notify(&self, _run_id: &str, _text: &str) {}

    async fn ask(&self, _run_id: &str, question: &str) -> Result<String, AskUserError> {
        prompt(format!("\n  ? {question}\n  > ")).await
    }

    async fn approve(
        &self,
        _run_id: &str,
        request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, AskUserError> {
        let why = request
            .reason
            .as_deref()
            .map(|r| format!("\n    the rules cannot tell on their own: {r}"))
            .unwrap_or_default();
        let mut asked = format!(
            "\n  ! {} wants to run: {}{why}\n    allow? [y]es / [n]o / [a]lways for this run > ",
            request.tool, request.arguments
        );
        loop {
            let line = prompt(asked).await?;
            match line.trim().to_lowercase().parse::<ApprovalDecision>() {
                Ok(decision) => return Ok(decision),
                Err(_) => asked = "    please answer y, n or a > ".to_string(),
            }
        }
    }
}

/// Writes `text` on stderr and reads one line of stdin (without its line end); fails at
/// once when stdin is not a terminal.
async fn prompt(text: String) -> Result<String, AskUserError> {
    if !std::io::stdin().is_terminal() {
        return Err(AskUserError::Unavailable(
            "stdin is not an interactive terminal".to_string(),
        ));
    }
    let line = tokio::task::spawn_blocking(move || {
        {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "{}", crate::safe_text::terminal_safe(&text));
            let _ = err.flush();
        }
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map(|n| (n, line))
    })
    .await
    .map_err(|e| AskUserError::NoAnswer(format!("the terminal reader failed: {e}")))?;
    match line {
        Ok((0, _)) => Err(AskUserError::NoAnswer("stdin was closed".to_string())),
        Ok((_, line)) => Ok(line.trim_end_matches(['\r', '\n']).to_string()),
        Err(e) => Err(AskUserError::NoAnswer(format!("reading stdin failed: {e}"))),
    }
}
