//! `cargo xtask bench`: every benchmark, written to docs/benchmarks.md.

use std::process::Command;

use crate::report;

/// Benchmark targets, each printing a Markdown section: (package, bench name).
const BENCHES: &[(&str, &str)] = &[
    ("domain", "scheduler"),
    ("adapter-store-sqlite", "journal"),
    ("adapter-llama", "llama"),
    ("app", "server_load"),
];

pub(crate) fn bench() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut doc = String::from(
        "# Benchmarks\n\nWritten by `cargo xtask bench`; numbers are from the machine below, \
         measured in one run. Speed and memory targets live here, never in timed tests.\n\n",
    );
    doc.push_str(&machine());
    for (package, name) in BENCHES {
        report(&format!("$ cargo bench -p {package} --bench {name}"));
        let out = Command::new(&cargo)
            .args(["bench", "-p", package, "--bench", name])
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot start cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!("benchmark {package}/{name} failed"));
        }
        let section = String::from_utf8_lossy(&out.stdout);
        report(&section);
        doc.push_str(&section);
        doc.push('\n');
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join("benchmarks.md");
    std::fs::write(&path, doc).map_err(|e| format!("writing {}: {e}", path.display()))?;
    report(&format!("wrote {}", path.display()));
    Ok(())
}

/// CPU, cores, memory, OS and toolchain, as Markdown.
pub(crate) fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib: u64 = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let os = read("/etc/os-release")
        .lines()
        .find(|l| l.starts_with("PRETTY_NAME="))
        .map(|l| {
            l.trim_start_matches("PRETTY_NAME=")
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_else(|| "unknown".to_string());
    let rustc = Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "## Machine\n\n| | |\n| --- | --- |\n| CPU | {cpu} |\n| cores | {cores} |\n| memory | {:.1} GiB |\n| OS | {os} |\n| toolchain | {rustc} |\n\n",
        mem_kib as f64 / 1024.0 / 1024.0
    )
}
