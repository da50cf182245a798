//! The search port: a web search engine behind the `web_search` tool.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::ports::tool::ToolError;

/// One web search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    #[serde(default)]
    pub snippet: String,
}

/// A web search engine (SearxNG, Brave, Tavily ...) behind `web_search`.
#[cfg_attr(test, mockall::automock)]
#[async_trait]
pub trait SearchProvider: Send + Sync {
    /// A short name shown to users (`searxng`, `brave`).
    fn name(&self) -> &str;
    async fn search(&self, query: &str, max_results: usize) -> Result<Vec<SearchHit>, ToolError>;
}
