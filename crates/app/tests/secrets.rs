//! No secret of Planwright's reaches the model: a scripted model that runs whatever it is
//! told looks for the API key in its own environment, in its parent's start-up
//! environment (`/proc/$PPID/environ`) and command line, and everything it saw goes back
//! to the model and into the journal (docs/security.md, "Secrets").

mod common;

use common::*;
use serde_json::json;

const SECRET: &str = "sk-test-secret";

#[tokio::test]
async fn the_model_cannot_read_planwrights_keys() {
    let probe = "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; \
                 tr '\\0' ' ' < /proc/$PPID/cmdline; echo; \
                 grep -h OPENAI /proc/$PPID/task/*/environ; echo probed";
    let server = ScriptedOpenAi::start(vec![
        plan(&["Look at the environment"]),
        call("shell_exec", json!({ "command": probe })),
        complete(true, "looked"),
        text("Looked at the environment."),
    ])
    .await;
    let pw = Planwright::new();
    let res = pw
        .run(
            &server,
            "Look at the environment",
            // Unsandboxed, the parent's /proc entries are in reach (bwrap hides them).
            &[
                "--shell-env",
                "PLANWRIGHT_PROBE_VISIBLE",
                "--sandbox",
                "none",
            ],
        )
        .await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());

    let requests = server.requests().await;
    let seen: Vec<String> = requests.iter().flat_map(tool_messages).collect();
    let shell = seen
        .iter()
        .find(|m| m.contains("probed"))
        .unwrap_or_else(|| panic!("the probe's output reached the model: {seen:#?}"));
    assert!(!shell.contains(SECRET), "{shell}");
    assert!(!shell.contains("OPENAI_API_KEY"), "{shell}");
    assert!(!shell.contains("OPENAI_BASE_URL"), "{shell}");
    assert!(shell.contains("PATH="), "{shell}");
    for request in &requests {
        assert!(!request.to_string().contains(SECRET));
    }
    // Nothing in the store either.
    let db = std::fs::read(pw.db()).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&db).contains(SECRET));
}

/// A variable named with `--shell-env` does reach commands.
#[tokio::test]
async fn a_named_variable_is_passed_on() {
    let server = ScriptedOpenAi::start(vec![
        plan(&["Print the variable"]),
        call(
            "shell_exec",
            json!({ "command": "echo \"value=$PROBE_VISIBLE\"" }),
        ),
        complete(true, "printed"),
        text("Printed."),
    ])
    .await;
    let pw = Planwright::new();
    let output = pw
        .exec(
            &[
                "run",
                "--json",
                "--shell-env",
                "PROBE_VISIBLE",
                "Print the variable",
            ],
            &[
                ("OPENAI_BASE_URL", server.base_url().as_str()),
                ("OPENAI_API_KEY", SECRET),
                ("PROBE_VISIBLE", "shown"),
            ],
        )
        .await;
    assert_eq!(output.status.code(), Some(0));
    let requests = server.requests().await;
    let seen: Vec<String> = requests.iter().flat_map(tool_messages).collect();
    assert!(seen.iter().any(|m| m.contains("value=shown")), "{seen:#?}");
}
