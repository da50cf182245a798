//! Issue 41, Medium 8: the reader is linear, with a size cap. Its work is counted (every
//! character it looks at, every path character it makes), never timed: a scan that goes
//! back over the text shows up as a count many times the text's length.

use super::*;
use crate::model::approval::command::{analyze, Scene, MAX_PATH, MAX_STEPS, MAX_TEXT};

/// Hostile shapes (issue 41's `{`, and every construct that scans ahead: braces, `${`,
/// quotes, substitutions, heredocs, continuations, paths), each about `n` characters.
/// A shape's name, and the text of about `n` characters it makes.
type Shape = (&'static str, fn(usize) -> String);

fn shapes() -> Vec<Shape> {
    vec![
        ("{", |n| format!("echo {}", "{".repeat(n))),
        ("{a,", |n| format!("echo {}", "{a,".repeat(n / 3))),
        ("}", |n| format!("echo {}", "}".repeat(n))),
        ("{ x", |n| format!("echo {}", "{ x".repeat(n / 3))),
        ("${x:-a}", |n| format!("echo {}", "${x:-a} ".repeat(n / 8))),
        ("${x", |n| format!("echo {}", "${x".repeat(n / 3))),
        ("${x:-${x:-", |n| format!("echo {}", "${x:-".repeat(n / 5))),
        ("$(", |n| format!(": {}", "$(".repeat(n / 2))),
        ("$(echo a) ", |n| {
            format!(": {}", "$(echo a) ".repeat(n / 10))
        }),
        ("`echo a` ", |n| format!(": {}", "`echo a` ".repeat(n / 9))),
        ("`", |n| format!(": {}", "`".repeat(n))),
        ("\"a\" 'b' ", |n| {
            format!("echo {}", "\"a\" 'b' ".repeat(n / 8))
        }),
        ("\"", |n| format!("echo {}", "\"".repeat(n))),
        ("'", |n| format!("echo {}", "'".repeat(n))),
        ("\\\\\\n", |n| format!("echo {}", "a \\\n".repeat(n / 4))),
        ("<<E", |n| {
            let k = n / 12;
            format!("{}\n{}", "cat <<E ".repeat(k), "x\nE\n".repeat(k))
        }),
        ("<<E unclosed", |n| "cat <<E ".repeat(n / 8)),
        ("heredoc text", |n| {
            format!("cat <<E\n{}E\n", "$x ${y} `a` ".repeat(n / 13))
        }),
        ("a=b ", |n| "a=b ".repeat(n / 4)),
        ("1111", |n| format!("echo {}", "1".repeat(n))),
        ("> a ", |n| format!("echo {}", "> a ".repeat(n / 4))),
        ("; ", |n| "; ".repeat(n / 2)),
        ("((", |n| "(".repeat(n)),
        ("ls ./a/../b ", |n| {
            format!("ls {}", "./a/../b ".repeat(n / 9))
        }),
        ("cd ..; ", |n| "cd ..; ".repeat(n / 7)),
        ("sed script", |n| {
            format!("sed -n '{}' f", "s/a/b/;".repeat(n / 7))
        }),
        ("find primaries", |n| {
            format!("find . {}", "-name a ".repeat(n / 8))
        }),
        ("git options", |n| {
            format!("git diff {}", "--stat ".repeat(n / 7))
        }),
        ("env -S", |n| format!("env -S'{}'", "a ".repeat(n / 2))),
    ]
}

fn scene(written: &WrittenFiles) -> Scene<'_> {
    Scene {
        workspace: Some(WORKSPACE),
        written,
    }
}

