//! Approvals (docs/approvals.md): a read-only run refuses calls that act and goes on; in
//! `ask` mode a person decides each call (no, yes, always for the run), nobody to ask means
//! refused; deny rules win; decisions are journaled and served again on resume.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::config::RunConfig;
use crate::engine::journal::Journal;
use crate::model::approval::{ApprovalDecision, ApprovalMode, ApprovalPolicy};
use crate::model::event::EventKind;
use crate::ports::{ApprovalRequest, AskUserError, RunStatus, RunStore, UserChannel};
use crate::testing::replies::{call, create_plan, done, text};
use crate::testing::runs::{request, runtime, RUN_ID};
use crate::testing::{EchoToolbox, MemoryStore, ScriptedLlm};
use crate::tests::support::base_config;

/// Decides approvals from a list, in order; records what it was asked.
#[derive(Default)]
struct Approver {
    decisions: Mutex<VecDeque<ApprovalDecision>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

#[async_trait]
impl UserChannel for Approver {
    async fn notify(&self, _run_id: &str, _text: &str) {}
    async fn ask(&self, _run_id: &str, _question: &str) -> Result<String, AskUserError> {
        Err(AskUserError::Unavailable("no questions here".into()))
    }
    async fn approve(
        &self,
        _run_id: &str,
        request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, AskUserError> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(request.clone());
        }
        self.decisions
            .lock()
            .ok()
            .and_then(|mut d| d.pop_front())
            .ok_or_else(|| AskUserError::Unavailable("out of decisions".into()))
    }
}

struct Finished {
    status: RunStatus,
    store: Arc<MemoryStore>,
    llm: Arc<ScriptedLlm>,
    tool_runs: Arc<Mutex<u32>>,
}

impl Finished {
    fn events(&self) -> Vec<EventKind> {
        self.store
            .events_of(RUN_ID)
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }
    fn count(&self, name: &str) -> usize {
        self.events().iter().filter(|e| e.name() == name).count()
    }
    /// What the model read back for each tool call, in order.
    fn outputs(&self) -> Vec<(bool, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                EventKind::ToolCalled { ok, output, .. } => Some((ok, output)),
                _ => None,
            })
            .collect()
    }
}

async fn run(
    script: Vec<crate::testing::replies::Reply>,
    config: RunConfig,
    user: Arc<dyn UserChannel>,
) -> Finished {
    let tool_runs = Arc::new(Mutex::new(0));
    let counter = tool_runs.clone();
    let toolbox = EchoToolbox::new().on_call(move || {
        if let Ok(mut n) = counter.lock() {
            *n += 1;
        }
    });
    let mut done = run_with(script, config, user, Arc::new(toolbox)).await;
    done.tool_runs = tool_runs;
    done
}

/// As [`run`], with `toolbox`.
async fn run_with(
    script: Vec<crate::testing::replies::Reply>,
    config: RunConfig,
    user: Arc<dyn UserChannel>,
    toolbox: Arc<dyn crate::ports::Toolbox>,
) -> Finished {
    let llm = Arc::new(ScriptedLlm::new(script));
    let store = Arc::new(MemoryStore::new());
    let tool_runs = Arc::new(Mutex::new(0));
    let mut rt = runtime(llm.clone(), toolbox, store.clone(), config);
    rt.user = user;
    let outcome = rt
        .run(request("make a file"), CancellationToken::new())
        .await
        .expect("an outcome");
    Finished {
        status: outcome.status,
        store,
        llm,
        tool_runs,
    }
}

fn with_policy(mode: ApprovalMode, allow: &[&str], deny: &[&str]) -> RunConfig {
    let rules = |list: &[&str]| list.iter().map(|r| r.parse().expect("rule")).collect();
    RunConfig {
        approvals: ApprovalPolicy {
            mode,
            allow: rules(allow),
            deny: rules(deny),
            ..ApprovalPolicy::default()
        },
        ..base_config()
    }
}

fn shell(command: &str) -> crate::testing::replies::Reply {
    call("shell_exec", json!({ "command": command }))
}

