//! The tool router: which of the toolbox's tools a step's executor is offered (see
//! docs/architecture.md, "A run, step by step"). Weak models read every schema on every
//! call; the nine `browser_*` schemas alone are ~1,000 tokens. So:
//!
//! - the run's [`Actions`] choose between `code_run` and the shell and file tools
//!   (docs/code-actions.md);
//! - the browser comes only when the step or the task holds a web address (`http://…`,
//!   `www.…`, `localhost:8000`, `127.0.0.1`) or the step's `[KIND]` tag asks for the web;
//! - `message_notify_user` only when the step's tag says to tell the user;
//! - everything else (asking the user, web search when configured, MCP servers' and custom
//!   tools, `complete_step`) always.
//!
//! A retry is routed the same way (a wider toolbox only confuses a small model that already
//! failed once). Pure: no I/O, and no word of any
//! language is read: tags are the planner's own protocol, addresses are the same in every
//! language. Tools are filtered by the family each declares (`Tool::family`), never by name.

use crate::engine::config::Actions;
use crate::model::plan::Step;
use crate::ports::llm::ToolSchema;
use crate::ports::tool::{ToolFamily as Family, Toolbox};
use crate::tools::builtin::{
    complete_step_schema, user_message_schemas, ASK_USER, COMPLETE_STEP, NOTIFY_USER,
};

/// What the router looks at.
#[derive(Debug, Clone, Copy)]
pub struct RouteQuery<'a> {
    /// The step's `[KIND]` tag, if any.
    pub kind: Option<&'a str>,
    /// The step's description (without the tag).
    pub step: &'a str,
    /// The run's task.
    pub task: &'a str,
    /// How the run acts.
    pub actions: Actions,
}

/// Whether tool `name` works a running shell session (`shell_view`, `shell_wait`...).
pub fn is_session_tool(toolbox: &dyn Toolbox, name: &str) -> bool {
    family_of(toolbox, name) == Family::ShellSession
}

/// The family of tool `name` offered to an executor: the domain's own functions
/// (`message_ask_user`, `message_notify_user`, `complete_step`) by their name, any other as
/// `toolbox` says.
pub fn family_of(toolbox: &dyn Toolbox, name: &str) -> Family {
    match name {
        ASK_USER => Family::AskUser,
        NOTIFY_USER => Family::NotifyUser,
        COMPLETE_STEP => Family::Other,
        _ => toolbox.family(name),
    }
}

/// The schemas from `all` (in their order) offered to the step of `query`; `family` says
/// each tool's family.
pub fn route_tools(
    query: &RouteQuery<'_>,
    all: &[ToolSchema],
    family: impl Fn(&str) -> Family,
) -> Vec<ToolSchema> {
    all.iter()
        .filter(|s| {
            let f = family(&s.name);
            query.actions.offers(f) && wanted(query, f)
        })
        .cloned()
        .collect()
}

/// Whether a family is offered to a first attempt.
fn wanted(query: &RouteQuery<'_>, family: Family) -> bool {
    let tag = query.kind.unwrap_or_default().to_ascii_uppercase();
    let tagged = |tags: &[&str]| tags.contains(&tag.as_str());
    match family {
        Family::Browser => {
            tagged(&["BROWSE", "BROWSER", "WEB", "SEARCH", "RESEARCH"])
                || holds_web_address(query.step)
                || holds_web_address(query.task)
        }
        Family::NotifyUser => tagged(&["NOTIFY", "USER", "ASK"]),
        Family::Shell
        | Family::ShellSession
        | Family::Code
        | Family::Files
        | Family::WebSearch
        | Family::AskUser
        | Family::Other => true,
    }
}

/// Whether `text` holds a web address: a URL, a `www.` host, `localhost` or an IPv4
/// address (the same in every language).
pub fn holds_web_address(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    if ["http://", "https://", "www.", "localhost"]
        .iter()
        .any(|m| lower.contains(m))
    {
        return true;
    }
    lower
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .any(is_ipv4)
}

fn is_ipv4(word: &str) -> bool {
    let parts: Vec<&str> = word.trim_end_matches('.').split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.parse::<u8>().is_ok())
}

/// The names of `schemas`, for an error that lists what was offered.
pub fn names(schemas: &[ToolSchema]) -> Vec<&str> {
    schemas
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| *n != COMPLETE_STEP)
        .collect()
}

