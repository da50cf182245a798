//! # adapter-llama
//!
//! Planwright's embedded model: an in-process [`LlmClient`] that runs a GGUF model with
//! llama.cpp (through the `llama-cpp-2` crate, CPU backend only). The default model is
//! Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M, Apache-2.0), which `cargo xtask model` fetches
//! into [`default_model_dir`]; the others of the catalogue ([`CATALOGUE`], docs/models.md)
//! are chosen by name ([`resolve_model`]) and any other GGUF file by path. Nothing here
//! downloads anything. [`providers`] describes it to the front ends (`--provider local`,
//! the fallback when no endpoint is configured, `planwright doctor`'s model line).
//!
//! - The model is loaded once ([`LlamaClient::load`]) and shared by every clone of the
//!   client. Requests run one at a time on the model's own inference thread, which keeps a
//!   few llama.cpp contexts and their KV caches between calls and reads only the part of a
//!   prompt after the longest prefix it already holds, in whole aligned batches so that
//!   reuse never changes an answer (see `engine`); usage reports those tokens as
//!   `cached_prompt_tokens`. Dropping a request's future stops its generation between
//!   two batches or tokens.
//! - The prompt is rendered with the model's own chat template (GGUF metadata). A model
//!   without one (a base model) is refused at load ([`Error::NoChatTemplate`]), never run
//!   on a guessed template. A system message is always
//!   sent; tools are described in it; assistant tool calls are rendered as the JSON text
//!   `{"tool": ..., "arguments": ...}` and tool results as user turns naming the call id.
//! - When tools are offered (and `tool_choice` is not `None`) the output is constrained by
//!   a GBNF grammar built from the tool schemas to exactly one JSON object
//!   `{"tool": NAME, "arguments": {...}}`, so even a tiny model cannot write a broken call.
//!   `Auto` behaves like `Required` unless [`LlamaConfig::allow_text_with_tools`] also
//!   allows `{"content": "..."}`. When `code_run` is offered, the reply is a fenced program,
//!   `ASK: …`, `DONE: …`/`FAILED: …` or a JSON call of another tool instead (the code
//!   surface, `code_surface.rs`, docs/code-actions.md). JSON response formats are constrained by a grammar built
//!   from the schema (or a generic bounded object). Plain text is unconstrained. Every
//!   grammar is bounded (strings ≤ 400 characters, arrays ≤ 16 items, at most one space
//!   between tokens).
//! - Decoding is deterministic: greedy by default; with a temperature, sampling seeded by the
//!   request's seed (one per sampled call of a run) and the configured one.
//! - A prompt that does not fit the context is [`LlmError::ContextTooLong`].
//! - llama.cpp's own logs are dropped, or sent to `tracing` when debug logging is enabled
//!   when the model is first loaded.
//!
//! `domain` must not depend on this crate; only the app wires it.

mod catalogue;
mod code_surface;
mod engine;
mod grammar;
mod prompt;
mod provider;
mod tools_text;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::error::LlmError;
use domain::llm::{ChatRequest, ChatResponse, ToolCall, Usage};
use domain::ports::LlmClient;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use serde_json::Value;

use engine::{Ending, Generated, Job, Settings};

pub use catalogue::{resolve_model, CatalogueModel, CATALOGUE, DEFAULT_MODEL};
pub use grammar::{json_grammar, tool_call_grammar, MAX_ARRAY_ITEMS, MAX_STRING_CHARS};
pub use prompt::{prepare, Prepared, Protocol, TemplateMessage};
pub use provider::{human_size, providers, EmbeddedProvider};

/// File name of the default model in [`default_model_dir`].
pub const DEFAULT_MODEL_FILE: &str = catalogue::DEFAULT_MODEL_FILE;

