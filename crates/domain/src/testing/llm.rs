//! Scripted LLM clients: [`ScriptedLlm`] answers in order, [`RoutedLlm`] answers by what is
//! asked (planner, executor of a given step, verifier, summary). Both record every request.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;

use super::replies::{acted, text, Reply};
use crate::ports::llm::{CallPurpose, ChatRequest, ChatResponse, LlmClient, LlmError, Role};

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Answers every call with the next reply of its script; once the script is spent, with
/// `LlmError::Permanent("script exhausted")`.
#[derive(Default)]
pub struct ScriptedLlm {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedLlm {
    pub fn new(script: Vec<Reply>) -> ScriptedLlm {
        ScriptedLlm {
            script: Mutex::new(script.into()),
            requests: Mutex::default(),
        }
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        locked(&self.requests).clone()
    }
}

#[async_trait]
impl LlmClient for ScriptedLlm {
    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        locked(&self.requests).push(req);
        locked(&self.script)
            .pop_front()
            .unwrap_or_else(|| Err(LlmError::Permanent("script exhausted".into())))
    }
}

/// The step an executor request is about: `You are now working on step N: "TEXT"` in its
/// first user message gives `TEXT`; a direct run's step is the task (`TASK: TEXT` alone);
/// empty for other requests.
pub fn step_of(req: &ChatRequest) -> String {
    let prompt = req
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.as_deref())
        .unwrap_or_default();
    prompt
        .split_once("You are now working on step ")
        .and_then(|(_, rest)| rest.split_once('"'))
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(text, _)| text.to_string())
        .or_else(|| {
            prompt
                .strip_prefix("TASK: ")
                .filter(|_| prompt.contains("Do the task with the tools"))
                .and_then(|rest| rest.split_once("\n\n"))
                .map(|(task, _)| task.to_string())
        })
        .unwrap_or_default()
}

/// Answers planner calls from a queue, executor calls per step description (after that
/// step's latency; a step without script acts and succeeds with `done: STEP`), verifier
/// (`Other`) calls from a queue, and summaries with "summary". Counts how many executor
/// calls run at once.
#[derive(Default)]
pub struct RoutedLlm {
    plans: Mutex<VecDeque<Reply>>,
    others: Mutex<VecDeque<Reply>>,
    steps: Mutex<HashMap<String, VecDeque<Reply>>>,
    latency: HashMap<String, Duration>,
    requests: Mutex<Vec<ChatRequest>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl RoutedLlm {
    pub fn new() -> RoutedLlm {
        RoutedLlm::default()
    }
    /// The planner's replies, in order.
    pub fn plans(self, replies: Vec<Reply>) -> RoutedLlm {
        *locked(&self.plans) = replies.into();
        self
    }
    /// The replies to `Other` calls (the verifier), in order.
    pub fn others(self, replies: Vec<Reply>) -> RoutedLlm {
        *locked(&self.others) = replies.into();
        self
    }
    /// The executor's replies for the step described `text`, in order.
    pub fn step(self, text: &str, replies: Vec<Reply>) -> RoutedLlm {
        locked(&self.steps).insert(text.to_string(), replies.into());
        self
    }
    /// Every executor call of step `text` takes `ms` milliseconds (of tokio's clock).
    pub fn latency(mut self, text: &str, ms: u64) -> RoutedLlm {
        self.latency
            .insert(text.to_string(), Duration::from_millis(ms));
        self
    }
    /// Every request received, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        locked(&self.requests).clone()
    }
    /// How many executor calls step `step` got.
    pub fn executed(&self, step: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.purpose == CallPurpose::Execute && step_of(r) == step)
            .count()
    }
    /// The most executor calls under way at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl LlmClient for RoutedLlm {
    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        locked(&self.requests).push(req.clone());
        match req.purpose {
            CallPurpose::Plan => locked(&self.plans)
                .pop_front()
                .unwrap_or_else(|| Err(LlmError::Permanent("no planner reply left".into()))),
            CallPurpose::Other => locked(&self.others)
                .pop_front()
                .unwrap_or_else(|| Err(LlmError::Permanent("no reply left".into()))),
            CallPurpose::Summarize => text("summary"),
            CallPurpose::Execute => {
                let step = step_of(&req);
                let n = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.max_in_flight.fetch_max(n, Ordering::SeqCst);
                if let Some(d) = self.latency.get(&step) {
                    tokio::time::sleep(*d).await;
                }
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                let scripted = locked(&self.steps)
                    .get_mut(&step)
                    .and_then(VecDeque::pop_front);
                scripted.unwrap_or_else(|| acted(&format!("done: {step}")))
            }
        }
    }
}
