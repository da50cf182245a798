//! The inference thread: owns the llama.cpp contexts of one model and serves requests one
//! at a time, reusing the KV cache across calls.
//!
//! llama.cpp contexts are not `Send` and borrow the model, so they live on one dedicated
//! thread for the model's lifetime; requests arrive over a channel. The thread keeps a
//! bounded pool of contexts ([`Settings::slots`]), each with the tokens its KV cache holds.
//! A request is served by the context sharing the longest reusable token prefix with its
//! prompt (system prompt, tool descriptions and the step's history repeat from call to
//! call): the cells after that prefix are dropped and only the rest of the prompt is read.
//! With no useful match a free slot gets a new context, else the least recently used one
//! is reused.
//!
//! **Reuse never changes an answer.** llama.cpp's numbers for a token depend on the shape
//! of the batch it was computed in (the matrix kernels differ by batch size), so a prompt
//! read as "cached prefix + tail" can give logits a little different from the same prompt
//! read whole, and greedy decoding flips on a near-tie (docs/models.md, "Prefix reuse").
//! So every prompt is read in batches of [`Settings::batch`] tokens that start at
//! multiples of it, and only whole batches read that way are reused: the tail is then read
//! in exactly the batches, at exactly the positions, a cold context would use, and the
//! answer is bit for bit the cold one. The cost is up to one batch read again per call
//! (the last prompt token is always read again: its logits start the answer). Answer
//! tokens (decoded one at a time) are never reused.
//!
//! A request is cancelled by dropping its reply's receiver or setting its `cancel` flag:
//! the thread checks between batches and between generated tokens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use domain::error::LlmError;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use crate::GenerationStats;

/// A shared prefix shorter than this is not worth taking a context over from another
/// conversation when a slot is free (every prompt shares the template's first tokens).
const USEFUL_PREFIX: usize = 256;

/// How the thread runs the model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Context length of every context (prompt plus answer).
    pub context_tokens: u32,
    pub threads: i32,
    pub add_bos: bool,
    /// Contexts kept (KV caches of different conversations).
    pub slots: usize,
    /// Tokens per llama.cpp batch while reading a prompt (`n_batch` = `n_ubatch`); reuse
    /// is aligned to it.
    pub batch: usize,
}

/// How decoding ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Stop,
    Length,
}

/// One request to the thread.
pub(crate) struct Job {
    pub prompt: String,
    pub grammar: Option<String>,
    pub max_tokens: u32,
    pub temperature: f32,
    /// The sampler's seed when `temperature` > 0.
    pub seed: u32,
    pub reply: mpsc::SyncSender<Result<Generated, LlmError>>,
    /// Set when the caller no longer wants the answer: the thread stops at the next batch
    /// or token.
    pub cancel: Arc<AtomicBool>,
}

impl Job {
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// The thread's answer.
#[derive(Debug)]
pub(crate) struct Generated {
    pub text: String,
    pub ending: Ending,
    pub stats: GenerationStats,
}

/// A context and the tokens its KV cache holds, in positions 0...
struct Slot<'m> {
    ctx: LlamaContext<'m>,
    tokens: Vec<LlamaToken>,
    /// `tokens[..batched]` were read in whole batches starting at multiples of the batch
    /// size: the part a later prompt may reuse without changing its answer.
    batched: usize,
    last_used: u64,
}

/// Starts the inference thread for `model`; it ends when every sender is dropped.
pub(crate) fn start(
    model: Arc<LlamaModel>,
    settings: Settings,
) -> std::io::Result<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("planwright-llama".to_string())
        .spawn(move || serve(&model, settings, &rx))?;
    Ok(tx)
}

fn serve(model: &LlamaModel, settings: Settings, rx: &mpsc::Receiver<Job>) {
    let mut slots: Vec<Slot<'_>> = Vec::new();
    let mut clock = 0u64;
    while let Ok(job) = rx.recv() {
        clock += 1;
        if job.cancelled() {
            let _ = job.reply.send(Err(cancelled()));
            continue;
        }
        let result = run_job(model, settings, &mut slots, clock, &job);
        let _ = job.reply.send(result);
    }
}

fn cancelled() -> LlmError {
    LlmError::Permanent("the request was cancelled".to_string())
}

/// The length of the common prefix of two token lists.
pub(crate) fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// How many leading tokens of a `prompt_len`-token prompt a context may keep when it
/// shares `shared` tokens with it, of which its first `batched` were read in aligned whole
/// batches of `batch`: whole batches only, and never the last prompt token. Pure, so the
/// rule is unit-tested without a model.
pub(crate) fn reusable_prefix(
    shared: usize,
    batched: usize,
    prompt_len: usize,
    batch: usize,
) -> usize {
    let batch = batch.max(1);
    let usable = shared.min(batched).min(prompt_len.saturating_sub(1));
    usable / batch * batch
}

