//! Recording calls through a scripted client, then replaying the cassette.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use adapter_replay::{CassetteError, RecordingLlm, ReplayLlm};
use domain::llm::{CallPurpose, ChatMessage, ChatRequest, ChatResponse, ToolCall, Usage};
use domain::ports::LlmClient;
use domain::testing::ScriptedLlm;
use domain::LlmError;
use serde_json::Value;

const SECRET: &str = "sk-proj-RECORDME0123456789secret";

fn scripted(script: Vec<Result<ChatResponse, LlmError>>) -> Arc<dyn LlmClient> {
    Arc::new(ScriptedLlm::new(script))
}

fn text(s: &str) -> ChatResponse {
    ChatResponse {
        content: Some(s.into()),
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: 2,
            cached_prompt_tokens: 0,
        },
        finish_reason: Some("stop".into()),
        ..ChatResponse::default()
    }
}

fn call(name: &str) -> ChatResponse {
    ChatResponse {
        tool_calls: vec![ToolCall {
            id: "call_1".into(),
            name: name.into(),
            arguments: "{\"command\":\"echo hi\"}".into(),
        }],
        reasoning_content: Some("thinking".into()),
        finish_reason: Some("tool_calls".into()),
        ..ChatResponse::default()
    }
}

fn request(purpose: CallPurpose, task: &str) -> ChatRequest {
    let mut r = ChatRequest::new(
        purpose,
        vec![ChatMessage::system("You plan."), ChatMessage::user(task)],
    );
    r.temperature = Some(0.2);
    r
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Records three calls (one an error) into `path`.
async fn record(path: &Path) {
    let recorder = RecordingLlm::create(
        path,
        scripted(vec![
            Ok(call("shell_exec")),
            Err(LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(2)),
                message: "HTTP 429: slow down".into(),
            }),
            Ok(text("done")),
        ]),
        Some("gpt-4o-mini"),
    )
    .unwrap();
    recorder
        .chat(request(CallPurpose::Plan, "task one"))
        .await
        .unwrap();
    recorder
        .chat(request(CallPurpose::Execute, "step one"))
        .await
        .unwrap_err();
    recorder
        .chat(request(CallPurpose::Summarize, "sum up"))
        .await
        .unwrap();
    assert_eq!(recorder.failure(), None);
}

#[tokio::test]
async fn recording_writes_a_header_and_one_line_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/run.jsonl");
    record(&path).await;

    let lines = lines(&path);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["cassette"], 1);
    assert_eq!(lines[0]["model"], "gpt-4o-mini");
    assert!(lines[0]["created_at"].is_string());
    assert_eq!(lines[1]["seq"], 1);
    assert_eq!(lines[1]["request"]["purpose"], "plan");
    assert_eq!(lines[1]["request"]["temperature"], serde_json::json!(0.2));
    assert_eq!(lines[1]["response"]["tool_calls"][0]["name"], "shell_exec");
    assert_eq!(lines[2]["seq"], 2);
    assert!(lines[2].get("response").is_none());
    assert_eq!(
        lines[2]["error"],
        serde_json::json!({"kind": "rate_limited", "message": "HTTP 429: slow down", "retry_after_ms": 2000})
    );
    assert_eq!(lines[3]["response"]["content"], "done");
}

#[tokio::test]
async fn replay_serves_recorded_responses_and_errors_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    record(&path).await;

    let replay = ReplayLlm::open(&path).unwrap();
    assert_eq!(replay.len(), 3);
    let first = replay
        .chat(request(CallPurpose::Plan, "task one"))
        .await
        .unwrap();
    assert_eq!(first, call("shell_exec"));
    let err = replay
        .chat(request(CallPurpose::Execute, "step one"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
            message: "HTTP 429: slow down".into()
        }
    );
    let last = replay
        .chat(request(CallPurpose::Summarize, "sum up"))
        .await
        .unwrap();
    assert_eq!(last, text("done"));
    assert_eq!(replay.divergence(), None);
    assert_eq!(replay.verdict(), None);
}

#[tokio::test]
async fn a_different_request_diverges_naming_the_request_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    record(&path).await;
    let replay = ReplayLlm::open(&path).unwrap();

    let err = replay
        .chat(request(CallPurpose::Plan, "another task"))
        .await
        .unwrap_err();

    let LlmError::Permanent(message) = &err else {
        panic!("expected Permanent, got {err:?}");
    };
    assert!(
        message.starts_with("replay diverged at request #1 (purpose plan)"),
        "{message}"
    );
    assert!(message.contains("$.messages[1].content"), "{message}");
    assert!(message.contains("\"task one\""), "{message}");
    assert!(message.contains("\"another task\""), "{message}");
    assert_eq!(replay.divergence().as_deref(), Some(message.as_str()));
    // Once diverged, every call fails with the first divergence, even a matching one.
    let again = replay
        .chat(request(CallPurpose::Plan, "task one"))
        .await
        .unwrap_err();
    assert_eq!(&again, &err);
    assert_eq!(replay.verdict().as_deref(), Some(message.as_str()));
}