/// The model cache folder `cargo xtask model` writes to: `$PLANWRIGHT_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/planwright/models`, else `$HOME/.cache/planwright/models`, else
/// `.planwright/models`. xtask duplicates this rule (it must not depend on project
/// crates): keep both in step.
pub fn default_model_dir() -> PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("PLANWRIGHT_MODEL_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(cache) = var("XDG_CACHE_HOME") {
        return PathBuf::from(cache).join("planwright").join("models");
    }
    if let Some(home) = var("HOME") {
        return PathBuf::from(home)
            .join(".cache")
            .join("planwright")
            .join("models");
    }
    PathBuf::from(".planwright").join("models")
}

/// The default model file: [`DEFAULT_MODEL_FILE`] in [`default_model_dir`].
pub fn default_model_path() -> PathBuf {
    default_model_dir().join(DEFAULT_MODEL_FILE)
}

/// How to run the model.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaConfig {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Context length in tokens (prompt plus answer); capped by the model's training
    /// context. Default 8192.
    pub context_tokens: u32,
    /// Most tokens generated per call unless the request asks for fewer. Default 1024 (a
    /// program of some 80 lines).
    pub max_tokens: u32,
    /// CPU threads; default: the available cores.
    pub threads: Option<u32>,
    /// Seed of the sampler when `temperature` > 0; a request's own seed is mixed with it
    /// (each sampled call of a run brings its own: `ChatRequest::seed`).
    pub seed: u32,
    /// 0 = greedy (the default). A request's own temperature overrides it.
    pub temperature: f32,
    /// With `tool_choice` Auto, also allow a plain answer `{"content": "..."}` instead of a
    /// tool call. Default false: a small model then always makes progress through tools.
    pub allow_text_with_tools: bool,
    /// llama.cpp contexts kept between calls, each with the KV cache of one conversation
    /// (the planner's, an executor's, the summary's, another run's). Default 3.
    pub context_slots: usize,
    /// Tokens per llama.cpp batch while reading a prompt. A kept KV cache is reused in
    /// whole batches only, so that an answer never depends on what the cache held before
    /// (docs/models.md, "Prefix reuse"); a cancelled request stops between batches.
    /// Default [`DEFAULT_BATCH_TOKENS`].
    pub batch_tokens: u32,
}

/// The default [`LlamaConfig::batch_tokens`]: small enough that reuse loses little and a
/// cancelled request stops within a second on two cores, large enough to read prompts at
/// full speed (docs/models.md).
pub const DEFAULT_BATCH_TOKENS: u32 = 64;

impl LlamaConfig {
    /// The defaults for `model_path`.
    pub fn new(model_path: impl Into<PathBuf>) -> LlamaConfig {
        LlamaConfig {
            model_path: model_path.into(),
            context_tokens: 8192,
            max_tokens: 1024,
            threads: None,
            seed: 42,
            temperature: 0.0,
            allow_text_with_tools: false,
            context_slots: 3,
            batch_tokens: DEFAULT_BATCH_TOKENS,
        }
    }
}

impl Default for LlamaConfig {
    fn default() -> LlamaConfig {
        LlamaConfig::new(default_model_path())
    }
}

/// Why the model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "model file {0} not found (run `cargo xtask model` for the default model, or pass another GGUF file)"
    )]
    MissingModel(PathBuf),
    #[error("cannot load model {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("llama.cpp backend: {0}")]
    Backend(String),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("model {path} cannot be used for chat: {reason}; pick an instruct model (see `cargo xtask model --list`)")]
    NoChatTemplate { path: PathBuf, reason: String },
}

/// Timings of one call (the benchmark reads them).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GenerationStats {
    /// Tokens of the whole prompt.
    pub prompt_tokens: u32,
    /// Of those, the tokens found in a kept KV cache (not read again).
    pub cached_prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Time spent reading the prompt.
    pub prompt_time: Duration,
    /// Time spent generating (sampling, grammar and decoding), after the prompt.
    pub generation_time: Duration,
}

