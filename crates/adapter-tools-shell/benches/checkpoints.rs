//! What workspace checkpoints cost (docs/benchmarks.md, "Checkpoints"; docs/checkpoints.md):
//! `LocalCheckpoints` on a 10,000-file, 200 MB workspace: the first checkpoint, one of the
//! unchanged tree, one after a 1 MB file changed; and the storage of 20 steps that each
//! change one line of that file. Beside each, `git add -A && git commit` on a copy of the
//! same tree (the way Aider and Codex keep theirs), when `git` is installed. Then the first
//! checkpoint of a workspace of 100,000 small files (issue 41: 336 s when every content was
//! flushed to disk one by one).
//!
//! Prints a Markdown section on stdout (`cargo xtask bench` collects it). Without the
//! `--bench` argument (`cargo test --all-targets`) it runs on a small tree, to prove the code
//! still works.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use adapter_tools_shell::LocalCheckpoints;
use domain::ports::{CheckpointAt, WorkspaceCheckpoints};

/// The tree measured: `folders` × `files_each` files of `file_bytes`, and one text file of
/// `big_bytes` changed a line at a time.
struct Shape {
    folders: usize,
    files_each: usize,
    file_bytes: usize,
    big_bytes: usize,
    samples: usize,
    steps: usize,
}

const FULL: Shape = Shape {
    folders: 100,
    files_each: 100,
    file_bytes: 20_000,
    big_bytes: 1 << 20,
    samples: 7,
    steps: 20,
};

/// The many-small-files workspace: folders × files of `file_bytes`.
struct Small {
    folders: usize,
    files_each: usize,
    file_bytes: usize,
}

const SMALL_FULL: Small = Small {
    folders: 1000,
    files_each: 100,
    file_bytes: 200,
};

const SMALL_SMOKE: Small = Small {
    folders: 10,
    files_each: 10,
    file_bytes: 200,
};

const SMOKE: Shape = Shape {
    folders: 4,
    files_each: 5,
    file_bytes: 2_000,
    big_bytes: 64 << 10,
    samples: 2,
    steps: 3,
};

/// Lines of 64 characters (63 hex digits and a line break), from a seeded xorshift: text
/// that neither compresses to nothing nor repeats between files.
fn text(bytes: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        for _ in 0..63 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push(b"0123456789abcdef"[(x & 15) as usize]);
        }
        out.push(b'\n');
    }
    out.truncate(bytes);
    out
}

/// The tree, its files dated an hour back: an unchanged tree's files are older than the
/// 2 s within which a checkpoint reads a file again (docs/checkpoints.md), as a user's are.
fn build_tree(root: &Path, shape: &Shape) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let write_old = |path: &Path, bytes: Vec<u8>| {
        std::fs::write(path, bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    };
    for f in 0..shape.folders {
        let folder = root.join(format!("d{f:03}"));
        std::fs::create_dir_all(&folder).unwrap();
        for i in 0..shape.files_each {
            let seed = (f * shape.files_each + i) as u64 + 1;
            write_old(
                &folder.join(format!("f{i:03}.txt")),
                text(shape.file_bytes, seed),
            );
        }
    }
    write_old(&root.join("big.txt"), text(shape.big_bytes, 0));
}

/// Changes line `n` of `big.txt` (same length: only the content tells).
fn change_a_line(root: &Path, n: usize) {
    let path = root.join("big.txt");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = (n * 64 * 7) % (bytes.len() - 64);
    let at = at - at % 64;
    for b in &mut bytes[at..at + 8] {
        *b = if *b == b'x' { b'y' } else { b'x' };
    }
    std::fs::write(&path, bytes).unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success(), "cp -a");
}

fn du(path: &Path) -> u64 {
    fn walk(path: &Path) -> u64 {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return 0;
        };
        if meta.is_dir() {
            std::fs::read_dir(path)
                .map(|entries| entries.flatten().map(|e| walk(&e.path())).sum())
                .unwrap_or(0)
        } else {
            meta.len()
        }
    }
    walk(path)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `git add -A && git commit` in `repo`, timed.
