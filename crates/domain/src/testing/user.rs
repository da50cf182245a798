//! [`AnswersInOrder`]: a user who answers questions from a list, in order, and records them.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::ports::user::{AskUserError, UserChannel};

/// Answers questions from a list, in order; out of answers, it cannot be asked. Keeps the
/// questions it was asked.
#[derive(Debug, Default)]
pub struct AnswersInOrder {
    answers: Mutex<VecDeque<String>>,
    asked: Mutex<Vec<String>>,
}

impl AnswersInOrder {
    pub fn new(answers: &[&str]) -> AnswersInOrder {
        AnswersInOrder {
            answers: Mutex::new(answers.iter().map(|a| a.to_string()).collect()),
            asked: Mutex::default(),
        }
    }

    /// The questions asked so far, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl UserChannel for AnswersInOrder {
    async fn notify(&self, _run_id: &str, _text: &str) {}
    async fn ask(&self, _run_id: &str, question: &str) -> Result<String, AskUserError> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(question.to_string());
        }
        self.answers
            .lock()
            .ok()
            .and_then(|mut a| a.pop_front())
            .ok_or_else(|| AskUserError::Unavailable("out of answers".into()))
    }
}
