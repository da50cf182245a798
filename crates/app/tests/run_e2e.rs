//! The real `planwright` binary against a scripted OpenAI-compatible server on 127.0.0.1:
//! plan through the `planning` tool, real shell and file tools in the workspace, every event
//! in the SQLite file.

mod common;

use common::*;
use serde_json::{json, Value};

const TASK: &str =
    "Write greeting.txt containing 'hello planwright', count its words, report the count";

#[tokio::test]
async fn a_three_step_task_runs_end_to_end() {
    let server = ScriptedOpenAi::start(greeting_script(true)).await;
    let pw = Planwright::new();
    let res = pw.run(&server, TASK, &[]).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());

    // The JSON outcome.
    let j = &res.json;
    assert_eq!(j["status"], "completed");
    assert_eq!(
        j["summary"],
        "Completed: 3 of 3 steps done.\n\ngreeting.txt was written; it has 2 words.\n\nFiles:\n- created: greeting.txt"
    );
    let run_id = j["run_id"].as_str().expect("run_id").to_string();
    assert!(run_id.starts_with("run_"));
    assert_eq!(j["plan"]["title"], "Test plan");
    let steps = j["plan"]["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 3);
    for s in steps {
        assert_eq!(s["status"], "completed", "{s}");
        assert!(s["id"].is_string() && s["description"].is_string());
        assert!(s["error"].is_null());
    }
    assert_eq!(steps[1]["result"], "greeting.txt has 2 words");
    assert_eq!(j["usage"]["llm_calls"], 8);
    assert_eq!(j["usage"]["prompt_tokens"], 800);
    assert_eq!(j["usage"]["completion_tokens"], 160);
    assert_eq!(j["usage"]["cached_prompt_tokens"], 8 * 64);

    // The shell step really ran in the default workspace.
    let ws = pw.workspace(&run_id);
    let content = std::fs::read_to_string(ws.join("greeting.txt")).expect("greeting.txt exists");
    assert_eq!(content, "hello planwright\n");

    // The model saw the real tool output.
    let reqs = server.requests().await;
    assert_eq!(reqs.len(), 8);
    let seen = tool_messages(&reqs[5]);
    assert!(
        seen.iter().any(|m| m.contains("hello planwright")),
        "{seen:?}"
    );
    assert!(seen.iter().any(|m| m.contains('2')), "{seen:?}");
    // Requests are valid OpenAI bodies: the planner is offered `planning`, executors get tools.
    assert_eq!(reqs[0]["tools"][0]["function"]["name"], "planning");
    let exec_tools: Vec<&str> = reqs[1]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for t in [
        "shell_exec",
        "file_read",
        "file_write",
        "file_str_replace",
        "file_list",
        "complete_step",
    ] {
        assert!(exec_tools.contains(&t), "{t} missing from {exec_tools:?}");
    }

    // Every event is in the SQLite file, gap-free, in order.
    let events = pw.events(&run_id);
    let types: Vec<&str> = events.iter().map(|(_, t, _)| t.as_str()).collect();
    for (i, (seq, _, _)) in events.iter().enumerate() {
        assert_eq!(*seq, i as i64 + 1);
    }
    assert_eq!(types.first(), Some(&"run_started"));
    assert_eq!(types.last(), Some(&"run_completed"));
    assert_eq!(types.iter().filter(|t| **t == "step_completed").count(), 3);
    assert_eq!(types.iter().filter(|t| **t == "tool_called").count(), 3);
    assert_eq!(types.iter().filter(|t| **t == "llm_called").count(), 8);
    let shell: Vec<&Value> = events
        .iter()
        .filter(|(_, t, j)| t == "tool_called" && j["tool"] == "shell_exec")
        .map(|(_, _, j)| j)
        .collect();
    assert_eq!(shell.len(), 2);
    assert!(shell.iter().all(|j| j["ok"] == true));

    // The live view went to stderr, with markers.
    let err = res.stderr();
    assert!(err.contains("[✓] 2. Report the word count"), "{err}");

    // `runs list` and `runs show` read the same file.
    let db = pw.db().display().to_string();
    let out = pw.exec(&["runs", "list", "--json", "--db", &db], &[]).await;
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).expect("json array");
    assert_eq!(list[0]["run_id"], run_id.as_str());
    assert_eq!(list[0]["status"], "completed");
    assert_eq!(list[0]["task"], TASK);
    assert!(list[0]["created_at"].is_string());
    let out = pw
        .exec(
            &["runs", "show", &run_id, "--json"],
            &[("PLANWRIGHT_DB", &db)],
        )
        .await;
    assert!(out.status.success());
    let show: Value = serde_json::from_slice(&out.stdout).expect("json object");
    assert_eq!(show["plan"]["steps"][0]["status"], "completed");
    assert_eq!(show["tool_calls"].as_array().map(Vec::len), Some(3));
    assert_eq!(show["usage"], j["usage"], "the stored usage is the run's");
    let out = pw.exec(&["runs", "show", &run_id, "--db", &db], &[]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Usage:     8 LLM calls, 800 prompt (512 cached) + 160 completion tokens"),
        "{text}"
    );
    assert!(
        text.contains("Progress: 3/3 steps completed (100.0%)"),
        "{text}"
    );
}

