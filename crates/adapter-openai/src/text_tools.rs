//! The text tool protocol, for models without native tool calling (some Ollama models): the
//! tools are described in the system prompt, the model answers with
//! `{"tool": NAME, "arguments": {...}}` (or a list of them) in its content, and tool results
//! go back as user messages. Under native tool calling too, a reply with no `tool_calls`
//! whose text holds a call in a call's shape is read as that call ([`calls_in_text`]): small
//! models served by llama.cpp or Ollama often write their calls as text.

use std::collections::HashMap;

use domain::llm::{ChatMessage, ChatRequest, ChatResponse, Role, ToolCall, ToolChoice};
use serde_json::Value;

use crate::wire::arguments_text;
use domain::model::json_text;
use domain::tools::code::{CodeLanguage, CODE, CODE_RUN, LANGUAGE};

/// Whether `request` goes out through the text protocol (it offers tools to call).
pub(crate) fn applies(request: &ChatRequest) -> bool {
    !request.tools.is_empty() && request.tool_choice != ToolChoice::None
}

/// The request as sent under the text protocol: no `tools`, the tools and the protocol in
/// the system prompt, past calls written as the JSON the model would write, results as user
/// messages.
pub(crate) fn encode(request: &ChatRequest) -> ChatRequest {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    for m in &request.messages {
        match m.role {
            Role::Assistant if !m.tool_calls.is_empty() => {
                for c in &m.tool_calls {
                    names.insert(&c.id, &c.name);
                }
                let calls = calls_json(&m.tool_calls);
                let content = match m.content.as_deref().map(str::trim) {
                    Some(text) if !text.is_empty() => format!("{text}\n{calls}"),
                    _ => calls,
                };
                messages.push(ChatMessage {
                    content: Some(content),
                    tool_calls: Vec::new(),
                    ..m.clone()
                });
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                let name = names.get(id).copied().unwrap_or("the tool");
                messages.push(ChatMessage::user(format!(
                    "Result of {name} (call {id}):\n{}",
                    m.content.as_deref().unwrap_or_default()
                )));
            }
            _ => messages.push(m.clone()),
        }
    }
    let mut encoded = ChatRequest {
        messages,
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        ..request.clone()
    };
    encoded.add_to_system_prompt(&instructions(request));
    encoded
}

fn calls_json(calls: &[ToolCall]) -> String {
    // Written by hand so `tool` comes first, as the instructions show it.
    let as_json = |c: &ToolCall| {
        let arguments = serde_json::from_str::<Value>(&c.arguments)
            .unwrap_or_else(|_| Value::String(c.arguments.clone()));
        format!(
            "{{\"tool\":{},\"arguments\":{arguments}}}",
            Value::String(c.name.clone())
        )
    };
    match calls {
        [one] => as_json(one),
        many => format!(
            "[{}]",
            many.iter().map(as_json).collect::<Vec<_>>().join(",")
        ),
    }
}

fn instructions(request: &ChatRequest) -> String {
    let mut text = String::from(
        "You can call tools. To call one, reply with only a JSON object \
         {\"tool\": \"<name>\", \"arguments\": {...}} and nothing else; to call several, reply \
         with a JSON list of such objects. Each tool's result comes back in the next message. \
         To answer without a tool, reply in plain text.\n\nTools:",
    );
    for t in &request.tools {
        text.push_str(&format!(
            "\n- {}: {}\n  arguments (JSON schema): {}",
            t.name, t.description, t.parameters
        ));
    }
    match &request.tool_choice {
        ToolChoice::Required => text.push_str("\n\nYou must call a tool in this reply."),
        ToolChoice::Function(name) => {
            text.push_str(&format!("\n\nYou must call the tool {name} in this reply."))
        }
        ToolChoice::Auto | ToolChoice::None => {}
    }
    text
}

