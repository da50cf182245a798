//! [`MemoryStore`]: a [`RunStore`], [`WorkQueue`] and [`RunMailbox`] kept in memory, for a
//! program that embeds Planwright and needs no journal on disk, and for tests. It keeps the
//! contract of the SQLite and PostgreSQL stores (docs/durability.md, "Leases" and "The work
//! queue"; the same conformance suite, `crates/store-conformance`): writes to an unknown run
//! fail, events must come in `seq` order, a lease is one compare-and-set, the queue claims
//! interrupted queue runs first. What it lacks: everything is gone with the process, and its
//! change watches ([`RunChanges`]) only time out, so a follower polls.
//!
//! Besides the ports, sync accessors read what was stored ([`MemoryStore::events_of`],
//! [`MemoryStore::plans_of`]) and [`MemoryStore::fail`] makes chosen writes fail, to test a
//! caller's handling of a full disk or a locked database.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::model::event::{Event, RunUsage};
use crate::model::plan::Plan;
use crate::ports::{
    Change, ChangeWatch, Lease, LeaseClaim, LeaseOutcome, QueueWaiting, RunChanges, RunMailbox,
    RunMessage, RunRecord, RunStatus, RunStore, StoreError, TimerWatch, WorkQueue,
};

/// A write of [`RunStore`] that [`MemoryStore::fail`] can make fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreOp {
    CreateRun,
    UpdateRun,
    SetRunStatus,
    SaveUsage,
    SavePlan,
    AppendEvent,
}

/// Runs, plans, events, leases and the work queue in memory; cheap to make, shared through
/// an `Arc`.
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    runs: BTreeMap<String, StoredRun>,
    faults: HashMap<StoreOp, StoreError>,
}

struct StoredRun {
    record: RunRecord,
    /// In save order; a save of a stored (plan id, version) replaces it.
    plans: Vec<Plan>,
    events: Vec<Event>,
    /// Every usage saved, in order.
    usage_saves: Vec<RunUsage>,
    /// The mailbox: each message with the lease owner it was addressed to.
    messages: Vec<(Option<String>, RunMessage)>,
}

fn unknown(op: &str, run_id: &str) -> StoreError {
    StoreError::NotFound(format!(
        "memory store: {op} of run '{run_id}': the run does not exist"
    ))
}

/// A lease nobody holds, or whose time is over at `now`.
fn free(record: &RunRecord, now: DateTime<Utc>) -> bool {
    record.lease.as_ref().is_none_or(|l| !l.is_live(now))
}

impl State {
    fn check(&self, op: StoreOp) -> Result<(), StoreError> {
        self.faults.get(&op).map_or(Ok(()), |e| Err(e.clone()))
    }

    fn run_mut(&mut self, op: &str, run_id: &str) -> Result<&mut StoredRun, StoreError> {
        self.runs.get_mut(run_id).ok_or_else(|| unknown(op, run_id))
    }

    fn insert(&mut self, record: RunRecord) -> Result<(), StoreError> {
        if self.runs.contains_key(&record.run_id) {
            return Err(StoreError::Conflict(format!(
                "memory store: create_run of run '{0}': run '{0}' already exists",
                record.run_id
            )));
        }
        self.runs.insert(
            record.run_id.clone(),
            StoredRun {
                record,
                plans: Vec::new(),
                events: Vec::new(),
                usage_saves: Vec::new(),
                messages: Vec::new(),
            },
        );
        Ok(())
    }

    /// The oldest run (by creation, then id) that `wanted` accepts and whose lease is free.
    fn oldest_free(
        &self,
        now: DateTime<Utc>,
        wanted: impl Fn(&RunRecord) -> bool,
    ) -> Option<String> {
        self.runs
            .values()
            .map(|r| &r.record)
            .filter(|r| wanted(r) && free(r, now))
            .min_by(|a, b| (a.created_at, &a.run_id).cmp(&(b.created_at, &b.run_id)))
            .map(|r| r.run_id.clone())
    }
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every later `op` fails with `error` (a full disk, a locked database).
    pub fn fail(&self, op: StoreOp, error: StoreError) {
        self.state().faults.insert(op, error);
    }

    /// The run as stored now.
    pub fn run(&self, run_id: &str) -> Option<RunRecord> {
        self.state().runs.get(run_id).map(|r| r.record.clone())
    }

    /// The run's event log.
    pub fn events_of(&self, run_id: &str) -> Vec<Event> {
        self.state()
            .runs
            .get(run_id)
            .map(|r| r.events.clone())
            .unwrap_or_default()
    }

    /// Every plan version saved for the run, in save order.
    pub fn plans_of(&self, run_id: &str) -> Vec<Plan> {
        self.state()
            .runs
            .get(run_id)
            .map(|r| r.plans.clone())
            .unwrap_or_default()
    }