/// The tools offered to one attempt of a step: the toolbox, the user functions and
/// `complete_step`, routed when `route_tools` (the run's actions apply either way). Fixed
/// for the whole attempt, so a model's KV cache can reuse the prefix from call to call.
/// Returns (offered, everything the actions allow).
pub fn offered_tools(
    task: &str,
    step: &Step,
    toolbox: &dyn Toolbox,
    route_tools: bool,
    actions: Actions,
) -> (Vec<ToolSchema>, Vec<ToolSchema>) {
    let mut all = toolbox.schemas();
    all.extend(user_message_schemas());
    all.push(complete_step_schema());
    all.retain(|s| actions.offers(family_of(toolbox, &s.name)));
    if !route_tools {
        return (all.clone(), all);
    }
    let offered = self::route_tools(
        &RouteQuery {
            kind: step.kind.as_deref(),
            step: &step.description,
            task,
            actions,
        },
        &all,
        |name| family_of(toolbox, name),
    );
    (offered, all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn toolbox() -> Vec<ToolSchema> {
        [
            "shell_exec",
            "code_run",
            "shell_view",
            "shell_wait",
            "shell_write",
            "shell_kill",
            "file_read",
            "file_write",
            "file_str_replace",
            "file_list",
            "browser_navigate",
            "browser_click",
            "browser_view",
            "web_search",
            "mcp__git__status",
            "message_notify_user",
            "message_ask_user",
            "complete_step",
        ]
        .iter()
        .map(|n| ToolSchema {
            name: n.to_string(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        })
        .collect()
    }

    /// The families the built-in tools declare (their adapters' `Tool::family`).
    fn builtin_family(name: &str) -> Family {
        match name {
            "shell_exec" => Family::Shell,
            "code_run" => Family::Code,
            "shell_view" | "shell_wait" | "shell_write" | "shell_kill" => Family::ShellSession,
            n if n.starts_with("file_") => Family::Files,
            n if n.starts_with("browser_") => Family::Browser,
            "web_search" => Family::WebSearch,
            "message_ask_user" => Family::AskUser,
            "message_notify_user" => Family::NotifyUser,
            _ => Family::Other,
        }
    }

    fn query<'a>(kind: Option<&'a str>, step: &'a str, task: &'a str) -> RouteQuery<'a> {
        RouteQuery {
            kind,
            step,
            task,
            actions: Actions::Both,
        }
    }

    fn routed(q: &RouteQuery<'_>) -> Vec<String> {
        route_tools(q, &toolbox(), builtin_family)
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    #[test]
    fn code_actions_replace_the_shell_and_file_tools() {
        let mut q = query(None, "Count the rows of data.csv", "t");
        q.actions = Actions::Code;
        assert_eq!(
            routed(&q),
            [
                "code_run",
                "web_search",
                "mcp__git__status",
                "message_ask_user",
                "complete_step"
            ]
        );
        q.actions = Actions::Tools;
        let got = routed(&q);
        assert!(got.contains(&"shell_exec".to_string()), "{got:?}");
        assert!(!got.contains(&"code_run".to_string()), "{got:?}");
        q.actions = Actions::Both;
        let got = routed(&q);
        assert!(got.contains(&"shell_exec".to_string()), "{got:?}");
        assert!(got.contains(&"code_run".to_string()), "{got:?}");
    }

    #[test]
    fn web_addresses_in_any_language_bring_the_browser() {
        for task in [
            "open http://localhost:8000 and report the title",
            "Ouvre la page www.example.org et copie le code",
            "Lee el código de la página 127.0.0.1:8080",
        ] {
            let got = routed(&query(None, "Do it", task));
            assert!(
                got.contains(&"browser_navigate".to_string()),
                "{task}: {got:?}"
            );
        }
        let got = routed(&query(
            None,
            "Write the report",
            "version 1.2.3 in notes.txt",
        ));
        assert!(!got.iter().any(|n| n.starts_with("browser_")), "{got:?}");
    }

    #[test]
    fn kind_tags_map_to_families_and_asking_is_always_offered() {
        let got = routed(&query(Some("BROWSE"), "Read the docs", "t"));
        assert!(got.contains(&"browser_click".to_string()), "{got:?}");
        let got = routed(&query(None, "Anything", "t"));
        assert!(got.contains(&"message_ask_user".to_string()), "{got:?}");
        assert!(got.contains(&"web_search".to_string()), "{got:?}");
        assert!(!got.contains(&"message_notify_user".to_string()), "{got:?}");
        let got = routed(&query(Some("NOTIFY"), "Anything", "t"));
        assert!(got.contains(&"message_notify_user".to_string()), "{got:?}");
    }

    #[test]
    fn sessions_come_with_the_shell_and_code_drops_the_file_tools() {
        let mut q = query(None, "Write hello.txt", "t");
        assert!(routed(&q).contains(&"shell_view".to_string()));
        q.actions = Actions::Code;
        let got = routed(&q);
        assert!(!got.contains(&"file_write".to_string()), "{got:?}");
        assert!(!got.contains(&"browser_view".to_string()), "{got:?}");
    }

    /// Issue 30: a tool is routed by the family it declares, whatever its name.
    #[test]
    fn custom_tools_are_routed_by_their_declared_family() {
        let schemas: Vec<ToolSchema> = ["lookup_weather", "browser_notes", "page_shot"]
            .iter()
            .map(|n| ToolSchema {
                name: n.to_string(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect();
        let family = |name: &str| match name {
            "page_shot" => Family::Browser,
            _ => Family::Other,
        };
        let got: Vec<String> = route_tools(&query(None, "Write it", "t"), &schemas, family)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(got, ["lookup_weather", "browser_notes"]);
    }

    #[test]
    fn ipv4_addresses_are_recognised() {
        assert!(holds_web_address("see 10.0.0.7 now"));
        assert!(!holds_web_address("version 1.2.3"));
        assert!(!holds_web_address("999.1.1.1"));
    }
}