/// Which slot serves a prompt: `Some(index)` of an existing one, or `None` for a new
/// context. Pure, so the policy is unit-tested without a model.
pub(crate) fn choose_slot(
    held: &[(usize, u64)],
    capacity: usize,
    most_reusable: usize,
) -> Option<usize> {
    // A match is worth keeping when it is long, or when it is all of the prompt that any
    // context could keep (`most_reusable`: whole batches before the last token).
    let useful = USEFUL_PREFIX.min(most_reusable).max(1);
    // (shared prefix, last use) per slot.
    let best = held
        .iter()
        .enumerate()
        .max_by_key(|(_, (shared, used))| (*shared, *used))
        .map(|(i, (shared, _))| (i, *shared));
    match best {
        Some((i, shared)) if shared >= useful => Some(i),
        _ if held.len() < capacity => None,
        _ => held
            .iter()
            .enumerate()
            .min_by_key(|(_, (_, used))| *used)
            .map(|(i, _)| i),
    }
}

fn run_job<'m>(
    model: &'m LlamaModel,
    settings: Settings,
    slots: &mut Vec<Slot<'m>>,
    clock: u64,
    job: &Job,
) -> Result<Generated, LlmError> {
    let vocab = model.vocab();
    // Special-token parsing on, or `<|im_start|>` becomes plain text.
    let tokens = vocab.tokenize(job.prompt.as_bytes(), settings.add_bos, true);
    if tokens.is_empty() {
        return Err(LlmError::Permanent(
            "the prompt rendered to no tokens".to_string(),
        ));
    }
    let n_prompt = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
    let limit = settings.context_tokens;
    // Room for at least a short answer (or the whole answer when it is short).
    let needed_room = job.max_tokens.min(256);
    if n_prompt.saturating_add(needed_room) > limit {
        return Err(LlmError::ContextTooLong(format!(
            "the prompt has {n_prompt} tokens and the answer needs {needed_room} more; the embedded model's context holds {limit}"
        )));
    }
    let max_tokens = job.max_tokens.min(limit - n_prompt);

    let held: Vec<(usize, u64)> = slots
        .iter()
        .map(|s| {
            let shared = common_prefix(&s.tokens, &tokens);
            let keep = reusable_prefix(shared, s.batched, tokens.len(), settings.batch);
            (keep, s.last_used)
        })
        .collect();
    let n = tokens.len();
    let most_reusable = reusable_prefix(n, n, n, settings.batch);
    let index = match choose_slot(&held, settings.slots.max(1), most_reusable) {
        Some(i) => i,
        None => {
            slots.push(new_slot(model, settings)?);
            slots.len() - 1
        }
    };
    let slot = &mut slots[index];
    slot.last_used = clock;
    let result = generate(model, settings, slot, &tokens, job, max_tokens);
    if result.is_err() && !job.cancelled() {
        // A failed decode leaves the cache in an unknown state: start this slot afresh.
        // (A cancelled one stopped between batches: what it holds is sound.)
        slot.ctx.clear_kv_cache();
        slot.tokens.clear();
        slot.batched = 0;
    }
    result
}

/// A new context with an empty KV cache.
fn new_slot(model: &LlamaModel, settings: Settings) -> Result<Slot<'_>, LlmError> {
    let backend = crate::backend().map_err(|e| LlmError::Permanent(e.to_string()))?;
    let batch = u32::try_from(settings.batch).unwrap_or(u32::MAX);
    let params = LlamaContextParams::default()
        .with_n_ctx(std::num::NonZeroU32::new(settings.context_tokens))
        .with_n_batch(batch)
        .with_n_ubatch(batch)
        .with_n_threads(settings.threads)
        .with_n_threads_batch(settings.threads);
    let ctx = model
        .new_context(backend, params)
        .map_err(|e| LlmError::Transient(format!("cannot create a llama.cpp context: {e}")))?;
    Ok(Slot {
        ctx,
        tokens: Vec::new(),
        batched: 0,
        last_used: 0,
    })
}

