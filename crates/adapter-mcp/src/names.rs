//! The model-facing name of an MCP tool: `mcp__<server>__<tool>`, in `[A-Za-z0-9_-]`, at
//! most 64 characters (what the chat APIs accept as a function name).

/// The longest tool name the chat APIs accept.
pub const MAX_TOOL_NAME: usize = 64;

/// `mcp__<server>__<tool>`, each part sanitized, the whole cut to [`MAX_TOOL_NAME`].
pub fn exposed_name(server: &str, tool: &str) -> String {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    name.chars().take(MAX_TOOL_NAME).collect()
}

/// Every character outside `[A-Za-z0-9_-]` becomes `_`.
fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_sanitized() {
        assert_eq!(exposed_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(
            exposed_name("my.fs", "read file/é"),
            "mcp__my_fs__read_file__"
        );
    }

    #[test]
    fn names_are_capped() {
        let name = exposed_name("server", &"x".repeat(100));
        assert_eq!(name.len(), MAX_TOOL_NAME);
        assert!(name.starts_with("mcp__server__xxx"));
    }
}
