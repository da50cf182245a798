//! The one plan model shared by every planning style.
//!
//! A [`Plan`] is an ordered list of [`Step`]s. Flat plans (the `flow` style) rely on the
//! order alone: their steps carry no `depends_on` and run one after another. DAG and TODO
//! styles fill `depends_on` with step ids. Every status change goes through
//! [`StepStatus::can_transition_to`], so an illegal move is an error value, never a panic.

use serde::{Deserialize, Serialize};

use thiserror::Error;

pub use crate::model::status::StepStatus;
pub use crate::model::step::{split_kind_tag, Step, StepCondition, StepSpec};

/// A plan: the single model behind flow, plan-act, todo and dag styles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub goal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub(in crate::model) steps: Vec<Step>,
    /// Bumped by every structural change (create = 1, each update + 1).
    #[serde(default = "one")]
    pub(in crate::model) version: u32,
    /// The next number used to mint a step id (`s{n}`); only grows.
    #[serde(default)]
    pub(in crate::model) next_step_seq: u32,
}

fn one() -> u32 {
    1
}

/// Counts of steps per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StatusCounts {
    pub not_started: usize,
    pub in_progress: usize,
    pub completed: usize,
    pub failed: usize,
    pub blocked: usize,
    pub skipped: usize,
}

impl Plan {
    /// A plan with no step yet (version 1), to fill with [`Plan::add_steps`].
    pub fn new(id: impl Into<String>, title: impl Into<String>, goal: impl Into<String>) -> Plan {
        Plan {
            id: id.into(),
            title: title.into(),
            goal: goal.into(),
            language: None,
            steps: Vec::new(),
            version: 1,
            next_step_seq: 1,
        }
    }

    /// A flat plan from step texts, ids `s1..sn`.
    pub fn from_texts(
        id: impl Into<String>,
        title: impl Into<String>,
        goal: impl Into<String>,
        texts: &[String],
    ) -> Result<Plan, PlanError> {
        let specs: Vec<StepSpec> = texts.iter().map(StepSpec::text).collect();
        Plan::from_specs(id, title, goal, &specs)
    }

    /// A plan from step specs (planner ids kept, missing ones minted).
    pub fn from_specs(
        id: impl Into<String>,
        title: impl Into<String>,
        goal: impl Into<String>,
        specs: &[StepSpec],
    ) -> Result<Plan, PlanError> {
        let mut plan = Plan::new(id, title, goal);
        plan.steps = plan.build_steps(specs, &[])?;
        Ok(plan)
    }

    /// The steps, in plan order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Whether every step but `index` is completed or skipped: step `index`'s success is
    /// the run's (docs/security.md, "Outputs").
    pub fn only_open_step(&self, index: usize) -> bool {
        self.steps.iter().enumerate().all(|(i, s)| {
            i == index || matches!(s.status, StepStatus::Completed | StepStatus::Skipped)
        })
    }

    /// The steps, to edit what they say (description, notes, result...); their status and
    /// attempts change only through [`Plan::transition`], their number only through
    /// [`Plan::add_steps`], [`Plan::set_steps`] and [`Plan::replace_steps`].
    pub fn steps_mut(&mut self) -> &mut [Step] {
        &mut self.steps
    }

    /// Bumped by every structural change (create = 1, each change of the step list + 1).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Appends `steps`, minting an id for each that has none; returns their ids. A plan that
    /// had steps gets a new version. The graph is checked; when it is invalid nothing changes.
    pub fn add_steps(&mut self, steps: Vec<Step>) -> Result<Vec<String>, PlanError> {
        let had_steps = !self.steps.is_empty();
        let mut next = self.clone();
        let ids = next.append(steps)?;
        if had_steps && !ids.is_empty() {
            next.version += 1;
        }
        *self = next;
        Ok(ids)
    }

    /// Appends `steps` (ids minted for those without one, never clashing with an id given
    /// anywhere in the plan) and checks the graph; `self` may be left half-changed on error.
    fn append(&mut self, steps: Vec<Step>) -> Result<Vec<String>, PlanError> {
        let mut taken: std::collections::HashSet<String> =
            self.steps.iter().map(|s| s.id.clone()).collect();
        for s in steps.iter().filter(|s| !s.id.is_empty()) {
            if !taken.insert(s.id.clone()) {
                return Err(PlanError::DuplicateStepId(s.id.clone()));
            }
        }
        let mut ids = Vec::with_capacity(steps.len());
        for mut step in steps {
            if step.id.is_empty() {
                step.id = loop {
                    let id = self.mint_step_id(&[], &[]);
                    if taken.insert(id.clone()) {
                        break id;
                    }
                };
            }
            ids.push(step.id.clone());
            self.steps.push(step);
        }
        self.validate_graph()?;
        Ok(ids)
    }