/// The llama.cpp backend, initialised once per process.
pub(crate) fn backend() -> Result<&'static LlamaBackend, Error> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut backend = LlamaBackend::init().map_err(|e| e.to_string())?;
            if tracing::enabled!(tracing::Level::DEBUG) {
                llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            } else {
                backend.void_logs();
            }
            Ok(backend)
        })
        .as_ref()
        .map_err(|e| Error::Backend(e.clone()))
}

struct Inner {
    config: LlamaConfig,
    model: Arc<LlamaModel>,
    template: LlamaChatTemplate,
    /// The effective context length (config capped by the model's training context).
    context_tokens: u32,
    threads: i32,
    /// The model's inference thread (one inference at a time, KV caches kept).
    engine: std::sync::mpsc::Sender<Job>,
    calls: AtomicU64,
}

/// An [`LlmClient`] running a GGUF model in process. Cheap to clone: clones share the model.
#[derive(Clone)]
pub struct LlamaClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LlamaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaClient")
            .field("config", &self.inner.config)
            .field("context_tokens", &self.inner.context_tokens)
            .field("threads", &self.inner.threads)
            .finish()
    }
}

impl LlamaClient {
    /// Loads the model (blocking: call it once at start-up, e.g. in `spawn_blocking`).
    pub fn load(config: LlamaConfig) -> Result<LlamaClient, Error> {
        let path = config.model_path.clone();
        if !path.is_file() {
            return Err(Error::MissingModel(path));
        }
        if config.context_tokens < 64 {
            return Err(Error::Config(format!(
                "context_tokens {} is too small (at least 64)",
                config.context_tokens
            )));
        }
        if config.max_tokens == 0 {
            return Err(Error::Config("max_tokens must be at least 1".to_string()));
        }
        if config.batch_tokens == 0 || config.batch_tokens > config.context_tokens {
            return Err(Error::Config(format!(
                "batch_tokens {} must be between 1 and context_tokens ({})",
                config.batch_tokens, config.context_tokens
            )));
        }
        check_gguf_magic(&path)?;
        let backend = backend()?;
        let started = Instant::now();
        let model = LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default())
            .map_err(|e| Error::Load {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        let template = choose_template(&model, &path)?;
        let train = model.n_ctx_train();
        let context_tokens = if train > 0 {
            config.context_tokens.min(train)
        } else {
            config.context_tokens
        };
        let threads = config.threads.filter(|&t| t > 0).unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1))
        });
        let add_bos = model.vocab().should_add_bos();
        let model = Arc::new(model);
        let engine = engine::start(
            Arc::clone(&model),
            Settings {
                context_tokens,
                threads: i32::try_from(threads).unwrap_or(1),
                add_bos,
                slots: config.context_slots.max(1),
                batch: usize::try_from(config.batch_tokens).unwrap_or(1),
            },
        )
        .map_err(|e| Error::Backend(format!("cannot start the inference thread: {e}")))?;
        tracing::info!(
            path = %path.display(),
            context_tokens,
            threads,
            load_ms = started.elapsed().as_millis() as u64,
            "embedded model loaded"
        );
        Ok(LlamaClient {
            inner: Arc::new(Inner {
                config,
                model,
                template,
                context_tokens,
                threads: i32::try_from(threads).unwrap_or(1),
                engine,
                calls: AtomicU64::new(0),
            }),
        })
    }

    /// The configuration it was loaded with.
    pub fn config(&self) -> &LlamaConfig {
        &self.inner.config
    }

    /// The effective context length (the configured one capped by the model's).
    pub fn context_tokens(&self) -> u32 {
        self.inner.context_tokens
    }

    /// The prompt text `request` renders to with the model's template.
    pub fn render(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let prepared = prompt::prepare(request, self.inner.config.allow_text_with_tools)?;
        self.inner.render(&prepared)
    }

    /// Runs one request on the calling thread (blocking), with its timings.
    pub fn chat_blocking(
        &self,
        request: &ChatRequest,
    ) -> Result<(ChatResponse, GenerationStats), LlmError> {
        self.inner.chat(request, Arc::new(AtomicBool::new(false)))
    }
}

