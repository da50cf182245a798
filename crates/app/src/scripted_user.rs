//! `planwright run --answer TEXT`: answers given up front on the command line. Each
//! `message_ask_user` question takes the next answer, in order; once they are used up the
//! questions go to the fallback channel (the terminal). For batch runs and the eval harness
//! (`cargo xtask eval`), where nobody sits at the terminal.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use domain::model::approval::ApprovalDecision;
use domain::ports::{ApprovalRequest, AskUserError, UserChannel};

/// Scripted answers first, then `fallback`.
pub struct ScriptedUser<F> {
    answers: Mutex<VecDeque<String>>,
    fallback: F,
}

impl<F: UserChannel> ScriptedUser<F> {
    pub fn new(answers: Vec<String>, fallback: F) -> Self {
        ScriptedUser {
            answers: Mutex::new(answers.into()),
            fallback,
        }
    }

    fn next_answer(&self) -> Option<String> {
        // A poisoned lock only means another question panicked mid-pop; the queue is intact.
        let mut queue = self
            .answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        queue.pop_front()
    }
}

#[async_trait]
impl<F: UserChannel> UserChannel for ScriptedUser<F> {
    async fn notify(&self, run_id: &str, text: &str) {
        self.fallback.notify(run_id, text).await;
    }

    async fn ask(&self, run_id: &str, question: &str) -> Result<String, AskUserError> {
        match self.next_answer() {
            Some(answer) => {
                tracing::info!(%run_id, %question, %answer, "answered from --answer");
                Ok(answer)
            }
            None => self.fallback.ask(run_id, question).await,
        }
    }

    /// Approvals are never scripted: the fallback decides.
    async fn approve(
        &self,
        run_id: &str,
        request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, AskUserError> {
        self.fallback.approve(run_id, request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ports::NoUser;

    #[tokio::test]
    async fn answers_come_in_order_then_the_fallback_decides() {
        let user = ScriptedUser::new(vec!["blue".into(), "42".into()], NoUser);
        assert_eq!(user.ask("r", "colour?").await, Ok("blue".to_string()));
        assert_eq!(user.ask("r", "number?").await, Ok("42".to_string()));
        assert!(matches!(
            user.ask("r", "more?").await,
            Err(AskUserError::Unavailable(_))
        ));
    }
}
