//! [`ToolSet`], the plain [`Toolbox`] over a list of [`Tool`]s, and the domain's own
//! `complete_step` function, by which an executor ends a step.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::model::approval::glob;
use crate::model::tool_kind::{ToolEffect, ToolFamily};
use crate::ports::llm::ToolSchema;
use crate::ports::{SearchProvider, Tool, ToolContext, ToolOutput, Toolbox};

/// Name of the function that ends a step.
pub const COMPLETE_STEP: &str = "complete_step";
/// Tells the user something without waiting (handled by the executor).
pub const NOTIFY_USER: &str = "message_notify_user";
/// Asks the user and waits for the answer (handled by the executor).
pub const ASK_USER: &str = "message_ask_user";
/// Searches the web through the configured [`SearchProvider`].
pub const WEB_SEARCH: &str = "web_search";

/// A toolbox made of individual tools; names must be unique. Schemas are computed once,
/// when a tool is added, not at every step.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    schemas: Vec<ToolSchema>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name().to_string()))
            .finish()
    }
}

impl ToolSet {
    pub fn new() -> ToolSet {
        ToolSet::default()
    }

    /// Adds a tool; a later tool with the same name replaces the earlier one.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> ToolSet {
        self.tools.retain(|t| t.name() != tool.name());
        self.schemas.retain(|s| s.name != tool.name());
        self.schemas.push(ToolSchema {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            parameters: tool.parameters(),
        });
        self.tools.push(tool);
        self
    }

    pub fn extend(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> ToolSet {
        for t in tools {
            self = self.with(t);
        }
        self
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_string()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The set without every tool whose name matches one of `patterns` (`*` any run of
    /// characters, `?` one: `browser_*`), and the names taken out.
    pub fn without(mut self, patterns: &[String]) -> (ToolSet, Vec<String>) {
        let hidden = |name: &str| patterns.iter().any(|p| glob(p, name, false));
        let removed: Vec<String> = self.names().into_iter().filter(|n| hidden(n)).collect();
        self.tools.retain(|t| !hidden(t.name()));
        self.schemas.retain(|s| !hidden(&s.name));
        (self, removed)
    }
}

#[async_trait]
impl Toolbox for ToolSet {
    fn schemas(&self) -> Vec<ToolSchema> {
        self.schemas.clone()
    }

    fn idempotent(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.idempotent())
    }

    fn family(&self, name: &str) -> ToolFamily {
        self.get(name).map_or(ToolFamily::Other, |t| t.family())
    }

    fn effect(&self, name: &str) -> ToolEffect {
        self.get(name).map_or(ToolEffect::Acts, |t| t.effect())
    }

    async fn close_run(&self, run_id: &str) {
        for tool in &self.tools {
            tool.close_run(run_id).await;
        }
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        match self.get(name) {
            Some(tool) => tool.execute(args, ctx).await,
            None => Err(ToolError::Refused(format!(
                "unknown tool '{name}'; available tools: {}",
                self.names().join(", ")
            ))),
        }
    }
}

/// Arguments of `complete_step`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CompleteStepArgs {
    pub success: bool,
    pub result: String,
    /// The executor learned that the remaining plan no longer fits.
    #[serde(default)]
    pub revise_plan: bool,
}

/// The `complete_step` schema, built once.
pub fn complete_step_schema() -> ToolSchema {
    static SCHEMA: std::sync::LazyLock<ToolSchema> =
        std::sync::LazyLock::new(build_complete_step_schema);
    SCHEMA.clone()
}

fn build_complete_step_schema() -> ToolSchema {
    ToolSchema {
        name: COMPLETE_STEP.to_string(),
        description: "Finish the current step: success=true when done, false when it cannot be \
                      done."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "success": {"type": "boolean"},
                "result": {"type": "string", "description": "what you did and found (files, values), or why it failed"},
                "revise_plan": {"type": "boolean", "description": "true if the rest of the plan no longer fits"}
            },
            "required": ["success", "result"],
            "additionalProperties": false
        }),
    }
}

/// Arguments of `message_notify_user`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NotifyUserArgs {
    pub text: String,
}

/// Arguments of `message_ask_user`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AskUserArgs {
    pub question: String,
}

/// The two human-in-the-loop functions, built once.
pub fn user_message_schemas() -> Vec<ToolSchema> {
    static SCHEMAS: std::sync::LazyLock<Vec<ToolSchema>> = std::sync::LazyLock::new(|| {
        vec![
            ToolSchema {
                name: NOTIFY_USER.to_string(),
                description: "Send the user a short message; no reply.".to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                    "additionalProperties": false
                }),
            },
            ToolSchema {
                name: ASK_USER.to_string(),
                description: "Ask the user one question and wait for the answer; only when the \
                              step cannot go on without it. If nobody can answer, the step fails."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {"question": {"type": "string"}},
                    "required": ["question"],
                    "additionalProperties": false
                }),
            },
        ]
    });
    SCHEMAS.clone()
}

