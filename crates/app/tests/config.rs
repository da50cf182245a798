//! Config files (docs/configuration.md) with the real binary: the project's
//! `./planwright.toml`, the user's file under `XDG_CONFIG_HOME` (a temp folder: see
//! `Planwright::isolate`), profiles, `config show` / `config init`, and bad input refused
//! with one line and exit code 2 before anything starts.

mod common;

use common::*;
use serde_json::{json, Value};

const TASK: &str =
    "Write greeting.txt containing 'hello planwright', count its words, report the count";

/// The project file, in a folder the user trusts (docs/security.md).
fn write_project(pw: &Planwright, text: &str) {
    pw.trusted_project(text);
}

fn write_user(pw: &Planwright, text: &str) {
    let path = pw.user_config();
    std::fs::create_dir_all(path.parent().expect("folder")).expect("mkdir");
    std::fs::write(path, text).expect("write the user file");
}

/// `planwright config show --json ARGS` with `env`.
async fn show(pw: &Planwright, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = vec!["config", "show", "--json"];
    all.extend_from_slice(args);
    let out = pw.exec(&all, env).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// The `model` of every chat request the server received.
async fn models(server: &ScriptedOpenAi) -> Vec<String> {
    server
        .requests()
        .await
        .iter()
        .map(|r| r["model"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_project_file_sets_the_model_and_the_mode_of_a_run() {
    let server = ScriptedOpenAi::start(vec![
        text(r#"{"todos": [{"description": "Say hello in the shell", "dependencies": []}]}"#),
        call("shell_exec", json!({"command": "echo hello"})),
        complete(true, "said hello"),
        text(r#"{"needs_update": false, "reason": "done"}"#),
        text("Said hello."),
    ])
    .await;
    let pw = Planwright::new();
    write_project(&pw, "model = \"model-from-file\"\nmode = \"todo\"\n");
    let res = pw.run(&server, "say hello", &[]).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let models = models(&server).await;
    assert!(!models.is_empty());
    assert!(models.iter().all(|m| m == "model-from-file"), "{models:?}");
    let run_id = res.json["run_id"].as_str().expect("run_id");
    let shown = pw.exec(&["runs", "show", "--json", run_id], &[]).await;
    let shown: Value = serde_json::from_slice(&shown.stdout).expect("runs show --json");
    assert_eq!(shown["mode"], "todo");
}

#[tokio::test]
async fn the_environment_beats_the_file_and_a_flag_beats_the_environment() {
    let pw = Planwright::new();
    write_project(&pw, "model = \"model-from-file\"\n");
    let env_server = ScriptedOpenAi::start(greeting_script(false)).await;
    let base = env_server.base_url();
    let out = pw
        .exec(
            &["run", "--json", TASK],
            &[
                ("OPENAI_BASE_URL", &base),
                ("OPENAI_API_KEY", "sk-test"),
                ("PLANWRIGHT_MODEL", "model-from-env"),
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(0));
    let models_seen = models(&env_server).await;
    assert!(!models_seen.is_empty());
    assert!(
        models_seen.iter().all(|m| m == "model-from-env"),
        "{models_seen:?}"
    );

    let flag_server = ScriptedOpenAi::start(greeting_script(false)).await;
    let base = flag_server.base_url();
    let out = pw
        .exec(
            &["run", "--json", "--model", "model-from-flag", TASK],
            &[
                ("OPENAI_BASE_URL", &base),
                ("OPENAI_API_KEY", "sk-test"),
                ("PLANWRIGHT_MODEL", "model-from-env"),
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(0));
    let models = models(&flag_server).await;
    assert!(!models.is_empty());
    assert!(models.iter().all(|m| m == "model-from-flag"), "{models:?}");
}

#[tokio::test]
async fn config_show_names_the_source_of_every_value() {
    let pw = Planwright::new();
    write_user(
        &pw,
        "model = \"user-model\"\nmode = \"dag\"\nretries = 7\nverify = true\n",
    );
    write_project(
        &pw,
        "model = \"project-model\"\nshell_env = [\"LANG\", \"TZ\"]\n",
    );
    let v = show(&pw, &[], &[("PLANWRIGHT_SANDBOX", "none")]).await;
    let s = &v["settings"];
    let user = pw.user_config().display().to_string();
    // The project file beats the user file; the user file beats the defaults.
    assert_eq!(
        s["model"],
        json!({"value": "project-model", "source": "planwright.toml"})
    );
    assert_eq!(s["mode"], json!({"value": "dag", "source": user}));
    assert_eq!(s["retries"], json!({"value": 7, "source": user}));
    assert_eq!(s["verify"], json!({"value": true, "source": user}));
    assert_eq!(
        s["shell_env"],
        json!({"value": ["LANG", "TZ"], "source": "planwright.toml"})
    );
    assert_eq!(
        s["sandbox"],
        json!({"value": "none", "source": "env PLANWRIGHT_SANDBOX"})
    );
    assert_eq!(s["max_steps"], json!({"value": 20, "source": "default"}));
    assert_eq!(s["provider"], json!({"value": null, "source": "not set"}));
    assert_eq!(
        s["db"],
        json!({"value": "./.planwright/planwright.db", "source": "default"})
    );
    assert_eq!(v["files"][0]["found"], true);
    assert_eq!(v["files"][1]["path"], user);
    assert!(v["profile"].is_null());

    // A flag of `config show` itself (the global --db), and the text form.
    let out = pw.exec(&["config", "show", "--db", "other.db"], &[]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("db = \"other.db\"") && l.ends_with("# flag --db")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("model = \"project-model\"")
            && l.ends_with("# planwright.toml")),
        "{text}"
    );
}

#[tokio::test]
async fn a_profile_overrides_the_top_level_of_every_file() {
    let pw = Planwright::new();
    write_user(&pw, "max_steps = 9\n[profiles.fast]\nretries = 1\n");
    write_project(
        &pw,
        "model = \"slow-model\"\n\n[profiles.fast]\nmodel = \"fast-model\"\n",
    );
    let v = show(&pw, &["--profile", "fast"], &[]).await;
    assert_eq!(
        v["profile"],
        json!({"name": "fast", "source": "flag --profile"})
    );
    assert_eq!(
        v["settings"]["model"],
        json!({"value": "fast-model", "source": "planwright.toml, profile fast"})
    );
    let user = pw.user_config().display().to_string();
    assert_eq!(
        v["settings"]["retries"],
        json!({"value": 1, "source": format!("{user}, profile fast")})
    );
    assert_eq!(v["settings"]["max_steps"]["value"], 9);

    // Chosen by the environment, or by the file itself.
    let v = show(&pw, &[], &[("PLANWRIGHT_PROFILE", "fast")]).await;
    assert_eq!(v["settings"]["model"]["value"], "fast-model");
    assert_eq!(v["profile"]["source"], "env PLANWRIGHT_PROFILE");
    write_project(
        &pw,
        "profile = \"fast\"\nmodel = \"slow-model\"\n[profiles.fast]\nmodel = \"fast-model\"\n",
    );
    let v = show(&pw, &[], &[]).await;
    assert_eq!(v["settings"]["model"]["value"], "fast-model");
    assert_eq!(v["profile"]["source"], "planwright.toml");
    // Without a profile, the top level.
    write_project(
        &pw,
        "model = \"slow-model\"\n[profiles.fast]\nmodel = \"fast-model\"\n",
    );
    let v = show(&pw, &[], &[]).await;
    assert_eq!(v["settings"]["model"]["value"], "slow-model");
}

#[tokio::test]
async fn config_init_writes_a_starter_file_that_config_show_reads() {
    let pw = Planwright::new();
    let out = pw.exec(&["config", "init"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let starter = std::fs::read_to_string(pw.cwd().join("planwright.toml")).expect("written");
    pw.trust();
    assert!(starter.contains("# max_steps = 20"), "{starter}");
    assert!(starter.contains("# model = \"gpt-4o-mini\""), "{starter}");
    let v = show(&pw, &[], &[]).await;
    assert_eq!(v["files"][0]["found"], true);
    assert_eq!(v["settings"]["max_steps"]["source"], "default");

    // Not over an existing file, unless --force.
    write_project(&pw, "model = \"mine\"\n");
    let out = pw.exec(&["config", "init"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--force"), "{err}");
    let kept = std::fs::read_to_string(pw.cwd().join("planwright.toml")).expect("kept");
    assert_eq!(kept, "model = \"mine\"\n");
    let out = pw.exec(&["config", "init", "--force"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let replaced = std::fs::read_to_string(pw.cwd().join("planwright.toml")).expect("file");
    assert_eq!(replaced, starter);
}

#[tokio::test]
async fn bad_config_input_is_one_line_exit_2_and_nothing_starts() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "mode = \"dag\"\n\nmodle = \"x\"\n",
            &[],
            "planwright.toml:3: unknown key \"modle\" (did you mean \"model\"?)",
        ),
        (
            "max_steps = \"ten\"\n",
            &[],
            "planwright.toml:1: max_steps must be an integer, not a string",
        ),
        ("model = [\n", &[], "planwright.toml:1: not valid TOML"),
        (
            "max_steps = 0\n",
            &[],
            "planwright.toml:1: max_steps = 0: 0 is not in 1..=1000",
        ),
        (
            "max_steps = 10_000_000\n",
            &[],
            "planwright.toml:1: max_steps = 10000000: 10000000 is not in 1..=1000",
        ),
        (
            "retries = -1\n",
            &[],
            "planwright.toml:1: retries = -1: must not be negative",
        ),
        (
            "[profiles.fast]\nmode = \"fastest\"\n",
            &[],
            "planwright.toml:2: mode = \"fastest\": expected one of flow, plan-act",
        ),
        (
            "api_key = \"sk-live\"\n",
            &[],
            "planwright.toml:1: \"api_key\" would put a secret in the file",
        ),
        (
            "model = \"m\"\n",
            &["--profile", "fast"],
            "no profile \"fast\" (chosen by flag --profile) in planwright.toml or ",
        ),
        (
            "model = \"m\"\n",
            &["--config", "missing.toml"],
            "cannot read missing.toml",
        ),
    ];
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let base = server.base_url();
    for (file, flags, expected) in cases {
        let pw = Planwright::new();
        // A trusted folder's file is read, and a mistake in it stops the command.
        write_project(&pw, "");
        std::fs::write(pw.cwd().join("planwright.toml"), file).expect("write planwright.toml");
        let mut args = vec!["run", "--json"];
        args.extend_from_slice(flags);
        args.push("a task");
        let out = pw
            .exec(
                &args,
                &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", "sk-test")],
            )
            .await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{file}: one line: {err}");
        assert!(
            err.starts_with(&format!("error: {expected}")),
            "{file}: {err}"
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("--json: one object");
        assert_eq!(v["exit_code"], 2);
        assert!(!pw.db().exists(), "{file}: nothing started");
    }
    assert!(server.requests().await.is_empty());
}

#[tokio::test]
async fn api_key_env_names_the_variable_holding_the_key() {
    let server = ScriptedOpenAi::start(greeting_script(false)).await;
    let base = server.base_url();
    let pw = Planwright::new();
    write_project(&pw, "api_key_env = \"MY_LLM_KEY\"\n");
    let out = pw
        .exec(
            &["run", "--json", TASK],
            &[("OPENAI_BASE_URL", &base), ("MY_LLM_KEY", "sk-named-key")],
        )
        .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let received = server.server.received_requests().await.unwrap_or_default();
    assert!(!received.is_empty());
    for r in &received {
        let auth = r
            .headers
            .get("authorization")
            .map(|v| v.to_str().unwrap_or(""));
        assert_eq!(auth, Some("Bearer sk-named-key"));
    }

    // A named variable that is not set is a usage error.
    let out = pw
        .exec(&["run", "--json", TASK], &[("OPENAI_BASE_URL", &base)])
        .await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MY_LLM_KEY, which is not set"), "{err}");
}

#[tokio::test]
async fn config_names_a_file_in_place_of_the_project_file() {
    let pw = Planwright::new();
    write_project(&pw, "model = \"project-model\"\n");
    std::fs::write(pw.cwd().join("ci.toml"), "max_steps = 3\n").expect("write");
    let v = show(&pw, &["--config", "ci.toml"], &[]).await;
    assert_eq!(
        v["settings"]["max_steps"],
        json!({"value": 3, "source": "ci.toml"})
    );
    assert_eq!(v["settings"]["model"]["source"], "default");
    assert_eq!(v["files"][0]["level"], "--config");
    // Named by PLANWRIGHT_CONFIG (a repository's `.envrc` may set it), a file inside the
    // folder is a project file: used once `planwright trust` has seen it (issue 41).
    let env = [("PLANWRIGHT_CONFIG", "ci.toml")];
    let out = pw.exec(&["config", "show"], &env).await;
    assert_eq!(out.status.code(), Some(2));
    let out = pw.exec(&["trust"], &env).await;
    assert_eq!(out.status.code(), Some(0));
    let v = show(&pw, &[], &env).await;
    assert_eq!(v["settings"]["max_steps"]["value"], 3);
}

#[tokio::test]
async fn the_file_turns_tools_and_web_search_off() {
    let server = ScriptedOpenAi::start(vec![
        text(r#"{"todos": [{"description": "Say hello in the shell", "dependencies": []}]}"#),
        call("shell_exec", json!({"command": "echo hello"})),
        complete(true, "said hello"),
        text(r#"{"needs_update": false, "reason": "done"}"#),
        text("Said hello."),
    ])
    .await;
    let pw = Planwright::new();
    write_project(
        &pw,
        "mode = \"todo\"\ndisabled_tools = [\"file_write\", \"browser_*\"]\n\
         search = \"none\"\nsearxng_url = \"http://127.0.0.1:9\"\n",
    );
    let res = pw.run(&server, "say hello", &[]).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    let reqs = server.requests().await;
    let offered: Vec<String> = reqs[1]["tools"]
        .as_array()
        .expect("the executor's tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(offered.contains(&"shell_exec".to_string()), "{offered:?}");
    assert!(offered.contains(&"file_read".to_string()), "{offered:?}");
    for gone in ["file_write", "web_search", "browser_navigate"] {
        assert!(
            !offered.contains(&gone.to_string()),
            "{gone} in {offered:?}"
        );
    }

    let out = pw.exec(&["tools", "list"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("web search: not offered (turned off (--search none))"),
        "{listed}"
    );
    assert!(!listed.contains("file_write"), "{listed}");
    // A flag adds to nothing the file said: it replaces the list.
    let out = pw
        .exec(&["tools", "list", "--disabled-tools", "shell_*"], &[])
        .await;
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("file_write"), "{listed}");
    assert!(!listed.contains("shell_exec"), "{listed}");
    // A pattern that is not a tool name is refused like any bad value.
    let out = pw
        .exec(&["tools", "list", "--disabled-tools", "shell exec"], &[])
        .await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn a_flag_turns_off_a_boolean_the_file_turned_on() {
    // No verifier reply in the script: the run completes only if `--verify=false` wins.
    let server = ScriptedOpenAi::start(vec![
        text(r#"{"todos": [{"description": "Say hello in the shell", "dependencies": []}]}"#),
        call("shell_exec", json!({"command": "echo hello"})),
        complete(true, "said hello"),
        text(r#"{"needs_update": false, "reason": "done"}"#),
        text("Said hello."),
    ])
    .await;
    let pw = Planwright::new();
    write_project(&pw, "mode = \"todo\"\nverify = true\n");
    let shown = show(&pw, &[], &[]).await;
    assert_eq!(shown["settings"]["verify"]["value"], true, "{shown}");
    let res = pw.run(&server, "say hello", &["--verify=false"]).await;
    assert_eq!(res.code(), 0, "stderr:\n{}", res.stderr());
    assert_eq!(server.requests().await.len(), 5);
    let out = pw.exec(&["tools", "list", "--verify=maybe"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn help_shows_the_files_values_as_defaults() {
    let pw = Planwright::new();
    write_project(&pw, "max_steps = 7\n");
    let out = pw.exec(&["run", "--help"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("[default: 7]"), "{help}");
    std::fs::write(pw.cwd().join("other.toml"), "max_steps = 9\n").expect("write");
    let out = pw
        .exec(&["run", "--config", "other.toml", "--help"], &[])
        .await;
    assert!(String::from_utf8_lossy(&out.stdout).contains("[default: 9]"));
    // A broken file does not hide the help.
    std::fs::write(pw.cwd().join("planwright.toml"), "max_steps = \n").expect("write");
    let out = pw.exec(&["run", "--help"], &[]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("[default: 20]"));
}

/// A user file shared between builds: a `[providers.NAME]` table of a provider this build
/// lacks is skipped with one warning naming its line; the rest of the file still applies.
#[tokio::test]
async fn a_table_of_a_provider_this_build_lacks_is_a_warning_not_an_error() {
    let pw = Planwright::new();
    write_user(
        &pw,
        "mode = \"dag\"\n\n[providers.no-such-provider]\nbase_url = \"http://x\"\n",
    );
    let out = pw.exec(&["config", "show", "--json"], &[]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(":3: [providers.no-such-provider] is not read"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["settings"]["mode"]["value"], "dag", "{v}");
}
