//! Whether a stored run is still alive: lease liveness as users see it (docs/durability.md,
//! "Leases"). A `running`/`waiting` run whose lease expired, or whose owner is provably gone,
//! was interrupted and can be resumed; every front end (`runs list`, the HTTP API, the MCP
//! server, the queue runner) asks here instead of comparing status strings.

use domain::ports::{RunRecord, RunStatus};

/// A run's status as users see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// As stored: queued, ended, or running/waiting under a lease that still holds.
    Stored(RunStatus),
    /// Stored as running or waiting, but nobody holds it any more: resumable.
    Interrupted,
}

impl Liveness {
    /// The liveness of `run` now.
    pub fn of(run: &RunRecord) -> Liveness {
        let live = matches!(run.status, RunStatus::Running | RunStatus::Waiting);
        if live && holder(run).is_none() {
            Liveness::Interrupted
        } else {
            Liveness::Stored(run.status)
        }
    }

    /// Its name as shown to users and in the API's JSON: the stored status's, or
    /// `interrupted`.
    pub fn shown(self) -> &'static str {
        match self {
            Liveness::Stored(status) => status.as_str(),
            Liveness::Interrupted => "interrupted",
        }
    }

    /// Whether the run is being executed now (running under a live lease, not waiting).
    pub fn is_running(self) -> bool {
        self == Liveness::Stored(RunStatus::Running)
    }

    /// Whether the run stopped without ending (see [`Liveness::Interrupted`]).
    pub fn is_interrupted(self) -> bool {
        self == Liveness::Interrupted
    }
}

/// The owner of the run's lease, when the lease still holds and its owner may be alive.
pub fn holder(run: &RunRecord) -> Option<&str> {
    run.lease
        .as_ref()
        .filter(|l| l.is_live(chrono::Utc::now()) && !crate::owner::is_gone(&l.owner))
        .map(|l| l.owner.as_str())
}

/// The owner of the run's lease when it is provably gone (this host, process ended): its
/// lease may be taken over before it expires.
pub fn stale_owner(run: &RunRecord) -> Option<String> {
    run.lease
        .as_ref()
        .filter(|l| crate::owner::is_gone(&l.owner))
        .map(|l| l.owner.clone())
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};
    use domain::ports::Lease;

    use super::*;

    fn run(status: RunStatus, lease: Option<Lease>) -> RunRecord {
        RunRecord {
            run_id: "run-1".into(),
            task: "t".into(),
            mode: "flow".into(),
            status,
            workspace: "/w".into(),
            created_at: Utc::now(),
            finished_at: None,
            summary: None,
            error: None,
            usage: Default::default(),
            lease,
            queue_request: None,
            client: None,
        }
    }

    /// A lease of this very process, live for `secs` more seconds (negative: expired).
    fn ours(secs: i64) -> Option<Lease> {
        Some(Lease {
            owner: crate::owner::owner_id().to_string(),
            until: Utc::now() + Duration::seconds(secs),
        })
    }

    #[test]
    fn a_held_run_is_as_stored_and_an_unheld_one_interrupted() {
        let held = Liveness::of(&run(RunStatus::Running, ours(60)));
        assert_eq!(held, Liveness::Stored(RunStatus::Running));
        assert!(held.is_running() && !held.is_interrupted());
        assert_eq!(held.shown(), "running");

        let expired = Liveness::of(&run(RunStatus::Running, ours(-1)));
        assert!(expired.is_interrupted() && !expired.is_running());
        assert_eq!(expired.shown(), "interrupted");

        let waiting = Liveness::of(&run(RunStatus::Waiting, None));
        assert_eq!(waiting, Liveness::Interrupted);

        let waiting_held = Liveness::of(&run(RunStatus::Waiting, ours(60)));
        assert_eq!(waiting_held.shown(), "waiting");
        assert!(!waiting_held.is_running());
    }

    #[test]
    fn an_ended_or_queued_run_is_as_stored_whatever_its_lease() {
        for status in [RunStatus::Queued, RunStatus::Completed, RunStatus::Failed] {
            let liveness = Liveness::of(&run(status, ours(-1)));
            assert_eq!(liveness, Liveness::Stored(status));
            assert_eq!(liveness.shown(), status.as_str());
        }
    }
}