/// Turns the tool calls the model wrote in its content into [`ToolCall`]s. Ids are
/// `call_t<N>`, numbered after the calls already in the transcript, so they are unique
/// within a conversation and the same on every run (record and replay rely on that).
pub(crate) fn decode(reply: ChatResponse, request: &ChatRequest) -> ChatResponse {
    decode_where(reply, request, |v| parse_calls(v).is_some())
}

/// Under native tool calling, a reply whose model wrote its call in its text instead: a
/// small model behind llama.cpp's server or Ollama writes `{"name": …, "arguments": …}` in
/// a ```` ```json ```` fence rather than its chat template's tool-call tags, so the server
/// returns no `tool_calls` and the call was lost (docs/eval.md, "llama.cpp's server"). Read
/// as calls only in a call's shape: every object has arguments or names an offered tool;
/// a plain answer, or JSON that is data, stays text.
pub(crate) fn calls_in_text(reply: ChatResponse, request: &ChatRequest) -> ChatResponse {
    if !applies(request) {
        return reply;
    }
    let offered = |name: &str| request.tools.iter().any(|t| t.name == name);
    let shaped = |v: &Value| {
        parse_calls(v).is_some_and(|calls| {
            calls
                .iter()
                .all(|c| c.arguments.is_some() || offered(&c.name))
        })
    };
    program_call(decode_where(reply, request, shaped), request)
}

/// The keys a call object may hold its arguments under.
const ARGUMENT_KEYS: [&str; 3] = ["arguments", "parameters", "args"];

/// [`decode`] with the first JSON value of the content that `is_call` accepts.
fn decode_where(
    mut reply: ChatResponse,
    request: &ChatRequest,
    is_call: impl Fn(&Value) -> bool,
) -> ChatResponse {
    if !reply.tool_calls.is_empty() {
        return reply; // the server called natively after all
    }
    let Some(content) = reply.content.clone() else {
        return reply;
    };
    let Ok(found) = json_text::find_json(&content, is_call) else {
        return reply;
    };
    let Some(calls) = parse_calls(&found.value) else {
        return reply;
    };
    let before = calls_before(request);
    reply.tool_calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| ToolCall {
            id: format!("call_t{}", before + i + 1),
            name: call.name,
            arguments: arguments_text(call.arguments),
        })
        .collect();
    let prose = content[..found.span.start].trim_end();
    let prose = ["```json", "```", "<tool_call>"]
        .into_iter()
        .find_map(|fence| prose.strip_suffix(fence))
        .unwrap_or(prose)
        .trim();
    reply.content = (!prose.is_empty()).then(|| prose.to_owned());
    reply.finish_reason = Some("tool_calls".to_owned());
    reply
}

/// How many calls ids are numbered after: every call already in the transcript, and the
/// highest `call_tN` in it (in case older turns were dropped), so ids never collide.
fn calls_before(request: &ChatRequest) -> usize {
    let calls_so_far = request.messages.iter().flat_map(|m| &m.tool_calls);
    let count = calls_so_far.clone().count();
    let highest = calls_so_far
        .filter_map(|c| c.id.strip_prefix("call_t")?.parse::<usize>().ok())
        .max()
        .unwrap_or(0);
    count.max(highest)
}

/// With `code_run` offered, a reply with no call whose text holds a program in fences
/// (```` ```python ```` … ```` ``` ````): run as `code_run`, the way smolagents' `CodeAgent`
/// reads any model's reply (docs/code-actions.md, "Programs in a reply's text"). A model
/// asked for raw code in a tool's argument often writes it this way instead ("you can use
/// the following Python code: …"), and the program was never run. Several blocks of one
/// language are one program, in order; blocks of two languages, or one left open (a reply
/// cut short), are no program.
fn program_call(mut reply: ChatResponse, request: &ChatRequest) -> ChatResponse {
    if !reply.tool_calls.is_empty() || !request.tools.iter().any(|t| t.name == CODE_RUN) {
        return reply;
    }
    let Some((language, code)) = reply.content.as_deref().and_then(fenced_program) else {
        return reply;
    };
    reply.tool_calls = vec![ToolCall {
        id: format!("call_t{}", calls_before(request) + 1),
        name: CODE_RUN.to_string(),
        arguments: serde_json::json!({ LANGUAGE: language.name(), CODE: code }).to_string(),
    }];
    reply.finish_reason = Some("tool_calls".to_owned());
    reply
}

