//! The inference thread: owns the llama.cpp contexts of one model and serves requests one
//! at a time, reusing the KV cache across calls.
//!
//! llama.cpp contexts are not `Send` and borrow the model, so they live on one dedicated
//! thread for the model's lifetime; requests arrive over a channel. The thread keeps a
//! bounded pool of contexts ([`Settings::slots`]), each with the tokens its KV cache holds.
//! A request is served by the context sharing the longest token prefix with its prompt
//! (system prompt, tool descriptions and the step's history repeat from call to call): the
//! cells after the shared prefix are dropped and only the rest of the prompt is read. With
//! no useful match a free slot gets a new context, else the least recently used one is
//! reused. At least the last prompt token is always read again (its logits start the
//! answer). After generation the context holds prompt and answer, so a next prompt that
//! repeats the answer (the assistant turn) reuses it too.

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

/// Tokens decoded per llama.cpp batch while reading the prompt.
const PROMPT_BATCH: usize = 512;
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
    pub seed: u32,
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
    pub reply: mpsc::SyncSender<Result<Generated, LlmError>>,
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
        let result = run_job(model, settings, &mut slots, clock, &job);
        let _ = job.reply.send(result);
    }
}

/// The length of the common prefix of two token lists.
pub(crate) fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Which slot serves a prompt: `Some(index)` of an existing one, or `None` for a new
/// context. Pure, so the policy is unit-tested without a model.
pub(crate) fn choose_slot(
    held: &[(usize, u64)],
    capacity: usize,
    prompt_len: usize,
) -> Option<usize> {
    // A match is worth keeping when it is long, or when it is (nearly) the whole prompt.
    let useful = USEFUL_PREFIX.min(prompt_len.saturating_sub(1)).max(1);
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
    let backend = crate::backend().map_err(|e| LlmError::Permanent(e.to_string()))?;
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
        .map(|s| (common_prefix(&s.tokens, &tokens), s.last_used))
        .collect();
    let index = match choose_slot(&held, settings.slots.max(1), tokens.len()) {
        Some(i) => i,
        None => {
            let params = LlamaContextParams::default()
                .with_n_ctx(std::num::NonZeroU32::new(limit))
                .with_n_batch(PROMPT_BATCH as u32)
                .with_n_ubatch(PROMPT_BATCH as u32)
                .with_n_threads(settings.threads)
                .with_n_threads_batch(settings.threads);
            let ctx = model.new_context(backend, params).map_err(|e| {
                LlmError::Transient(format!("cannot create a llama.cpp context: {e}"))
            })?;
            slots.push(Slot {
                ctx,
                tokens: Vec::new(),
                last_used: 0,
            });
            slots.len() - 1
        }
    };
    let slot = &mut slots[index];
    slot.last_used = clock;
    let result = generate(model, settings, slot, &tokens, job, max_tokens);
    if result.is_err() {
        // A failed decode leaves the cache in an unknown state: start this slot afresh.
        slot.ctx.clear_kv_cache();
        slot.tokens.clear();
    }
    result
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

fn generate(
    model: &LlamaModel,
    settings: Settings,
    slot: &mut Slot<'_>,
    tokens: &[LlamaToken],
    job: &Job,
    max_tokens: u32,
) -> Result<Generated, LlmError> {
    let vocab = model.vocab();
    // Keep the shared prefix, but read at least the last prompt token again.
    let mut keep = common_prefix(&slot.tokens, tokens).min(tokens.len() - 1);
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
    }

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
            LlamaSampler::dist(settings.seed),
        ])
    } else {
        LlamaSampler::greedy()
    };

    let decode_err =
        |e: llama_cpp_2::DecodeError| LlmError::Transient(format!("llama.cpp decode failed: {e}"));
    let add_err =
        |e: llama_cpp_2::llama_batch::BatchAddError| LlmError::Permanent(format!("batch: {e}"));

    let started = Instant::now();
    let mut batch = LlamaBatch::new(PROMPT_BATCH, 1);
    let position = |i: usize| i32::try_from(i).unwrap_or(i32::MAX);
    let last = tokens.len() - 1;
    for (chunk_index, chunk) in tokens[keep..].chunks(PROMPT_BATCH).enumerate() {
        batch.clear();
        let start = keep + chunk_index * PROMPT_BATCH;
        for (offset, &t) in chunk.iter().enumerate() {
            let i = start + offset;
            batch
                .add(t, position(i), &[0], i == last)
                .map_err(add_err)?;
        }
        slot.ctx.decode(&mut batch).map_err(decode_err)?;
        slot.tokens.extend_from_slice(chunk);
    }
    let prompt_time = started.elapsed();

    let started = Instant::now();
    let mut out: Vec<u8> = Vec::new();
    let mut generated: u32 = 0;
    let mut ending = Ending::Length;
    while generated < max_tokens {
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
mod tests {
    use super::*;

    #[test]
    fn the_longest_useful_prefix_wins_else_a_new_or_the_oldest_slot() {
        // A long match is reused even with room for more.
        assert_eq!(choose_slot(&[(10, 5), (900, 1)], 3, 1000), Some(1));
        // Only short matches and room: a new context.
        assert_eq!(choose_slot(&[(10, 5), (20, 1)], 3, 1000), None);
        assert_eq!(choose_slot(&[], 3, 1000), None);
        // A short prompt found whole is reused.
        assert_eq!(choose_slot(&[(10, 5), (99, 1)], 3, 100), Some(1));
        // Full: the least recently used one.
        assert_eq!(choose_slot(&[(10, 5), (20, 1), (30, 9)], 3, 1000), Some(1));
        // Equal matches: the most recent.
        assert_eq!(choose_slot(&[(300, 2), (300, 7)], 2, 1000), Some(1));
    }

    #[test]
    fn common_prefix_counts_equal_leading_tokens() {
        let t = |v: &[i32]| v.iter().map(|&i| LlamaToken::new(i)).collect::<Vec<_>>();
        assert_eq!(common_prefix(&t(&[1, 2, 3]), &t(&[1, 2, 4])), 2);
        assert_eq!(common_prefix(&t(&[1, 2]), &t(&[1, 2, 3])), 2);
        assert_eq!(common_prefix(&t(&[]), &t(&[1])), 0);
    }
}