    /// Every usage saved for the run ([`RunStore::save_usage`]), in order.
    pub fn usage_saves(&self, run_id: &str) -> Vec<RunUsage> {
        self.state()
            .runs
            .get(run_id)
            .map(|r| r.usage_saves.clone())
            .unwrap_or_default()
    }

    /// Gives the run's lease to `owner` until `until`, whoever holds it: what another process
    /// does after proving the holder gone (`LeaseClaim::stale_owner`).
    pub fn take_over_lease(&self, run_id: &str, owner: &str, until: DateTime<Utc>) {
        if let Some(run) = self.state().runs.get_mut(run_id) {
            run.record.lease = Some(Lease {
                owner: owner.to_string(),
                until,
            });
        }
    }
}

#[async_trait]
impl RunStore for MemoryStore {
    async fn create_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let mut state = self.state();
        state.check(StoreOp::CreateRun)?;
        state.insert(run.clone())
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let mut state = self.state();
        state.check(StoreOp::UpdateRun)?;
        let stored = &mut state.run_mut("update_run", &run.run_id)?.record;
        stored.status = run.status;
        stored.finished_at = run.finished_at;
        stored.summary.clone_from(&run.summary);
        stored.error.clone_from(&run.error);
        stored.usage = run.usage;
        if run.queue_request.is_some() {
            stored.queue_request.clone_from(&run.queue_request);
        }
        Ok(())
    }

    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        Ok(self.state().runs.remove(run_id).is_some())
    }

    async fn save_usage(&self, run_id: &str, usage: &RunUsage) -> Result<(), StoreError> {
        let mut state = self.state();
        state.check(StoreOp::SaveUsage)?;
        let run = state.run_mut("save_usage", run_id)?;
        run.record.usage = *usage;
        run.usage_saves.push(*usage);
        Ok(())
    }

    async fn set_run_status(&self, run_id: &str, status: RunStatus) -> Result<(), StoreError> {
        let mut state = self.state();
        state.check(StoreOp::SetRunStatus)?;
        state.run_mut("set_run_status", run_id)?.record.status = status;
        Ok(())
    }

    async fn save_plan(&self, run_id: &str, plan: &Plan) -> Result<(), StoreError> {
        let mut state = self.state();
        state.check(StoreOp::SavePlan)?;
        let plans = &mut state.run_mut("save_plan", run_id)?.plans;
        plans.retain(|p| !(p.id == plan.id && p.version() == plan.version()));
        plans.push(plan.clone());
        Ok(())
    }

    async fn append_event(&self, event: &Event) -> Result<(), StoreError> {
        let mut state = self.state();
        state.check(StoreOp::AppendEvent)?;
        let events = &mut state.run_mut("append_event", &event.run_id)?.events;
        let expected = events.last().map_or(1, |e| e.seq + 1);
        if event.seq != expected {
            return Err(StoreError::Conflict(format!(
                "memory store: append_event of run '{}': event seq {} refused ({}): the next \
                 seq is {expected}",
                event.run_id,
                event.seq,
                if event.seq < expected {
                    "duplicate"
                } else {
                    "gap"
                }
            )));
        }
        events.push(event.clone());
        Ok(())
    }

    async fn get_run(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.run(run_id))
    }

    async fn list_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let mut runs: Vec<RunRecord> = self
            .state()
            .runs
            .values()
            .map(|r| r.record.clone())
            .collect();
        runs.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| a.run_id.cmp(&b.run_id))
        });
        Ok(runs)
    }

    /// The newest version of the plan saved last.
    async fn latest_plan(&self, run_id: &str) -> Result<Option<Plan>, StoreError> {
        let state = self.state();
        let Some(plans) = state.runs.get(run_id).map(|r| &r.plans) else {
            return Ok(None);
        };
        let Some(last) = plans.last() else {
            return Ok(None);
        };
        Ok(plans
            .iter()
            .filter(|p| p.id == last.id)
            .max_by_key(|p| p.version())
            .cloned())
    }

    async fn events(&self, run_id: &str, after_seq: u64) -> Result<Vec<Event>, StoreError> {
        Ok(self
            .events_of(run_id)
            .into_iter()
            .filter(|e| e.seq > after_seq)
            .collect())
    }

    async fn acquire_lease(
        &self,
        run_id: &str,
        claim: &LeaseClaim,
    ) -> Result<LeaseOutcome, StoreError> {
        let mut state = self.state();
        let Some(run) = state.runs.get_mut(run_id) else {
            return Ok(LeaseOutcome::Unknown);
        };
        let record = &mut run.record;
        let grantable = free(record, claim.now)
            || record.lease.as_ref().is_some_and(|l| {
                l.owner == claim.owner || Some(&l.owner) == claim.stale_owner.as_ref()
            });
        if grantable {
            record.lease = Some(Lease {
                owner: claim.owner.clone(),
                until: claim.until,
            });
            return Ok(LeaseOutcome::Acquired);
        }
        Ok(record
            .lease
            .clone()
            .map_or(LeaseOutcome::Unknown, LeaseOutcome::Held))
    }

    async fn renew_lease(
        &self,
        run_id: &str,
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        let lease = state
            .runs
            .get_mut(run_id)
            .and_then(|r| r.record.lease.as_mut())
            .filter(|l| l.owner == owner);
        Ok(lease.map(|l| l.until = until).is_some())
    }

    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        if let Some(run) = self.state().runs.get_mut(run_id) {
            if run.record.lease.as_ref().is_some_and(|l| l.owner == owner) {
                run.record.lease = None;
            }
        }
        Ok(())
    }
}