#[tokio::test]
async fn planner_garbage_falls_back_to_the_default_plan() {
    let server = ScriptedOpenAi::start(vec![
        text("I think the plan should be: first, do it."),
        call("planning", json!({"command": "create"})),
        complete(true, "analysed"),
        // "Execute task" and "Verify results" ask for an action: a success claimed without
        // any tool call would not be accepted.
        call("shell_exec", json!({"command": "true"})),
        complete(true, "executed"),
        call("shell_exec", json!({"command": "true"})),
        complete(true, "verified"),
        text("Done with the default plan."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw.run(&server, "do something", &[]).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    let descriptions: Vec<&str> = res.json["plan"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["description"].as_str())
        .collect();
    assert_eq!(
        descriptions,
        ["Analyze request", "Execute task", "Verify results"]
    );
    let run_id = res.json["run_id"].as_str().expect("id");
    let created = pw
        .events(run_id)
        .into_iter()
        .find(|(_, t, _)| t == "plan_created")
        .expect("plan_created");
    assert_eq!(created.2["source"], "default");
    assert!(created.2["reason"]
        .as_str()
        .unwrap_or_default()
        .contains("`steps` is missing"));
}

#[tokio::test]
async fn executor_failure_fails_the_run_with_the_reason() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Fetch the data", "Analyse it"]),
        complete(false, "the data source does not exist"),
        text("Could not fetch the data."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &server,
            "analyse data",
            &["--retries", "0", "--max-revisions", "0"],
        )
        .await;
    assert_eq!(res.code(), 1, "{}", res.stderr());
    let j = &res.json;
    assert_eq!(j["status"], "failed");
    assert!(j["error"]
        .as_str()
        .unwrap_or_default()
        .contains("the data source does not exist"));
    assert_eq!(j["plan"]["steps"][0]["status"], "failed");
    assert_eq!(
        j["plan"]["steps"][0]["error"],
        "the data source does not exist"
    );
    assert_eq!(j["plan"]["steps"][1]["status"], "skipped");
    let run_id = j["run_id"].as_str().expect("id");
    let events = pw.events(run_id);
    assert_eq!(events.last().map(|e| e.1.as_str()), Some("run_failed"));
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_waited_out() {
    let server = ScriptedOpenAi::start(vec![
        wiremock::ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_json(json!({"error": {
                "message": "Rate limit reached for gpt-4o-mini",
                "type": "requests", "param": null, "code": "rate_limit_exceeded"}})),
        plan(&["Say hi"]),
        complete(true, "hi"),
        text("Said hi."),
    ])
    .await;
    let pw = Planwright::new();
    let started = std::time::Instant::now();
    let res = pw.run(&server, "say hi", &[]).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert_eq!(server.requests().await.len(), 4);
    assert_eq!(res.json["usage"]["llm_calls"], 3);
}

#[tokio::test]
async fn a_path_escape_is_refused_and_the_run_goes_on() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Read the password file"]),
        call("file_read", json!({"path": "../../../../etc/passwd"})),
        call("shell_exec", json!({"command": "echo fine > ok.txt"})),
        complete(true, "could not read outside; wrote ok.txt"),
        text("Stayed inside the workspace."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw.run(&server, "read /etc/passwd", &[]).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    let reqs = server.requests().await;
    let refusal = tool_messages(&reqs[2]).join("\n");
    assert!(refusal.contains("outside the workspace"), "{refusal}");
    assert!(!refusal.contains("root:x:0:0"));
    let run_id = res.json["run_id"].as_str().expect("id");
    assert!(pw.workspace(run_id).join("ok.txt").exists());
    let refused = pw
        .events(run_id)
        .into_iter()
        .find(|(_, t, j)| t == "tool_called" && j["tool"] == "file_read")
        .expect("file_read event");
    assert_eq!(refused.2["ok"], false);
}

#[tokio::test]
async fn no_endpoint_is_a_usage_error() {
    let pw = Planwright::new();
    let out = pw.exec(&["run", "--json", "anything"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no LLM endpoint configured"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one-line reason: {err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("--json: one object on stdout");
    assert_eq!(v["status"], "error");
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("no LLM endpoint configured"),
        "{v}"
    );
}

#[tokio::test]
async fn an_explicit_workspace_is_created_and_used() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Write a file"]),
        call("file_write", json!({"path": "sub/out.txt", "content": "x"})),
        complete(true, "wrote sub/out.txt"),
        text("ok"),
    ])
    .await;
    let pw = Planwright::new();
    let ws = pw.cwd().join("my-ws");
    let ws_arg = ws.display().to_string();
    let res = pw.run(&server, "write", &["--workspace", &ws_arg]).await;
    assert_eq!(res.code(), 0, "{}", res.stderr());
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/out.txt")).expect("file"),
        "x"
    );
}

