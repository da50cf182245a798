//! Scheduler benchmarks with an in-process scripted LLM (run by `cargo xtask bench`).
//!
//! 1. Dispatch overhead per step of a 100-step flow run with a zero-latency LLM, and the
//!    process's peak RSS. Targets: ≤ 20 µs per step, ≤ 10 MB.
//! 2. DAG makespan against the critical-path lower bound, event-driven and super-step, on
//!    generated DAGs of width 1..16 with 5% stragglers. Target: ≤ 1.05 × bound + 5 ms.
//! 3. Prompt tokens per step over a 30-step plan-act run. Target: step 30 ≤ 1.5 × step 2.
//! 4. Executor prompt size on a scripted 3-step flow run with the app's real tool list (the
//!    shell, file and browser schemas, copied into `fixtures/app_tools.json`), with the tool
//!    router off and on. Target: median executor prompt ≤ 1,500 tokens.
//!
//! Prints a Markdown section on stdout.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use domain::error::LlmError;
use domain::llm::{CallPurpose, ChatRequest, ChatResponse, Role, ToolCall, Usage};
use domain::ports::{LlmClient, Tool, ToolContext, ToolFamily, ToolOutput};
use domain::testing::runs::{runtime, timed_run};
use domain::testing::step_of;
use domain::testing::NullStore;
use domain::tools::builtin::ToolSet;
use domain::{Mode, RunConfig, Runtime, Schedule};
use serde_json::json;

/// Answers the planner with a fixed reply, every step with `complete_step` after the step's
/// latency, and records the prompt size of each step's first call.
struct ScriptedLlm {
    plan_reply: ChatResponse,
    /// Count prompt tokens (benchmark 3); off where the LLM's own cost would blur timing.
    count_tokens: bool,
    latency: HashMap<String, Duration>,
    prompt_tokens: Mutex<Vec<(String, u64)>>,
}

/// A rough token count: 4 characters per token, as tokenizers average on English text.
fn tokens(req: &ChatRequest) -> u64 {
    let chars: usize = req
        .messages
        .iter()
        .map(|m| m.content.as_deref().map_or(0, str::len))
        .sum::<usize>()
        + req
            .tools
            .iter()
            .map(|t| t.parameters.to_string().len() + t.description.len())
            .sum::<usize>();
    (chars / 4) as u64
}

#[async_trait]
impl LlmClient for ScriptedLlm {
    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let usage = Usage {
            prompt_tokens: if self.count_tokens { tokens(&req) } else { 0 },
            completion_tokens: 10,
            cached_prompt_tokens: 0,
        };
        match req.purpose {
            CallPurpose::Execute => {
                let step = step_of(&req);
                if self.count_tokens {
                    self.prompt_tokens
                        .lock()
                        .unwrap()
                        .push((step.clone(), usage.prompt_tokens));
                }
                if let Some(d) = self.latency.get(&step) {
                    tokio::time::sleep(*d).await;
                }
                Ok(ChatResponse {
                    tool_calls: vec![ToolCall {
                        id: "c".into(),
                        name: "complete_step".into(),
                        arguments: json!({"success": true, "result": format!("done: {step}")})
                            .to_string(),
                    }],
                    usage,
                    ..ChatResponse::default()
                })
            }
            CallPurpose::Summarize => Ok(ChatResponse {
                content: Some("summary".into()),
                usage,
                ..ChatResponse::default()
            }),
            _ => Ok(ChatResponse {
                usage,
                ..self.plan_reply.clone()
            }),
        }
    }
}

/// A tool with a real schema from the fixture that does nothing but answer "ok" (and name
/// the file for `file_write`).
struct FixtureTool {
    name: String,
    description: String,
    parameters: serde_json::Value,
}

#[async_trait]
impl Tool for FixtureTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> serde_json::Value {
        self.parameters.clone()
    }
    /// The family the app's tool of this name declares, so that routing is measured.
    fn family(&self) -> ToolFamily {
        match self.name.as_str() {
            "shell_exec" => ToolFamily::Shell,
            n if n.starts_with("shell_") => ToolFamily::ShellSession,
            n if n.starts_with("file_") => ToolFamily::Files,
            n if n.starts_with("browser_") => ToolFamily::Browser,
            "web_search" => ToolFamily::WebSearch,
            _ => ToolFamily::Other,
        }
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, domain::ToolError> {
        let mut out = ToolOutput::ok("hello");
        if self.name == "file_write" {
            out.attachments = vec![args["path"].as_str().unwrap_or("f").to_string()];
        }
        Ok(out)
    }
}

