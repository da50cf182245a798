//! An MCP tool result as a [`ToolOutput`]: text content joined, images, audio and resources
//! described in a line, `isError` kept.

use domain::ports::ToolOutput;
use serde_json::Value;

/// Maps a `CallToolResult` (as its wire JSON, so the mapping does not follow the SDK's
/// types) to what the model reads.
pub fn tool_output(result: &Value) -> ToolOutput {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut lines: Vec<String> = blocks.iter().map(describe_block).collect();
    if lines.is_empty() {
        if let Some(structured) = result.get("structuredContent") {
            lines.push(structured.to_string());
        }
    }
    ToolOutput {
        content: lines.join("\n"),
        is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
        ..ToolOutput::default()
    }
}

fn describe_block(block: &Value) -> String {
    let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    match text("type") {
        "text" => text("text").to_owned(),
        kind @ ("image" | "audio") => {
            format!(
                "[{kind}: {}, {} bytes]",
                text("mimeType"),
                decoded_len(text("data"))
            )
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            format!("[resource: {uri}]")
        }
        "resource_link" => format!("[resource: {}]", text("uri")),
        other => format!("[{other} content]"),
    }
}

/// Bytes encoded by a base64 string (without decoding it).
fn decoded_len(base64: &str) -> usize {
    let data = base64.trim_end_matches('=');
    data.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_joined_and_media_described() {
        let result = json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "mimeType": "image/png", "data": "aGVsbG8="},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "x"}},
            {"type": "resource_link", "uri": "test://static/1", "name": "one"},
            {"type": "text", "text": "last"}
        ]});
        let output = tool_output(&result);
        assert_eq!(
            output.content,
            "first\n[image: image/png, 5 bytes]\n[resource: file:///a.txt]\n[resource: test://static/1]\nlast"
        );
        assert!(!output.is_error);
    }

    #[test]
    fn is_error_is_kept() {
        let output =
            tool_output(&json!({"content": [{"type": "text", "text": "no"}], "isError": true}));
        assert!(output.is_error);
        assert_eq!(output.content, "no");
    }

    #[test]
    fn structured_content_stands_in_for_missing_text() {
        let output = tool_output(&json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(output.content, r#"{"sum":3}"#);
    }
}