fn git_commit(repo: &Path) -> Duration {
    let started = Instant::now();
    let add = Command::new("git")
        .args(["add", "-A"])
        .current_dir(repo)
        .status()
        .unwrap();
    let commit = Command::new("git")
        .args(["commit", "-q", "--allow-empty", "-m", "step"])
        .current_dir(repo)
        .status()
        .unwrap();
    let took = started.elapsed();
    assert!(add.success() && commit.success(), "git add / commit");
    took
}

fn git_init(repo: &Path) {
    for args in [
        &["init", "-q"][..],
        &["config", "user.email", "bench@example.invalid"],
        &["config", "user.name", "bench"],
        &["config", "gc.auto", "0"],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(repo)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
}

/// One listing of every folder and one `lstat` of every path under `root`, nothing else:
/// what any scan of the tree pays on this machine.
fn list_and_stat(root: &Path) -> Duration {
    let started = Instant::now();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    started.elapsed()
}

struct Figures {
    first: Duration,
    unchanged: Duration,
    one_changed: Duration,
    step_storage: u64,
    total_storage: u64,
}

async fn measure_checkpoints(runs_root: PathBuf, ws: &Path, shape: &Shape) -> Figures {
    let checkpoints = LocalCheckpoints::new(runs_root);
    let step = |n: u32| CheckpointAt::Step {
        step_id: format!("s{n}"),
        attempt: 1,
    };
    let started = Instant::now();
    checkpoints.checkpoint("bench", ws, &step(0)).await.unwrap();
    let first = started.elapsed();
    let mut unchanged = Vec::new();
    for n in 0..shape.samples {
        let started = Instant::now();
        let taken = checkpoints
            .checkpoint("bench", ws, &step(n as u32 + 1))
            .await
            .unwrap();
        unchanged.push(started.elapsed());
        assert_eq!(taken.stored_bytes, 0, "nothing changed, nothing stored");
    }
    let before_steps = checkpoints.space_used("bench").await.unwrap();
    let mut one_changed = Vec::new();
    for n in 0..shape.steps {
        change_a_line(ws, n);
        let started = Instant::now();
        let taken = checkpoints
            .checkpoint("bench", ws, &step(100 + n as u32))
            .await
            .unwrap();
        one_changed.push(started.elapsed());
        assert!(taken.stored_bytes > 0, "the changed file is stored");
    }
    let total_storage = checkpoints.space_used("bench").await.unwrap();
    Figures {
        first,
        unchanged: median(unchanged),
        one_changed: median(one_changed),
        step_storage: total_storage - before_steps,
        total_storage,
    }
}

fn measure_git(repo: &Path, shape: &Shape) -> Figures {
    git_init(repo);
    let first = git_commit(repo);
    let unchanged = (0..shape.samples).map(|_| git_commit(repo)).collect();
    let before_steps = du(&repo.join(".git"));
    let mut one_changed = Vec::new();
    for n in 0..shape.steps {
        change_a_line(repo, n);
        one_changed.push(git_commit(repo));
    }
    let total_storage = du(&repo.join(".git"));
    Figures {
        first,
        unchanged: median(unchanged),
        one_changed: median(one_changed),
        step_storage: total_storage - before_steps,
        total_storage,
    }
}

/// The first checkpoint of a tree of many small files (each its own content), timed.
async fn measure_small_files(scratch: &Path, small: &Small) -> (usize, Duration) {
    let ws = scratch.join("small");
    for f in 0..small.folders {
        let folder = ws.join(format!("d{f:04}"));
        std::fs::create_dir_all(&folder).unwrap();
        for i in 0..small.files_each {
            let seed = (f * small.files_each + i) as u64 + 7;
            std::fs::write(
                folder.join(format!("f{i:03}.txt")),
                text(small.file_bytes, seed),
            )
            .unwrap();
        }
    }
    let checkpoints = LocalCheckpoints::new(scratch.join("small-runs"));
    let at = CheckpointAt::RunEnd;
    let started = Instant::now();
    let taken = checkpoints.checkpoint("small", &ws, &at).await.unwrap();
    let first = started.elapsed();
    let files = small.folders * small.files_each;
    assert_eq!(taken.files as usize, files);
    (files, first)
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let shape = if full { FULL } else { SMOKE };
    let small = if full { SMALL_FULL } else { SMALL_SMOKE };
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("workspace");
    build_tree(&ws, &shape);
    let repo = scratch.path().join("repo");
    let git = git_available();
    if git {
        copy_tree(&ws, &repo);
    }
    let files = shape.folders * shape.files_each + 1;
    let tree_bytes = (shape.folders * shape.files_each * shape.file_bytes + shape.big_bytes) as u64;
    eprintln!("checkpoints: {files} files, {} ...", mib(tree_bytes));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ours = runtime.block_on(measure_checkpoints(
        scratch.path().join("runs"),
        &ws,
        &shape,
    ));
    let theirs = git.then(|| measure_git(&repo, &shape));
    let floor = median((0..shape.samples).map(|_| list_and_stat(&ws)).collect());
    eprintln!(
        "checkpoints: {} small files ...",
        small.folders * small.files_each
    );
    let (small_files, small_first) = runtime.block_on(measure_small_files(scratch.path(), &small));

    println!("## Checkpoints (`crates/adapter-tools-shell/benches/checkpoints.rs`)\n");
    println!(
        "`LocalCheckpoints` (docs/checkpoints.md) on a workspace of {files} text files, {} in \
         all ({} folders of {} files of {} bytes, and one {} file, `big.txt`), page cache \
         warm; median of {} samples for the unchanged tree and of {} steps for the changed \
         file; the files are dated an hour back, as a user's unchanged files are older than \
         the 2 s within which a checkpoint reads a file again. Beside it, `git add -A && git \
         commit` on a copy of the same tree. Targets: unchanged ≤ 20 ms (issue 42), one \
         changed 1 MB file ≤ 20 ms (read here as the cost over the unchanged tree), {} steps \
         that each change one line of the 1 MB file ≤ 25 MB stored.\n",
        mib(tree_bytes),
        shape.folders,
        shape.files_each,
        shape.file_bytes,
        mib(shape.big_bytes as u64),
        shape.samples,
        shape.steps,
        shape.steps,
    );
    println!("| measurement | checkpoints | git add -A && git commit |");
    println!("| --- | --- | --- |");
    let other = |f: fn(&Figures) -> String| theirs.as_ref().map_or("(no git)".to_string(), f);
    println!(
        "| first checkpoint (everything new) | {} | {} |",
        ms(ours.first),
        other(|g| ms(g.first))
    );
    println!(
        "| unchanged tree | {} | {} |",
        ms(ours.unchanged),
        other(|g| ms(g.unchanged))
    );
    println!(
        "| one listing of each folder and one `lstat` of each file, nothing else | {} | |",
        ms(floor)
    );
    fn over(f: &Figures) -> String {
        format!(
            "{} ({} over the unchanged tree)",
            ms(f.one_changed),
            ms(f.one_changed.saturating_sub(f.unchanged))
        )
    }
    println!(
        "| one line of `big.txt` changed | {} | {} |",
        over(&ours),
        other(over)
    );
    println!(
        "| stored by the {} changed steps | {} | {} |",
        shape.steps,
        mib(ours.step_storage),
        other(|g| mib(g.step_storage))
    );
    println!(
        "| stored in all | {} | {} |",
        mib(ours.total_storage),
        other(|g| mib(g.total_storage))
    );
    println!(
        "\nMany small files: the first checkpoint of {small_files} files of {} bytes ({} \
         folders of {}), every content new: {} ({:.0} µs a file). Target: at least 10 times faster than when each content and folder \
         listing was flushed to disk on its own (issue 41 measured 336 s for 100,000 small \
         files); the small ones now go into one pack per checkpoint, and each file the \
         checkpoint wrote is flushed once, before the manifest naming them is written \
         (docs/checkpoints.md).",
        small.file_bytes,
        small.folders,
        small.files_each,
        ms(small_first),
        small_first.as_secs_f64() * 1e6 / small_files as f64,
    );
}
