//! The embedded engine beside llama.cpp's own `llama-server` on the same GGUF, threads and
//! context: prompt tokens/s, generation tokens/s and time to first token, cold (a prompt no
//! cache holds) and warm (the same long prefix, another last question). Both get the very
//! same text: the embedded client's rendering of the request, sent to the server's
//! `/completion` as is, so both read the same tokens. Greedy, a fixed token budget.
//!
//! `cargo xtask bench llama-server` builds and starts the server (xtask/src/llama_server/)
//! and runs this with `PLANWRIGHT_LLAMA_SERVER_URL` set; without it, or without the model
//! file, it prints a note. Prints one Markdown section.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod http;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use adapter_llama::{default_model_path, LlamaClient, LlamaConfig, DEFAULT_BATCH_TOKENS};
use domain::llm::{CallPurpose, ChatMessage, ChatRequest};
use serde_json::json;

const HEADING: &str =
    "## Embedded engine vs llama-server (`crates/adapter-llama/benches/llama_server/main.rs`)";

/// One call's figures, whichever engine made it.
#[derive(Debug, Clone, Copy)]
struct Call {
    prompt_read: u32,
    cached: u32,
    prompt_secs: f64,
    generated: u32,
    generation_secs: f64,
    first_token_secs: f64,
}

impl Call {
    fn prompt_rate(&self) -> f64 {
        f64::from(self.prompt_read) / self.prompt_secs.max(1e-9)
    }
    fn generation_rate(&self) -> f64 {
        f64::from(self.generated) / self.generation_secs.max(1e-9)
    }
}

/// The long, shared part of every prompt: an inventory of a made-up workspace, ~3.4k
/// tokens. `session` opens the system message, so two sessions share no useful prefix.
fn request(session: u32, question: &str, cap: u32) -> ChatRequest {
    const OWNERS: [&str; 7] = ["Ada", "Brook", "Chen", "Dara", "Emil", "Farah", "Goran"];
    const TOPICS: [&str; 11] = [
        "billing",
        "search",
        "the release checklist",
        "caching",
        "login",
        "exports",
        "the onboarding guide",
        "metrics",
        "backups",
        "the command line",
        "translations",
    ];
    let mut inventory = String::new();
    for i in 0..120u32 {
        inventory.push_str(&format!(
            "- notes/file_{i:03}.md: {} lines, owned by {}, last edited on day {} of the \
             quarter, about {}; status {}.\n",
            20 + (i * 37) % 180,
            OWNERS[(i as usize * 3) % OWNERS.len()],
            1 + (i * 11) % 90,
            TOPICS[(i as usize * 5) % TOPICS.len()],
            if i % 4 == 0 { "draft" } else { "final" },
        ));
    }
    let mut r = ChatRequest::new(
        CallPurpose::Other,
        vec![
            ChatMessage::system(format!(
                "Session {session}. You are a helpful assistant who writes at length."
            )),
            ChatMessage::user(format!(
                "Here is the inventory of a project's notes folder:\n{inventory}\n{question}"
            )),
        ],
    );
    r.max_tokens = Some(cap);
    r.temperature = Some(0.0);
    r
}

const COLD_QUESTION: &str =
    "Write a long, detailed story about the people who own these files, at least 400 words.";
const WARM_QUESTION: &str =
    "Now write a long poem about the topics of these files, at least 400 words.";

fn embedded_call(client: &LlamaClient, req: &ChatRequest) -> Result<(Call, String), String> {
    let started = Instant::now();
    let (response, s) = client.chat_blocking(req).map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    let n = s.completion_tokens.max(1);
    // The tokens after the first took (n - 1) / n of the generation time.
    let after_first = s.generation_time.mul_f64(f64::from(n - 1) / f64::from(n));
    Ok((
        Call {
            prompt_read: s.prompt_tokens - s.cached_prompt_tokens,
            cached: s.cached_prompt_tokens,
            prompt_secs: s.prompt_time.as_secs_f64(),
            generated: s.completion_tokens,
            generation_secs: s.generation_time.as_secs_f64(),
            first_token_secs: wall.saturating_sub(after_first).as_secs_f64(),
        },
        response.content.unwrap_or_default(),
    ))
}

