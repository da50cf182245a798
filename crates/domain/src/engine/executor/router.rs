//! The tool router: which of the toolbox's tools a step's executor is offered (see
//! docs/architecture.md, "A run, step by step"). Weak models read every schema on every
//! call; the nine `browser_*` schemas alone are ~1,000 tokens, so a step that writes a file
//! is offered the core shell and file tools, and the other families only when the step (its
//! `[KIND]` tag and text) or, for the browser, the task speaks of them; the shell session
//! tools only once a command of the run became a session (docs/direct.md, "Session
//! tools"). A retry is offered everything. Pure: no I/O; it filters schemas by the family
//! each tool declares (`Tool::family`), never by its name.

use crate::model::plan::Step;
use crate::ports::llm::ToolSchema;
use crate::ports::tool::{ToolFamily as Family, Toolbox};
use crate::tools::builtin::{
    complete_step_schema, user_message_schemas, ASK_USER, COMPLETE_STEP, NOTIFY_USER,
};

/// Whether a tool of `family` is offered to every step: the shell, the file tools and any
/// tool of no family of its own (custom tools, MCP servers' tools, `complete_step`).
fn always_offered(family: Family) -> bool {
    matches!(family, Family::Shell | Family::Files | Family::Other)
}

/// What the router looks at.
#[derive(Debug, Clone, Copy)]
pub struct RouteQuery<'a> {
    /// The step's `[KIND]` tag, if any.
    pub kind: Option<&'a str>,
    /// The step's description (without the tag).
    pub step: &'a str,
    /// The run's task.
    pub task: &'a str,
    /// Attempts before this one: a retry (> 0) is offered the whole toolbox.
    pub retry: bool,
    /// A command of the run became a shell session: the session tools are offered.
    pub sessions: bool,
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
    if query.retry {
        return all.to_vec();
    }
    let wanted = families(query);
    all.iter()
        .filter(|s| {
            let f = family(&s.name);
            always_offered(f) || wanted.contains(&f)
        })
        .cloned()
        .collect()
}

/// The families the step needs, from its tag and its words (and the task's, for the browser).
fn families(query: &RouteQuery<'_>) -> Vec<Family> {
    let step = Words::new(query.step);
    let task = Words::new(query.task);
    let kind = query.kind.unwrap_or_default().to_ascii_uppercase();
    let mut out = Vec::new();
    let by_kind = |tags: &[&str]| tags.contains(&kind.as_str());
    if query.sessions {
        out.push(Family::ShellSession);
    }
    let browsing = [
        "http://",
        "https://",
        "localhost",
        "127.0.0.1",
        "www.",
        "web page",
        "webpage",
        "website",
        "site",
        "page",
        "browse",
        "browser",
        "browsing",
        "click",
        "navigate",
        "screenshot",
        "url",
    ];
    if by_kind(&["BROWSE", "BROWSER", "WEB", "SEARCH", "RESEARCH"])
        || step.any(&browsing)
        || task.any(&browsing)
    {
        out.push(Family::Browser);
    }
    if by_kind(&["SEARCH", "RESEARCH"])
        || step.any(&[
            "search the web",
            "web search",
            "search online",
            "look up",
            "lookup",
            "online",
            "internet",
            "news",
            "latest",
            "google",
        ])
    {
        out.push(Family::WebSearch);
    }
    if by_kind(&["ASK", "USER"])
        || step.any(&[
            "ask",
            "ask the user",
            "ask user",
            "the user's",
            "user's preference",
            "preference",
            "prefer",
            "choice",
            "choose",
            "confirm",
            "confirmation",
        ])
    {
        out.push(Family::AskUser);
    }
    if by_kind(&["ASK", "USER", "NOTIFY"])
        || step.any(&[
            "tell the user",
            "notify",
            "inform the user",
            "let the user know",
            "message the user",
            "show the user",
        ])
    {
        out.push(Family::NotifyUser);
    }
    out
}

/// Lower-cased text with its words, for whole-word and phrase matching.
struct Words {
    text: String,
    words: Vec<String>,
}

impl Words {
    fn new(text: &str) -> Words {
        let text = text.to_lowercase();
        let words = text
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        Words { text, words }
    }