#[tokio::test]
async fn answer_flags_answer_ask_user_questions_in_order() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Ask the user for a colour and a number"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        call("message_ask_user", json!({"question": "Which number?"})),
        complete(true, "the user chose blue and 7"),
        text("The user chose blue and 7."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &server,
            "Ask me for a colour and a number",
            &["--answer", "blue", "--answer", "7"],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    assert_eq!(res.json["status"], "completed");
    let reqs = server.requests().await;
    assert_eq!(reqs.len(), 5);
    assert_eq!(
        tool_messages(&reqs[2]),
        vec!["The user answered: blue".to_string()]
    );
    assert_eq!(
        tool_messages(&reqs[3]),
        vec![
            "The user answered: blue".to_string(),
            "The user answered: 7".to_string()
        ]
    );
}

/// A question beyond the `--answer`s, with nobody at the terminal, is answered with the
/// user's earlier answers and the step goes on (docs/direct.md, "Observations").
#[tokio::test]
async fn questions_beyond_the_answers_get_the_earlier_ones() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Ask the user two things"]),
        call("message_ask_user", json!({"question": "Which colour?"})),
        call("message_ask_user", json!({"question": "Which number?"})),
        complete(true, "the colour is blue"),
        text("Asked."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &server,
            "Ask me two things",
            &["--answer", "blue", "--retries", "0", "--max-revisions", "0"],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let reqs = server.requests().await;
    let answers = tool_messages(&reqs[3]);
    assert_eq!(answers[0], "The user answered: blue");
    assert!(
        answers[1].contains("cannot be asked again") && answers[1].contains("\"blue\""),
        "{answers:?}"
    );
}

