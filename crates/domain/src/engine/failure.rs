//! The one split between what stops a run and what a caller handles (docs/architecture.md,
//! "Errors").
//!
//! *Fatal*: the run's journal cannot be written: the store failed or went away, or the run
//! was suspended and refuses further writes. Nothing may go on without the journal, so a
//! fatal failure is handed up with `?` to `Runtime`, which ends the run without an outcome
//! (it can be resumed). *Recoverable*: everything else (the model failed or answered badly, a
//! tool failed, the run is being cancelled): the caller handles it, and the run loop ends a
//! cancelled run with its outcome. Callers split the two with [`Failure::recoverable`]:
//!
//! ```text
//! let answer = match ask_json(/* ... */).await {
//!     Ok(a) => a,
//!     Err(e) => return default_plan(ctx, e.recoverable()?.to_string()),
//! };
//! ```

use std::fmt;

use crate::ports::llm::LlmError;
use crate::ports::store::StoreError;
use crate::ports::user::AskUserError;

/// A failure of an operation of a run: fatal, or the recoverable problem `P`.
#[derive(Debug)]
pub(crate) enum Failure<P> {
    Fatal(StoreError),
    Recoverable(P),
}

impl<P> Failure<P> {
    /// The recoverable problem, or the fatal error to hand up with `?`.
    pub fn recoverable(self) -> Result<P, StoreError> {
        match self {
            Failure::Fatal(e) => Err(e),
            Failure::Recoverable(p) => Ok(p),
        }
    }
}

impl<P> From<StoreError> for Failure<P> {
    fn from(e: StoreError) -> Self {
        Failure::Fatal(e)
    }
}

impl<P: fmt::Display> fmt::Display for Failure<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Fatal(e) => write!(f, "run store error: {e}"),
            Failure::Recoverable(p) => p.fmt(f),
        }
    }
}

/// Why an LLM call made through the run's context returned no reply, when the run can go on.
#[derive(Debug)]
pub(crate) enum CallProblem {
    Llm(LlmError),
    /// The run is being cancelled; the call was not made or was abandoned.
    Cancelled,
}

impl fmt::Display for CallProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallProblem::Llm(e) => write!(f, "the LLM call failed: {e}"),
            CallProblem::Cancelled => f.write_str("the run was stopped"),
        }
    }
}

/// An LLM call's failure.
pub(crate) type CallError = Failure<CallProblem>;

/// Why `message_ask_user` got no answer, when the run can go on (the step fails).
#[derive(Debug)]
pub(crate) enum Unanswered {
    User(AskUserError),
    /// The run was stopped while waiting for the user.
    Stopped,
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unanswered::User(e) => e.fmt(f),
            Unanswered::Stopped => f.write_str("the run was stopped while waiting for the user"),
        }
    }
}
