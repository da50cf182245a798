//! Checks a model-written list of step texts for the junk weak models produce (see
//! docs/architecture.md, "Planning styles"): too many steps, steps that are only numbers or
//! punctuation (`"1"`, `"16"`), duplicates, the planning tool's own command names listed
//! as steps, and the example's placeholders. No rule reads the steps' words (they may be in
//! any language), only their shape and the planning tool's own commands. Every problem is reported at once, quoting the offending values, so a re-ask
//! can say exactly what was wrong. Pure: no I/O.

/// The `planning` tool's commands; a step equal to one of them is not a step of the task.
pub const PLANNING_COMMANDS: [&str; 7] = [
    "create",
    "update",
    "list",
    "get",
    "set_active",
    "mark_step",
    "delete",
];

/// Bounds of one step text, as the narrowed planner schemas declare them.
pub const STEP_MIN_CHARS: usize = 3;
pub const STEP_MAX_CHARS: usize = 200;
/// Longest plan title the narrowed `create` schema allows.
pub const TITLE_MAX_CHARS: usize = 80;

/// How many quoted values a message lists before it says "and N more".
const QUOTED: usize = 4;

/// Every problem of `steps` (texts as the model wrote them, `[KIND]` tags included), or
/// `Ok(())`. `max_steps` bounds the list (`None`: no bound).
pub fn check_step_texts(steps: &[String], max_steps: Option<usize>) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    if steps.is_empty() {
        problems.push("the list of steps is empty: give at least one step".to_string());
    }
    if let Some(max) = max_steps {
        if steps.len() > max {
            problems.push(format!(
                "the plan has {} steps, at most {max} are allowed: keep only the steps the task \
                 really needs",
                steps.len()
            ));
        }
    }
    let mut no_words = Vec::new();
    let mut commands = Vec::new();
    let mut placeholders = Vec::new();
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut repeats = Vec::new();
    for (i, raw) in steps.iter().enumerate() {
        let text = crate::model::plan::split_kind_tag(raw).1;
        if !text.chars().any(char::is_alphabetic) {
            no_words.push((i, raw.as_str()));
            continue;
        }
        if text.trim().starts_with('<') && text.trim().ends_with('>') {
            placeholders.push((i, raw.as_str()));
            continue;
        }
        let key = text
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if PLANNING_COMMANDS.contains(&key.as_str()) {
            commands.push((i, raw.as_str()));
            continue;
        }
        match seen.iter().find(|(k, _)| *k == key) {
            Some((_, first)) => repeats.push(format!("step {i} repeats step {first} ({raw:?})")),
            None => seen.push((key, i)),
        }
    }
    if !no_words.is_empty() {
        problems.push(format!(
            "{} only a number or punctuation, not an action",
            quote_steps(&no_words, "is", "are")
        ));
    }
    if !commands.is_empty() {
        problems.push(format!(
            "{} a command of the planning tool, not a step of the task",
            quote_steps(&commands, "is", "are each")
        ));
    }
    if !placeholders.is_empty() {
        problems.push(format!(
            "{} a placeholder of the example, not an action of this task",
            quote_steps(&placeholders, "is", "are each")
        ));
    }
    if !repeats.is_empty() {
        problems.push(format!("duplicate steps: {}", repeats.join("; ")));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// `step 0 ("1") is` / `steps 0 ("1"), 1 ("2") and 3 more are`.
fn quote_steps(items: &[(usize, &str)], one: &str, many: &str) -> String {
    let shown: Vec<String> = items
        .iter()
        .take(QUOTED)
        .map(|(i, t)| format!("{i} ({t:?})"))
        .collect();
    if items.len() == 1 {
        return format!("step {} {one}", shown[0]);
    }
    let more = items.len().saturating_sub(QUOTED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("steps {}{tail} {many}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_example_placeholders_are_refused() {
        let problems = check_step_texts(
            &texts(&["<first action of the task>", "Write hello.txt"]),
            Some(6),
        )
        .expect_err("placeholder");
        assert!(problems[0].contains("placeholder"), "{problems:?}");
    }

    #[test]
    fn a_good_plan_passes() {
        assert_eq!(
            check_step_texts(
                &texts(&[
                    "Write hello.txt",
                    "[CODE] Count its lines",
                    "Report the count"
                ]),
                Some(6)
            ),
            Ok(())
        );
    }

    #[test]
    fn padded_numbered_plans_are_refused_with_quotes() {
        let padded: Vec<String> = (1..=16).map(|n| n.to_string()).collect();
        let problems = check_step_texts(&padded, Some(6)).expect_err("junk");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains("16 steps, at most 6"),
            "{}",
            problems[0]
        );
        assert!(
            problems[1].starts_with(
                "steps 0 (\"1\"), 1 (\"2\"), 2 (\"3\"), 3 (\"4\") and 12 more are only a number"
            ),
            "{}",
            problems[1]
        );
    }

    #[test]
    fn command_names_duplicates_and_punctuation_are_named() {
        let problems = check_step_texts(
            &texts(&[
                "create",
                "Write a file",
                "write a file.",
                "...",
                "mark_step",
            ]),
            None,
        )
        .expect_err("junk");
        assert_eq!(
            problems,
            vec![
                "step 3 (\"...\") is only a number or punctuation, not an action".to_string(),
                "steps 0 (\"create\"), 4 (\"mark_step\") are each a command of the planning tool, \
                 not a step of the task"
                    .to_string(),
                "duplicate steps: step 2 repeats step 1 (\"write a file.\")".to_string(),
            ]
        );
    }

    #[test]
    fn an_empty_list_is_refused() {
        let problems = check_step_texts(&[], Some(6)).expect_err("empty");
        assert!(problems[0].contains("empty"));
    }
}
