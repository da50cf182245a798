//! The one plan model shared by every planning style.
//!
//! A [`Plan`] is an ordered list of [`Step`]s. Flat plans (the `flow` style) rely on the
//! order alone: their steps carry no `depends_on` and run one after another. DAG and TODO
//! styles fill `depends_on` with step ids. Every status change goes through
//! [`StepStatus::can_transition_to`], so an illegal move is an error value, never a panic.

use std::fmt;

use serde::{Deserialize, Serialize};

use thiserror::Error;

/// Where a step is in its life.
///
/// ```text
/// not_started ─▶ in_progress ─▶ completed | failed | blocked
/// failed ─▶ not_started (retry)        blocked ─▶ not_started
/// not_started | in_progress ─▶ skipped
/// not_started ─▶ blocked (a dependency failed or was blocked)
/// skipped ─▶ not_started (a resumed run reopens what its cancellation skipped)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    #[default]
    NotStarted,
    InProgress,
    Completed,
    Failed,
    Blocked,
    Skipped,
}

impl StepStatus {
    pub const ALL: [StepStatus; 6] = [
        StepStatus::NotStarted,
        StepStatus::InProgress,
        StepStatus::Completed,
        StepStatus::Failed,
        StepStatus::Blocked,
        StepStatus::Skipped,
    ];

    /// The marker shown in plan text.
    pub fn marker(self) -> &'static str {
        match self {
            StepStatus::NotStarted => "[ ]",
            StepStatus::InProgress => "[→]",
            StepStatus::Completed => "[✓]",
            StepStatus::Blocked => "[!]",
            StepStatus::Failed => "[✗]",
            StepStatus::Skipped => "[-]",
        }
    }

    /// The wire name (`not_started`, `in_progress`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::NotStarted => "not_started",
            StepStatus::InProgress => "in_progress",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Blocked => "blocked",
            StepStatus::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<StepStatus> {
        StepStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// True once the step will not run again without an explicit retry.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            StepStatus::Completed | StepStatus::Failed | StepStatus::Blocked | StepStatus::Skipped
        )
    }

    /// The legal moves of the state machine.
    pub fn can_transition_to(self, to: StepStatus) -> bool {
        use StepStatus::*;
        matches!(
            (self, to),
            (NotStarted, InProgress)
                | (InProgress, Completed)
                | (InProgress, Failed)
                | (InProgress, Blocked)
                | (Failed, NotStarted)
                | (Blocked, NotStarted)
                | (NotStarted, Skipped)
                | (InProgress, Skipped)
                | (NotStarted, Blocked)
                | (Skipped, NotStarted)
        )
    }
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One unit of work in a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Stable and unique within its plan; never reused after a step is removed.
    pub id: String,
    pub description: String,
    /// Routing tag such as `SEARCH` or `CODE`, parsed from a leading `[TAG]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub status: StepStatus,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub notes: String,
    #[serde(default)]
    pub attachments: Vec<String>,
    /// How many times the step has been started.
    #[serde(default)]
    pub attempts: u32,
    /// Another way to do the step, tried once when retries are used up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// A conditional edge: the step runs only if its upstream step's result matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<StepCondition>,
    /// A rollback edge: the step runs only if this target step fails (or is blocked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_of: Option<String>,
    /// The sub-goal the step belongs to (DAG plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// "Run only if step `step` completed with a result containing `contains`"
/// (case-insensitive). An empty `contains` only asks that the step completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCondition {
    pub step: String,
    #[serde(default)]
    pub contains: String,
}

impl StepCondition {
    pub fn is_met_by(&self, result: &str) -> bool {
        self.contains.trim().is_empty()
            || result
                .to_lowercase()
                .contains(&self.contains.trim().to_lowercase())
    }
}

impl Step {
    /// A new step; a leading `[TAG]` in `text` becomes the step's `kind`.
    pub fn new(id: impl Into<String>, text: &str) -> Step {
        let (kind, description) = split_kind_tag(text);
        Step {
            id: id.into(),
            description,
            kind,
            depends_on: Vec::new(),
            status: StepStatus::NotStarted,
            result: None,
            error: None,
            notes: String::new(),
            attachments: Vec::new(),
            attempts: 0,
            fallback: None,
            condition: None,
            rollback_of: None,
            group: None,
        }
    }

    /// Every step this one waits for: dependencies, the condition's step, the rollback target.
    pub fn upstream(&self) -> impl Iterator<Item = &str> {
        self.depends_on
            .iter()
            .map(String::as_str)
            .chain(self.condition.as_ref().map(|c| c.step.as_str()))
            .chain(self.rollback_of.as_deref())
    }

    /// The step as the model wrote it: `[KIND] description`.
    pub fn display_text(&self) -> String {
        match &self.kind {
            Some(k) => format!("[{k}] {}", self.description),
            None => self.description.clone(),
        }
    }
}

/// Splits a leading `[TAG]` (letters, digits, `_` or `-`) from a step text.
/// The tag is upper-cased; text without a tag has no kind.
pub fn split_kind_tag(text: &str) -> (Option<String>, String) {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix('[') {
        if let Some(end) = rest.find(']') {
            let tag = &rest[..end];
            let valid = !tag.is_empty()
                && tag.len() <= 32
                && tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if valid {
                return (
                    Some(tag.to_ascii_uppercase()),
                    rest[end + 1..].trim().to_string(),
                );
            }
        }
    }
    (None, trimmed.to_string())
}