    /// Replaces the step list with `steps` (built by the caller, e.g. a revision that keeps
    /// some of this plan's steps with their state) as a new version; steps without an id get
    /// fresh ones. The graph is checked; when it is invalid nothing changes.
    pub fn set_steps(&mut self, steps: Vec<Step>) -> Result<(), PlanError> {
        if steps.is_empty() {
            return Err(PlanError::EmptySteps);
        }
        let mut next = self.clone();
        next.steps.clear();
        next.append(steps)?;
        next.version = self.version + 1;
        *self = next;
        Ok(())
    }

    /// Ends an in-progress step as completed with its result and the files it produced.
    pub fn complete_step(
        &mut self,
        step_id: &str,
        result: String,
        attachments: Vec<String>,
    ) -> Result<(), PlanError> {
        self.transition(step_id, StepStatus::Completed)?;
        if let Some(step) = self.step_mut(step_id) {
            step.result = Some(result);
            step.error = None;
            for file in attachments {
                if !step.attachments.contains(&file) {
                    step.attachments.push(file);
                }
            }
        }
        Ok(())
    }

    /// Moves a step to `to` (failed, blocked, skipped) and records why.
    pub fn end_step(
        &mut self,
        step_id: &str,
        to: StepStatus,
        reason: &str,
    ) -> Result<(), PlanError> {
        self.transition(step_id, to)?;
        if let Some(step) = self.step_mut(step_id) {
            step.error = Some(reason.to_string());
        }
        Ok(())
    }

    /// Ends a step the run's cancellation cut short (`failed` when it was running, `skipped`
    /// when it had not started) and marks it [`Step::interrupted`].
    pub fn interrupt(
        &mut self,
        step_id: &str,
        to: StepStatus,
        reason: &str,
    ) -> Result<(), PlanError> {
        self.end_step(step_id, to, reason)?;
        if let Some(step) = self.step_mut(step_id) {
            step.interrupted = true;
        }
        Ok(())
    }

