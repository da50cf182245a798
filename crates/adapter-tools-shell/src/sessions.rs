//! [`ShellSessions`]: the commands that outlived `shell_exec`'s wait, per run.
//!
//! A session is named `sh1`, `sh2`, ... in the order its run created it; names are
//! per run and a run only sees its own sessions. Sessions end with their run: the app
//! calls [`ShellSessions::close_run`] when a run is over, and dropping the last handle to
//! the registry kills whatever is still running.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use domain::ToolError;

use crate::process::Proc;

/// How long closing waits for killed commands to be reaped and their output read.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The registry of shell sessions of every run, shared by the shell tools. Cheap to clone
/// (an `Arc` inside); every clone is the same registry.
#[derive(Clone, Default)]
pub struct ShellSessions {
    inner: Arc<Registry>,
}

#[derive(Default)]
struct Registry {
    runs: Mutex<HashMap<String, RunSessions>>,
}

#[derive(Default)]
struct RunSessions {
    created: u64,
    sessions: Vec<Arc<Session>>,
}

/// One command that outlived `shell_exec`'s wait.
#[derive(Debug)]
pub(crate) struct Session {
    pub id: String,
    pub proc: Arc<Proc>,
}

impl fmt::Debug for ShellSessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let runs = self.inner.runs();
        let mut map = f.debug_map();
        for (run, sessions) in runs.iter() {
            let ids: Vec<&str> = sessions.sessions.iter().map(|s| s.id.as_str()).collect();
            map.entry(run, &ids);
        }
        map.finish()
    }
}

impl Registry {
    fn runs(&self) -> MutexGuard<'_, HashMap<String, RunSessions>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let runs = std::mem::take(&mut *self.runs());
        let mut killed = 0;
        for session in runs.into_values().flat_map(|r| r.sessions) {
            if session.proc.is_running() {
                session.proc.kill();
                killed += 1;
            }
        }
        if killed > 0 {
            tracing::info!(killed, "shell session registry dropped; sessions killed");
        }
    }
}

impl ShellSessions {
    /// An empty registry.
    pub fn new() -> ShellSessions {
        ShellSessions::default()
    }

    /// Kills every session of run `run_id` that is still running, waits (a few seconds at
    /// most) for them to be reaped, and forgets all of the run's sessions. Returns how
    /// many were still running.
    pub async fn close_run(&self, run_id: &str) -> usize {
        let sessions = self
            .inner
            .runs()
            .remove(run_id)
            .map(|r| r.sessions)
            .unwrap_or_default();
        let killed = kill_and_reap(sessions).await;
        if killed > 0 {
            tracing::info!(run_id, killed, "shell sessions of the run killed");
        }
        killed
    }

    /// [`ShellSessions::close_run`] for every run.
    pub async fn close_all(&self) -> usize {
        let runs = std::mem::take(&mut *self.inner.runs());
        let killed = kill_and_reap(runs.into_values().flat_map(|r| r.sessions).collect()).await;
        if killed > 0 {
            tracing::info!(killed, "all shell sessions killed");
        }
        killed
    }

    /// Ids of the sessions of run `run_id`, oldest first (running or ended, until the run
    /// is closed).
    pub fn ids(&self, run_id: &str) -> Vec<String> {
        self.inner
            .runs()
            .get(run_id)
            .map(|r| r.sessions.iter().map(|s| s.id.clone()).collect())
            .unwrap_or_default()
    }

    /// How many sessions of run `run_id` are still running.
    pub fn running(&self, run_id: &str) -> usize {
        self.inner
            .runs()
            .get(run_id)
            .map(|r| r.sessions.iter().filter(|s| s.proc.is_running()).count())
            .unwrap_or(0)
    }

    /// Registers a running command as the next session of `run_id`.
    pub(crate) fn adopt(&self, run_id: &str, proc: Arc<Proc>) -> Arc<Session> {
        let mut runs = self.inner.runs();
        let run = runs.entry(run_id.to_string()).or_default();
        run.created += 1;
        let session = Arc::new(Session {
            id: format!("sh{}", run.created),
            proc,
        });
        run.sessions.push(session.clone());
        tracing::info!(run_id, session = %session.id, "shell command continues as a session");
        session
    }

    /// Session `id` of run `run_id`; an empty or unknown id is an error naming the run's
    /// sessions and whether each still runs.
    pub(crate) fn get(&self, run_id: &str, id: &str) -> Result<Arc<Session>, ToolError> {
        let runs = self.inner.runs();
        let sessions = runs
            .get(run_id)
            .map(|r| r.sessions.as_slice())
            .unwrap_or(&[]);
        let wanted = id.trim();
        if let Some(session) = sessions.iter().find(|s| s.id == wanted) {
            return Ok(session.clone());
        }
        let known = if sessions.is_empty() {
            "this run has no shell sessions (shell_exec starts one when a command is still \
             running after its wait_secs)"
                .to_string()
        } else {
            let ids: Vec<String> = sessions
                .iter()
                .map(|s| {
                    let state = if s.proc.is_running() {
                        "running"
                    } else {
                        "ended"
                    };
                    format!("{} ({state})", s.id)
                })
                .collect();
            format!("this run's sessions: {}", ids.join(", "))
        };
        let asked = if wanted.is_empty() {
            "`id` must not be empty".to_string()
        } else {
            format!("no shell session '{wanted}'")
        };
        Err(ToolError::InvalidArguments(format!("{asked}; {known}")))
    }
}

/// Kills the running sessions at once, then waits for each to end (bounded overall).
async fn kill_and_reap(sessions: Vec<Arc<Session>>) -> usize {
    let running: Vec<Arc<Session>> = sessions
        .into_iter()
        .filter(|s| s.proc.is_running())
        .collect();
    for session in &running {
        session.proc.kill();
    }
    let ended = all_ended(running.iter().map(|s| s.proc.clone()).collect());
    if tokio::time::timeout(CLOSE_GRACE, ended).await.is_err() {
        tracing::warn!("killed shell sessions did not finish ending in time");
    }
    running.len()
}

/// Completes once every command has ended.
async fn all_ended(procs: Vec<Arc<Proc>>) {
    for proc in procs {
        proc.ended().await;
    }
}