/// `web_search {query, max_results?}` over a [`SearchProvider`]. Offer it only when a
/// provider is configured.
pub struct WebSearch {
    provider: Arc<dyn SearchProvider>,
}

impl std::fmt::Debug for WebSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearch")
            .field("provider", &self.provider.name())
            .finish()
    }
}

impl WebSearch {
    pub const MAX_RESULTS: usize = 20;

    pub fn new(provider: Arc<dyn SearchProvider>) -> WebSearch {
        WebSearch { provider }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebSearchArgs {
    query: String,
    #[serde(default)]
    max_results: Option<u64>,
}

#[async_trait]
impl Tool for WebSearch {
    fn name(&self) -> &str {
        WEB_SEARCH
    }

    fn description(&self) -> &str {
        "Search the web. Returns titles, URLs and snippets of the best matches; open a URL \
         with the browser tools to read a page."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to search for"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": Self::MAX_RESULTS, "description": "how many results (default 5)"}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn idempotent(&self) -> bool {
        true
    }

    fn family(&self) -> ToolFamily {
        ToolFamily::WebSearch
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::Network
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: WebSearchArgs =
            serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::InvalidArguments("`query` is empty".to_string()));
        }
        let max = args
            .max_results
            .map_or(5, |n| usize::try_from(n).unwrap_or(Self::MAX_RESULTS))
            .clamp(1, Self::MAX_RESULTS);
        let hits = self.provider.search(query, max).await?;
        if hits.is_empty() {
            return Ok(ToolOutput::ok(format!(
                "No results for \"{query}\" ({}).",
                self.provider.name()
            )));
        }
        let mut out = format!("Results for \"{query}\" ({}):\n", self.provider.name());
        for (i, h) in hits.iter().take(max).enumerate() {
            out.push_str(&format!(
                "{}. {}\n   {}\n",
                i + 1,
                h.title.trim(),
                h.url.trim()
            ));
            if !h.snippet.trim().is_empty() {
                out.push_str(&format!("   {}\n", h.snippet.trim()));
            }
        }
        Ok(ToolOutput::ok(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::{MockSearchProvider, SearchHit};
    use tokio_util::sync::CancellationToken;

    fn ctx() -> ToolContext {
        ToolContext {
            run_id: "r".into(),
            step_id: None,
            workspace: std::path::PathBuf::from("/tmp"),
            cancel: CancellationToken::new(),
        }
    }

    #[tokio::test]
    async fn web_search_formats_hits_and_checks_arguments() {
        let mut provider = MockSearchProvider::new();
        provider.expect_name().return_const("searxng".to_string());
        provider.expect_search().returning(|q, n| {
            assert_eq!(q, "rust async");
            assert_eq!(n, 2);
            Ok(vec![SearchHit {
                title: "Tokio".into(),
                url: "https://tokio.rs".into(),
                snippet: "An async runtime".into(),
            }])
        });
        let tool = WebSearch::new(Arc::new(provider));
        let out = tool
            .execute(json!({"query": " rust async ", "max_results": 2}), &ctx())
            .await
            .expect("searches");
        assert!(
            out.content
                .contains("1. Tokio\n   https://tokio.rs\n   An async runtime"),
            "{}",
            out.content
        );
        let err = tool
            .execute(json!({"query": ""}), &ctx())
            .await
            .expect_err("empty query");
        assert!(matches!(err, ToolError::InvalidArguments(_)));
        let err = tool
            .execute(json!({"q": "x"}), &ctx())
            .await
            .expect_err("unknown field");
        assert!(err.to_string().contains("unknown field"), "{err}");
    }

    #[test]
    fn disabled_patterns_take_tools_out_of_the_set_and_its_schemas() {
        let search = |name: &str| {
            let mut provider = MockSearchProvider::new();
            provider.expect_name().return_const(name.to_string());
            Arc::new(WebSearch::new(Arc::new(provider))) as Arc<dyn Tool>
        };
        let set = ToolSet::new().with(search("a"));
        let (kept, removed) = set.clone().without(&["web_*".to_string()]);
        assert_eq!(removed, vec![WEB_SEARCH.to_string()]);
        assert!(kept.names().is_empty());
        assert!(kept.schemas().is_empty());
        let (kept, removed) = set.without(&["browser_*".to_string(), "shell_?".to_string()]);
        assert!(removed.is_empty());
        assert_eq!(kept.names(), vec![WEB_SEARCH.to_string()]);
        assert_eq!(kept.schemas().len(), 1);
    }
}