#[tokio::test]
async fn a_read_only_run_refuses_calls_that_act_and_goes_on() {
    let h = run(
        vec![
            create_plan(&["Make a file"]),
            shell("touch a.txt"),
            shell("git status"),
            done("could only look"),
            text("Looked around."),
        ],
        with_policy(ApprovalMode::ReadOnly, &["shell_exec(git status*)"], &[]),
        Arc::new(Approver::default()),
    )
    .await;
    assert_eq!(h.status, RunStatus::Completed);
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.contains("read-only"),
        "{outputs:?}"
    );
    assert!(outputs[1].0, "allowed by rule: {outputs:?}");
    assert_eq!(
        *h.tool_runs.lock().expect("count"),
        1,
        "only git status ran"
    );
    assert_eq!(h.count("tool_calling"), 1, "a refused call never starts");
    // The model read the reason.
    let seen = format!("{:?}", h.llm.requests()[2].messages);
    assert!(seen.contains("read-only"), "{seen}");
}

#[tokio::test]
async fn a_person_decides_each_call_and_always_holds_for_the_run() {
    let user = Arc::new(Approver {
        decisions: Mutex::new([ApprovalDecision::Deny, ApprovalDecision::Always].into()),
        ..Approver::default()
    });
    let h = run(
        vec![
            create_plan(&["Make a file"]),
            shell("rm -rf build"),
            shell("touch a.txt"),
            shell("touch b.txt"),
            done("made a.txt and b.txt"),
            text("Made two files."),
        ],
        with_policy(ApprovalMode::Ask, &[], &[]),
        user.clone(),
    )
    .await;
    assert_eq!(h.status, RunStatus::Completed);
    let asked: Vec<String> = user
        .asked
        .lock()
        .expect("asked")
        .iter()
        .map(|r| r.arguments.clone())
        .collect();
    assert_eq!(
        asked.len(),
        2,
        "the third call was covered by always: {asked:?}"
    );
    assert!(asked[0].contains("rm -rf build"));
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.contains("refused"),
        "{outputs:?}"
    );
    assert!(outputs[1].0 && outputs[2].0, "{outputs:?}");
    assert_eq!(*h.tool_runs.lock().expect("count"), 2);
    assert_eq!(h.count("approval_requested"), 2);
    assert_eq!(h.count("approval_decided"), 2);
}

#[tokio::test]
async fn with_nobody_to_ask_a_call_is_refused_with_the_reason_and_deny_rules_win() {
    let h = run(
        vec![
            create_plan(&["Make a file"]),
            shell("touch a.txt"),
            shell("rm -rf /"),
            done("could not"),
            text("Nothing done."),
        ],
        with_policy(
            ApprovalMode::Auto,
            &["shell_exec"],
            &["shell_exec(rm -rf*)"],
        ),
        Arc::new(crate::ports::NoUser),
    )
    .await;
    let outputs = h.outputs();
    assert!(outputs[0].0, "auto mode runs it: {outputs:?}");
    assert!(
        !outputs[1].0 && outputs[1].1.contains("shell_exec(rm -rf*)"),
        "{outputs:?}"
    );

    let h = run(
        vec![
            create_plan(&["Make a file"]),
            shell("touch a.txt"),
            done("could not"),
            text("Nothing done."),
        ],
        with_policy(ApprovalMode::Ask, &[], &[]),
        Arc::new(crate::ports::NoUser),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.contains("needs a person's approval"),
        "{outputs:?}"
    );
    assert_eq!(*h.tool_runs.lock().expect("count"), 0);
}

