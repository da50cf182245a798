//! `cargo xtask bench`: every benchmark, written to docs/benchmarks.md.

use std::process::Command;

use crate::report;

/// Benchmark targets, each printing a Markdown section: (package, bench name).
const BENCHES: &[(&str, &str)] = &[
    ("planwright-domain", "scheduler"),
    ("planwright-domain", "approval"),
    ("planwright-store-sqlite", "journal"),
    ("planwright-llama", "llama"),
    ("planwright", "server_load"),
    ("planwright", "containment"),
    ("planwright", "workers"),
    ("planwright-tools-shell", "checkpoints"),
    ("planwright-runner", "telemetry"),
];

/// `cargo xtask bench [build | NAME...]`: every benchmark; (`build`) only the dependency
/// tree and clean-build section; (`NAME...`, e.g. `telemetry`, `llama-server`) only those
/// benchmarks. The last two replace their sections of docs/benchmarks.md in place.
pub(crate) fn bench(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("build") {
        let section = build_section()?;
        report(&section);
        return replace_section("## Build", &section);
    }
    if !args.is_empty() {
        for name in args {
            if name == LLAMA_SERVER {
                let section = llama_server_section()?;
                replace_section(&heading_of(&section, name)?, &section)?;
                continue;
            }
            let (package, name) =
                BENCHES
                    .iter()
                    .find(|(_, bench)| bench == name)
                    .ok_or_else(|| {
                        let known: Vec<&str> = BENCHES.iter().map(|(_, bench)| *bench).collect();
                        format!(
                            "no benchmark `{name}` (known: {}, {LLAMA_SERVER}, build)",
                            known.join(", ")
                        )
                    })?;
            let section = run_bench(package, name)?;
            replace_section(&heading_of(&section, name)?, &section)?;
        }
        return Ok(());
    }
    let mut doc = String::from(
        "# Benchmarks\n\nWritten by `cargo xtask bench`; numbers are from the machine below, \
         measured in one run (`cargo xtask bench NAME` re-measures one section). Speed and \
         memory targets live here, never in timed tests.\n\n",
    );
    doc.push_str(&machine());
    for (package, name) in BENCHES {
        doc.push_str(&run_bench(package, name)?);
        doc.push('\n');
        if *name == "llama" {
            doc.push_str(&llama_server_section()?);
            doc.push('\n');
        }
    }
    doc.push_str(&build_section()?);
    let path = doc_path();
    std::fs::write(&path, doc).map_err(|e| format!("writing {}: {e}", path.display()))?;
    report(&format!("wrote {}", path.display()));
    Ok(())
}

/// The section's `## ` heading (its first line).
fn heading_of(section: &str, name: &str) -> Result<String, String> {
    section
        .lines()
        .next()
        .filter(|l| l.starts_with("## "))
        .map(str::to_string)
        .ok_or_else(|| format!("benchmark {name} printed no `## ` heading"))
}

/// The embedded engine beside llama.cpp's own server: the bench
/// `crates/adapter-llama/benches/llama_server/` with a `llama-server` started on the
/// default model (built first when not cached, xtask/src/llama_server/).
const LLAMA_SERVER: &str = "llama-server";

fn llama_server_section() -> Result<String, String> {
    let model = crate::model::default_model_path();
    let mut env = Vec::new();
    // Without the model the bench prints its own note; there is nothing to serve.
    let server = if model.is_file() {
        // Compiled before the server starts, so that it loads on a machine at rest.
        crate::cargo(&[
            "bench",
            "-p",
            "planwright-llama",
            "--bench",
            "llama_server",
            "--no-run",
        ])?;
        let binary = crate::llama_server::binary()?;
        let config = crate::llama_server::ServerConfig::like_embedded(&model, "default")?;
        let log = std::env::temp_dir().join("planwright-bench-llama-server.log");
        let server = crate::llama_server::Server::start(&binary, &config, &log)?;
        env.push(("PLANWRIGHT_LLAMA_SERVER_URL", server.base_url()));
        env.push(("PLANWRIGHT_LLAMA_SERVER_MODEL", model.display().to_string()));
        env.push((
            "PLANWRIGHT_LLAMA_SERVER_THREADS",
            config.threads.to_string(),
        ));
        env.push((
            "PLANWRIGHT_LLAMA_SERVER_BUILD",
            crate::llama_server::describe(&binary),
        ));
        Some(server)
    } else {
        None
    };
    let section = run_bench_with("planwright-llama", "llama_server", &env);
    drop(server);
    section
}

