//! **auto**, the default mode: classify the task as simple, sequential, complex or emergent —
//! by its shape first (a short task that is not a list is simple), an LLM call for the
//! others, sequential when that fails — and pick direct, flow, dag or todo (docs/direct.md,
//! "How auto picks"). No rule reads the task's words.

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

/// Longest task (in characters) the rules send to direct: one executor acting in code does
/// a few actions in one program, where every planned step would cost a small model calls.
const SIMPLE_MAX_CHARS: usize = 600;
/// List items (lines starting `- `, `* `, `1.` or `1)`) from which a task is a plan's worth.
const LIST_ITEMS: usize = 3;

/// The lines of `task` that are items of a list.
fn list_items(task: &str) -> usize {
    task.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("- ")
                || t.starts_with("* ")
                || t.split_once(['.', ')'])
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .count()
}

/// The rules, by the task's shape alone (its length, whether it is a list), the same in
/// every language: a short task that is not a list is simple; otherwise they are unsure
/// (`None`) and a model call classifies it.
pub fn classify_by_rules(task: &str) -> Option<(TaskClass, String)> {
    let chars = task.chars().count();
    let items = list_items(task);
    (chars <= SIMPLE_MAX_CHARS && items < LIST_ITEMS).then(|| {
        (
            TaskClass::Simple,
            format!("a short task ({chars} characters, not a list)"),
        )
    })
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
                            TaskClass::Sequential,
                            "fallback",
                            format!("the classifier answered no known class: {}", answer.value),
                        ),
                    }
                }
                Err(e) => (
                    TaskClass::Sequential,
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

    /// Everyday small jobs go direct whatever their language: no planner call.
    #[test]
    fn short_tasks_in_any_language_go_direct() {
        for task in [
            "Write hello.txt containing 'hello from planwright' with the shell tool, then read \
             it back and report its content",
            "count the lines of data.csv into count.txt",
            "Compte les lignes de ventes.csv et écris le total dans total.txt",
            "Cuenta las palabras de poema.txt y guarda el número en palabras.txt",
            "统计 data.csv 的行数，写入 count.txt",
            "Investigate why the build is slow, then compare it with last week",
        ] {
            assert_eq!(class(task), Some(TaskClass::Simple), "{task:?}");
        }
        assert_eq!(TaskClass::Simple.mode(), Mode::Direct);
    }

    #[test]
    fn lists_and_long_tasks_are_left_to_the_classifier() {
        assert_eq!(class("Do these:\n1. build\n2. test\n3. ship"), None);
        assert_eq!(class("Étapes :\n- créer\n- écrire\n- lancer"), None);
        assert_eq!(class(&"word ".repeat(200)), None);
        assert_eq!(class("Two things:\n- a\n- b"), Some(TaskClass::Simple));
    }
}