/// Issue 29, High 4: a script the run wrote with `file_write` is judged by its content when
/// it is run; one it wrote with a shell redirection is asked, each time ("always" for the
/// tool does not answer it), and refused with the reason when nobody says yes.
#[tokio::test]
async fn scripts_the_run_wrote_are_judged_by_their_content_or_asked() {
    let user = Arc::new(Approver {
        decisions: Mutex::new([ApprovalDecision::Always].into()),
        ..Approver::default()
    });
    let h = run(
        vec![
            create_plan(&["Clean up"]),
            call(
                "file_write",
                json!({"path": "./tools/clean.sh", "content": "echo bye\nrm -r -f build\n"}),
            ),
            shell("cd tools && bash clean.sh"),
            shell("echo 'rm -rf x' > s.sh"),
            shell("bash s.sh"),
            shell("sh ./s.sh"),
            done("could not clean"),
            text("Not cleaned."),
        ],
        with_policy(ApprovalMode::Auto, &[], &["shell_exec(rm -rf*)"]),
        user.clone(),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[1].0 && outputs[1].1.contains("shell_exec(rm -rf*)"),
        "the script's content is judged: {outputs:?}"
    );
    assert!(outputs[2].0, "the redirection itself runs: {outputs:?}");
    assert!(outputs[3].0, "a person said always: {outputs:?}");
    assert!(
        !outputs[4].0 && outputs[4].1.contains("s.sh") && outputs[4].1.contains("approval"),
        "asked again, nobody answered: {outputs:?}"
    );
    assert_eq!(user.asked.lock().expect("asked").len(), 2);
}

#[test]
fn decisions_are_journaled_and_always_is_remembered() {
    let events = [
        EventKind::ApprovalDecided {
            step_id: "s1".into(),
            call_id: "c1".into(),
            tool: "shell_exec".into(),
            decision: ApprovalDecision::Always,
            reason: None,
            journal_key: Some("exec:s1:1#1:c1".into()),
        },
        EventKind::ApprovalDecided {
            step_id: "s1".into(),
            call_id: "c2".into(),
            tool: "file_write".into(),
            decision: ApprovalDecision::Deny,
            reason: None,
            journal_key: Some("exec:s1:1#2:c2".into()),
        },
    ]
    .into_iter()
    .enumerate()
    .map(|(i, kind)| crate::model::event::Event {
        run_id: RUN_ID.into(),
        seq: i as u64 + 1,
        at: chrono::Utc::now(),
        kind,
    })
    .collect::<Vec<_>>();
    let journal = Journal::from_events(&events);
    assert_eq!(
        journal.approval("exec:s1:1#1:c1"),
        Some(ApprovalDecision::Always)
    );
    assert_eq!(
        journal.approval("exec:s1:1#2:c2"),
        Some(ApprovalDecision::Deny)
    );
    assert!(journal.always_approved().contains("shell_exec"));
    assert!(!journal.always_approved().contains("file_write"));
}

/// A toolbox offering `mcp__fs__write_file(path, content)` beside the echo tools.
struct FsToolbox(EchoToolbox);

#[async_trait]
impl crate::ports::Toolbox for FsToolbox {
    fn schemas(&self) -> Vec<crate::ports::llm::ToolSchema> {
        let mut schemas = self.0.schemas();
        schemas.push(crate::ports::llm::ToolSchema {
            name: "mcp__fs__write_file".into(),
            description: "write".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}}}),
        });
        schemas
    }
    async fn call(
        &self,
        name: &str,
        args: serde_json::Value,
        ctx: &crate::ports::ToolContext,
    ) -> Result<crate::ports::ToolOutput, crate::ports::ToolError> {
        self.0.call(name, args, ctx).await
    }
}

/// Issue 29, High 4: a rule naming an argument the MCP tool does not take would never
/// match; the run refuses to start with a clear error instead.
#[tokio::test]
async fn a_rule_naming_an_argument_the_tool_lacks_stops_the_run_before_it_starts() {
    let llm = Arc::new(ScriptedLlm::new(vec![create_plan(&["Write"]), text("x")]));
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(
        llm.clone(),
        Arc::new(FsToolbox(EchoToolbox::new())),
        store.clone(),
        with_policy(
            ApprovalMode::Auto,
            &[],
            &["mcp__fs__write_file(file=secret/**)"],
        ),
    );
    let err = rt
        .run(request("write"), CancellationToken::new())
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, crate::Error::Config(m) if m.contains("`file`") && m.contains("content, path")),
        "{err}"
    );
    assert!(llm.requests().is_empty(), "nothing was asked");

    // The argument it takes: the call is judged by it.
    let h = run_with(
        vec![
            create_plan(&["Write"]),
            call(
                "mcp__fs__write_file",
                json!({"path": "secret/key", "content": "x"}),
            ),
            done("could not"),
            text("Not written."),
        ],
        with_policy(
            ApprovalMode::Auto,
            &[],
            &["mcp__fs__write_file(path=secret/**)"],
        ),
        Arc::new(crate::ports::NoUser),
        Arc::new(FsToolbox(EchoToolbox::new())),
    )
    .await;
    let outputs = h.outputs();
    assert!(
        !outputs[0].0 && outputs[0].1.contains("path=secret/**"),
        "{outputs:?}"
    );
}