/// Runs one benchmark in release and returns the Markdown section it printed.
fn run_bench(package: &str, name: &str) -> Result<String, String> {
    run_bench_with(package, name, &[])
}

/// [`run_bench`] with `env` set for the benchmark.
fn run_bench_with(package: &str, name: &str, env: &[(&str, String)]) -> Result<String, String> {
    report(&format!("$ cargo bench -p {package} --bench {name}"));
    let out = Command::new(crate::cargo_program())
        .args(["bench", "-p", package, "--bench", name])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("benchmark {package}/{name} failed"));
    }
    let section = String::from_utf8_lossy(&out.stdout).into_owned();
    report(&section);
    Ok(section)
}

fn doc_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join("benchmarks.md")
}

/// Replaces the section headed `heading` (up to the next `## `) of docs/benchmarks.md, or
/// adds it before the build section.
fn replace_section(heading: &str, section: &str) -> Result<(), String> {
    let section = format!("{}\n\n", section.trim_end());
    let path = doc_path();
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let new = match doc.find(&format!("{heading}\n")) {
        Some(start) => {
            let rest = &doc[start + heading.len()..];
            let end = rest
                .find("\n## ")
                .map_or(doc.len(), |i| start + heading.len() + i + 1);
            format!("{}{section}{}", &doc[..start], &doc[end..])
        }
        // A new section goes before the build section, which ends the file.
        None => match doc.find("\n## Build\n") {
            Some(build) if heading != "## Build" => {
                format!("{}{section}{}", &doc[..build + 1], &doc[build + 1..])
            }
            _ => format!("{}\n{section}", doc.trim_end()),
        },
    };
    std::fs::write(&path, new).map_err(|e| format!("writing {}: {e}", path.display()))?;
    report(&format!("wrote {}", path.display()));
    Ok(())
}

/// The dependency tree (crates, duplicates) and a clean release build of `planwright` in a
/// fresh target folder (wall time, binary size), as Markdown.
fn build_section() -> Result<String, String> {
    let cargo = crate::cargo_program();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|e| format!("reading Cargo.lock: {e}"))?;
    let crates = lock.matches("[[package]]").count();
    let tree = Command::new(&cargo)
        .args(["tree", "-d", "--depth", "0", "-e", "normal"])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    let mut duplicates: Vec<String> = String::from_utf8_lossy(&tree.stdout)
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_alphanumeric()))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    duplicates.sort();
    duplicates.dedup();
    let target =
        std::env::temp_dir().join(format!("planwright-clean-build-{}", std::process::id()));
    report(&format!(
        "$ cargo build --release -p planwright (clean, in {})",
        target.display()
    ));
    let started = std::time::Instant::now();
    let status = Command::new(&cargo)
        .args(["build", "--release", "-p", "planwright"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    let secs = started.elapsed().as_secs();
    let size = std::fs::metadata(target.join("release").join("planwright")).map(|m| m.len());
    let _ = std::fs::remove_dir_all(&target);
    if !status.success() {
        return Err("the clean release build failed".into());
    }
    let size = size.map_err(|e| format!("the built binary: {e}"))?;
    Ok(format!(
        "## Build\n\n| | |\n| --- | --- |\n| crates in Cargo.lock | {crates} |\n| crates in two versions (normal dependencies) | {} |\n| clean release build of `planwright` (default features) | {} min {} s |\n| release binary | {:.1} MB |\n\n",
        if duplicates.is_empty() { "none".to_string() } else { duplicates.join(", ") },
        secs / 60,
        secs % 60,
        size as f64 / 1e6
    ))
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
