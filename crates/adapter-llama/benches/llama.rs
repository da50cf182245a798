//! Embedded model speed: model load time, prompt and generation tokens/s with 2 threads,
//! unconstrained and grammar-constrained, on the default SmolLM2-135M GGUF. Prints one
//! Markdown section for `cargo xtask bench`; prints a note instead when the model file is
//! missing (`cargo xtask model` fetches it).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use adapter_llama::{default_model_path, GenerationStats, LlamaClient, LlamaConfig};
use domain::llm::{CallPurpose, ChatMessage, ChatRequest, ToolChoice, ToolSchema};
use serde_json::json;

const THREADS: u32 = 2;

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not: then one short
    // round only, to check the benchmark still runs without spending minutes.
    let full = std::env::args().any(|a| a == "--bench");
    let rounds: u32 = if full { 3 } else { 1 };
    let cap: u32 = if full { 128 } else { 8 };
    let path = default_model_path();
    println!(
        "## Embedded model (`crates/adapter-llama/benches/llama.rs`: SmolLM2-135M-Instruct Q4_1, {THREADS} threads)\n"
    );
    if !path.is_file() {
        println!(
            "Not measured: the model file {} is missing (run `cargo xtask model`).\n",
            path.display()
        );
        return;
    }
    let mut config = LlamaConfig::new(&path);
    config.threads = Some(THREADS);
    config.context_tokens = 4096;
    config.max_tokens = cap;
    let started = Instant::now();
    let client = match LlamaClient::load(config) {
        Ok(c) => c,
        Err(e) => {
            println!("Not measured: {e}\n");
            return;
        }
    };
    let load = started.elapsed();

    let text = {
        let mut r = ChatRequest::new(
            CallPurpose::Summarize,
            vec![
                ChatMessage::system("You are a helpful assistant."),
                ChatMessage::user(format!(
                    "Here are some notes:\n{}\nWrite a long story about a robot who learns to garden.",
                    "The workspace holds hello.txt, notes.md and a script that counts words. ".repeat(12)
                )),
            ],
        );
        r.max_tokens = Some(cap);
        r
    };
    let tool = ChatRequest::new(
        CallPurpose::Execute,
        vec![
            ChatMessage::system("You are an agent that uses tools to do tasks."),
            ChatMessage::user(
                "Write hello.txt containing 'hello from planwright' with the shell tool.",
            ),
        ],
    )
    .with_tools(
        vec![ToolSchema {
            name: "shell_exec".into(),
            description: "Run a bash command in the workspace and return its output.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout_secs": {"type": "integer"}},
                "required": ["command"]
            }),
        }],
        ToolChoice::Required,
    );

    let mut rows = Vec::new();
    for (label, req) in [
        ("unconstrained text", &text),
        ("grammar-constrained tool call", &tool),
    ] {
        if full {
            let _ = client.chat_blocking(req); // warm-up
        }
        let mut total = GenerationStats::default();
        let mut ok = true;
        for _ in 0..rounds {
            match client.chat_blocking(req) {
                Ok((_, s)) => {
                    total.prompt_tokens += s.prompt_tokens;
                    total.completion_tokens += s.completion_tokens;
                    total.prompt_time += s.prompt_time;
                    total.generation_time += s.generation_time;
                }
                Err(e) => {
                    eprintln!("{label}: {e}");
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            rows.push(format!("| {label} | failed | | | |"));
            continue;
        }
        let rate = |n: u32, d: Duration| f64::from(n) / d.as_secs_f64().max(1e-9);
        rows.push(format!(
            "| {label} | {} | {:.0} | {} | {:.0} |",
            total.prompt_tokens / rounds,
            rate(total.prompt_tokens, total.prompt_time),
            total.completion_tokens / rounds,
            rate(total.completion_tokens, total.generation_time),
        ));
    }
    println!(
        "Model load: {:.0} ms. Each row: mean of {rounds} greedy calls after a warm-up, a fresh context per call; \
         generation time includes sampling (and the grammar check for the tool call).\n",
        load.as_secs_f64() * 1000.0
    );
    println!("| call | prompt tokens | prompt tok/s | generated tokens | generation tok/s |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for r in rows {
        println!("{r}");
    }
    println!(
        "\nREADME example (`planwright run --provider local`, examples/offline-task.md) wall time: \
         not measured yet (measured once the app wires `--provider local`).\n"
    );
}