/// Issue 29: when the rules cannot judge a call (a script whose content they have not
/// seen), the person asked is told why, in the request and in `approval_requested`.
#[tokio::test]
async fn an_unsure_verdict_asks_with_its_reason() {
    let user = Arc::new(Approver {
        decisions: Mutex::new([ApprovalDecision::Deny].into()),
        ..Approver::default()
    });
    let h = run(
        vec![
            create_plan(&["Run it"]),
            shell("bash unseen.sh"),
            shell("touch plain.txt"),
            done("could not run it"),
            text("Not run."),
        ],
        with_policy(
            ApprovalMode::Ask,
            &["shell_exec(touch *)"],
            &["shell_exec(rm -rf*)"],
        ),
        user.clone(),
    )
    .await;
    let asked = user.asked.lock().expect("asked").clone();
    assert_eq!(asked.len(), 1, "touch is allowed: {asked:?}");
    let reason = asked[0].reason.clone().expect("a reason");
    assert!(
        reason.contains("shell_exec(rm -rf*)") && reason.contains("unseen.sh"),
        "{reason}"
    );
    let requested: Vec<Option<String>> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            EventKind::ApprovalRequested { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(requested, vec![Some(reason)]);
    // Plain asking (the mode) carries no reason.
    let user = Arc::new(Approver {
        decisions: Mutex::new([ApprovalDecision::Approve].into()),
        ..Approver::default()
    });
    run(
        vec![
            create_plan(&["Make"]),
            shell("touch a.txt"),
            done("made"),
            text("Made."),
        ],
        with_policy(ApprovalMode::Ask, &[], &[]),
        user.clone(),
    )
    .await;
    assert_eq!(user.asked.lock().expect("asked")[0].reason, None);
}

/// Issue 29: a resumed run forgot which scripts it wrote, so running one was no longer
/// judged by its content. What it wrote is rebuilt from its `tool_calling` events.
#[tokio::test]
async fn a_resumed_run_still_judges_the_scripts_it_wrote_by_their_content() {
    let store = Arc::new(MemoryStore::new());
    let at = chrono::Utc::now();
    let workspace = request("x").workspace;
    let logged = |seq: u64, kind: EventKind| crate::model::event::Event {
        run_id: RUN_ID.into(),
        seq,
        at,
        kind,
    };
    let write = |seq: u64, key: &str, path: String, content: &str| {
        logged(
            seq,
            EventKind::ToolCalling {
                step_id: Some("old".into()),
                call_id: format!("c{seq}"),
                tool: "file_write".into(),
                arguments: json!({"path": path, "content": content}).to_string(),
                journal_key: Some(key.into()),
            },
        )
    };
    // The run wrote two scripts (one by its absolute path), then the process died.
    let events = [
        logged(
            1,
            EventKind::RunStarted {
                task: "make a file".into(),
                mode: "flow".into(),
                workspace: workspace.display().to_string(),
            },
        ),
        write(
            2,
            "exec:old:1#1:c2",
            "clean.sh".into(),
            "echo bye\nrm -r -f build\n",
        ),
        write(
            3,
            "exec:old:1#2:c3",
            workspace.join("hello.sh").display().to_string(),
            "echo hello\n",
        ),
    ];
    let mut record = crate::testing::runs::run_record(RUN_ID);
    record.created_at = at;
    store.create_run(&record).await.expect("create run");
    for event in &events {
        store.append_event(event).await.expect("append event");
    }
    let llm = Arc::new(ScriptedLlm::new(vec![
        create_plan(&["Clean up"]),
        shell("bash clean.sh"),
        shell("bash ./hello.sh"),
        done("said hello, could not clean"),
        text("Half done."),
    ]));
    let mut rt = runtime(
        llm,
        Arc::new(EchoToolbox::new()),
        store.clone(),
        with_policy(ApprovalMode::Auto, &[], &["shell_exec(rm -rf*)"]),
    );
    rt.user = Arc::new(crate::ports::NoUser);
    rt.resume(RUN_ID, CancellationToken::new())
        .await
        .expect("the run resumes");
    let outputs: Vec<(bool, String)> = store
        .events_of(RUN_ID)
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ToolCalled { ok, output, .. } => Some((ok, output)),
            _ => None,
        })
        .collect();
    assert!(
        !outputs[0].0
            && outputs[0]
                .1
                .contains("refused by the rule `shell_exec(rm -rf*)`"),
        "judged by its content, not asked: {outputs:?}"
    );
    assert!(outputs[1].0, "its content is harmless: {outputs:?}");
}