#[async_trait]
impl WorkQueue for MemoryStore {
    async fn enqueue(&self, run: &RunRecord) -> Result<(), StoreError> {
        let mut record = run.clone();
        record.status = RunStatus::Queued;
        record.lease = None;
        self.state().insert(record)
    }

    async fn claim(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<RunRecord>, StoreError> {
        let mut state = self.state();
        let interrupted = state.oldest_free(now, |r| {
            r.queue_request.is_some() && matches!(r.status, RunStatus::Running | RunStatus::Waiting)
        });
        let next =
            interrupted.or_else(|| state.oldest_free(now, |r| r.status == RunStatus::Queued));
        let Some(run_id) = next else {
            return Ok(None);
        };
        let run = state.run_mut("claim", &run_id)?;
        run.record.lease = Some(Lease {
            owner: owner.to_string(),
            until,
        });
        Ok(Some(run.record.clone()))
    }

    async fn cancel_queued(
        &self,
        run_id: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        let Some(run) = state.runs.get_mut(run_id) else {
            return Ok(false);
        };
        let record = &mut run.record;
        if record.status != RunStatus::Queued || !free(record, now) {
            return Ok(false);
        }
        record.status = RunStatus::Failed;
        record.error = Some(error.to_string());
        record.finished_at = Some(now);
        Ok(true)
    }

    /// Claimed runs (starting) are not waiting any more: only unclaimed ones count.
    async fn position(&self, run_id: &str) -> Result<Option<usize>, StoreError> {
        let state = self.state();
        let waiting = |r: &RunRecord| r.status == RunStatus::Queued && r.lease.is_none();
        let Some(me) = state
            .runs
            .get(run_id)
            .map(|r| &r.record)
            .filter(|r| waiting(r))
        else {
            return Ok(None);
        };
        let key = (me.created_at, &me.run_id);
        Ok(Some(
            state
                .runs
                .values()
                .map(|r| &r.record)
                .filter(|r| waiting(r) && (r.created_at, &r.run_id) <= key)
                .count(),
        ))
    }

    async fn waiting(&self) -> Result<QueueWaiting, StoreError> {
        let state = self.state();
        let queued = state
            .runs
            .values()
            .map(|r| &r.record)
            .filter(|r| r.status == RunStatus::Queued);
        Ok(queued.fold(QueueWaiting::default(), |w, r| QueueWaiting {
            count: w.count + 1,
            oldest: Some(w.oldest.map_or(r.created_at, |o| o.min(r.created_at))),
        }))
    }
}

#[async_trait]
impl RunMailbox for MemoryStore {
    async fn post(&self, run_id: &str, message: &RunMessage) -> Result<(), StoreError> {
        let mut state = self.state();
        let run = state.run_mut("post", run_id)?;
        let owner = run.record.lease.as_ref().map(|l| l.owner.clone());
        run.messages.push((owner, message.clone()));
        Ok(())
    }

    async fn take(&self, run_id: &str, owner: &str) -> Result<Vec<RunMessage>, StoreError> {
        let mut state = self.state();
        let Some(run) = state.runs.get_mut(run_id) else {
            return Ok(Vec::new());
        };
        let (mine, others) = std::mem::take(&mut run.messages)
            .into_iter()
            .partition::<Vec<_>, _>(|(to, _)| to.as_deref() == Some(owner));
        run.messages = others;
        Ok(mine.into_iter().map(|(_, m)| m).collect())
    }
}

/// Watches only time out: tests drive the store directly.
impl RunChanges for MemoryStore {
    fn watch(&self, _run_id: &str, _change: Change) -> Box<dyn ChangeWatch> {
        Box::new(TimerWatch)
    }

    fn watch_queue(&self) -> Box<dyn ChangeWatch> {
        Box::new(TimerWatch)
    }
}