/// Picks the next token. With a grammar, the unconstrained choice is tried first and
/// checked against the grammar; only when it does not fit is the grammar applied to the
/// whole vocabulary (tens of thousands of tokens) and the choice made again. Same result
/// as always applying it first, at a fraction of the cost (llama.cpp's `common_sampler`
/// does the same).
fn next_token(
    ctx: &LlamaContext<'_>,
    index: i32,
    chooser: &mut LlamaSampler,
    grammar: Option<&mut LlamaSampler>,
) -> Result<LlamaToken, LlmError> {
    let mut candidates = ctx.token_data_array_ith(index);
    candidates.apply_sampler(chooser);
    let first = candidates
        .selected_token()
        .ok_or_else(|| LlmError::Permanent("the sampler selected no token".to_string()))?;
    let Some(grammar) = grammar else {
        chooser.accept(first);
        return Ok(first);
    };
    let mut single = LlamaTokenDataArray::new(vec![LlamaTokenData::new(first, 1.0, 0.0)], false);
    single.apply_sampler(grammar);
    let token = if single.data.first().is_some_and(|d| d.logit().is_finite()) {
        first
    } else {
        let mut candidates = ctx.token_data_array_ith(index);
        candidates.apply_sampler(grammar);
        candidates.apply_sampler(chooser);
        candidates
            .selected_token()
            .ok_or_else(|| LlmError::Permanent("the grammar allows no token".to_string()))?
    };
    grammar.accept(token);
    chooser.accept(token);
    Ok(token)
}

/// What [`read_prompt`] leaves for generation.
struct Prompt {
    /// Prompt tokens found in the KV cache (not read again).
    keep: usize,
    /// The last batch read: its last token holds the logits that start the answer.
    batch: LlamaBatch<'static>,
}

/// Brings `slot`'s KV cache to exactly `tokens`: keeps the reusable part of what it holds
/// ([`reusable_prefix`]) and reads the rest in aligned batches, the last token with logits.
fn read_prompt(
    settings: Settings,
    slot: &mut Slot<'_>,
    tokens: &[LlamaToken],
    cancel: &AtomicBool,
) -> Result<Prompt, LlmError> {
    let shared = common_prefix(&slot.tokens, tokens);
    let mut keep = reusable_prefix(shared, slot.batched, tokens.len(), settings.batch);
    if keep < slot.tokens.len() {
        let p0 = u32::try_from(keep).unwrap_or(u32::MAX);
        if !matches!(
            slot.ctx.clear_kv_cache_seq(Some(0), Some(p0), None),
            Ok(true)
        ) {
            // Some architectures cannot drop part of a sequence: read it all again.
            slot.ctx.clear_kv_cache();
            keep = 0;
        }
        slot.tokens.truncate(keep);
        slot.batched = slot.batched.min(keep);
    }
    let size = settings.batch.max(1);
    let mut batch = LlamaBatch::new(size, 1);
    let last = tokens.len() - 1;
    // `keep` is a multiple of the batch size, so these are the cold reading's batches.
    for chunk in tokens[keep..].chunks(size) {
        if cancel.load(Ordering::Relaxed) {
            return Err(cancelled());
        }
        batch.clear();
        let start = slot.tokens.len();
        for (offset, &t) in chunk.iter().enumerate() {
            let i = start + offset;
            batch
                .add(t, position(i), &[0], i == last)
                .map_err(add_err)?;
        }
        slot.ctx.decode(&mut batch).map_err(decode_err)?;
        slot.tokens.extend_from_slice(chunk);
        if chunk.len() == size {
            slot.batched = slot.tokens.len();
        }
    }
    Ok(Prompt { keep, batch })
}

fn position(i: usize) -> i32 {
    i32::try_from(i).unwrap_or(i32::MAX)
}

fn decode_err(e: llama_cpp_2::DecodeError) -> LlmError {
    LlmError::Transient(format!("llama.cpp decode failed: {e}"))
}

fn add_err(e: llama_cpp_2::llama_batch::BatchAddError) -> LlmError {
    LlmError::Permanent(format!("batch: {e}"))
}

