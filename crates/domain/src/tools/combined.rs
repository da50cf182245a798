//! [`CombinedToolbox`]: several toolboxes offered as one, in order (the built-in tools, then
//! MCP servers' tools). The first toolbox offering a name owns it: a later one offering the
//! same name is hidden for it (said once in the log), and `call`, `idempotent`, the
//! family the router reads and the effect the approval gate judges all follow the owner.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::model::approval::glob;
use crate::model::tool_kind::{ToolEffect, ToolFamily};
use crate::ports::llm::ToolSchema;
use crate::ports::{ToolContext, ToolOutput, Toolbox};

/// One toolbox of the combination and what the log calls it ("built-in", "MCP").
struct Part {
    origin: String,
    toolbox: Arc<dyn Toolbox>,
}

/// Toolboxes in order; the first one offering a name wins it.
pub struct CombinedToolbox {
    parts: Vec<Part>,
    /// Patterns of names never offered (`--disabled-tools`: `*` any run, `?` one character).
    hidden: Vec<String>,
    /// Names already reported as offered twice (warned once per process).
    warned: Mutex<BTreeSet<String>>,
}

impl std::fmt::Debug for CombinedToolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.parts.iter().map(|p| p.origin.as_str()))
            .finish()
    }
}

impl CombinedToolbox {
    pub fn new() -> CombinedToolbox {
        CombinedToolbox {
            parts: Vec::new(),
            hidden: Vec::new(),
            warned: Mutex::new(BTreeSet::new()),
        }
    }

    /// Adds `toolbox` after the others: its names already offered by them are hidden.
    pub fn then(mut self, origin: impl Into<String>, toolbox: Arc<dyn Toolbox>) -> Self {
        self.parts.push(Part {
            origin: origin.into(),
            toolbox,
        });
        self
    }

    /// Never offers a tool whose name matches one of `patterns` (`mcp__fs__*`): it is not
    /// listed, and a call to it is refused.
    pub fn without(mut self, patterns: &[String]) -> Self {
        self.hidden.extend(patterns.iter().cloned());
        self
    }

    fn is_hidden(&self, name: &str) -> bool {
        self.hidden.iter().any(|p| glob(p, name, false))
    }

    /// The part that offers `name` first (none for a hidden name).
    fn owner(&self, name: &str) -> Option<&Part> {
        if self.is_hidden(name) {
            return None;
        }
        self.parts
            .iter()
            .find(|p| p.toolbox.schemas().iter().any(|s| s.name == name))
    }

    fn warn_once(&self, name: &str, winner: &str, loser: &str) {
        let Ok(mut warned) = self.warned.lock() else {
            return;
        };
        if warned.insert(name.to_string()) {
            tracing::warn!(
                tool = name,
                "tool `{name}` is offered by {winner} and by {loser}; {winner}'s is used, \
                 {loser}'s is hidden"
            );
        }
    }
}

impl Default for CombinedToolbox {
    fn default() -> Self {
        CombinedToolbox::new()
    }
}

#[async_trait]
impl Toolbox for CombinedToolbox {
    fn schemas(&self) -> Vec<ToolSchema> {
        let mut offered: Vec<(ToolSchema, &str)> = Vec::new();
        for part in &self.parts {
            for schema in part.toolbox.schemas() {
                if self.is_hidden(&schema.name) {
                    continue;
                }
                match offered.iter().find(|(s, _)| s.name == schema.name) {
                    Some((_, winner)) => self.warn_once(&schema.name, winner, &part.origin),
                    None => offered.push((schema, &part.origin)),
                }
            }
        }
        offered.into_iter().map(|(schema, _)| schema).collect()
    }