#[tokio::test]
async fn running_out_of_recorded_requests_is_a_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    record(&path).await;
    let replay = ReplayLlm::open(&path).unwrap();
    replay
        .chat(request(CallPurpose::Plan, "task one"))
        .await
        .unwrap();
    replay
        .chat(request(CallPurpose::Execute, "step one"))
        .await
        .unwrap_err();
    replay
        .chat(request(CallPurpose::Summarize, "sum up"))
        .await
        .unwrap();
    let err = replay
        .chat(request(CallPurpose::Other, "one more"))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("replay diverged at request #4"),
        "{message}"
    );
    assert!(message.contains("no more recorded requests"), "{message}");
    assert!(replay.divergence().is_some());
}

#[tokio::test]
async fn a_later_recorded_request_may_be_served_first() {
    // Parallel steps may make their requests in another order than recorded.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    record(&path).await;
    let replay = ReplayLlm::open(&path).unwrap();
    let last = replay
        .chat(request(CallPurpose::Summarize, "sum up"))
        .await
        .unwrap();
    assert_eq!(last, text("done"));
    assert_eq!(replay.unserved(), vec![1, 2]);
    replay
        .chat(request(CallPurpose::Plan, "task one"))
        .await
        .unwrap();
    assert_eq!(replay.divergence(), None);
    // A run that stops early leaves recorded requests unmade: the verdict says so.
    let verdict = replay.verdict().unwrap();
    assert!(
        verdict.contains("1 of the 3 recorded requests never made"),
        "{verdict}"
    );
    assert!(verdict.contains("request #2"), "{verdict}");
}

#[tokio::test]
async fn no_secret_reaches_the_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let recorder = RecordingLlm::create(
        &path,
        scripted(vec![
            Ok(text(&format!("your key is {SECRET}"))),
            Err(LlmError::Auth(format!("bad key {SECRET}"))),
        ]),
        None,
    )
    .unwrap()
    .with_secrets([SECRET.to_owned(), "  ".to_owned()]);

    let reply = recorder
        .chat(request(CallPurpose::Plan, "hi"))
        .await
        .unwrap();
    assert!(
        reply.content.unwrap().contains(SECRET),
        "the caller still gets the reply as is"
    );
    recorder
        .chat(request(CallPurpose::Plan, "hi"))
        .await
        .unwrap_err();

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(SECRET), "{text}");
    assert!(!text.contains("RECORDME"), "{text}");
    assert_eq!(text.matches("[REDACTED]").count(), 2, "{text}");
    assert!(!format!("{recorder:?}").contains(SECRET));
}

#[test]
fn bad_cassettes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let missing = ReplayLlm::open(dir.path().join("nope.jsonl")).unwrap_err();
    assert!(matches!(missing, CassetteError::Io { .. }), "{missing}");
    assert!(missing.to_string().contains("nope.jsonl"), "{missing}");

    let empty = ReplayLlm::open(write("empty.jsonl", "\n")).unwrap_err();
    assert!(empty.to_string().contains("empty"), "{empty}");

    let header = ReplayLlm::open(write("h.jsonl", "{\"seq\": 1}\n")).unwrap_err();
    assert!(
        header.to_string().contains("not a cassette header"),
        "{header}"
    );

    let version = ReplayLlm::open(write("v.jsonl", "{\"cassette\": 9}\n")).unwrap_err();
    assert!(version.to_string().contains("version 9"), "{version}");

    let line = ReplayLlm::open(write(
        "l.jsonl",
        "{\"cassette\": 1}\n{\"seq\": 1, \"request\": {}, \"response\": {}}\n\n{\"seq\": 2}\n",
    ))
    .unwrap_err();
    let shown = line.to_string();
    assert!(shown.contains("line 4"), "{shown}");

    let both = ReplayLlm::open(write(
        "b.jsonl",
        "{\"cassette\": 1}\n{\"seq\": 1, \"request\": {}}\n",
    ))
    .unwrap_err();
    assert!(both.to_string().contains("exactly one of"), "{both}");

    let ok = ReplayLlm::open(write("ok.jsonl", "{\"cassette\": 1}\n")).unwrap();
    assert!(ok.is_empty());
}