fn generate(
    model: &LlamaModel,
    settings: Settings,
    slot: &mut Slot<'_>,
    tokens: &[LlamaToken],
    job: &Job,
    max_tokens: u32,
) -> Result<Generated, LlmError> {
    let vocab = model.vocab();
    let mut grammar = match &job.grammar {
        Some(g) => Some(LlamaSampler::grammar(model, g, "root").map_err(|e| {
            LlmError::Permanent(format!("the output grammar was refused by llama.cpp: {e}"))
        })?),
        None => None,
    };
    let mut chooser = if job.temperature > 0.0 {
        LlamaSampler::chain_simple([
            LlamaSampler::top_k(40),
            LlamaSampler::temp(job.temperature),
            LlamaSampler::dist(job.seed),
        ])
    } else {
        LlamaSampler::greedy()
    };

    let started = Instant::now();
    let Prompt { keep, mut batch } = read_prompt(settings, slot, tokens, &job.cancel)?;
    let prompt_time = started.elapsed();

    let started = Instant::now();
    let mut out: Vec<u8> = Vec::new();
    let mut generated: u32 = 0;
    let mut ending = Ending::Length;
    while generated < max_tokens {
        if job.cancelled() {
            return Err(cancelled());
        }
        let token = next_token(
            &slot.ctx,
            batch.n_tokens() - 1,
            &mut chooser,
            grammar.as_mut(),
        )?;
        if vocab.is_eog(token) {
            ending = Ending::Stop;
            break;
        }
        generated += 1;
        out.extend_from_slice(&vocab.token_to_piece(token, false, None));
        if generated >= max_tokens {
            break;
        }
        batch.clear();
        batch
            .add(token, position(slot.tokens.len()), &[0], true)
            .map_err(add_err)?;
        slot.ctx.decode(&mut batch).map_err(decode_err)?;
        slot.tokens.push(token);
    }
    let generation_time = started.elapsed();
    let n_prompt = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
    let cached = u32::try_from(keep).unwrap_or(u32::MAX);
    tracing::debug!(
        prompt_tokens = n_prompt,
        cached_prompt_tokens = cached,
        completion_tokens = generated,
        prompt_ms = prompt_time.as_millis() as u64,
        generation_ms = generation_time.as_millis() as u64,
        constrained = job.grammar.is_some(),
        "embedded model call"
    );
    Ok(Generated {
        text: String::from_utf8_lossy(&out).into_owned(),
        ending,
        stats: GenerationStats {
            prompt_tokens: n_prompt,
            cached_prompt_tokens: cached,
            completion_tokens: generated,
            prompt_time,
            generation_time,
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::print_stderr)]
mod tests {
    use super::*;

    /// The default model, loaded once for this test binary, or None when it is missing
    /// (a failure under `CI=true`, which fetches it first).
    fn model() -> Option<&'static LlamaModel> {
        use llama_cpp_2::model::params::LlamaModelParams;
        static MODEL: std::sync::OnceLock<Option<LlamaModel>> = std::sync::OnceLock::new();
        MODEL
            .get_or_init(|| {
                let path = crate::default_model_path();
                let missing = format!(
                    "the model file {} is missing: run `cargo xtask model`",
                    path.display()
                );
                if !test_support::skip_unless(path.is_file(), missing) {
                    return None;
                }
                let backend = crate::backend().ok()?;
                LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default()).ok()
            })
            .as_ref()
    }

    /// The settings a real client uses on this machine: every core, the default batch.
    fn settings() -> Settings {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Settings {
            context_tokens: 2048,
            threads: i32::try_from(threads).unwrap_or(1),
            add_bos: false,
            slots: 1,
            batch: usize::try_from(crate::DEFAULT_BATCH_TOKENS).unwrap_or(64),
        }
    }

    fn tokens(model: &LlamaModel, text: &str) -> Vec<LlamaToken> {
        model.vocab().tokenize(text.as_bytes(), false, true)
    }

    fn logits(slot: &Slot<'_>, prompt: &Prompt) -> Vec<f32> {
        slot.ctx
            .get_logits_ith(prompt.batch.n_tokens() - 1)
            .to_vec()
    }

    fn job(max_tokens: u32) -> Job {
        let (reply, _) = mpsc::sync_channel(1);
        Job {
            prompt: String::new(),
            grammar: None,
            max_tokens,
            temperature: 0.0,
            seed: 42,
            reply,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The guarantee behind "same request, same answer": a prompt read after another
    /// conversation left part of it in the KV cache gives the next-token logits of a cold
    /// context bit for bit, wherever the shared prefix ends (inside a batch, on a
    /// boundary, across several), and whether the other conversation generated an answer.
    #[test]
    fn a_warm_cache_gives_the_cold_logits_bit_for_bit() {
        let Some(model) = model() else { return };
        let settings = settings();
        let b = settings.batch;
        let text =
            "You are an agent. Tools: shell_exec runs a bash command; file_write writes a file. \
            Task: count the lines of data.csv, which has a header and six rows of names and \
            ages, then write the count into count.txt and report it. Previous steps: the user \
            said the file is in the workspace; step 1 listed the folder and found data.csv, \
            notes.md and a folder named archive holding three older copies of the data. \
            Now run the command that counts the lines and write only the number.";
        let target = tokens(model, &text.repeat(3));
        assert!(target.len() > 4 * b, "{} tokens", target.len());
        let filler = tokens(
            model,
            " Something else entirely: list the prime numbers below fifty, one per line.",
        );
        let never = AtomicBool::new(false);

        let mut cold = new_slot(model, settings).unwrap();
        let read = read_prompt(settings, &mut cold, &target, &never).unwrap();
        assert_eq!(read.keep, 0);
        let cold_logits = logits(&cold, &read);

        // (shared prefix, whether the other conversation generated an answer)
        let cases = [
            (b / 2, false),
            (b, false),
            (b + 5, false),
            (2 * b + b / 2, true),
            (3 * b - 1, false),
            (target.len() - 7, true),
            (target.len(), false),
        ];
        for (shared, answered) in cases {
            let mut warm = new_slot(model, settings).unwrap();
            let mut other = target[..shared].to_vec();
            other.extend_from_slice(&filler);
            if answered {
                generate(model, settings, &mut warm, &other, &job(6), 6).unwrap();
            } else {
                read_prompt(settings, &mut warm, &other, &never).unwrap();
            }
            let read = read_prompt(settings, &mut warm, &target, &never).unwrap();
            let batched = other.len() / b * b;
            assert_eq!(
                read.keep,
                reusable_prefix(shared, batched, target.len(), b),
                "shared {shared}"
            );
            assert!(
                shared < b || read.keep > 0,
                "shared {shared}: nothing reused"
            );
            assert!(
                logits(&warm, &read) == cold_logits,
                "shared prefix {shared} (answered: {answered}): warm logits differ from cold"
            );
        }
    }

    #[test]
    fn a_cancelled_request_stops_before_reading_the_prompt() {
        let Some(model) = model() else { return };
        let settings = settings();
        let mut slot = new_slot(model, settings).unwrap();
        let tokens = tokens(model, &"word ".repeat(300));
        let job = job(8);
        job.cancel.store(true, Ordering::Relaxed);
        let err = generate(model, settings, &mut slot, &tokens, &job, 8).unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        assert!(slot.tokens.is_empty());
    }

    #[test]
    fn the_longest_useful_prefix_wins_else_a_new_or_the_oldest_slot() {
        // A long match is reused even with room for more.
        assert_eq!(choose_slot(&[(10, 5), (900, 1)], 3, 999), Some(1));
        // Only short matches and room: a new context.
        assert_eq!(choose_slot(&[(10, 5), (20, 1)], 3, 999), None);
        assert_eq!(choose_slot(&[], 3, 999), None);
        // A short prompt found whole is reused.
        assert_eq!(choose_slot(&[(10, 5), (99, 1)], 3, 99), Some(1));
        // Full: the least recently used one.
        assert_eq!(choose_slot(&[(10, 5), (20, 1), (30, 9)], 3, 999), Some(1));
        // A short prompt: all it can keep (one whole batch) is enough.
        assert_eq!(choose_slot(&[(0, 5), (64, 1)], 3, 64), Some(1));
        assert_eq!(choose_slot(&[(0, 5)], 3, 0), None);
        // Equal matches: the most recent.
        assert_eq!(choose_slot(&[(300, 2), (300, 7)], 2, 999), Some(1));
    }

    #[test]
    fn only_whole_aligned_batches_are_reused_and_never_the_last_token() {
        // Shared prefix cut inside the third batch of 64: two whole batches.
        assert_eq!(reusable_prefix(150, 1000, 1000, 64), 128);
        // Cut on a boundary: kept whole.
        assert_eq!(reusable_prefix(128, 1000, 1000, 64), 128);
        // The same prompt again: everything but the batch holding the last token.
        assert_eq!(reusable_prefix(1000, 1000, 1000, 64), 960);
        assert_eq!(reusable_prefix(1024, 1024, 1024, 64), 960);
        // Only what was read in whole batches (not the last partial one, not the answer).
        assert_eq!(reusable_prefix(900, 320, 1000, 64), 320);
        // Shorter than a batch: nothing.
        assert_eq!(reusable_prefix(63, 1000, 1000, 64), 0);
        assert_eq!(reusable_prefix(10, 0, 11, 1), 0);
        assert_eq!(reusable_prefix(10, 10, 11, 1), 10);
    }

    #[test]
    fn common_prefix_counts_equal_leading_tokens() {
        let t = |v: &[i32]| v.iter().map(|&i| LlamaToken::new(i)).collect::<Vec<_>>();
        assert_eq!(common_prefix(&t(&[1, 2, 3]), &t(&[1, 2, 4])), 2);
        assert_eq!(common_prefix(&t(&[1, 2]), &t(&[1, 2, 3])), 2);
        assert_eq!(common_prefix(&t(&[]), &t(&[1])), 0);
    }
}