/// The program of `text`'s fenced blocks in a language `code_run` runs (see
/// [`program_call`]).
fn fenced_program(text: &str) -> Option<(CodeLanguage, String)> {
    let mut language: Option<CodeLanguage> = None;
    let mut code = String::new();
    let mut open: Option<Option<CodeLanguage>> = None;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&open, fence) {
            (None, Some(info)) => open = Some(CodeLanguage::from_fence(info)),
            (Some(_), Some(rest)) if rest.trim().is_empty() => open = None,
            (Some(Some(block)), _) => {
                if language.is_some_and(|l| l != *block) {
                    return None;
                }
                language = Some(*block);
                code.push_str(line);
                code.push('\n');
            }
            _ => {}
        }
    }
    if matches!(open, Some(Some(_))) {
        return None;
    }
    Some((language?, code))
}

/// A call written as JSON: its tool's name and its arguments, `None` when it gave none.
struct WrittenCall {
    name: String,
    arguments: Option<Value>,
}

/// The calls of a call object or a non-empty list of them.
fn parse_calls(value: &Value) -> Option<Vec<WrittenCall>> {
    match value {
        Value::Array(items) if !items.is_empty() => items.iter().map(parse_call).collect(),
        Value::Object(_) => parse_call(value).map(|c| vec![c]),
        _ => None,
    }
}

