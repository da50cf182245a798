//! Compiles `llama-server` with Debian's cmake, configured as `llama-cpp-sys-2` builds the
//! embedded engine's llama.cpp here: Release, static, `GGML_NATIVE=ON` (our
//! `target-cpu=native`, .cargo/config.toml), no OpenMP (llama.cpp's own thread pool, as
//! with the workspace's `default-features = false`). No web UI (its assets are not in the
//! source and would be downloaded), no HTTPS, no tests or examples; only the
//! `llama-server` target.

use std::path::{Path, PathBuf};
use std::process::Command;

/// cmake's configure arguments for `source` built in `build`.
pub(crate) fn configure_args(source: &Path, build: &Path, llama_cpp_build: u32) -> Vec<String> {
    let mut args = vec![
        "-S".to_string(),
        source.display().to_string(),
        "-B".to_string(),
        build.display().to_string(),
    ];
    let defines: [(&str, String); 14] = [
        ("CMAKE_BUILD_TYPE", "Release".into()),
        ("BUILD_SHARED_LIBS", "OFF".into()),
        ("GGML_NATIVE", "ON".into()),
        ("GGML_OPENMP", "OFF".into()),
        ("LLAMA_BUILD_TESTS", "OFF".into()),
        ("LLAMA_BUILD_EXAMPLES", "OFF".into()),
        ("LLAMA_BUILD_APP", "OFF".into()),
        ("LLAMA_BUILD_TOOLS", "ON".into()),
        ("LLAMA_BUILD_SERVER", "ON".into()),
        // The web UI: neither built with npm nor downloaded; the server runs without it.
        ("LLAMA_BUILD_UI", "OFF".into()),
        ("LLAMA_USE_PREBUILT_UI", "OFF".into()),
        // HTTPS (this version's replacement of the deprecated LLAMA_CURL): not needed on
        // 127.0.0.1, and no TLS library to find.
        ("LLAMA_OPENSSL", "OFF".into()),
        // No git here: name the build as `llama-server --version` should show it.
        ("LLAMA_BUILD_NUMBER", llama_cpp_build.to_string()),
        ("LLAMA_BUILD_COMMIT", "llama-cpp-sys-2".into()),
    ];
    args.extend(defines.iter().map(|(k, v)| format!("-D{k}={v}")));
    args
}

/// cmake's build arguments: only the server's target, one job per core.
pub(crate) fn build_args(build: &Path, jobs: usize) -> Vec<String> {
    vec![
        "--build".to_string(),
        build.display().to_string(),
        "--target".to_string(),
        "llama-server".to_string(),
        "-j".to_string(),
        jobs.max(1).to_string(),
    ]
}

/// Configures and builds in `build`; returns the built binary.
pub(crate) fn compile(
    source: &Path,
    build: &Path,
    llama_cpp_build: u32,
) -> Result<PathBuf, String> {
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    run_cmake(&configure_args(source, build, llama_cpp_build))?;
    run_cmake(&build_args(build, jobs))?;
    let binary = build.join("bin").join("llama-server");
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!("cmake built no {}", binary.display()))
    }
}

fn run_cmake(args: &[String]) -> Result<(), String> {
    crate::report(&format!("$ cmake {}", args.join(" ")));
    let status = Command::new("cmake")
        .args(args)
        .status()
        .map_err(|e| format!("cannot start cmake (apt-get install cmake): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cmake {}` exited with {status}", args.join(" ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmake_is_told_to_build_like_the_embedded_engine() {
        let args = configure_args(Path::new("/s"), Path::new("/b"), 11434);
        assert_eq!(args[..4], ["-S", "/s", "-B", "/b"]);
        for wanted in [
            "-DCMAKE_BUILD_TYPE=Release",
            "-DGGML_NATIVE=ON",
            "-DGGML_OPENMP=OFF",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DLLAMA_BUILD_SERVER=ON",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_USE_PREBUILT_UI=OFF",
            "-DLLAMA_BUILD_NUMBER=11434",
        ] {
            assert!(
                args.iter().any(|a| a == wanted),
                "{wanted} missing: {args:?}"
            );
        }
        assert_eq!(
            build_args(Path::new("/b"), 0),
            ["--build", "/b", "--target", "llama-server", "-j", "1"]
        );
    }
}
