//! Only allow-listed variables of the parent environment reach `shell_exec`: secrets do
//! not, whatever their names look like.
//!
//! A test binary of its own: it changes the process environment.
#![allow(clippy::unwrap_used)]

mod common;

use adapter_tools_shell::{Sandbox, ShellEnv, ShellExecTool};
use common::{bwrap_usable, ctx};
use domain::ports::Tool;
use serde_json::json;

#[tokio::test]
async fn secret_variables_are_removed() {
    let secrets = [
        "OPENAI_API_KEY",
        "MY_TOKEN",
        "anthropic_base_url",
        "PLANWRIGHT_DB",
        "DB_Password",
        "AWS_SECRET_ACCESS_KEY",
        "GCP_CREDENTIALS_FILE",
        "GH_PAT",
        "DATABASE_URL",
    ];
    for name in secrets {
        std::env::set_var(name, "s3cr3t-value");
    }
    std::env::set_var("PLAIN_SETTING", "visible-value");

    let dir = tempfile::tempdir().unwrap();
    let out = ShellExecTool::default()
        .execute(json!({"command": "env"}), &ctx(dir.path()))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert!(!out.content.contains("s3cr3t-value"), "{}", out.content);
    for name in secrets {
        assert!(!out.content.contains(&format!("{name}=")), "{name} leaked");
    }
    assert!(!out.content.contains("PLAIN_SETTING"), "{}", out.content);
    assert!(out.content.contains("PATH="));
    let home = format!("HOME={}", dir.path().canonicalize().unwrap().display());
    assert!(out.content.contains(&home), "{}", out.content);

    // A variable the user names is passed on.
    let out = ShellExecTool::default()
        .with_env(ShellEnv {
            pass: vec!["PLAIN_SETTING".to_string()],
        })
        .execute(json!({"command": "env"}), &ctx(dir.path()))
        .await
        .unwrap();
    assert!(out.content.contains("PLAIN_SETTING=visible-value"));
    assert!(!out.content.contains("s3cr3t-value"), "{}", out.content);

    // The same inside the bwrap sandbox.
    if bwrap_usable("secret_variables_are_removed (sandboxed)") {
        let out = ShellExecTool::default()
            .with_sandbox(Sandbox::Bwrap {
                allow_network: false,
            })
            .execute(json!({"command": "env"}), &ctx(dir.path()))
            .await
            .unwrap();
        assert!(!out.is_error, "{}", out.content);
        assert!(!out.content.contains("s3cr3t-value"), "{}", out.content);
        assert!(!out.content.contains("PLAIN_SETTING"), "{}", out.content);
    }
}