fn server_call(
    url: &str,
    client: &LlamaClient,
    req: &ChatRequest,
    cap: u32,
) -> Result<(Call, String), String> {
    let prompt = client.render(req).map_err(|e| e.to_string())?;
    let body = json!({
        "prompt": prompt,
        "n_predict": cap,
        "temperature": 0.0,
        "cache_prompt": true,
        "stream": true,
    });
    let s = http::stream_completion(url, &body)?;
    Ok((
        Call {
            prompt_read: s.prompt_tokens_read,
            cached: s.cached_tokens,
            prompt_secs: s.prompt_ms / 1000.0,
            generated: s.generated_tokens,
            generation_secs: s.generation_ms / 1000.0,
            first_token_secs: s.first_token.as_secs_f64(),
        },
        s.text,
    ))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn row(engine: &str, call: &str, calls: &[Call]) -> String {
    let m = |f: fn(&Call) -> f64| median(calls.iter().map(f).collect());
    format!(
        "| {engine} | {call} | {:.0} ({:.0}) | {:.1} | {:.0} | {:.2} | {:.2} s |",
        m(|c| f64::from(c.prompt_read)),
        m(|c| f64::from(c.cached)),
        m(Call::prompt_rate),
        m(|c| f64::from(c.generated)),
        m(Call::generation_rate),
        m(|c| c.first_token_secs),
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| {
            let v: Vec<&str> = l.split_whitespace().take(3).collect();
            (v.len() == 3).then(|| v.join(" "))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// Where two texts part, as "same" or the first differing character's index.
fn agreement(a: &str, b: &str) -> String {
    match a.chars().zip(b.chars()).position(|(x, y)| x != y) {
        None if a.chars().count() == b.chars().count() => "the same text".to_string(),
        None => format!(
            "the same text up to the shorter one's end ({} and {} characters)",
            a.chars().count(),
            b.chars().count()
        ),
        Some(i) => format!("the same first {i} characters, then different"),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not: then one short
    // round only.
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, cap): (u32, u32) = if full { (3, 100) } else { (1, 8) };
    println!("{HEADING}\n");
    let model = std::env::var_os("PLANWRIGHT_LLAMA_SERVER_MODEL")
        .map_or_else(default_model_path, PathBuf::from);
    let threads: u32 = std::env::var("PLANWRIGHT_LLAMA_SERVER_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let build = std::env::var("PLANWRIGHT_LLAMA_SERVER_BUILD").unwrap_or_default();
    if !model.is_file() {
        println!(
            "Not measured: the model file {} is missing (run `cargo xtask model`).\n",
            model.display()
        );
        return;
    }
    let Some(url) = std::env::var("PLANWRIGHT_LLAMA_SERVER_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!(
            "Not measured: no server (`cargo xtask bench llama-server` builds and starts one).\n"
        );
        return;
    };
    let mut config = LlamaConfig::new(&model);
    config.threads = Some(threads);
    config.max_tokens = cap;
    let client = match LlamaClient::load(config) {
        Ok(c) => c,
        Err(e) => {
            println!("Not measured: {e}\n");
            return;
        }
    };
    let load_before = load_average();
    let started = Instant::now();
    match measure(&url, &client, rounds, cap) {
        Ok(m) => print_section(
            &m,
            &Setup {
                model: &model,
                threads,
                build: &build,
                rounds,
                cap,
                load_before: &load_before,
                took: started.elapsed(),
            },
        ),
        Err(e) => println!("Not measured: {e}\n"),
    }
}

struct Measured {
    prompt_tokens: u32,
    embedded_cold: Vec<Call>,
    embedded_warm: Vec<Call>,
    server_cold: Vec<Call>,
    server_warm: Vec<Call>,
    /// The embedded and the server's text for the first cold call.
    texts: (String, String),
}

fn measure(url: &str, client: &LlamaClient, rounds: u32, cap: u32) -> Result<Measured, String> {
    // Warm-up on both (pages the weights in), not counted; session 0 is never measured.
    let (warm_up, _) = embedded_call(client, &request(0, COLD_QUESTION, cap))?;
    server_call(url, client, &request(0, COLD_QUESTION, cap), cap)?;
    let mut m = Measured {
        prompt_tokens: warm_up.prompt_read + warm_up.cached,
        embedded_cold: Vec::new(),
        embedded_warm: Vec::new(),
        server_cold: Vec::new(),
        server_warm: Vec::new(),
        texts: (String::new(), String::new()),
    };
    for session in 1..=rounds {
        let cold = request(session, COLD_QUESTION, cap);
        let warm = request(session, WARM_QUESTION, cap);
        let (c, text) = embedded_call(client, &cold)?;
        m.embedded_cold.push(c);
        if session == 1 {
            m.texts.0 = text;
        }
        m.embedded_warm.push(embedded_call(client, &warm)?.0);
        let (c, text) = server_call(url, client, &cold, cap)?;
        m.server_cold.push(c);
        if session == 1 {
            m.texts.1 = text;
        }
        m.server_warm.push(server_call(url, client, &warm, cap)?.0);
        eprintln!("llama_server bench: round {session} of {rounds} done");
    }
    Ok(m)
}

struct Setup<'a> {
    model: &'a std::path::Path,
    threads: u32,
    build: &'a str,
    rounds: u32,
    cap: u32,
    load_before: &'a str,
    took: Duration,
}

fn print_section(m: &Measured, s: &Setup<'_>) {
    let file = s.model.file_name().map_or_else(
        || s.model.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    println!(
        "{file}, {} threads, 8192-token context, greedy, at most {} generated tokens; the same \
         rendered prompt ({} tokens) sent to both; each row the median of {} calls after a \
         warm-up. **Cold**: a new session, which no cache holds. **Warm**: the same session \
         again with another last question (the long prefix before it cached), as an agent's \
         next call.\n",
        s.threads, s.cap, m.prompt_tokens, s.rounds
    );
    println!(
        "- **embedded**: `LlamaClient::chat_blocking` in process, prompts read in batches of \
         {DEFAULT_BATCH_TOKENS} tokens and reused in whole batches only (docs/models.md, \
         \"Prefix reuse\"); time to first token = the call's wall time less its generation \
         after the first token.\n\
         - **llama-server**: {}, started by `cargo xtask bench llama-server` with the same \
         threads and context (`--parallel 1`, its default batches of 2048/512); `POST \
         /completion` streamed over HTTP on 127.0.0.1; time to first token measured by the \
         client at the first streamed token, the rest from the server's `timings`.\n",
        if s.build.is_empty() {
            "llama.cpp's server"
        } else {
            s.build
        }
    );
    println!(
        "| engine | call | prompt tokens read (cached) | prompt tok/s | generated tokens | \
         generation tok/s | time to first token |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    println!("{}", row("embedded", "cold", &m.embedded_cold));
    println!("{}", row("llama-server", "cold", &m.server_cold));
    println!("{}", row("embedded", "warm", &m.embedded_warm));
    println!("{}", row("llama-server", "warm", &m.server_warm));
    println!(
        "\nOn the first cold call the two engines wrote {}. Load average (1, 5, 15 min) before: \
         {}, after: {}; measured in {:.0} s.\n",
        agreement(&m.texts.0, &m.texts.1),
        s.load_before,
        load_average(),
        s.took.as_secs_f64()
    );
}
