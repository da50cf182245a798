//! `--provider`, `--base-url`, `--stream` and `--tool-protocol` with the real binary against
//! a scripted server on 127.0.0.1.

mod common;

use common::*;
use serde_json::{json, Value};
use wiremock::ResponseTemplate;

fn one_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).to_string();
    assert_eq!(text.trim().lines().count(), 1, "one-line reason: {text}");
    text
}

#[tokio::test]
async fn an_unknown_provider_is_a_usage_error() {
    let pw = Planwright::new();
    let out = pw
        .exec(&["run", "--provider", "gemini", "anything"], &[])
        .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid value 'gemini'"), "{stderr}");
    assert!(stderr.contains("ollama"), "lists the presets: {stderr}");
}

#[tokio::test]
async fn a_hosted_provider_without_a_key_is_a_usage_error() {
    let pw = Planwright::new();
    for (provider, var) in [
        ("openai", "OPENAI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
    ] {
        let out = pw
            .exec(
                &["run", "--provider", provider, "anything"],
                &[("DEEPSEEK_API_KEY", ""), ("OPENROUTER_API_KEY", "")],
            )
            .await;
        assert_eq!(out.status.code(), Some(2), "{provider}");
        let err = one_line(&out.stderr);
        assert!(
            err.contains(&format!("the {provider} provider needs an API key")),
            "{err}"
        );
        assert!(err.contains(var), "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[tokio::test]
async fn the_provider_also_comes_from_planwright_provider() {
    let pw = Planwright::new();
    let out = pw
        .exec(&["run", "anything"], &[("PLANWRIGHT_PROVIDER", "openai")])
        .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line(&out.stderr).contains("the openai provider needs an API key"));
}

fn short_script() -> Vec<ResponseTemplate> {
    vec![plan(&["Say hi"]), complete(true, "hi"), text("Said hi.")]
}

#[tokio::test]
async fn provider_ollama_needs_no_key() {
    let server = ScriptedOpenAi::start(short_script()).await;
    let pw = Planwright::new();
    let base = server.base_url();
    let out = pw
        .exec(
            &["run", "--json", "--provider", "ollama", "say hi"],
            &[("OPENAI_BASE_URL", &base)],
        )
        .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 3);
    assert!(requests
        .iter()
        .all(|r| r.headers.get("authorization").is_none()));
}

#[tokio::test]
async fn base_url_flag_is_an_endpoint_and_wins_over_the_environment() {
    let server = ScriptedOpenAi::start(short_script()).await;
    let pw = Planwright::new();
    let base = server.base_url();
    let out = pw
        .exec(
            &["run", "--json", "--base-url", &base, "say hi"],
            &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")],
        )
        .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.requests().await.len(), 3);
}

/// A streamed reply: the message split into deltas, tool-call arguments in pieces.
fn streamed(message: Value, finish: &str) -> ResponseTemplate {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1_731_000_000,
               "model": "gpt-4o-mini-2024-07-18",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": null}),
        Value::Null,
    )];
    if let Some(content) = message["content"].as_str() {
        for piece in content.split_inclusive(' ') {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    if let Some(calls) = message["tool_calls"].as_array() {
        for (i, c) in calls.iter().enumerate() {
            events.push(chunk(
                json!({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                    "function": {"name": c["function"]["name"], "arguments": ""}}]}),
                Value::Null,
            ));
            let args: Vec<char> = c["function"]["arguments"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .collect();
            for piece in args.chunks(5) {
                let piece: String = piece.iter().collect();
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                    Value::Null,
                ));
            }
        }
    }
    events.push(chunk(json!({}), json!(finish)));
    events.push(json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "choices": [],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}));
    let mut body = String::new();
    for e in events {
        body.push_str(&format!("data: {e}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn tool_call_message(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
}

#[tokio::test]
async fn stream_flag_runs_a_task_over_server_sent_events() {
    let server = ScriptedOpenAi::start(vec![
        streamed(
            tool_call_message(
                "call_s1",
                "planning",
                json!({"command": "create", "title": "Streamed", "steps": ["Write a file"]}),
            ),
            "tool_calls",
        ),
        streamed(
            tool_call_message(
                "call_s2",
                "shell_exec",
                json!({"command": "echo streamed > s.txt"}),
            ),
            "tool_calls",
        ),
        streamed(
            tool_call_message(
                "call_s3",
                "complete_step",
                json!({"success": true, "result": "wrote s.txt"}),
            ),
            "tool_calls",
        ),
        streamed(
            json!({"role": "assistant", "content": "Wrote s.txt over a stream."}),
            "stop",
        ),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw.run(&server, "write s.txt", &["--stream"]).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    assert_eq!(
        res.json["summary"],
        "Completed: 1 of 1 step done.\n\nWrote s.txt over a stream.\n\nFiles:\n- created: s.txt"
    );
    assert_eq!(res.json["usage"]["prompt_tokens"], 400);
    let run_id = res.json["run_id"].as_str().expect("run_id");
    assert_eq!(
        std::fs::read_to_string(pw.workspace(run_id).join("s.txt")).expect("s.txt"),
        "streamed\n"
    );
    for body in server.requests().await {
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }
}

#[tokio::test]
async fn text_tool_protocol_runs_a_task_with_a_model_without_tool_calling() {
    let server = ScriptedOpenAi::start(vec![
        text(r#"{"tool": "planning", "arguments": {"command": "create", "title": "Text tools", "steps": ["Write a file"]}}"#),
        text("```json\n{\"tool\": \"file_write\", \"arguments\": {\"path\": \"t.txt\", \"content\": \"via text\"}}\n```"),
        text(r#"{"tool": "complete_step", "arguments": {"success": true, "result": "wrote t.txt"}}"#),
        text("Wrote t.txt without native tool calls."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(&server, "write t.txt", &["--tool-protocol", "text"])
        .await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    assert_eq!(res.json["plan"]["title"], "Text tools");
    let run_id = res.json["run_id"].as_str().expect("run_id");
    assert_eq!(
        std::fs::read_to_string(pw.workspace(run_id).join("t.txt")).expect("t.txt"),
        "via text"
    );
    let requests = server.requests().await;
    assert_eq!(requests.len(), 4);
    for body in &requests {
        assert!(body.get("tools").is_none(), "{body}");
        for m in body["messages"].as_array().expect("messages") {
            assert_ne!(m["role"], "tool", "{m}");
            assert!(m.get("tool_calls").is_none(), "{m}");
        }
    }
    let system = requests[1]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(system.contains("- shell_exec:"), "{system}");
    // The tool result went back as a user message.
    let last = requests[2]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or_default();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Result of file_write (call call_t1):"),
        "{last}"
    );
}

/// Issue 29: a 200 MB reply was read whole. `--llm-max-reply-mib` caps what is read of
/// one reply: a larger one fails that call (as an invalid reply, not retried).
#[tokio::test]
async fn a_reply_larger_than_llm_max_reply_mib_fails_that_call() {
    let huge = "x".repeat(3 << 20);
    let script = || {
        vec![
            plan(&["Say hi"]),
            text(&huge),
            complete(true, "said hi"),
            text("Said hi."),
        ]
    };
    let pw = Planwright::new();
    let server = ScriptedOpenAi::start(script()).await;
    let res = pw
        .run(
            &server,
            "say hi",
            &["--mode", "flow", "--llm-max-reply-mib", "1"],
        )
        .await;
    assert_eq!(res.json["status"], "completed", "{}", res.stderr());
    let run_id = res.json["run_id"].as_str().expect("run_id").to_string();
    let failed: Vec<String> = pw
        .events(&run_id)
        .into_iter()
        .filter(|(_, kind, _)| kind == "step_failed")
        .map(|(_, _, e)| e["error"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].contains("larger than 1048576 bytes (max_response_bytes)"),
        "{failed:?}"
    );
    // The call was not retried by the client: the step's retry took the next reply.
    assert_eq!(server.requests().await.len(), 4);
}
