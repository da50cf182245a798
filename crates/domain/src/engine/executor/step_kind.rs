//! Whether a step asks for an action in the world (write a file, run a command, open a page)
//! or only for thinking and reporting ("analyze the request", "summarize"). The executor
//! refuses a success claimed with no tool call for a step that asks for an action (see
//! docs/architecture.md, "A run, step by step"). Pure: no I/O, no model.

/// Verbs (and their usual forms) that need a tool to be done.
const ACTION_VERBS: &[&str] = &[
    "write",
    "create",
    "make",
    "save",
    "store",
    "generate",
    "build",
    "compile",
    "run",
    "execute",
    "launch",
    "start",
    "compute",
    "calculate",
    "read",
    "list",
    "open",
    "browse",
    "visit",
    "navigate",
    "click",
    "fetch",
    "download",
    "upload",
    "install",
    "edit",
    "modify",
    "update",
    "change",
    "replace",
    "append",
    "insert",
    "add",
    "delete",
    "remove",
    "rename",
    "move",
    "copy",
    "count",
    "check",
    "verify",
    "test",
    "search",
    "find",
    "look",
    "ask",
    "query",
    "print",
    "extract",
    "parse",
    "convert",
    "sort",
    "filter",
    "measure",
    "inspect",
    "scrape",
    "clone",
    "commit",
    "deploy",
    "send",
    "post",
    "call",
    "load",
    "set",
    "configure",
    "fix",
    "implement",
    "code",
    "program",
    "script",
    "mkdir",
    "touch",
    "cat",
    "ls",
    "grep",
    "curl",
    "wget",
];

/// Words that, leading a step, make it a thinking or reporting step.
const REPORT_VERBS: &[&str] = &[
    "analyze",
    "analyse",
    "understand",
    "think",
    "consider",
    "plan",
    "summarize",
    "summarise",
    "report",
    "describe",
    "explain",
    "review",
    "reflect",
    "conclude",
    "present",
    "state",
    "answer",
    "respond",
    "reply",
    "decide",
    "identify",
    "determine",
    "clarify",
];

/// Does the step text ask for an action that needs a tool? A step led by a reporting verb
/// ("Summarize the findings", "Report the result") does not, even if an action verb follows
/// ("Analyze the request to find what to write"); otherwise any action verb (or a file name
/// with an extension, or a URL) makes it an action.
pub fn asks_for_action(text: &str) -> bool {
    let (_, text) = crate::model::plan::split_kind_tag(text);
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if let Some(first) = words.first() {
        if REPORT_VERBS.iter().any(|v| is_form_of(first, v)) {
            return false;
        }
    }
    if words
        .iter()
        .any(|w| ACTION_VERBS.iter().any(|v| is_form_of(w, v)))
    {
        return true;
    }
    text.split_whitespace().any(names_a_file_or_url)
}

/// `word` is `verb` or a regular form of it (writes, writing, created, creating, listed).
fn is_form_of(word: &str, verb: &str) -> bool {
    if word == verb {
        return true;
    }
    let Some(rest) = word.strip_prefix(verb.trim_end_matches('e')) else {
        return false;
    };
    let rest = if verb.ends_with('e') && !rest.starts_with('e') && !rest.starts_with('i') {
        match rest.strip_prefix('e') {
            Some(r) => r,
            None => return false,
        }
    } else {
        rest
    };
    matches!(rest, "s" | "es" | "ed" | "d" | "ing" | "e")
        || (rest.len() >= 4
            && rest.starts_with(verb.chars().last().unwrap_or(' '))
            && matches!(&rest[1..], "ing" | "ed"))
}

/// `hello.txt`, `src/main.rs`, `https://...`.
fn names_a_file_or_url(token: &str) -> bool {
    let t = token.trim_matches(|c: char| "\"'`()[],;:!?".contains(c));
    if t.contains("://") {
        return true;
    }
    let t = t.trim_end_matches('.');
    match t.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_plan_has_one_thinking_step() {
        let steps = crate::prompts::default_plan_steps();
        let kinds: Vec<bool> = steps.iter().map(|s| asks_for_action(s)).collect();
        // "Analyze request" is thinking; "Execute task" and "Verify results" act.
        assert_eq!(kinds, vec![false, true, true]);
    }

    #[test]
    fn measured_task_steps_are_actions() {
        for step in [
            "Write hello.txt",
            "Create a file named hello.txt with the text hello",
            "[CODE] Run the script and save its output",
            "Compute the sum of the numbers in data.csv",
            "Calculate 17 * 23",
            "Read back hello.txt to check its content",
            "List the files in the workspace",
            "Open http://localhost:8000 and check the title",
            "Browse to the docs page",
            "Fetch the latest release notes",
            "Download the dataset",
            "Install the dependencies",
            "Edit config.toml to set the port",
            "Replace foo with bar in main.py",
            "Append a line to notes.md",
            "Delete the temporary files",
            "Count the lines of notes.txt",
            "Verify the output",
            "Test the function",
            "Search the web for the Rust release date",
            "Ask the user which colour they prefer",
            "Executing the tests",
            "notes.txt with three lines",
        ] {
            assert!(asks_for_action(step), "{step:?} asks for an action");
        }
    }

    #[test]
    fn thinking_and_reporting_steps_are_not_actions() {
        for step in [
            "Analyze the request",
            "Analyze request",
            "Summarize the findings",
            "Report the result",
            "Understand the task",
            "Review the plan and explain it",
            "Present the final answer",
            "Think about the approach",
        ] {
            assert!(
                !asks_for_action(step),
                "{step:?} does not ask for an action"
            );
        }
    }

    #[test]
    fn verb_forms_match_and_lookalikes_do_not() {
        assert!(is_form_of("writes", "write"));
        assert!(is_form_of("writing", "write"));
        assert!(is_form_of("created", "create"));
        assert!(is_form_of("listed", "list"));
        assert!(is_form_of("running", "run"));
        assert!(!is_form_of("settle", "set"));
        assert!(!is_form_of("listen", "list"));
        assert!(!is_form_of("testament", "test"));
        assert!(!is_form_of("address", "add"));
    }
}
