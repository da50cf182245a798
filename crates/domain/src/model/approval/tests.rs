use serde_json::json;

use super::rule::glob;
use super::*;

fn rule(s: &str) -> ApprovalRule {
    s.parse().expect("a valid rule")
}

fn judge(policy: &ApprovalPolicy, tool: &str, args: Value, reads_only: bool) -> Verdict {
    policy.judge(&CallToJudge {
        tool,
        arguments: &args,
        reads_only,
    })
}

#[test]
fn wildcards_match_whole_subjects_and_paths_keep_their_folders() {
    assert!(glob("git status*", "git status --short", false));
    assert!(!glob("git status*", "sudo git status", false));
    assert!(glob("rm -rf*", "rm -rf /", false));
    assert!(glob("src/*", "src/main.rs", true));
    assert!(!glob("src/*", "src/a/main.rs", true));
    assert!(glob("src/**", "src/a/main.rs", true));
    assert!(glob("*.md", "README.md", true));
    assert!(glob("file_?rite", "file_write", false));
    assert!(glob("mcp__github__*", "mcp__github__create_issue", false));
    assert!(!glob("", "x", false));
    assert!(glob("**", "", true));
}

#[test]
fn rules_are_read_strictly() {
    assert_eq!(
        rule("shell_exec(git status*)").to_string(),
        "shell_exec(git status*)"
    );
    assert!(rule("file_write").matches("file_write", Some("a.txt")));
    assert!(rule("shell_exec(*)").matches("shell_exec", None));
    assert!(!rule("shell_exec(ls*)").matches("shell_exec", None));
    for bad in [
        "shell_exec(ls",
        "(ls)",
        "shell_exec()",
        "shell exec(ls)",
        "",
    ] {
        let err = bad.parse::<ApprovalRule>().expect_err(bad);
        assert!(err.to_string().contains("approval rule"), "{err}");
    }
}

#[test]
fn deny_wins_over_allow_and_rules_apply_in_every_mode() {
    for mode in ApprovalMode::ALL {
        let policy = ApprovalPolicy {
            mode,
            allow: vec![rule("shell_exec(git *)")],
            deny: vec![rule("shell_exec(git push*)")],
        };
        assert_eq!(
            judge(
                &policy,
                "shell_exec",
                json!({"command": "git status"}),
                false
            ),
            Verdict::Run,
            "{mode}"
        );
        assert!(matches!(
            judge(&policy, "shell_exec", json!({"command": "git push --force"}), false),
            Verdict::Refuse(r) if r.contains("git push*")
        ));
    }
}

#[test]
fn modes_decide_calls_that_act_and_reads_always_run() {
    let policy = |mode| ApprovalPolicy {
        mode,
        ..ApprovalPolicy::default()
    };
    let write = json!({"path": "a.txt", "content": "x"});
    let shell = json!({"command": "ls"});
    assert_eq!(
        judge(
            &policy(ApprovalMode::Auto),
            "file_write",
            write.clone(),
            false
        ),
        Verdict::Run
    );
    assert_eq!(
        judge(
            &policy(ApprovalMode::Ask),
            "file_write",
            write.clone(),
            false
        ),
        Verdict::Ask
    );
    assert_eq!(
        judge(
            &policy(ApprovalMode::Ask),
            "shell_exec",
            shell.clone(),
            true
        ),
        Verdict::Ask
    );
    assert!(matches!(
        judge(&policy(ApprovalMode::ReadOnly), "shell_exec", shell, false),
        Verdict::Refuse(r) if r.contains("read-only")
    ));
    for (tool, reads) in [
        ("file_read", true),
        ("browser_navigate", false),
        ("web_search", false),
        ("message_ask_user", false),
    ] {
        for mode in [ApprovalMode::Ask, ApprovalMode::ReadOnly] {
            assert_eq!(
                judge(&policy(mode), tool, json!({"path": "a"}), reads),
                Verdict::Run,
                "{tool} in {mode}"
            );
        }
    }
}

#[test]
fn decisions_and_modes_parse() {
    assert_eq!(
        "read-only".parse::<ApprovalMode>(),
        Ok(ApprovalMode::ReadOnly)
    );
    assert!("readonly".parse::<ApprovalMode>().is_err());
    assert_eq!(
        "always".parse::<ApprovalDecision>(),
        Ok(ApprovalDecision::Always)
    );
    assert!(!ApprovalDecision::Deny.approves());
}

#[test]
fn mcp_tools_act_unless_their_server_marks_them_read_only() {
    for (mode, effect) in [
        (ApprovalMode::Auto, Verdict::Run),
        (ApprovalMode::Ask, Verdict::Ask),
    ] {
        let policy = ApprovalPolicy {
            mode,
            ..ApprovalPolicy::default()
        };
        let args = json!({"path": "notes.txt", "content": "x"});
        assert_eq!(
            judge(&policy, "mcp__fs__write_file", args.clone(), false),
            effect
        );
        assert_eq!(
            judge(&policy, "mcp__fs__read_text_file", args, true),
            Verdict::Run
        );
    }
    let read_only = ApprovalPolicy {
        mode: ApprovalMode::ReadOnly,
        ..ApprovalPolicy::default()
    };
    assert!(matches!(
        judge(&read_only, "mcp__fs__write_file", json!({}), false),
        Verdict::Refuse(why) if why.contains("mcp__fs__write_file")
    ));
    assert_eq!(
        judge(&read_only, "mcp__everything__echo", json!({}), true),
        Verdict::Run
    );
    // A server cannot pass an effect off as browsing by its tool's name.
    assert!(matches!(
        judge(&read_only, "mcp__x__browser_click", json!({}), false),
        Verdict::Refuse(_)
    ));
}