    /// Opens an ended step again (`not_started`, no error). An interrupted step that was
    /// running gets its attempt back, so a resumed run finds that attempt's journal.
    pub fn reopen(&mut self, step_id: &str) -> Result<(), PlanError> {
        let from = self.transition(step_id, StepStatus::NotStarted)?;
        if let Some(step) = self.step_mut(step_id) {
            step.error = None;
            if step.interrupted && from == StepStatus::Failed {
                step.attempts = step.attempts.saturating_sub(1);
            }
            step.interrupted = false;
        }
        Ok(())
    }

    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    pub fn step_mut(&mut self, id: &str) -> Option<&mut Step> {
        self.steps.iter_mut().find(|s| s.id == id)
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.id == id)
    }

    pub fn counts(&self) -> StatusCounts {
        let mut c = StatusCounts::default();
        for s in &self.steps {
            match s.status {
                StepStatus::NotStarted => c.not_started += 1,
                StepStatus::InProgress => c.in_progress += 1,
                StepStatus::Completed => c.completed += 1,
                StepStatus::Failed => c.failed += 1,
                StepStatus::Blocked => c.blocked += 1,
                StepStatus::Skipped => c.skipped += 1,
            }
        }
        c
    }

    /// True when no step can run any more.
    pub fn is_finished(&self) -> bool {
        self.steps.iter().all(|s| s.status.is_terminal())
    }

    /// Checks the step graph: every reference names a step of the plan, no step waits on
    /// itself, and there is no cycle. The error names the offending steps.
    pub fn validate_graph(&self) -> Result<(), PlanError> {
        for s in &self.steps {
            for up in s.upstream() {
                if up == s.id {
                    return Err(PlanError::SelfDependency(s.id.clone()));
                }
                if self.step(up).is_none() {
                    return Err(PlanError::UnknownDependency {
                        step: s.id.clone(),
                        dependency: up.to_string(),
                    });
                }
            }
        }
        // Kahn's algorithm; whatever cannot be ordered sits on a cycle.
        let n = self.steps.len();
        let index = |id: &str| self.steps.iter().position(|s| s.id == id);
        let mut indegree = vec![0usize; n];
        let mut downstream: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, s) in self.steps.iter().enumerate() {
            for up in s.upstream() {
                if let Some(j) = index(up) {
                    indegree[i] += 1;
                    downstream[j].push(i);
                }
            }
        }
        let mut queue: Vec<usize> = (0..n).filter(|i| indegree[*i] == 0).collect();
        let mut seen = 0;
        while let Some(i) = queue.pop() {
            seen += 1;
            for &d in &downstream[i] {
                indegree[d] -= 1;
                if indegree[d] == 0 {
                    queue.push(d);
                }
            }
        }
        if seen < n {
            let cycle: Vec<String> = (0..n)
                .filter(|i| indegree[*i] > 0)
                .map(|i| self.steps[i].id.clone())
                .collect();
            return Err(PlanError::Cycle(cycle.join(", ")));
        }
        Ok(())
    }

    /// Mints a step id that no step of this plan has ever had.
    pub fn fresh_step_id(&mut self) -> String {
        self.mint_step_id(&[], &[])
    }

    /// Moves a step along the state machine; an illegal move is an error and changes nothing.
    pub fn transition(&mut self, step_id: &str, to: StepStatus) -> Result<StepStatus, PlanError> {
        let step = self
            .step_mut(step_id)
            .ok_or_else(|| PlanError::UnknownStep(step_id.to_string()))?;
        let from = step.status;
        if !from.can_transition_to(to) {
            return Err(PlanError::IllegalTransition {
                step: step_id.to_string(),
                from,
                to,
            });
        }
        step.status = to;
        if to == StepStatus::InProgress {
            step.attempts += 1;
        }
        Ok(from)
    }

    /// Builds steps for `specs`, keeping id, status, notes and results of any old step whose
    /// text is unchanged (the first unused old step with the same text, or the same id).
    pub(crate) fn build_steps(
        &mut self,
        specs: &[StepSpec],
        old: &[Step],
    ) -> Result<Vec<Step>, PlanError> {
        if specs.is_empty() {
            return Err(PlanError::EmptySteps);
        }
        let mut used_old = vec![false; old.len()];
        let mut out: Vec<Step> = Vec::with_capacity(specs.len());
        for spec in specs {
            if spec.text.trim().is_empty() {
                return Err(PlanError::EmptyStepText);
            }
            let (kind, description) = split_kind_tag(&spec.text);
            let reuse = old.iter().enumerate().position(|(i, o)| {
                !used_old[i]
                    && match &spec.id {
                        Some(id) => &o.id == id,
                        None => o.description == description && o.kind == kind,
                    }
            });
            let step = match reuse {
                Some(i) => {
                    used_old[i] = true;
                    let mut s = old[i].clone();
                    s.description = description;
                    s.kind = kind;
                    if !spec.depends_on.is_empty() {
                        s.depends_on = spec.depends_on.clone();
                    }
                    s
                }
                None => {
                    let id = match &spec.id {
                        Some(id) => id.clone(),
                        None => self.mint_step_id(specs, old),
                    };
                    let mut s = Step::new(id, &spec.text);
                    s.depends_on = spec.depends_on.clone();
                    s
                }
            };
            if out.iter().any(|o| o.id == step.id) {
                return Err(PlanError::DuplicateStepId(step.id));
            }
            out.push(step);
        }
        for s in &out {
            for dep in &s.depends_on {
                if dep == &s.id {
                    return Err(PlanError::SelfDependency(s.id.clone()));
                }
                if !out.iter().any(|o| &o.id == dep) {
                    return Err(PlanError::UnknownDependency {
                        step: s.id.clone(),
                        dependency: dep.clone(),
                    });
                }
            }
        }
        Ok(out)
    }

    fn mint_step_id(&mut self, specs: &[StepSpec], old: &[Step]) -> String {
        loop {
            let id = format!("s{}", self.next_step_seq.max(1));
            self.next_step_seq = self.next_step_seq.max(1) + 1;
            let clash = old.iter().any(|s| s.id == id)
                || self.steps.iter().any(|s| s.id == id)
                || specs.iter().any(|s| s.id.as_deref() == Some(id.as_str()));
            if !clash {
                return id;
            }
        }
    }

    /// Replaces the step list, keeping the state of unchanged steps; bumps the version.
    pub fn replace_steps(&mut self, specs: &[StepSpec]) -> Result<(), PlanError> {
        let old = self.steps.clone();
        let seq = self.next_step_seq;
        let steps = self
            .build_steps(specs, &old)
            .inspect_err(|_| self.next_step_seq = seq)?;
        self.steps = steps;
        self.version += 1;
        Ok(())
    }
}

/// Errors about plans and steps; shown to the model verbatim when it caused them.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    #[error("a plan needs at least one step")]
    EmptySteps,
    #[error("a step's text must not be empty")]
    EmptyStepText,
    #[error("duplicate step id '{0}'")]
    DuplicateStepId(String),
    #[error("unknown step '{0}'")]
    UnknownStep(String),
    #[error("step '{0}' depends on itself")]
    SelfDependency(String),
    #[error("the steps {0} form a dependency cycle")]
    Cycle(String),
    #[error("step '{step}' depends on unknown step '{dependency}'")]
    UnknownDependency { step: String, dependency: String },
    #[error("step '{step}' cannot move from {from} to {to}")]
    IllegalTransition {
        step: String,
        from: StepStatus,
        to: StepStatus,
    },
}

#[cfg(test)]
mod tests;