/// `{"tool": NAME, "arguments": ...}`; also `{"name"|"function": NAME, "arguments"|"parameters": ...}`
/// and `{"function": {"name": NAME, "arguments": ...}}` as models trained on other formats
/// write it.
fn parse_call(value: &Value) -> Option<WrittenCall> {
    let obj = value.as_object()?;
    let args_key = ARGUMENT_KEYS.into_iter().find(|k| obj.contains_key(*k));
    // OpenAI's own form nests the call: `{"function": {"name": …, "arguments": …}}`.
    if let (Some(inner @ Value::Object(_)), 1) = (obj.get("function"), obj.len()) {
        return parse_call(inner);
    }
    let name = match obj.get("tool") {
        Some(Value::String(name)) => name,
        _ if args_key.is_some() => obj.get("name").or_else(|| obj.get("function"))?.as_str()?,
        _ => return None,
    };
    Some(WrittenCall {
        name: name.to_owned(),
        arguments: args_key.and_then(|k| obj.get(k)).cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::llm::{CallPurpose, ToolSchema};
    use serde_json::json;

    fn request() -> ChatRequest {
        ChatRequest::new(
            CallPurpose::Execute,
            vec![
                ChatMessage::system("Be useful."),
                ChatMessage::user("List files."),
            ],
        )
        .with_tools(
            vec![ToolSchema {
                name: "file_list".into(),
                description: "List a folder".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            ToolChoice::Required,
        )
    }

    fn reply(text: &str) -> ChatResponse {
        ChatResponse {
            content: Some(text.into()),
            finish_reason: Some("stop".into()),
            ..ChatResponse::default()
        }
    }

    #[test]
    fn encode_describes_tools_and_rewrites_the_transcript() {
        let mut r = request();
        r.messages.push(ChatMessage {
            role: Role::Assistant,
            content: Some("Looking.".into()),
            tool_calls: vec![ToolCall {
                id: "call_t1".into(),
                name: "file_list".into(),
                arguments: "{\"path\":\".\"}".into(),
            }],
            tool_call_id: None,
            reasoning_content: None,
        });
        r.messages
            .push(ChatMessage::tool_result("call_t1", "a.txt"));
        let sent = encode(&r);
        assert!(sent.tools.is_empty());
        assert_eq!(sent.tool_choice, ToolChoice::Auto);
        let system = sent.messages[0].content.clone().unwrap();
        assert!(system.starts_with("Be useful.\n\nYou can call tools."));
        assert!(system.contains("- file_list: List a folder"), "{system}");
        assert!(system.contains("You must call a tool"), "{system}");
        assert_eq!(
            sent.messages[2].content.as_deref(),
            Some("Looking.\n{\"tool\":\"file_list\",\"arguments\":{\"path\":\".\"}}")
        );
        assert!(sent.messages[2].tool_calls.is_empty());
        assert_eq!(sent.messages[3].role, Role::User);
        assert_eq!(
            sent.messages[3].content.as_deref(),
            Some("Result of file_list (call call_t1):\na.txt")
        );
    }

    #[test]
    fn decode_reads_one_call_a_list_or_other_key_names() {
        let r = request();
        let one = decode(
            reply("I'll look.\n```json\n{\"tool\": \"file_list\", \"arguments\": {\"path\": \"src\"}}\n```"),
            &r,
        );
        assert_eq!(one.content.as_deref(), Some("I'll look."));
        assert_eq!(one.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            one.tool_calls,
            vec![ToolCall {
                id: "call_t1".into(),
                name: "file_list".into(),
                arguments: "{\"path\":\"src\"}".into()
            }]
        );

        let many = decode(
            reply(
                r#"[{"tool": "file_list", "arguments": {}}, {"name": "file_list", "parameters": "{\"path\": \"b\"}"}]"#,
            ),
            &r,
        );
        assert_eq!(many.content, None);
        assert_eq!(many.tool_calls.len(), 2);
        assert_eq!(many.tool_calls[1].id, "call_t2");
        assert_eq!(many.tool_calls[1].arguments, "{\"path\": \"b\"}");
    }

    #[test]
    fn ids_never_collide_when_older_turns_were_dropped() {
        let mut r = request();
        r.messages.push(ChatMessage {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall {
                id: "call_t7".into(),
                name: "file_list".into(),
                arguments: "{}".into(),
            }],
            tool_call_id: None,
            reasoning_content: None,
        });
        r.messages.push(ChatMessage::tool_result("call_t7", "x"));
        let out = decode(reply("{\"tool\": \"file_list\", \"arguments\": {}}"), &r);
        assert_eq!(out.tool_calls[0].id, "call_t8");
    }

    #[test]
    fn plain_answers_and_other_json_stay_content() {
        let r = request();
        for text in ["All done.", "{\"files\": 3}", "[1, 2]"] {
            let out = decode(reply(text), &r);
            assert!(out.tool_calls.is_empty(), "{text}");
            assert_eq!(out.content.as_deref(), Some(text));
            assert_eq!(out.finish_reason.as_deref(), Some("stop"));
        }
    }

    /// Native tool calling with a model that wrote its call as text: read when it has a
    /// call's shape; an answer that is JSON data, or names no offered tool and has no
    /// arguments, stays text; a request offering no tools is left alone.
    #[test]
    fn a_call_written_as_text_under_native_calling_is_read_in_a_calls_shape_only() {
        let r = request();
        let fenced =
            "```json\n{\n  \"name\": \"file_list\",\n  \"arguments\": {\"path\": \"src\"}\n}\n```";
        let out = calls_in_text(reply(fenced), &r);
        assert_eq!(out.tool_calls.len(), 1);
        assert_eq!(out.tool_calls[0].name, "file_list");
        assert_eq!(out.tool_calls[0].arguments, "{\"path\":\"src\"}");
        assert_eq!(out.content, None);
        // A name not offered, with arguments: a call (the domain answers that no such
        // tool exists, and the model can correct it).
        let unknown = calls_in_text(
            reply("{\"name\": \"shell_run\", \"arguments\": {\"code\": \"ls\"}}"),
            &r,
        );
        assert_eq!(unknown.tool_calls[0].name, "shell_run");
        // `function` in place of `name`, and OpenAI's nested form.
        for text in [
            "{\"function\": \"file_list\", \"arguments\": {\"path\": \"a\"}}",
            "{\"function\": {\"name\": \"file_list\", \"arguments\": {\"path\": \"a\"}}}",
        ] {
            let out = calls_in_text(reply(text), &r);
            assert_eq!(out.tool_calls.len(), 1, "{text}");
            assert_eq!(out.tool_calls[0].name, "file_list", "{text}");
            assert_eq!(out.tool_calls[0].arguments, "{\"path\":\"a\"}", "{text}");
        }
        for text in [
            "All done.",
            "{\"files\": 3}",
            "{\"tool\": \"hammer\"}",
            "{\"name\": \"porto\", \"area_km2\": 99}",
        ] {
            let out = calls_in_text(reply(text), &r);
            assert!(out.tool_calls.is_empty(), "{text}");
            assert_eq!(out.content.as_deref(), Some(text));
        }
        let mut no_tools = r.clone();
        no_tools.tools.clear();
        assert!(calls_in_text(reply(fenced), &no_tools)
            .tool_calls
            .is_empty());
    }

    fn with_code_run(mut r: ChatRequest) -> ChatRequest {
        r.tools.push(ToolSchema {
            name: CODE_RUN.into(),
            description: "Run a program".into(),
            parameters: json!({"type": "object"}),
        });
        r
    }

    /// With `code_run` offered, a program in the reply's fences is run; its prose stays.
    #[test]
    fn a_fenced_program_in_the_text_is_a_code_run_call_when_code_run_is_offered() {
        let r = with_code_run(request());
        let text = "You can use this:\n\n```python\nrows = open('a.csv').read()\nprint(rows)\n```\n\nIt prints the file.";
        let out = calls_in_text(reply(text), &r);
        assert_eq!(out.tool_calls.len(), 1);
        assert_eq!(out.tool_calls[0].name, CODE_RUN);
        let args: Value = serde_json::from_str(&out.tool_calls[0].arguments).unwrap();
        assert_eq!(
            args,
            json!({"language": "python", "code": "rows = open('a.csv').read()\nprint(rows)\n"})
        );
        assert_eq!(out.content.as_deref(), Some(text));
        // Two blocks of one language are one program; an output block is not code.
        let two = calls_in_text(
            reply("```bash\ncd data\n```\nthen\n```sh\nls\n```\n```text\na b\n```"),
            &r,
        );
        let args: Value = serde_json::from_str(&two.tool_calls[0].arguments).unwrap();
        assert_eq!(args["code"], json!("cd data\nls\n"));
        assert_eq!(args["language"], json!("bash"));
        for text in [
            "```python\nprint(1)\n```\n```bash\nls\n```",
            "```python\nprint(1)\n",
            "```text\nprint(1)\n```",
            "no code here",
        ] {
            assert!(
                calls_in_text(reply(text), &r).tool_calls.is_empty(),
                "{text}"
            );
        }
        // Without code_run offered, a program stays text.
        let plain = calls_in_text(reply("```python\nprint(1)\n```"), &request());
        assert!(plain.tool_calls.is_empty());
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;

        proptest! {
            /// Whatever text a model writes (here: fragments of tool-call JSON, fences and
            /// prose in any order), decoding answers and never panics; every call it finds
            /// names a tool.
            #[test]
            fn fuzz_any_model_text_decodes_without_panicking(parts in prop::collection::vec(prop_oneof![
                Just("```json\n".to_string()),
                Just("```".to_string()),
                Just("{\"tool\": \"shell_exec\", \"arguments\": {\"command\": \"ls\"}}".to_string()),
                Just("{\"name\": \"complete_step\", \"arguments\": ".to_string()),
                Just("{\"tool\":".to_string()),
                Just("}".to_string()),
                "[ -~]{0,40}",
                "\\PC{0,10}",
            ], 0..12)) {
                let text = parts.concat();
                let decoded = decode(reply(&text), &request());
                for call in &decoded.tool_calls {
                    prop_assert!(!call.name.is_empty());
                }
            }
        }
    }
}