fn app_toolset() -> ToolSet {
    let fixture: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("fixtures/app_tools.json")).expect("fixture");
    ToolSet::new().extend(fixture.into_iter().map(|t| {
        Arc::new(FixtureTool {
            name: t["name"].as_str().expect("name").to_string(),
            description: t["description"].as_str().expect("description").to_string(),
            parameters: t["parameters"].clone(),
        }) as Arc<dyn Tool>
    }))
}

/// The 3-step flow: the planner creates the plan; each step makes one tool call (or none for
/// the report), then `complete_step`; the summary is text. Records every executor prompt.
struct FlowScript {
    calls: Mutex<u32>,
    executor_prompts: Mutex<Vec<usize>>,
}

fn chars(req: &ChatRequest) -> usize {
    req.messages
        .iter()
        .map(|m| m.content.as_deref().map_or(0, str::len))
        .sum::<usize>()
        + req
            .tools
            .iter()
            .map(|t| t.name.len() + t.parameters.to_string().len() + t.description.len())
            .sum::<usize>()
}

#[async_trait]
impl LlmClient for FlowScript {
    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let call = |name: &str, args: serde_json::Value| ChatResponse {
            tool_calls: vec![ToolCall {
                id: format!("c{}", {
                    let mut n = self.calls.lock().unwrap();
                    *n += 1;
                    *n
                }),
                name: name.into(),
                arguments: args.to_string(),
            }],
            ..ChatResponse::default()
        };
        match req.purpose {
            CallPurpose::Plan => Ok(call(
                "planning",
                json!({"command": "create", "title": "hello.txt", "steps": [
                    "Write the text hello into hello.txt",
                    "Read hello.txt back and check it says hello",
                    "Report the content of hello.txt"
                ]}),
            )),
            CallPurpose::Execute => {
                self.executor_prompts.lock().unwrap().push(chars(&req));
                let acted = req.messages.iter().any(|m| m.role == Role::Tool);
                let step = step_of(&req);
                if !acted && step.starts_with("Write") {
                    Ok(call(
                        "file_write",
                        json!({"path": "hello.txt", "content": "hello"}),
                    ))
                } else if !acted && step.starts_with("Read") {
                    Ok(call("file_read", json!({"path": "hello.txt"})))
                } else {
                    Ok(call(
                        "complete_step",
                        json!({"success": true, "result": "hello.txt says hello"}),
                    ))
                }
            }
            _ => Ok(ChatResponse {
                content: Some("summary".into()),
                ..ChatResponse::default()
            }),
        }
    }
}

/// Median executor prompt (characters) of the scripted 3-step flow, and the call count.
async fn flow_prompt_sizes(route_tools: bool) -> (usize, usize, usize) {
    let llm = Arc::new(FlowScript {
        calls: Mutex::default(),
        executor_prompts: Mutex::default(),
    });
    let config = RunConfig {
        mode: Mode::Flow,
        route_tools,
        ..RunConfig::default()
    };
    let rt = runtime(
        llm.clone(),
        Arc::new(app_toolset()),
        Arc::new(NullStore),
        config,
    );
    timed_run(&rt).await;
    let mut sizes = llm.executor_prompts.lock().unwrap().clone();
    sizes.sort_unstable();
    (sizes[sizes.len() / 2], sizes[sizes.len() - 1], sizes.len())
}

/// A runtime over `llm`, no tools, and the null store.
fn bench_runtime(llm: Arc<ScriptedLlm>, config: RunConfig) -> Runtime {
    runtime(llm, Arc::new(ToolSet::new()), Arc::new(NullStore), config)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// xorshift64*: a small deterministic generator for the DAG shapes and latencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct GeneratedDag {
    actions: Vec<serde_json::Value>,
    latency: HashMap<String, Duration>,
    critical_path: Duration,
}

