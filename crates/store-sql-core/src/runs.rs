//! Rows of `runs`: the columns both stores select, a row read back as a
//! [`RunRecord`], and the usage columns.

use domain::ports::{Lease, RunRecord, RunStatus};
use domain::RunUsage;

use crate::codec::{from_json, int_from_sql, int_to_sql, time_from_sql};
use crate::RecordError;

/// The columns of `runs` in the order [`StoredRun`] holds them (`SELECT {RUN_COLUMNS}`).
pub const RUN_COLUMNS: &str = "run_id, task, mode, status, workspace, created_at,
                           finished_at, summary, error, llm_calls, prompt_tokens,
                           completion_tokens, cached_prompt_tokens, lease_owner, lease_until,
                           queue_request, client";

/// A `runs` row as the driver hands it back ([`RUN_COLUMNS`], texts already decoded by
/// the store), before validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRun {
    pub run_id: String,
    pub task: String,
    pub mode: String,
    pub status: String,
    pub workspace: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub summary: Option<String>,
    pub error: Option<String>,
    pub llm_calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_prompt_tokens: i64,
    pub lease_owner: Option<String>,
    pub lease_until: Option<String>,
    pub queue_request: Option<String>,
    pub client: Option<String>,
}

impl StoredRun {
    /// The row as a domain record; an unknown status, a bad time, a negative count or bad
    /// JSON is [`RecordError::Corrupt`] (or `Json`). A lease is kept only with both its
    /// owner and its time.
    pub fn into_record(self) -> Result<RunRecord, RecordError> {
        let status = RunStatus::parse(&self.status).ok_or_else(|| RecordError::Corrupt {
            what: "run status",
            detail: format!("unknown status {:?} of run '{}'", self.status, self.run_id),
        })?;
        Ok(RunRecord {
            status,
            created_at: time_from_sql("run created_at", &self.created_at)?,
            finished_at: self
                .finished_at
                .as_deref()
                .map(|t| time_from_sql("run finished_at", t))
                .transpose()?,
            usage: RunUsage {
                llm_calls: int_from_sql("llm_calls", self.llm_calls)?,
                prompt_tokens: int_from_sql("prompt_tokens", self.prompt_tokens)?,
                completion_tokens: int_from_sql("completion_tokens", self.completion_tokens)?,
                cached_prompt_tokens: int_from_sql(
                    "cached_prompt_tokens",
                    self.cached_prompt_tokens,
                )?,
            },
            run_id: self.run_id,
            task: self.task,
            mode: self.mode,
            workspace: self.workspace,
            summary: self.summary,
            error: self.error,
            lease: match (self.lease_owner, self.lease_until) {
                (Some(owner), Some(until)) => Some(Lease {
                    owner,
                    until: time_from_sql("run lease_until", &until)?,
                }),
                _ => None,
            },
            queue_request: self
                .queue_request
                .as_deref()
                .map(|j| from_json("queue request", j))
                .transpose()?,
            client: self.client,
        })
    }
}

/// The usage columns as stored, in the order `llm_calls, prompt_tokens,
/// completion_tokens, cached_prompt_tokens`.
pub fn usage_to_sql(usage: &RunUsage) -> Result<[i64; 4], RecordError> {
    Ok([
        int_to_sql("llm_calls", usage.llm_calls)?,
        int_to_sql("prompt_tokens", usage.prompt_tokens)?,
        int_to_sql("completion_tokens", usage.completion_tokens)?,
        int_to_sql("cached_prompt_tokens", usage.cached_prompt_tokens)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> StoredRun {
        StoredRun {
            run_id: "r1".into(),
            task: "t".into(),
            mode: "flow".into(),
            status: "running".into(),
            workspace: "/w".into(),
            created_at: "2026-01-02T03:04:05.000000000Z".into(),
            finished_at: None,
            summary: None,
            error: None,
            llm_calls: 1,
            prompt_tokens: 2,
            completion_tokens: 3,
            cached_prompt_tokens: 0,
            lease_owner: Some("w1".into()),
            lease_until: None,
            queue_request: Some("{\"a\":1}".into()),
            client: None,
        }
    }

    #[test]
    fn a_row_becomes_a_record_and_half_a_lease_is_none() {
        let run = stored().into_record().unwrap();
        assert_eq!(run.status, RunStatus::Running);
        assert_eq!(run.usage.completion_tokens, 3);
        assert!(run.lease.is_none());
        assert_eq!(run.queue_request, Some(serde_json::json!({"a": 1})));
        assert_eq!(usage_to_sql(&run.usage).unwrap(), [1, 2, 3, 0]);
    }

    #[test]
    fn an_unknown_status_or_a_negative_count_is_corrupt() {
        let mut bad = stored();
        bad.status = "dancing".into();
        let err = bad.into_record().unwrap_err();
        assert!(err.to_string().contains("dancing"), "{err}");
        let mut bad = stored();
        bad.llm_calls = -1;
        assert!(matches!(
            bad.into_record(),
            Err(RecordError::Corrupt { .. })
        ));
    }
}
