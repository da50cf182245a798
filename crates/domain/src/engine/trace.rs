//! The run's `tracing` spans, named and filled after the OpenTelemetry GenAI semantic
//! conventions (docs/observability.md), so an exporter the binary installs sends them as
//! they are: the run is `invoke_workflow`, a step attempt `invoke_agent`, an LLM call `chat`,
//! a tool call `execute_tool`. `otel.name`, `otel.kind` and `otel.status_code` are the
//! names an OpenTelemetry bridge reads for the span's name, kind and status. No exporter
//! here: spans are only `tracing` spans.
//!
//! A run that went through the work queue keeps its run span's context in its queue request
//! ([`RUN_SPAN_KEY`]), so the span of its next life (a resume after a crash, a takeover
//! after a lease expiry) links to it (`continue_run_trace`); reading and linking exported
//! contexts is given by whoever exports ([`SpanContexts`], set on the runtime with
//! `RuntimeBuilder::span_contexts`).
//!
//! Never recorded: content (the task, prompts, replies, tool arguments and outputs, and the
//! text of errors, which may quote any of them) unless
//! [`TraceLabels::capture_message_content`] is on. Without it a failure is a kind
//! (`error.type`) and a short fixed text (`RunFailure`, [`LlmError::kind`]).

use serde_json::Value;
use tracing::field::Empty;
use tracing::Span;

use crate::ports::llm::{CallPurpose, ChatRequest, ChatResponse, LlmError};
use crate::ports::RunRecord;