/// `layers` layers of `width` actions; each depends on 1-2 actions of the previous layer.
/// Latencies 20-40 ms; 5% stragglers take 5×.
fn generate(width: usize, layers: usize, seed: u64) -> GeneratedDag {
    let mut rng = Rng(seed);
    let mut actions = Vec::new();
    let mut latency = HashMap::new();
    let mut finish: HashMap<String, Duration> = HashMap::new();
    let mut all_layers: Vec<Vec<String>> = Vec::new();
    for l in 0..layers {
        let mut layer = Vec::new();
        for w in 0..width {
            let id = format!("a{l}_{w}");
            let mut ms = 20 + rng.below(21);
            if rng.below(100) < 5 {
                ms *= 5;
            }
            let d = Duration::from_millis(ms);
            let mut deps: Vec<String> = Vec::new();
            if l > 0 {
                let prev = &all_layers[l - 1];
                for _ in 0..(1 + rng.below(2)) {
                    let dep = prev[rng.below(prev.len() as u64) as usize].clone();
                    if !deps.contains(&dep) {
                        deps.push(dep);
                    }
                }
            }
            let start = deps.iter().map(|d| finish[d]).max().unwrap_or_default();
            finish.insert(id.clone(), start + d);
            latency.insert(id.clone(), d);
            actions.push(json!({"id": id, "description": id, "depends_on": deps}));
            layer.push(id);
        }
        all_layers.push(layer);
    }
    GeneratedDag {
        actions,
        latency,
        critical_path: finish.values().copied().max().unwrap_or_default(),
    }
}

fn plan_reply(value: serde_json::Value) -> ChatResponse {
    ChatResponse {
        content: Some(value.to_string()),
        ..ChatResponse::default()
    }
}

