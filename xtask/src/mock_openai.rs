//! A local OpenAI-compatible endpoint for `cargo xtask examples`: the examples that talk to
//! an endpoint (`OPENAI_BASE_URL`) run against it with no network and no key. It answers
//! `POST …/chat/completions` as a model that does the one thing asked with the tools it is
//! offered: a first turn runs `printf hi > hello.txt` (with `shell_exec`, else `code_run`),
//! a turn after a tool result ends the step (`complete_step`), a request without tools gets
//! a sentence. Plain HTTP/1.1 on 127.0.0.1, one thread, keep-alive honoured.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use serde_json::{json, Value};

/// Starts the endpoint on a free port; returns its base URL (`http://127.0.0.1:PORT/v1`).
/// It serves until the process exits.
pub(crate) fn start() -> Result<String, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("mock endpoint: bind: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("mock endpoint: {e}"))?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    Ok(format!("http://{addr}/v1"))
}

/// Answers the requests of one connection until it closes.
fn serve(stream: TcpStream) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut calls = 0u64;
    while let Some((path, body)) = read_request(&mut reader) {
        calls += 1;
        let reply = if path.ends_with("/chat/completions") {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            ("200 OK", completion(&request, calls))
        } else if path.ends_with("/models") {
            (
                "200 OK",
                json!({"object": "list", "data": [{"id": "mock", "object": "model"}]}),
            )
        } else {
            ("404 Not Found", json!({"error": {"message": "not found"}}))
        };
        let text = reply.1.to_string();
        let head = format!(
            "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            reply.0,
            text.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(text.as_bytes()).is_err()
        {
            return;
        }
    }
}

/// One request's path and body, `None` when the connection closed or spoke no HTTP.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok().filter(|n| *n > 0)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((path, body))
}

/// The model's answer to `request` (see the module doc).
fn completion(request: &Value, call: u64) -> Value {
    let offered: Vec<&str> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let after_tool = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool");
    let has = |name: &str| offered.contains(&name);
    let action = if offered.is_empty() {
        None
    } else if after_tool && has("complete_step") {
        Some((
            "complete_step",
            json!({"success": true, "result": "hello.txt holds hi"}),
        ))
    } else if has("shell_exec") {
        Some(("shell_exec", json!({"command": "printf hi > hello.txt"})))
    } else if has("code_run") {
        Some((
            "code_run",
            json!({"language": "bash", "code": "printf hi > hello.txt"}),
        ))
    } else {
        None
    };
    let message = match action {
        Some((name, arguments)) => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": format!("call_{call}"),
                "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}
            }]
        }),
        None => json!({"role": "assistant", "content": "hello.txt holds hi."}),
    };
    json!({
        "id": format!("chatcmpl-{call}"),
        "object": "chat.completion",
        "created": 0,
        "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tools: &[&str], last_role: &str) -> Value {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t}}))
            .collect();
        json!({"tools": tools, "messages": [{"role": last_role, "content": "x"}]})
    }

    fn called(reply: &Value) -> Option<String> {
        reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
            .as_str()
            .map(str::to_string)
    }

    #[test]
    fn it_acts_then_ends_the_step_and_talks_without_tools() {
        let tools = ["shell_exec", "code_run", "complete_step"];
        assert_eq!(
            called(&completion(&request(&tools, "user"), 1)).as_deref(),
            Some("shell_exec")
        );
        assert_eq!(
            called(&completion(&request(&tools, "tool"), 2)).as_deref(),
            Some("complete_step")
        );
        assert_eq!(
            called(&completion(
                &request(&["code_run", "complete_step"], "user"),
                3
            ))
            .as_deref(),
            Some("code_run")
        );
        let talk = completion(&request(&[], "user"), 4);
        assert_eq!(called(&talk), None);
        assert!(talk["choices"][0]["message"]["content"].is_string());
    }

    #[test]
    fn it_answers_over_http() {
        let base = start().expect("starts");
        let addr = base
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .to_string();
        let mut stream = TcpStream::connect(addr).expect("connects");
        let body = request(&["shell_exec"], "user").to_string();
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("write");
        stream.write_all(body.as_bytes()).expect("write");
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("status");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    }
}
