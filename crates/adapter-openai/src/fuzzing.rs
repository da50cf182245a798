//! Entry points for the cargo-fuzz targets in `fuzz/` (docs/security.md, "Fuzzing").
//! Compiled only under `cargo fuzz`, which sets `--cfg fuzzing`; not part of the API.

use domain::llm::{CallPurpose, ChatMessage, ChatRequest, ChatResponse, ToolChoice, ToolSchema};

use crate::sse::SseAssembler;

/// Feeds `data` to the SSE assembler as a server's stream, cut into reads at every byte
/// `0xFF` (so the fuzzer also chooses where the network splits it), then finishes it.
pub fn sse(data: &[u8]) {
    let mut assembler = SseAssembler::new(200);
    for piece in data.split(|b| *b == 0xFF) {
        if assembler.push(piece).is_err() || assembler.is_done() {
            break;
        }
    }
    let _ = assembler.finish();
}

/// Decodes `text` as a model's reply under the text tool protocol; every call found names
/// a tool.
pub fn text_tools(text: &str) {
    let request = ChatRequest::new(
        CallPurpose::Execute,
        vec![ChatMessage::system("Be useful."), ChatMessage::user("List files.")],
    )
    .with_tools(
        vec![ToolSchema {
            name: "file_list".into(),
            description: "List a folder".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        ToolChoice::Required,
    );
    let reply = ChatResponse {
        content: Some(text.into()),
        finish_reason: Some("stop".into()),
        ..ChatResponse::default()
    };
    let decoded = crate::text_tools::decode(reply, &request);
    assert!(decoded.tool_calls.iter().all(|c| !c.name.is_empty()));
}