/// Cancels its request when dropped: a caller that stops waiting (a cancelled run, a
/// timeout, Ctrl-C) stops the generation too, between two tokens or prompt batches.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[async_trait]
impl LlmClient for LlamaClient {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let inner = Arc::clone(&self.inner);
        let cancel = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(Arc::clone(&cancel));
        match tokio::task::spawn_blocking(move || inner.chat(&request, cancel)).await {
            Ok(result) => result.map(|(response, _)| response),
            Err(e) => Err(LlmError::Permanent(format!(
                "the embedded model's inference task failed: {e}"
            ))),
        }
    }
}

/// Refuses files that are not GGUF before llama.cpp sees them.
fn check_gguf_magic(path: &Path) -> Result<(), Error> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| Error::Load {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    if &magic != b"GGUF" {
        return Err(Error::Load {
            path: path.to_path_buf(),
            reason: "not a GGUF file".to_string(),
        });
    }
    Ok(())
}

/// The model's own chat template, when it has one that llama.cpp can apply. A model
/// without one is refused: running it on a guessed template produces garbage (a base
/// model answers with raw template tokens).
fn choose_template(model: &LlamaModel, path: &Path) -> Result<LlamaChatTemplate, Error> {
    let probe = |t: &LlamaChatTemplate| {
        let msgs = [
            LlamaChatMessage::new("system".into(), "s".into()),
            LlamaChatMessage::new("user".into(), "u".into()),
        ];
        let msgs: Vec<LlamaChatMessage> = msgs.into_iter().filter_map(Result::ok).collect();
        model.apply_chat_template(t, &msgs, true).is_ok()
    };
    match model.chat_template(None) {
        Ok(t) if probe(&t) => Ok(t),
        Ok(_) => Err(Error::NoChatTemplate {
            path: path.to_path_buf(),
            reason: "llama.cpp cannot apply its chat template".to_string(),
        }),
        Err(e) => Err(Error::NoChatTemplate {
            path: path.to_path_buf(),
            reason: format!("it has none ({e}); it is probably a base model, not a chat model"),
        }),
    }
}