/// A plan: the single model behind flow, plan-act, todo and dag styles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub goal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub steps: Vec<Step>,
    /// Bumped by every structural change (create = 1, each update + 1).
    #[serde(default = "one")]
    pub version: u32,
    /// The next number used to mint a step id (`s{n}`); only grows.
    #[serde(default)]
    pub next_step_seq: u32,
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
    /// A flat plan from step texts, ids `s1..sn`.
    pub fn from_texts(
        id: impl Into<String>,
        title: impl Into<String>,
        goal: impl Into<String>,
        texts: &[String],
    ) -> Result<Plan, PlanError> {
        let mut plan = Plan {
            id: id.into(),
            title: title.into(),
            goal: goal.into(),
            language: None,
            steps: Vec::new(),
            version: 1,
            next_step_seq: 1,
        };
        let steps = texts
            .iter()
            .map(|t| StepSpec {
                id: None,
                text: t.clone(),
                depends_on: Vec::new(),
            })
            .collect::<Vec<_>>();
        plan.steps = plan.build_steps(&steps, &[])?;
        Ok(plan)
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

/// A step as requested by a planner: text (with an optional `[TAG]`), optional id and deps.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSpec {
    pub id: Option<String>,
    pub text: String,
    pub depends_on: Vec<String>,
}

impl StepSpec {
    pub fn text(text: impl Into<String>) -> StepSpec {
        StepSpec {
            id: None,
            text: text.into(),
            depends_on: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(texts: &[&str]) -> Plan {
        let texts: Vec<String> = texts.iter().map(|s| s.to_string()).collect();
        Plan::from_texts("plan_1", "T", "goal", &texts).expect("valid plan")
    }

    #[test]
    fn every_legal_transition_is_accepted_and_every_other_refused() {
        use StepStatus::*;
        let legal = [
            (NotStarted, InProgress),
            (InProgress, Completed),
            (InProgress, Failed),
            (InProgress, Blocked),
            (Failed, NotStarted),
            (Blocked, NotStarted),
            (NotStarted, Skipped),
            (InProgress, Skipped),
            (NotStarted, Blocked),
            (Skipped, NotStarted),
        ];
        for from in StepStatus::ALL {
            for to in StepStatus::ALL {
                assert_eq!(
                    from.can_transition_to(to),
                    legal.contains(&(from, to)),
                    "{from} -> {to}"
                );
            }
        }
    }

    #[test]
    fn illegal_transition_is_an_error_and_leaves_the_step_alone() {
        let mut p = plan(&["a", "b"]);
        let err = p
            .transition("s1", StepStatus::Completed)
            .expect_err("not_started -> completed is illegal");
        assert!(matches!(err, PlanError::IllegalTransition { .. }));
        assert_eq!(p.steps[0].status, StepStatus::NotStarted);
        assert!(matches!(
            p.transition("nope", StepStatus::InProgress),
            Err(PlanError::UnknownStep(_))
        ));
    }

    #[test]
    fn starting_a_step_counts_an_attempt() {
        let mut p = plan(&["a"]);
        p.transition("s1", StepStatus::InProgress).expect("legal");
        p.transition("s1", StepStatus::Failed).expect("legal");
        p.transition("s1", StepStatus::NotStarted).expect("legal");
        p.transition("s1", StepStatus::InProgress).expect("legal");
        assert_eq!(p.steps[0].attempts, 2);
    }

    #[test]
    fn kind_tags_are_parsed_from_step_text() {
        let p = plan(&[
            "[search] find docs",
            "[CODE]write it",
            "plain [x] text",
            "[not a tag] y",
        ]);
        assert_eq!(p.steps[0].kind.as_deref(), Some("SEARCH"));
        assert_eq!(p.steps[0].description, "find docs");
        assert_eq!(p.steps[1].kind.as_deref(), Some("CODE"));
        assert_eq!(p.steps[2].kind, None);
        assert_eq!(p.steps[3].kind, None);
        assert_eq!(p.steps[3].description, "[not a tag] y");
    }

    #[test]
    fn replace_keeps_unchanged_steps_and_mints_fresh_ids() {
        let mut p = plan(&["a", "b", "c"]);
        p.transition("s1", StepStatus::InProgress).expect("legal");
        p.transition("s1", StepStatus::Completed).expect("legal");
        p.steps[0].notes = "done".into();
        p.replace_steps(&[
            StepSpec::text("a"),
            StepSpec::text("x"),
            StepSpec::text("c"),
        ])
        .expect("valid update");
        assert_eq!(p.version, 2);
        assert_eq!(p.steps[0].id, "s1");
        assert_eq!(p.steps[0].status, StepStatus::Completed);
        assert_eq!(p.steps[0].notes, "done");
        assert_eq!(p.steps[1].id, "s4", "a removed id is never reused");
        assert_eq!(p.steps[1].status, StepStatus::NotStarted);
        assert_eq!(p.steps[2].id, "s3");
    }

    #[test]
    fn invalid_step_lists_are_refused() {
        let mut p = plan(&["a"]);
        assert!(matches!(p.replace_steps(&[]), Err(PlanError::EmptySteps)));
        assert!(matches!(
            p.replace_steps(&[StepSpec::text("  ")]),
            Err(PlanError::EmptyStepText)
        ));
        let dup = StepSpec {
            id: Some("k".into()),
            text: "one".into(),
            depends_on: vec![],
        };
        let dup2 = StepSpec {
            text: "two".into(),
            ..dup.clone()
        };
        assert!(matches!(
            p.replace_steps(&[dup, dup2]),
            Err(PlanError::DuplicateStepId(id)) if id == "k"
        ));
        let dangling = StepSpec {
            id: None,
            text: "x".into(),
            depends_on: vec!["zzz".into()],
        };
        assert!(matches!(
            p.replace_steps(&[dangling]),
            Err(PlanError::UnknownDependency { .. })
        ));
        assert_eq!(p.version, 1, "a refused update changes nothing");
        assert_eq!(p.steps.len(), 1);
    }
}