/// With `--json`, stdout always holds one object, errors included (here the database
/// cannot be opened): a script reading stdout is never left with nothing.
#[tokio::test]
async fn json_errors_are_one_object_on_stdout() {
    let pw = Planwright::new();
    let out = pw
        .exec(
            &["run", "--json", "--db", "/proc/no-such-dir/p.db", "a task"],
            &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")],
        )
        .await;
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(v["status"], "error");
    assert_eq!(v["exit_code"], 2);
    assert!(
        v["error"].as_str().unwrap_or_default().contains("database"),
        "{v}"
    );
}

/// SIGTERM stops a run like Ctrl-C: it ends `failed` ("the run was cancelled") with its
/// summary and the JSON outcome, not killed midway.
#[tokio::test]
async fn sigterm_cancels_a_run_cleanly() {
    let llm = ScriptedOpenAi::start(vec![
        plan(&["Wait"]),
        call(
            "shell_exec",
            json!({"command": "touch started && sleep 60"}),
        ),
        text("The run was stopped while waiting."),
    ])
    .await;
    let pw = Planwright::new();
    let base = llm.base_url();
    let child = {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_planwright"));
        cmd.args(["run", "--json", "--retries", "0", "wait a minute"])
            .current_dir(pw.cwd())
            .env("OPENAI_BASE_URL", &base)
            .env("OPENAI_API_KEY", "sk-test")
            .env("PLANWRIGHT_MODEL_PATH", "/nonexistent/model.gguf")
            .env("PLANWRIGHT_CHROMIUM", "/nonexistent/chromium")
            .env("XDG_CONFIG_HOME", pw.config_home())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd.spawn().expect("starts")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let started = loop {
        let found = std::fs::read_dir(pw.cwd().join(".planwright/runs"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(Result::ok)
            .map(|e| e.path().join("workspace/started"))
            .filter(|p| p.exists());
        if let Some(p) = found {
            break p;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(started.exists());
    let pid = child.id().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the run ends after SIGTERM")
        .expect("output");
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the JSON outcome");
    assert_eq!(v["status"], "failed");
    assert_eq!(v["error"], "the run was cancelled", "{v}");
}

/// The default mode, auto, sends the README job direct (docs/direct.md): no planner call,
/// one step, `complete_step` in the same answer as the shell call, and the summary written
/// from the facts: one LLM call for the whole run.
#[tokio::test]
async fn auto_runs_the_readme_job_direct_in_one_llm_call() {
    let task = "Write hello.txt containing 'hello from planwright' with the shell tool, then \
                read it back and report its content";
    let answer = wiremock::ResponseTemplate::new(200).set_body_json(completion(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {
                    "name": "shell_exec",
                    "arguments": json!({"command": "printf 'hello from planwright' > hello.txt && cat hello.txt"}).to_string()}},
                {"id": "call_b", "type": "function", "function": {
                    "name": "complete_step",
                    "arguments": json!({"success": true, "result": "hello.txt holds 'hello from planwright'"}).to_string()}}
            ],
            "refusal": null
        }),
        "tool_calls",
    ));
    let server = ScriptedOpenAi::start(vec![answer]).await;
    let pw = Planwright::new();
    let res = pw
        .run(&server, task, &["--mode", "auto", "--summary", "auto"])
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let j = &res.json;
    assert_eq!(j["status"], "completed");
    assert_eq!(j["usage"]["llm_calls"], 1);
    let steps = j["plan"]["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["description"], task);
    let summary = j["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("Completed: 1 of 1 step done."),
        "{summary}"
    );
    assert!(summary.contains("hello from planwright"), "{summary}");
    let run_id = j["run_id"].as_str().expect("run_id");
    assert_eq!(
        std::fs::read_to_string(pw.workspace(run_id).join("hello.txt")).unwrap_or_default(),
        "hello from planwright"
    );
    let chosen: Vec<Value> = pw
        .events(run_id)
        .into_iter()
        .filter(|(_, kind, _)| kind == "mode_chosen")
        .map(|(_, _, e)| e)
        .collect();
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0]["mode"], "direct");
    assert_eq!(chosen[0]["by"], "rules");
}
