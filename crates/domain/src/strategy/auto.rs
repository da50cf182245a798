//! **auto**: classify the task as simple, complex or emergent — rules first, an LLM call only
//! when the rules are unsure, complex when everything fails — and pick flow, dag or todo.

use crate::engine::config::Mode;
use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json;
use crate::error::Error;
use crate::model::event::EventKind;
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskClass {
    Simple,
    Complex,
    Emergent,
}

impl TaskClass {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskClass::Simple => "simple",
            TaskClass::Complex => "complex",
            TaskClass::Emergent => "emergent",
        }
    }

    pub fn mode(self) -> Mode {
        match self {
            TaskClass::Simple => Mode::Flow,
            TaskClass::Complex => Mode::Dag,
            TaskClass::Emergent => Mode::Todo,
        }
    }
}

const EMERGENT: &[&str] = &[
    "explore",
    "investigate",
    "research",
    "find out",
    "figure out",
    "look into",
    "brainstorm",
    "improve",
    "optimize",
    "optimise",
    "audit",
    "survey",
    "what can",
    "ideas for",
    "why is",
    "调研",
    "探索",
    "优化",
    "改进",
    "研究",
];

const COMPLEX: &[&str] = &[
    "in parallel",
    "parallel",
    "compare",
    "for each",
    "each of",
    "all of the",
    "both ",
    " then ",
    "after that",
    "finally",
    "并行",
    "对比",
    "比较",
    "然后",
];

/// The rules: a class and the reason, or `None` when they are unsure.
pub fn classify_by_rules(task: &str) -> Option<(TaskClass, String)> {
    let lower = format!(" {} ", task.to_lowercase());
    let emergent: Vec<&str> = EMERGENT
        .iter()
        .copied()
        .filter(|m| lower.contains(m))
        .collect();
    let mut complex: Vec<&str> = COMPLEX
        .iter()
        .copied()
        .filter(|m| lower.contains(m))
        .collect();
    let list_items = task
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("- ")
                || t.starts_with("* ")
                || t.split_once('.')
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .count();
    if list_items >= 2 {
        complex.push("a list of parts");
    }
    let words = task.split_whitespace().count();
    let ands = lower.matches(" and ").count() + lower.matches(", ").count();
    match (emergent.is_empty(), complex.is_empty()) {
        (false, true) => Some((
            TaskClass::Emergent,
            format!("open-ended wording: {}", emergent.join(", ")),
        )),
        (true, false) => Some((
            TaskClass::Complex,
            format!("several parts: {}", complex.join(", ")),
        )),
        (false, false) => None,
        (true, true) if ands >= 3 => Some((TaskClass::Complex, format!("{ands} conjoined parts"))),
        (true, true) if words <= 25 && ands <= 1 => Some((
            TaskClass::Simple,
            format!("a short, single-goal task ({words} words)"),
        )),
        (true, true) => None,
    }
}

/// Picks the mode for `auto`, records the choice as an event, and returns it.
pub(crate) async fn choose(ctx: &RunContext, rt: &Runtime) -> Result<Mode, Error> {
    let (class, by, reason) = match classify_by_rules(&ctx.task) {
        Some((class, reason)) => (class, "rules", reason),
        None => {
            let messages = vec![ChatMessage::user(prompts::classify_task(&ctx.task))];
            match ask_json(
                ctx,
                "classify",
                rt.planner_llm.as_ref(),
                CallPurpose::Plan,
                messages,
                None,
            )
            .await
            {
                Ok(answer) => {
                    let class = match answer.value["class"].as_str().map(str::trim) {
                        Some("simple") => Some(TaskClass::Simple),
                        Some("complex") => Some(TaskClass::Complex),
                        Some("emergent") => Some(TaskClass::Emergent),
                        _ => None,
                    };
                    let why = answer.value["reason"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    match class {
                        Some(c) => (c, "llm", why),
                        None => (
                            TaskClass::Complex,
                            "fallback",
                            format!("the classifier answered no known class: {}", answer.value),
                        ),
                    }
                }
                Err(e) => (
                    TaskClass::Complex,
                    "fallback",
                    format!("the classifier failed: {}", e.recoverable()?),
                ),
            }
        }
    };
    let mode = class.mode();
    ctx.emit(EventKind::ModeChosen {
        mode: mode.to_string(),
        class: class.as_str().to_string(),
        by: by.to_string(),
        reason,
    })
    .await?;
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_classify_clear_cases_and_defer_unclear_ones() {
        let c = |t: &str| classify_by_rules(t).map(|(c, _)| c);
        assert_eq!(c("Write hello.txt containing hi"), Some(TaskClass::Simple));
        assert_eq!(
            c("Research the Python ML ecosystem"),
            Some(TaskClass::Emergent)
        );
        assert_eq!(
            c("Compare the test suites of repo A and repo B"),
            Some(TaskClass::Complex)
        );
        assert_eq!(
            c("Do these:\n1. build\n2. test\n3. ship"),
            Some(TaskClass::Complex)
        );
        assert_eq!(
            c("Investigate why the build is slow, then compare it with last week"),
            None
        );
        assert_eq!(c("调研 Rust 异步生态"), Some(TaskClass::Emergent));
    }
}