/// A custom tool named like none of the built-ins; `declared` says its family and effect,
/// `None` declares nothing (the trait's defaults).
struct Custom {
    name: &'static str,
    declared: Option<(crate::ports::ToolFamily, crate::ports::ToolEffect)>,
}

#[async_trait]
impl crate::ports::Tool for Custom {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "a custom tool"
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    fn family(&self) -> crate::ports::ToolFamily {
        self.declared
            .map_or(crate::ports::ToolFamily::default(), |d| d.0)
    }
    fn effect(&self) -> crate::ports::ToolEffect {
        self.declared
            .map_or(crate::ports::ToolEffect::default(), |d| d.1)
    }
    async fn execute(
        &self,
        _args: serde_json::Value,
        _ctx: &crate::ports::ToolContext,
    ) -> Result<crate::ports::ToolOutput, crate::ports::ToolError> {
        Ok(crate::ports::ToolOutput::ok(format!("{} ran", self.name)))
    }
}

/// Issue 30: custom tools are offered and approved by what they declare, never by their
/// names: under read-only, `lookup_weather` (web search, network) and `shell_history`
/// (declared a read, for all its name) run; `deploy_site` and `browser_publish`, which
/// declare nothing, are taken to act and refused.
#[tokio::test]
async fn custom_tools_are_routed_and_approved_by_what_they_declare() {
    use crate::ports::{ToolEffect, ToolFamily};
    let custom =
        |name, declared| -> Arc<dyn crate::ports::Tool> { Arc::new(Custom { name, declared }) };
    let toolbox = crate::tools::builtin::ToolSet::new().extend([
        custom(
            "lookup_weather",
            Some((ToolFamily::WebSearch, ToolEffect::Network)),
        ),
        custom("deploy_site", None),
        custom("browser_publish", None),
        custom(
            "shell_history",
            Some((ToolFamily::Other, ToolEffect::Reads)),
        ),
        custom(
            "weather_map",
            Some((ToolFamily::Browser, ToolEffect::Network)),
        ),
    ]);
    let h = run_with(
        vec![
            create_plan(&["Look up the forecast online and deploy it"]),
            call("lookup_weather", json!({})),
            call("deploy_site", json!({})),
            call("browser_publish", json!({})),
            call("shell_history", json!({})),
            done("looked it up; deploying is not allowed"),
            text("Looked up the forecast."),
        ],
        with_policy(ApprovalMode::ReadOnly, &[], &[]),
        Arc::new(Approver::default()),
        Arc::new(toolbox),
    )
    .await;
    let outputs = h.outputs();
    assert_eq!(outputs.len(), 4, "{outputs:?}");
    assert_eq!(outputs[0], (true, "lookup_weather ran".to_string()));
    for refused in [&outputs[1], &outputs[2]] {
        assert!(!refused.0 && refused.1.contains("read-only"), "{outputs:?}");
    }
    assert_eq!(outputs[3], (true, "shell_history ran".to_string()));
    // The search step was offered the web-search tool and the tools of no family, not the
    // browser-family tool (the task names no page).
    let offered: Vec<String> = h.llm.requests()[1]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    for name in [
        "lookup_weather",
        "deploy_site",
        "browser_publish",
        "shell_history",
    ] {
        assert!(offered.iter().any(|n| n == name), "{name}: {offered:?}");
    }
    assert!(!offered.iter().any(|n| n == "weather_map"), "{offered:?}");
}
