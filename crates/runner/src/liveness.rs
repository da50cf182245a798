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