    /// A needle with a space, a dot or a slash is a phrase (substring); else a whole word.
    fn any(&self, needles: &[&str]) -> bool {
        needles.iter().any(|n| {
            if n.contains([' ', '.', '/', ':']) {
                self.text.contains(n)
            } else {
                self.words.iter().any(|w| w == n)
            }
        })
    }
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
/// `complete_step`, routed when `route_tools`. Fixed for the whole attempt, so a model's
/// KV cache can reuse the prefix from call to call. Returns (offered, everything).
pub fn offered_tools(
    task: &str,
    step: &Step,
    toolbox: &dyn Toolbox,
    route_tools: bool,
    sessions: bool,
) -> (Vec<ToolSchema>, Vec<ToolSchema>) {
    let mut all = toolbox.schemas();
    all.extend(user_message_schemas());
    all.push(complete_step_schema());
    if !route_tools {
        return (all.clone(), all);
    }
    let offered = self::route_tools(
        &RouteQuery {
            kind: step.kind.as_deref(),
            step: &step.description,
            task,
            retry: step.attempts() > 1,
            sessions,
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
            "shell_view" | "shell_wait" | "shell_write" | "shell_kill" => Family::ShellSession,
            n if n.starts_with("file_") => Family::Files,
            n if n.starts_with("browser_") => Family::Browser,
            "web_search" => Family::WebSearch,
            "message_ask_user" => Family::AskUser,
            "message_notify_user" => Family::NotifyUser,
            _ => Family::Other,
        }
    }

    fn is_session_tool(name: &str) -> bool {
        builtin_family(name) == Family::ShellSession
    }

    fn offered(kind: Option<&str>, step: &str, task: &str) -> Vec<String> {
        offered_with(kind, step, task, false)
    }

    fn offered_with(kind: Option<&str>, step: &str, task: &str, sessions: bool) -> Vec<String> {
        route_tools(
            &RouteQuery {
                kind,
                step,
                task,
                retry: false,
                sessions,
            },
            &toolbox(),
            builtin_family,
        )
        .into_iter()
        .map(|s| s.name)
        .collect()
    }

    const CORE_AND_ALWAYS: [&str; 7] = [
        "shell_exec",
        "file_read",
        "file_write",
        "file_str_replace",
        "file_list",
        "mcp__git__status",
        "complete_step",
    ];

    #[test]
    fn a_file_step_gets_the_core_tools_only() {
        assert_eq!(
            offered(None, "Write hello into hello.txt", "write hello.txt"),
            CORE_AND_ALWAYS
        );
    }

    #[test]
    fn session_tools_come_once_a_session_exists_and_urls_get_the_browser() {
        let step = "Start the web server in the background";
        let got = offered(None, step, "serve the folder");
        assert!(!got.iter().any(|n| is_session_tool(n)), "{got:?}");
        assert!(!got.iter().any(|n| n.starts_with("browser_")), "{got:?}");
        let got = offered_with(None, step, "serve the folder", true);
        for tool in ["shell_view", "shell_wait", "shell_write", "shell_kill"] {
            assert!(got.contains(&tool.to_string()), "{got:?}");
        }
        let got = offered(
            None,
            "Check the title",
            "open http://localhost:8000 and report the title",
        );
        assert!(got.contains(&"browser_navigate".to_string()), "{got:?}");
        assert!(!got.contains(&"shell_wait".to_string()), "{got:?}");
    }

    #[test]
    fn kind_tags_map_to_families() {
        let got = offered(Some("SEARCH"), "Find the release date", "t");
        assert!(got.contains(&"web_search".to_string()), "{got:?}");
        assert!(got.contains(&"browser_view".to_string()), "{got:?}");
        let got = offered(Some("BROWSE"), "Read the docs", "t");
        assert!(got.contains(&"browser_click".to_string()), "{got:?}");
        assert!(!got.contains(&"web_search".to_string()), "{got:?}");
        assert_eq!(
            offered(Some("CODE"), "Write the script", "t"),
            CORE_AND_ALWAYS
        );
    }

    #[test]
    fn search_and_user_words_pick_their_tools() {
        let got = offered(None, "Look up the latest Rust version online", "t");
        assert!(got.contains(&"web_search".to_string()), "{got:?}");
        let got = offered(None, "Ask the user which colour they prefer", "t");
        assert!(got.contains(&"message_ask_user".to_string()), "{got:?}");
        assert!(!got.contains(&"message_notify_user".to_string()), "{got:?}");
        // The eval's wording: the user is "me".
        let got = offered(
            None,
            "Ask me which city I live in, then write my answer into city.txt.",
            "t",
        );
        assert!(got.contains(&"message_ask_user".to_string()), "{got:?}");
        let got = offered(None, "Check what the task asks for", "t");
        assert!(!got.contains(&"message_ask_user".to_string()), "{got:?}");
        let got = offered(None, "Tell the user the result", "t");
        assert!(got.contains(&"message_notify_user".to_string()), "{got:?}");
        assert!(!got.contains(&"message_ask_user".to_string()), "{got:?}");
    }

    #[test]
    fn a_retry_gets_the_whole_toolbox() {
        let all = route_tools(
            &RouteQuery {
                kind: None,
                step: "Write hello.txt",
                task: "t",
                retry: true,
                sessions: false,
            },
            &toolbox(),
            builtin_family,
        );
        assert_eq!(all.len(), toolbox().len());
    }

    /// Issue 30: a tool is routed by the family it declares, whatever its name: a custom
    /// `lookup_weather` of the web-search family comes with a search step only; a custom
    /// `deploy_site` of no family is always offered, and so is a `browser_`-named tool that
    /// declares none.
    #[test]
    fn custom_tools_are_routed_by_their_declared_family() {
        let schemas: Vec<ToolSchema> = ["lookup_weather", "deploy_site", "browser_notes"]
            .iter()
            .map(|n| ToolSchema {
                name: n.to_string(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect();
        let family = |name: &str| match name {
            "lookup_weather" => Family::WebSearch,
            _ => Family::Other,
        };
        let routed = |step: &str| -> Vec<String> {
            let query = RouteQuery {
                kind: None,
                step,
                task: "t",
                retry: false,
                sessions: false,
            };
            route_tools(&query, &schemas, family)
                .into_iter()
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(
            routed("Write the report into report.txt"),
            ["deploy_site", "browser_notes"]
        );
        assert_eq!(
            routed("Look up the latest forecast online"),
            ["lookup_weather", "deploy_site", "browser_notes"]
        );
    }

    #[test]
    fn words_match_whole_words_and_phrases() {
        let w = Words::new("Update the homepage; wait for input.");
        assert!(w.any(&["wait"]));
        assert!(!w.any(&["page"]), "homepage is not the word page");
        assert!(w.any(&["for input"]));
    }
}