fn flow_reply(n: usize) -> ChatResponse {
    let steps: Vec<String> = (0..n).map(|i| format!("step number {i}")).collect();
    ChatResponse {
        tool_calls: vec![ToolCall {
            id: "p".into(),
            name: "planning".into(),
            arguments: json!({"command": "create", "title": "bench", "steps": steps}).to_string(),
        }],
        ..ChatResponse::default()
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "meets"
    } else {
        "MISSES"
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        println!("## Scheduler (`crates/domain/benches/scheduler.rs`)\n");

        // 1. Dispatch overhead of a 100-step flow with a zero-latency LLM.
        let llm = Arc::new(ScriptedLlm {
            plan_reply: flow_reply(100),
            count_tokens: false,
            latency: HashMap::new(),
            prompt_tokens: Mutex::default(),
        });
        let flow = bench_runtime(
            llm,
            RunConfig {
                mode: Mode::Flow,
                max_plan_steps: 100,
                ..RunConfig::default()
            },
        );
        timed_run(&flow).await; // warm-up
        let mut per_step: Vec<f64> = Vec::new();
        for _ in 0..20 {
            let t = timed_run(&flow).await;
            per_step.push(t.as_secs_f64() * 1e6 / 100.0);
        }
        per_step.sort_by(|a, b| a.total_cmp(b));
        let median = per_step[per_step.len() / 2];
        let rss_mib = peak_rss_kib() as f64 / 1024.0;
        println!("### 1. Dispatch overhead, 100-step flow, zero-latency LLM\n");
        println!("Whole run (plan, 100 steps with one LLM turn each, summary) with an in-memory");
        println!("null store, median of 20 runs after a warm-up.\n");
        println!("| metric | measured | target | |");
        println!("| --- | --- | --- | --- |");
        println!(
            "| time per step | {median:.1} µs (min {:.1}, max {:.1}) | ≤ 20 µs | {} |",
            per_step[0],
            per_step[per_step.len() - 1],
            verdict(median <= 20.0)
        );
        println!(
            "| peak RSS of the process | {rss_mib:.1} MiB | ≤ 10 MB | {} |\n",
            verdict(rss_mib * 1.048_576 <= 10.0)
        );

        // 2. DAG makespan vs the critical path, event-driven and super-step.
        println!("### 2. DAG makespan vs the critical-path lower bound\n");
        println!("6 layers × width w; each action depends on 1-2 actions of the layer before;");
        println!("latency 20-40 ms, 5% stragglers at 5×; concurrency limit 16 (≥ width), so the");
        println!("bound is the critical path. Target: event-driven ≤ 1.05 × bound + 5 ms.\n");
        println!("| width | actions | bound (ms) | event-driven (ms) | ratio | super-step (ms) | ratio | |");
        println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
        for (i, width) in [1usize, 2, 4, 8, 16].into_iter().enumerate() {
            let dag = generate(width, 6, 0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1));
            let reply = plan_reply(json!({"goal": "bench", "actions": dag.actions}));
            let mut times = Vec::new();
            for schedule in [Schedule::EventDriven, Schedule::Superstep] {
                let llm = Arc::new(ScriptedLlm {
                    plan_reply: reply.clone(),
                    count_tokens: false,
                    latency: dag.latency.clone(),
                    prompt_tokens: Mutex::default(),
                });
                let config = RunConfig {
                    mode: Mode::Dag,
                    schedule,
                    parallelism: 16,
                    ..RunConfig::default()
                };
                times.push(timed_run(&bench_runtime(llm, config)).await);
            }
            let bound = dag.critical_path;
            let ok = ms(times[0]) <= 1.05 * ms(bound) + 5.0;
            println!(
                "| {width} | {} | {:.1} | {:.1} | {:.3} | {:.1} | {:.3} | {} |",
                dag.actions.len(),
                ms(bound),
                ms(times[0]),
                ms(times[0]) / ms(bound),
                ms(times[1]),
                ms(times[1]) / ms(bound),
                verdict(ok)
            );
        }
        println!();

        // 3. Prompt tokens per step over a 30-step plan-act run.
        let steps: Vec<serde_json::Value> = (1..=30)
            .map(|i| json!({"id": i.to_string(), "description": format!("step number {i}")}))
            .collect();
        let llm = Arc::new(ScriptedLlm {
            plan_reply: plan_reply(json!({"title": "bench", "goal": "bench", "steps": steps})),
            count_tokens: true,
            latency: HashMap::new(),
            prompt_tokens: Mutex::default(),
        });
        let config = RunConfig {
            mode: Mode::PlanAct,
            max_plan_steps: 30,
            ..RunConfig::default()
        };
        timed_run(&bench_runtime(llm.clone(), config)).await;
        let seen = llm.prompt_tokens.lock().unwrap().clone();
        let at = |n: usize| {
            seen.iter()
                .find(|(s, _)| s == &format!("step number {n}"))
                .map(|(_, t)| *t)
                .unwrap_or(0)
        };
        let (t2, t30) = (at(2), at(30));
        let ratio = t30 as f64 / t2.max(1) as f64;
        println!("### 3. Prompt tokens per step, 30-step plan-act run\n");
        println!("Prompt size of each step's first executor call (characters / 4, tool schemas included).\n");
        println!("| step 1 | step 2 | step 10 | step 20 | step 30 | step 30 / step 2 | target | |");
        println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
        println!(
            "| {} | {t2} | {} | {} | {t30} | {ratio:.2} | ≤ 1.5 | {} |",
            at(1),
            at(10),
            at(20),
            verdict(ratio <= 1.5)
        );

        // 4. Executor prompt size, scripted 3-step flow, the app's real tool list.
        println!("\n### 4. Executor prompt size, scripted 3-step flow, app tool list\n");
        println!("Write hello.txt, read it back, report: one tool call and `complete_step` per");
        println!("step; shell, file and browser schemas from `benches/fixtures/app_tools.json`.");
        println!("Size = message characters + tool names, descriptions and compact JSON schemas;");
        println!("tokens estimated as characters / 4.\n");
        println!("| tool router | executor calls | median chars | median tokens (est.) | max tokens (est.) | target | |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        for route in [false, true] {
            let (median, max, n) = flow_prompt_sizes(route).await;
            println!(
                "| {} | {n} | {median} | {} | {} | ≤ 1,500 | {} |",
                if route { "on" } else { "off" },
                median / 4,
                max / 4,
                verdict(median / 4 <= 1500)
            );
        }
    });
}
