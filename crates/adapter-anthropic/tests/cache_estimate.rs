//! Prompt caching on a recorded session (docs/anthropic.md, "Usage and prompt caching"):
//! the requests of the greeting run's cassette (`crates/app/tests/cassettes/greeting.jsonl`,
//! the port's provider-neutral requests) are sent through this client to a local server,
//! and the bodies it sent are played against a model of Anthropic's prefix cache: a
//! breakpoint writes the prefix up to its block (when it is at least the minimum cacheable
//! length), and a request reads the longest written prefix ending within 20 blocks before
//! one of its breakpoints. Tokens are estimated as characters / 4 of the blocks' JSON (no
//! tokenizer here): the figures say how much of each prompt the breakpoints let the cache
//! serve, not what a bill would show. `SHOW_CACHE_TABLE=1` prints the table.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::HashSet;

use domain::llm::ChatRequest;
use serde_json::Value;
use support::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

/// The API looks this many blocks back from a breakpoint for an earlier cache entry.
const LOOKBACK: usize = 20;
/// The shortest prefix cached (1024 tokens for most Claude models), in estimated tokens.
const MIN_CACHED_TOKENS: usize = 1024;

fn cassette_requests() -> Vec<ChatRequest> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../app/tests/cassettes/greeting.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            serde_json::from_value(entry.get("request")?.clone()).ok()
        })
        .collect()
}

/// A body's blocks in the order the cache reads them (tools, system, messages), each as its
/// JSON without `cache_control`, and whether it carries a breakpoint.
fn blocks(body: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut push = |block: &Value, prefix: &str| {
        let mut block = block.clone();
        let marked = block
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .is_some();
        out.push((format!("{prefix}{block}"), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(tool, "tool:");
    }
    for block in body["system"].as_array().into_iter().flatten() {
        push(block, "system:");
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        for block in message["content"].as_array().into_iter().flatten() {
            push(block, &format!("{role}:"));
        }
    }
    out
}

fn tokens(chars: usize) -> usize {
    chars / 4
}

/// Per request: (estimated prompt tokens, estimated tokens read from the cache), prefixes
/// shorter than `min_tokens` not cached.
fn simulate(bodies: &[Value], min_tokens: usize) -> Vec<(usize, usize)> {
    let mut cache: HashSet<String> = HashSet::new();
    bodies
        .iter()
        .map(|body| {
            let blocks = blocks(body);
            // The prefix through block k, and its length.
            let mut prefixes = Vec::with_capacity(blocks.len());
            let mut text = body["model"].to_string();
            for (block, _) in &blocks {
                text.push('\n');
                text.push_str(block);
                prefixes.push(text.clone());
            }
            let breakpoints: Vec<usize> = (0..blocks.len()).filter(|k| blocks[*k].1).collect();
            let read = breakpoints
                .iter()
                .flat_map(|b| b.saturating_sub(LOOKBACK)..=*b)
                .filter(|k| cache.contains(&prefixes[*k]))
                .map(|k| prefixes[k].len())
                .max()
                .unwrap_or(0);
            for b in &breakpoints {
                if tokens(prefixes[*b].len()) >= min_tokens {
                    cache.insert(prefixes[*b].clone());
                }
            }
            (tokens(text.len()), tokens(read))
        })
        .collect()
}

#[tokio::test]
async fn later_calls_of_a_step_read_their_prefix_from_the_cache() {
    let requests = cassette_requests();
    assert_eq!(requests.len(), 8, "the greeting cassette's requests");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ok(text_message("ok")))
        .mount(&server)
        .await;
    let client = client(&server);
    let purposes: Vec<String> = requests
        .iter()
        .map(|r| format!("{:?}", r.purpose))
        .collect();
    for request in requests {
        domain::ports::LlmClient::chat(&client, request)
            .await
            .unwrap();
    }
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let usage = simulate(&bodies, MIN_CACHED_TOKENS);
    let placement = simulate(&bodies, 0);

    let mut table = String::from(
        "| call | purpose | prompt (est. tokens) | read from cache (est.) | read with no minimum |\n",
    );
    table.push_str("| --- | --- | --- | --- | --- |\n");
    for (n, purpose) in purposes.iter().enumerate() {
        table.push_str(&format!(
            "| {} | {purpose} | {} | {} | {} |\n",
            n + 1,
            usage[n].0,
            usage[n].1,
            placement[n].1
        ));
    }
    let total = |u: &[(usize, usize)]| {
        let prompt: usize = u.iter().map(|u| u.0).sum();
        let read: usize = u.iter().map(|u| u.1).sum();
        (prompt, read, read * 100 / prompt.max(1))
    };
    let (prompt, read, share) = total(&usage);
    let (_, read_any, share_any) = total(&placement);
    table.push_str(&format!(
        "| all | | {prompt} | {read} ({share}%) | {read_any} ({share_any}%) |\n"
    ));
    if std::env::var_os("SHOW_CACHE_TABLE").is_some() {
        use std::io::Write;
        std::io::stdout().write_all(table.as_bytes()).unwrap();
    }

    // The first call writes; where the minimum does not bite, every later executor call
    // reads its prefix (the breakpoints are where the prompt stays the same).
    assert_eq!(usage[0].1, 0);
    for (n, (prompt, cached)) in placement.iter().enumerate().skip(2).take(5) {
        assert!(*cached > 0, "call {} read nothing of its {prompt}", n + 1);
    }
    assert!(read <= read_any);
    // Without breakpoints nothing is read.
    let unmarked: Vec<Value> = bodies
        .iter()
        .map(|b| {
            serde_json::from_str(&b.to_string().replace("\"cache_control\"", "\"x\"")).unwrap()
        })
        .collect();
    assert!(simulate(&unmarked, 0).iter().all(|u| u.1 == 0));
}