/// Issue 41, Medium 8: every hostile shape up to the cap is read whole in a few steps per
/// character (issue 41 measured `{` × 400,000 at 44.9 s: quadratic); a text beyond the cap
/// is "unsure" at once, unread; a 1 MB path is neither compared nor resolved.
#[test]
fn the_reader_takes_a_few_steps_per_character_and_stops_at_its_cap() {
    let none = WrittenFiles::default();
    for (name, shape) in shapes() {
        for n in [1_000, 8_000, 60_000] {
            let text = shape(n);
            assert!(text.len() <= MAX_TEXT, "{name}: {} bytes", text.len());
            let analysis = analyze(&text, scene(&none));
            assert!(
                analysis.steps <= 8 * text.len() + 100,
                "{name} × {n}: {} steps for {} characters",
                analysis.steps,
                text.len()
            );
            assert!(
                !analysis.unknown.iter().any(|u| u.contains("more to read")),
                "{name} × {n}: {:?}",
                analysis.unknown
            );
        }
    }
    // Beyond the cap nothing is read: unsure under a deny rule, never allowed.
    let long = format!("echo {}", "{".repeat(400_000));
    let analysis = analyze(&long, scene(&none));
    assert_eq!(analysis.steps, 0);
    assert!(
        analysis.unknown.iter().any(|u| u.contains("64 KiB")),
        "{:?}",
        analysis.unknown
    );
    let deny = policy(ApprovalMode::Auto, &[], &["shell_exec(rm*)"]);
    assert!(matches!(
        judge(&deny, "shell_exec", shell(&long), false),
        Verdict::Unsure(why) if why.contains("64 KiB")
    ));
    let allow = policy(ApprovalMode::ReadOnly, &["shell_exec(echo*)"], &[]);
    check(&allow, &none, "shell_exec", shell(&long), Want::Refused);
    // A written script is read against the same cap and budget: running it many times
    // stops at the budget, unsure.
    let mut written = WrittenFiles::default();
    written.wrote("s.sh".into(), &"echo a; ".repeat(MAX_TEXT / 8), false);
    let many = "./s.sh; ".repeat(100);
    let analysis = analyze(&many, scene(&written));
    assert!(
        analysis.steps <= MAX_STEPS + 8 * MAX_TEXT,
        "{}",
        analysis.steps
    );
    assert!(analysis.unknown.iter().any(|u| u.contains("more to read")));
    // Deep folders times many operands (each path made holds the folder, up to a path's
    // length): the paths made are work too, held to the budget.
    for deep in [
        format!("cd {}; ls {}", "a/".repeat(2_000), "b ".repeat(25_000)),
        "cd a; ".repeat(10_000),
    ] {
        let analysis = analyze(&deep, scene(&none));
        assert!(
            analysis.steps <= MAX_STEPS + 8 * MAX_TEXT,
            "{}",
            analysis.steps
        );
        assert!(analysis.unknown.iter().any(|u| u.contains("more to read")));
    }
}

/// A resolver that must never be asked about a path longer than a path can be.
struct ShortPathsOnly;

impl ResolvePaths for ShortPathsOnly {
    fn resolve(&self, _workspace: &std::path::Path, path: &str) -> Option<String> {
        assert!(
            path.len() <= MAX_PATH,
            "asked to resolve {} bytes",
            path.len()
        );
        Some(path.to_string())
    }
}

/// Issue 41, Medium 8: a file rule on a 1 MB path (66 s through the link resolver) is
/// unsure at once: the path is longer than any the system opens, and is not resolved.
#[test]
fn a_path_longer_than_the_system_allows_is_unsure_and_never_resolved() {
    let none = WrittenFiles::default();
    let path = "a/".repeat(500_000);
    let with_resolver = |policy: ApprovalPolicy| ApprovalPolicy {
        paths: PathResolver::new(std::sync::Arc::new(ShortPathsOnly)),
        ..policy
    };
    let deny = with_resolver(policy(ApprovalMode::Auto, &[], &["file_*(secret/**)"]));
    for tool in ["file_read", "file_write"] {
        check(&deny, &none, tool, json!({ "path": path }), Want::Asked);
    }
    let mcp = with_resolver(policy(
        ApprovalMode::Auto,
        &[],
        &["mcp__fs__*(path=secret/**)"],
    ));
    check(
        &mcp,
        &none,
        "mcp__fs__read_file",
        json!({ "path": path }),
        Want::Asked,
    );
    let allow = with_resolver(policy(ApprovalMode::ReadOnly, &["file_write(a/**)"], &[]));
    check(
        &allow,
        &none,
        "file_write",
        json!({ "path": path }),
        Want::Refused,
    );
    check(
        &deny,
        &none,
        "shell_exec",
        shell(&format!("cat {}", "a/".repeat(30_000))),
        Want::Asked,
    );
    // A path that becomes short once `..` is worked out is compared as usual.
    let back = format!("{}secret/k", "a/../".repeat(100_000));
    check(
        &deny,
        &none,
        "file_read",
        json!({ "path": back }),
        Want::Refused,
    );
    // Wildcards stay linear on long texts (the old matcher was quadratic per `*`).
    assert!(glob(
        "*a*b*c*",
        &format!("{}abc", "x".repeat(200_000)),
        false
    ));
    assert!(!glob("*a*b*c*d", &"abc".repeat(100_000), false));
}
