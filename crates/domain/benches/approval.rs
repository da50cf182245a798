//! What the approval rules' reader of command lines costs (run by `cargo xtask bench`;
//! docs/approvals.md, "What a shell rule sees"): the time to judge a command line under a
//! deny rule, and to record what a command writes (done for every command a run lets
//! through, rules or not), on the shapes issue 41 found quadratic (`{` repeated), on other
//! hostile shapes, and on a plain command line of the same size; and a file rule on a 1 MB
//! path. Target: ≤ 50 ms for any shape at the size cap (64 KiB), and a longer text refused
//! at once (answered "unsure"); before issue 41, `{` × 50,000 took 0.9 s and × 400,000
//! 54.7 s on this machine (quadratic).
//!
//! Prints a Markdown section on stdout.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use domain::model::approval::{
    record_writes, ApprovalMode, ApprovalPolicy, CallToJudge, Verdict, WrittenFiles,
};
use domain::ports::{ToolEffect, ToolFamily};
use serde_json::{json, Value};

/// The hostile and plain shapes, each `n` characters long (about).
/// A shape's name, and the text of about `n` characters it makes.
type Shape = (&'static str, fn(usize) -> String);

fn shapes() -> Vec<Shape> {
    vec![
        ("`echo ` + `{` × n", |n| format!("echo {}", "{".repeat(n))),
        ("`echo ` + `{a,` × n/3", |n| {
            format!("echo {}", "{a,".repeat(n / 3))
        }),
        ("`echo ` + `${x:-` × n/5", |n| {
            format!("echo {}", "${x:-".repeat(n / 5))
        }),
        ("`: ` + `$(` × n/2", |n| {
            format!(": {}", "$(".repeat(n / 2))
        }),
        ("`cat <<E ` × n/8", |n| "cat <<E ".repeat(n / 8)),
        ("`echo a; ` × n/8 (plain)", |n| "echo a; ".repeat(n / 8)),
        ("`ls ` + `./a/b ` × n/6 (plain)", |n| {
            format!("ls {}", "./a/b ".repeat(n / 6))
        }),
    ]
}

/// The median time of `f` over `runs` runs (after one untimed run).
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn judge(policy: &ApprovalPolicy, tool: &str, family: ToolFamily, args: &Value) -> Verdict {
    policy.judge(&CallToJudge {
        tool,
        arguments: args,
        effect: ToolEffect::Acts,
        family,
        workspace: Some("/runs/r1"),
        written: &WrittenFiles::default(),
    })
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    println!("## Approval rules' command reader (`crates/domain/benches/approval.rs`)\n");
    println!(
        "Judging a command line of about n characters under `--deny 'shell_exec(rm*)'`, and \
         recording what it writes (done for every command a run lets through, with or \
         without rules). Median of 5 runs, release build. Target: ≤ 50 ms at the size cap \
         (64 KiB); beyond it the answer is \"unsure\" at once. Before issue 41 (9dd03eb), \
         recording `echo ` + `{{` × 50,000 took 0.87 s, × 400,000 54.7 s (quadratic).\n"
    );
    let deny = ApprovalPolicy {
        mode: ApprovalMode::Auto,
        deny: vec!["shell_exec(rm*)".parse().expect("rule")],
        ..ApprovalPolicy::default()
    };
    let sizes = [16_000usize, 64_000, 400_000];
    print!("| shape |");
    for n in sizes {
        print!(" judge, n = {n} | record, n = {n} |");
    }
    println!(" target |");
    print!("| --- |");
    for _ in sizes {
        print!(" --- | --- |");
    }
    println!(" --- |");
    for (name, shape) in shapes() {
        print!("| {name} |");
        let mut worst_at_cap = Duration::ZERO;
        for n in sizes {
            let args = json!({ "command": shape(n) });
            let judged = median(5, || {
                let _ = judge(&deny, "shell_exec", ToolFamily::Shell, &args);
            });
            let recorded = median(5, || {
                let mut written = WrittenFiles::default();
                record_writes("shell_exec", &args, Some("/runs/r1"), &mut written);
            });
            if n == 64_000 {
                worst_at_cap = judged.max(recorded);
            }
            print!(" {} | {} |", ms(judged), ms(recorded));
        }
        let verdict = if worst_at_cap <= Duration::from_millis(50) {
            "meets"
        } else {
            "misses"
        };
        println!(" ≤ 50 ms: {verdict} |");
    }
    let files = ApprovalPolicy {
        mode: ApprovalMode::Auto,
        deny: vec!["file_*(secret/**)".parse().expect("rule")],
        ..ApprovalPolicy::default()
    };
    let path = "a/".repeat(500_000);
    let args = json!({ "path": path });
    let took = median(5, || {
        let _ = judge(&files, "file_read", ToolFamily::Files, &args);
    });
    println!(
        "\n`file_read` of a 1 MB path (`a/` × 500,000) under `--deny 'file_*(secret/**)'`: {} \
         (the rules alone; no link resolver).",
        ms(took)
    );
}