impl Inner {
    fn render(&self, prepared: &Prepared) -> Result<String, LlmError> {
        let msgs = prepared
            .messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.to_string(), m.content.replace('\0', " ")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LlmError::Permanent(format!("cannot build chat message: {e}")))?;
        self.model
            .apply_chat_template(&self.template, &msgs, true)
            .map_err(|e| LlmError::Permanent(format!("cannot apply the chat template: {e}")))
    }

    fn chat(
        &self,
        request: &ChatRequest,
        cancel: Arc<AtomicBool>,
    ) -> Result<(ChatResponse, GenerationStats), LlmError> {
        let prepared = prompt::prepare(request, self.config.allow_text_with_tools)?;
        let text = self.render(&prepared)?;
        let grammar = match &prepared.protocol {
            Protocol::Text => None,
            Protocol::ToolCall { grammar }
            | Protocol::Json { grammar }
            | Protocol::Code { grammar } => Some(grammar.as_str()),
        };
        let max_tokens = request
            .max_tokens
            .filter(|&m| m > 0)
            .map_or(self.config.max_tokens, |m| m.min(self.config.max_tokens));
        let temperature = request.temperature.unwrap_or(self.config.temperature);

        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let job = Job {
            prompt: text,
            grammar: grammar.map(str::to_string),
            max_tokens,
            temperature,
            // The request's seed (one per sampled call of a run) mixed with the configured
            // one, so that a user's `seed` still changes every sampled call.
            seed: request
                .seed
                .map_or(self.config.seed, |s| s ^ self.config.seed),
            reply,
            cancel,
        };
        let gone = || LlmError::Permanent("the embedded model's inference thread is gone".into());
        self.engine.send(job).map_err(|_| gone())?;
        let Generated {
            text: output,
            ending,
            stats,
        } = answer.recv().map_err(|_| gone())??;
        let usage = Usage {
            prompt_tokens: u64::from(stats.prompt_tokens),
            completion_tokens: u64::from(stats.completion_tokens),
            cached_prompt_tokens: u64::from(stats.cached_prompt_tokens),
        };
        let finish = match ending {
            Ending::Stop => "stop",
            Ending::Length => "length",
        };
        let mut response = ChatResponse {
            usage,
            finish_reason: Some(finish.to_string()),
            ..ChatResponse::default()
        };
        match prepared.protocol {
            Protocol::Text => response.content = Some(output),
            Protocol::Code { .. } => {
                let cut = matches!(ending, Ending::Length);
                if cut && output.trim_start().starts_with("```") {
                    return Err(LlmError::InvalidResponse(format!(
                        "the embedded model's program was cut at {max_tokens} tokens (raise max_tokens)"
                    )));
                }
                let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
                match code_surface::parse(&output, format!("call_{n}"), &request.tools) {
                    Some(call) => response.tool_calls.push(call),
                    None => {
                        return Err(LlmError::InvalidResponse(format!(
                            "the embedded model's answer is none of the code surface's forms: {}",
                            domain::model::text::truncate_chars(&output, 200)
                        )))
                    }
                }
            }
            Protocol::Json { .. } | Protocol::ToolCall { .. }
                if matches!(ending, Ending::Length) =>
            {
                return Err(LlmError::InvalidResponse(format!(
                    "the embedded model's JSON was cut at {max_tokens} tokens (raise max_tokens)"
                )));
            }
            Protocol::Json { .. } => {
                serde_json::from_str::<Value>(&output).map_err(|e| {
                    LlmError::InvalidResponse(format!("the embedded model wrote invalid JSON: {e}"))
                })?;
                response.content = Some(output);
            }
            Protocol::ToolCall { .. } => {
                let value: Value = serde_json::from_str(&output).map_err(|e| {
                    LlmError::InvalidResponse(format!("the embedded model wrote invalid JSON: {e}"))
                })?;
                if let Some(name) = value.get("tool").and_then(Value::as_str) {
                    let arguments = value
                        .get("arguments")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                    let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
                    response.tool_calls.push(ToolCall {
                        id: format!("call_{n}"),
                        name: name.to_string(),
                        arguments: arguments.to_string(),
                    });
                } else if let Some(content) = value.get("content").and_then(Value::as_str) {
                    response.content = Some(content.to_string());
                } else {
                    return Err(LlmError::InvalidResponse(format!(
                        "the embedded model's answer has neither `tool` nor `content`: {output}"
                    )));
                }
            }
        }
        Ok((response, stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_is_a_clear_error() {
        let err = LlamaClient::load(LlamaConfig::new("/nonexistent/model.gguf")).unwrap_err();
        assert!(matches!(err, Error::MissingModel(_)));
        assert!(err.to_string().contains("cargo xtask model"), "{err}");
    }

    #[test]
    fn a_non_gguf_file_is_refused_before_llama_cpp_sees_it() {
        let path = std::env::temp_dir().join(format!("not-a-model-{}.gguf", std::process::id()));
        std::fs::write(&path, b"hello world").unwrap();
        let err = LlamaClient::load(LlamaConfig::new(&path)).unwrap_err();
        let _ = std::fs::remove_file(&path);
        assert!(err.to_string().contains("not a GGUF file"), "{err}");
    }

    #[test]
    fn default_path_ends_with_the_model_file() {
        assert!(default_model_path().ends_with(DEFAULT_MODEL_FILE));
        assert_eq!(
            default_model_path().parent(),
            Some(default_model_dir().as_path())
        );
    }

    #[test]
    fn defaults_are_greedy_and_bounded() {
        let c = LlamaConfig::new("m.gguf");
        assert_eq!(c.context_tokens, 8192);
        assert_eq!(c.max_tokens, 1024);
        assert_eq!(c.temperature, 0.0);
        assert!(c.threads.is_none());
    }
}