/// What a run's spans say about its model, set by whoever wires the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLabels {
    /// `gen_ai.provider.name` (`openai`, `ollama`, `local`...).
    pub provider: String,
    /// `gen_ai.request.model`.
    pub model: String,
    /// Record prompts, replies, tool arguments and outputs on spans (the convention's
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` switch); off by default.
    pub capture_message_content: bool,
}

impl Default for TraceLabels {
    fn default() -> Self {
        TraceLabels {
            provider: "unknown".into(),
            model: String::new(),
            capture_message_content: false,
        }
    }
}

/// What the exporter knows of spans, given to the runtime by whoever exports traces (the
/// runner's telemetry): without it, a run's spans carry no link and nothing is kept.
#[derive(Debug, Clone, Copy)]
pub struct SpanContexts {
    /// The W3C `traceparent` of a span; `None` when it is not exported.
    pub traceparent: fn(&Span) -> Option<String>,
    /// Links a span to the span of a W3C `traceparent` (a malformed one is ignored).
    pub link: fn(&Span, &str),
}

/// The key of a queued run's request (`RunRecord::queue_request`) that keeps the
/// `traceparent` of its latest run span.
pub const RUN_SPAN_KEY: &str = "run_traceparent";

/// For a run that went through the queue, in its run span: links the current span to the
/// run span of its previous life (kept in its queue request), and keeps the current one
/// there instead (the caller stores the record). Nothing for a run started directly, or
/// without export (`contexts`: the runtime's).
pub(crate) fn continue_run_trace(contexts: Option<&SpanContexts>, record: &mut RunRecord) {
    let Some(contexts) = contexts else {
        return;
    };
    let Some(request) = record.queue_request.as_mut().and_then(Value::as_object_mut) else {
        return;
    };
    let span = Span::current();
    if let Some(previous) = request.get(RUN_SPAN_KEY).and_then(Value::as_str) {
        (contexts.link)(&span, previous);
    }
    if let Some(current) = (contexts.traceparent)(&span) {
        request.insert(RUN_SPAN_KEY.into(), Value::from(current));
    }
}

/// How many characters of the task's first line the run span keeps.
const TASK_LINE_CHARS: usize = 120;

/// The span of a run (`invoke_workflow`); its mode and task are recorded by [`run_started`]
/// once known, its outcome by [`run_ended`].
pub(crate) fn run_span(run_id: &str, how: &'static str) -> Span {
    tracing::info_span!(
        "run",
        otel.name = "invoke_workflow planwright",
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "invoke_workflow",
        gen_ai.conversation.id = %run_id,
        run_id = %run_id,
        planwright.run.start = how,
        planwright.mode = Empty,
        planwright.task = Empty,
        error.type = Empty,
    )
}

/// Records the mode the run goes in on the current run span, and with content capture the
/// first line of its task.
pub(crate) fn run_started(labels: &TraceLabels, mode: &str, task: &str) {
    let span = Span::current();
    span.record("planwright.mode", mode);
    if labels.capture_message_content {
        let line = task.lines().next().unwrap_or_default();
        let line: String = line.chars().take(TASK_LINE_CHARS).collect();
        span.record("planwright.task", line.as_str());
    }
}

/// Why a run did not complete, as its span says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunFailure {
    /// `error.type`: `failed` (the run ended failed or cancelled), or the kind of error that
    /// stopped it ([`crate::Error::kind`]).
    pub(crate) kind: &'static str,
    /// The reason in full (it may quote the task, a file or a prompt): on the span only
    /// with content capture.
    pub(crate) reason: String,
}

impl RunFailure {
    /// The status text without content capture: fixed per kind.
    fn fixed_text(&self) -> &'static str {
        match self.kind {
            "failed" => "the run failed",
            "suspended" => "the run was suspended",
            "lease_lost" => "the run's lease was taken over",
            "leased" => "another process holds the run",
            _ => "the run stopped on an error",
        }
    }
}

/// Records how the run ended on its span: `OK`, or `ERROR` with the failure's kind and a
/// fixed text (its reason only with content capture).
pub(crate) fn run_ended(span: &Span, labels: &TraceLabels, failure: Option<&RunFailure>) {
    match failure {
        None => {
            span.record("otel.status_code", "OK");
        }
        Some(failure) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", failure.kind);
            let text = if labels.capture_message_content {
                failure.reason.as_str()
            } else {
                failure.fixed_text()
            };
            span.record("otel.status_description", text);
        }
    }
}

/// The span of one attempt of a step by `agent` (`invoke_agent`).
pub(crate) fn step_span(step_id: &str, index: usize, agent: &str) -> Span {
    tracing::info_span!(
        "step",
        otel.name = format!("invoke_agent {agent}"),
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = %agent,
        step_id = %step_id,
        index = index,
        agent = %agent,
    )
}

/// The span of one LLM call (`chat`); [`chat_ended`] fills in its outcome.
pub(crate) fn chat_span(labels: &TraceLabels, purpose: CallPurpose, request: &ChatRequest) -> Span {
    let span = tracing::info_span!(
        "chat",
        otel.name = format!("chat {}", labels.model),
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = %labels.provider,
        gen_ai.system = %labels.provider,
        gen_ai.request.model = %labels.model,
        planwright.call.purpose = purpose_name(purpose),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        error.type = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
    );
    if labels.capture_message_content {
        if let Ok(json) = serde_json::to_string(&request.messages) {
            span.record("gen_ai.input.messages", json.as_str());
        }
    }
    span
}

/// Records a call's usage and finish reason, or its failure, on its span.
pub(crate) fn chat_ended(
    span: &Span,
    labels: &TraceLabels,
    result: &Result<ChatResponse, LlmError>,
) {
    match result {
        Ok(reply) => {
            span.record("gen_ai.usage.input_tokens", reply.usage.prompt_tokens);
            span.record("gen_ai.usage.output_tokens", reply.usage.completion_tokens);
            span.record(
                "gen_ai.usage.cache_read.input_tokens",
                reply.usage.cached_prompt_tokens,
            );
            if let Some(reason) = &reply.finish_reason {
                span.record("gen_ai.response.finish_reasons", reason.as_str());
            }
            if labels.capture_message_content {
                let message = crate::ports::llm::ChatMessage::from_reply(reply);
                if let Ok(json) = serde_json::to_string(&[message]) {
                    span.record("gen_ai.output.messages", json.as_str());
                }
            }
        }
        Err(e) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", e.kind());
            // An upstream error may quote the prompt: its text only with content capture.
            if labels.capture_message_content {
                span.record("otel.status_description", e.to_string().as_str());
            } else {
                span.record("otel.status_description", "the LLM call failed");
            }
        }
    }
}

/// The span of one tool call (`execute_tool`); [`tool_ended`] fills in its outcome.
pub(crate) fn tool_span(name: &str, call_id: &str, labels: &TraceLabels, args: &str) -> Span {
    let span = tracing::info_span!(
        "tool",
        otel.name = format!("execute_tool {name}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %name,
        gen_ai.tool.call.id = %call_id,
        gen_ai.tool.type = "function",
        planwright.tool.outcome = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        tool = %name,
    );
    if labels.capture_message_content {
        span.record("gen_ai.tool.call.arguments", args);
    }
    span
}

/// Records a tool call's outcome (`ok`, `failed`, `refused`...) and, with content capture,
/// its output.
pub(crate) fn tool_ended(span: &Span, labels: &TraceLabels, outcome: &str, output: &str) {
    span.record("planwright.tool.outcome", outcome);
    if outcome != "ok" {
        span.record("otel.status_code", "ERROR");
    }
    if labels.capture_message_content {
        span.record("gen_ai.tool.call.result", output);
    }
}

/// What a run waits for from a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A tool call's approval.
    Approval,
    /// The answer to a `message_ask_user` question.
    Answer,
}

/// The span of a wait for a person (`await approval`, `await answer`): its duration is the
/// time the run stood `waiting`.
pub(crate) fn wait_span(what: Wait) -> Span {
    let name = match what {
        Wait::Approval => "await approval",
        Wait::Answer => "await answer",
    };
    tracing::info_span!("wait", otel.name = name, otel.kind = "internal")
}

fn purpose_name(purpose: CallPurpose) -> &'static str {
    match purpose {
        CallPurpose::Plan => "plan",
        CallPurpose::Execute => "execute",
        CallPurpose::Summarize => "summarize",
        CallPurpose::Other => "other",
    }
}