    /// The owner runs it. A name nobody offers goes to each toolbox in turn: one may know
    /// why (an MCP server that failed to start); else it is refused.
    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if self.is_hidden(name) {
            return Err(ToolError::Refused(format!(
                "tool '{name}' is turned off for this run"
            )));
        }
        if let Some(owner) = self.owner(name) {
            return owner.toolbox.call(name, args, ctx).await;
        }
        for part in &self.parts {
            match part.toolbox.call(name, args.clone(), ctx).await {
                Err(ToolError::Refused(_)) => continue,
                other => return other,
            }
        }
        let names: Vec<String> = self.schemas().into_iter().map(|s| s.name).collect();
        Err(ToolError::Refused(format!(
            "unknown tool '{name}'; available tools: {}",
            names.join(", ")
        )))
    }

    fn idempotent(&self, name: &str) -> bool {
        self.owner(name).is_some_and(|p| p.toolbox.idempotent(name))
    }

    fn family(&self, name: &str) -> ToolFamily {
        self.owner(name)
            .map_or(ToolFamily::Other, |p| p.toolbox.family(name))
    }

    fn effect(&self, name: &str) -> ToolEffect {
        self.owner(name)
            .map_or(ToolEffect::Acts, |p| p.toolbox.effect(name))
    }

    async fn close_run(&self, run_id: &str) {
        for part in &self.parts {
            part.toolbox.close_run(run_id).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex as StdMutex;
    use tokio_util::sync::CancellationToken;

    /// A toolbox offering `names`, answering with its own label; `reads` are idempotent.
    struct Labelled {
        label: &'static str,
        names: Vec<&'static str>,
        reads: Vec<&'static str>,
        closed: StdMutex<Vec<String>>,
    }

    fn labelled(
        label: &'static str,
        names: &[&'static str],
        reads: &[&'static str],
    ) -> Arc<Labelled> {
        Arc::new(Labelled {
            label,
            names: names.to_vec(),
            reads: reads.to_vec(),
            closed: StdMutex::new(Vec::new()),
        })
    }

    #[async_trait]
    impl Toolbox for Labelled {
        fn schemas(&self) -> Vec<ToolSchema> {
            self.names
                .iter()
                .map(|n| ToolSchema {
                    name: (*n).to_string(),
                    description: self.label.to_string(),
                    parameters: json!({"type": "object"}),
                })
                .collect()
        }

        async fn call(
            &self,
            name: &str,
            _: Value,
            _: &ToolContext,
        ) -> Result<ToolOutput, ToolError> {
            if name == "broken" && self.label == "mcp" {
                return Err(ToolError::Failed(format!("{} cannot start", self.label)));
            }
            if !self.names.contains(&name) {
                return Err(ToolError::Refused(format!("unknown tool {name}")));
            }
            Ok(ToolOutput::ok(format!("{}:{name}", self.label)))
        }

        fn idempotent(&self, name: &str) -> bool {
            self.reads.contains(&name)
        }

        fn family(&self, _name: &str) -> ToolFamily {
            if self.label == "builtin" {
                ToolFamily::Files
            } else {
                ToolFamily::Other
            }
        }

        fn effect(&self, name: &str) -> ToolEffect {
            if self.reads.contains(&name) {
                ToolEffect::Reads
            } else {
                ToolEffect::Acts
            }
        }

        async fn close_run(&self, run_id: &str) {
            self.closed.lock().unwrap().push(run_id.to_string());
        }
    }

    fn ctx() -> ToolContext {
        ToolContext {
            run_id: "r".into(),
            step_id: None,
            workspace: std::path::PathBuf::from("/nowhere"),
            cancel: CancellationToken::new(),
        }
    }

    #[tokio::test]
    async fn the_first_toolbox_offering_a_name_owns_it() {
        let builtin = labelled("builtin", &["file_write", "shared"], &["shared"]);
        let mcp = labelled(
            "mcp",
            &["shared", "mcp__fs__read", "mcp__fs__write"],
            &["mcp__fs__read"],
        );
        let combined = CombinedToolbox::new()
            .then("built-in", builtin.clone())
            .then("MCP", mcp.clone());

        let names: Vec<String> = combined.schemas().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["file_write", "shared", "mcp__fs__read", "mcp__fs__write"]
        );
        let shared = combined
            .schemas()
            .into_iter()
            .find(|s| s.name == "shared")
            .unwrap();
        assert_eq!(
            shared.description, "builtin",
            "the loser's schema is hidden"
        );
        assert_eq!(
            combined.warned.lock().unwrap().len(),
            1,
            "warned once per name"
        );

        assert_eq!(
            combined
                .call("shared", json!({}), &ctx())
                .await
                .unwrap()
                .content,
            "builtin:shared"
        );
        assert_eq!(
            combined
                .call("mcp__fs__write", json!({}), &ctx())
                .await
                .unwrap()
                .content,
            "mcp:mcp__fs__write"
        );
        // Reads and effects follow the owner: durability and approvals depend on it.
        assert!(combined.idempotent("shared"));
        assert!(combined.idempotent("mcp__fs__read"));
        assert!(!combined.idempotent("mcp__fs__write"));
        assert!(!combined.idempotent("file_write"));
        assert!(!combined.idempotent("nobody"));
        assert_eq!(combined.effect("shared"), ToolEffect::Reads);
        assert_eq!(combined.family("shared"), ToolFamily::Files);
        assert_eq!(combined.effect("mcp__fs__write"), ToolEffect::Acts);
        assert_eq!(combined.family("mcp__fs__read"), ToolFamily::Other);
        assert_eq!(combined.effect("nobody"), ToolEffect::Acts);

        combined.close_run("run-9").await;
        assert_eq!(*builtin.closed.lock().unwrap(), ["run-9"]);
        assert_eq!(*mcp.closed.lock().unwrap(), ["run-9"]);
    }

    #[tokio::test]
    async fn hidden_names_are_neither_listed_nor_run() {
        let combined = CombinedToolbox::new()
            .then("built-in", labelled("builtin", &["file_write"], &[]))
            .then(
                "MCP",
                labelled(
                    "mcp",
                    &["mcp__fs__read", "mcp__fs__write", "mcp__gh__issue"],
                    &["mcp__fs__read"],
                ),
            )
            .without(&["mcp__fs__*".to_string()]);
        let names: Vec<String> = combined.schemas().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["file_write", "mcp__gh__issue"]);
        assert!(matches!(
            combined.call("mcp__fs__write", json!({}), &ctx()).await,
            Err(ToolError::Refused(why)) if why.contains("turned off")
        ));
        assert!(!combined.idempotent("mcp__fs__read"));
        assert_eq!(
            combined
                .call("mcp__gh__issue", json!({}), &ctx())
                .await
                .unwrap()
                .content,
            "mcp:mcp__gh__issue"
        );
    }

    #[tokio::test]
    async fn a_name_nobody_offers_is_explained_by_a_part_or_refused() {
        let combined = CombinedToolbox::new()
            .then("built-in", labelled("builtin", &["file_write"], &[]))
            .then("MCP", labelled("mcp", &[], &[]));
        assert_eq!(
            combined.call("broken", json!({}), &ctx()).await,
            Err(ToolError::Failed("mcp cannot start".into()))
        );
        match combined.call("nothing", json!({}), &ctx()).await {
            Err(ToolError::Refused(why)) => assert!(why.contains("file_write"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
