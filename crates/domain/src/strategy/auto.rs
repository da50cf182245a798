//! **auto**, the default mode: classify the task as simple, sequential, complex or emergent —
//! rules first, an LLM call only when the rules are unsure, complex when everything fails —
//! and pick direct, flow, dag or todo (docs/direct.md, "How auto picks").

use crate::engine::config::Mode;
use crate::engine::context::RunContext;
use crate::engine::runtime::Runtime;
use crate::engine::structured::ask_json;
use crate::error::Error;
use crate::model::event::EventKind;
use crate::model::task_files::mentions;
use crate::ports::llm::{CallPurpose, ChatMessage};
use crate::prompts;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskClass {
    /// One goal one executor reaches in a few tool calls: direct.
    Simple,
    /// Several parts done one after another: flow.
    Sequential,
    /// Several parts, some independent: dag.
    Complex,
    /// Open-ended: todo.
    Emergent,
}

impl TaskClass {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskClass::Simple => "simple",
            TaskClass::Sequential => "sequential",
            TaskClass::Complex => "complex",
            TaskClass::Emergent => "emergent",
        }
    }

    pub fn mode(self) -> Mode {
        match self {
            TaskClass::Simple => Mode::Direct,
            TaskClass::Sequential => Mode::Flow,
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

/// Parts that can be done side by side.
const PARALLEL: &[&str] = &[
    "in parallel",
    "parallel",
    "compare",
    "for each",
    "each of",
    "all of the",
    "both ",
    "并行",
    "对比",
    "比较",
];

/// Parts done one after another.
const SEQUENCE: &[&str] = &[" then ", "after that", "afterwards", "finally", "然后"];

/// Longest task (in words) the rules send to direct.
const SIMPLE_MAX_WORDS: usize = 40;
/// Most parts (sequence words, semicolons) a task sent to direct has. Commas and "and"
/// do not count: they join the actions of one sentence ("read, sort, upper-case and
/// write"), which one direct loop does well (docs/direct.md, "How auto picks").
const SIMPLE_MAX_PARTS: usize = 3;
/// A task longer than this (in words) gets a plan.
const LONG_TASK_WORDS: usize = 60;

/// The rules: a class and the reason, or `None` when they are unsure.
pub fn classify_by_rules(task: &str) -> Option<(TaskClass, String)> {
    let lower = format!(" {} ", task.to_lowercase());
    let found = |markers: &[&'static str]| -> Vec<&'static str> {
        markers
            .iter()
            .copied()
            .filter(|m| lower.contains(m))
            .collect()
    };
    let emergent = found(EMERGENT);
    let parallel = found(PARALLEL);
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
    let words = task.split_whitespace().count();
    let parts = SEQUENCE
        .iter()
        .map(|m| lower.matches(m).count())
        .sum::<usize>()
        + lower.matches("; ").count();
    let short = words <= SIMPLE_MAX_WORDS && parts <= SIMPLE_MAX_PARTS;
    if short && list_items < 2 && !mentions(task, &[]).is_empty() {
        // "Run report.sh; if it fails, find out why": "find out" is not open-ended when a
        // short task names its files (docs/direct.md, "How auto picks").
        return Some((
            TaskClass::Simple,
            format!("a short task on named files ({words} words, {parts} joined parts)"),
        ));
    }
    match (emergent.is_empty(), parallel.is_empty()) {
        (false, true) => Some((
            TaskClass::Emergent,
            format!("open-ended wording: {}", emergent.join(", ")),
        )),
        (true, false) => Some((
            TaskClass::Complex,
            format!("parts that can run side by side: {}", parallel.join(", ")),
        )),
        (false, false) => None,
        (true, true) if list_items >= 2 => Some((
            TaskClass::Sequential,
            format!("a list of {list_items} parts"),
        )),
        (true, true) if words <= SIMPLE_MAX_WORDS && parts <= SIMPLE_MAX_PARTS => Some((
            TaskClass::Simple,
            format!("a short task ({words} words, {parts} joined parts)"),
        )),
        (true, true) if words > LONG_TASK_WORDS || parts > SIMPLE_MAX_PARTS + 1 => Some((
            TaskClass::Sequential,
            format!("a long task ({words} words, {parts} joined parts)"),
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
                        Some("sequential") => Some(TaskClass::Sequential),
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

    fn class(task: &str) -> Option<TaskClass> {
        classify_by_rules(task).map(|(c, _)| c)
    }

    #[test]
    fn rules_classify_clear_cases_and_defer_unclear_ones() {
        assert_eq!(
            class("Write hello.txt containing hi"),
            Some(TaskClass::Simple)
        );
        assert_eq!(
            class("Research the Python ML ecosystem"),
            Some(TaskClass::Emergent)
        );
        assert_eq!(
            class("Compare the test suites of repo A and repo B"),
            Some(TaskClass::Complex)
        );
        assert_eq!(
            class("Do these:\n1. build\n2. test\n3. ship"),
            Some(TaskClass::Sequential)
        );
        assert_eq!(
            class("Investigate why the build is slow, then compare it with last week"),
            None
        );
        assert_eq!(class("调研 Rust 异步生态"), Some(TaskClass::Emergent));
    }

    /// Everyday small jobs go direct: no planner call (docs/direct.md).
    #[test]
    fn small_everyday_jobs_go_direct() {
        for task in [
            "Write hello.txt containing 'hello from planwright' with the shell tool, then read \
             it back and report its content",
            "count the lines of data.csv into count.txt",
            "ask the user their city and write it to city.txt",
            "put 1..10 in numbers.txt, then their sum in total.txt",
            "Rename notes.txt to notes.md without changing its content",
            "What is the largest value in the price column of data.csv? Write it to max.txt",
            "Read names.txt, sort the names alphabetically, convert them to upper case and \
             write them into out.txt, one name per line.",
            "Run the script report.sh with `sh report.sh`. If it fails, find out why, fix the \
             cause and run it again so that it writes report.txt.",
            "Compare a.txt and b.txt and write the lines they share into both.txt",
        ] {
            assert_eq!(class(task), Some(TaskClass::Simple), "{task:?}");
            assert_eq!(TaskClass::Simple.mode(), Mode::Direct);
        }
    }

    #[test]
    fn long_multi_part_tasks_get_a_plan() {
        let long = "Create a folder src, then write main.py that reads input.txt, then write \
                    test_main.py with three tests, then run the tests, then fix what fails, \
                    and finally write a README.md describing the project and how to run it";
        assert_eq!(class(long), Some(TaskClass::Sequential));
        assert_eq!(TaskClass::Sequential.mode(), Mode::Flow);
        let listed = "Set up the project:\n- create the folder\n- write the config";
        assert_eq!(class(listed), Some(TaskClass::Sequential));
    }
}
