//! A running `llama-server`: started on a free port of 127.0.0.1 with the embedded
//! engine's threads and context, its output in a log file, ready once `GET /health`
//! answers 200, killed when dropped (the eval's end, an error, a panic).
//!
//! The server stays in xtask's process group, so a Ctrl-C in the terminal reaches it too;
//! it starts no children of its own, so killing its pid stops all of it.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::health;

/// How long the model may take to load.
const READY_WITHIN: Duration = Duration::from_secs(300);

/// What to serve and how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerConfig {
    pub model: PathBuf,
    /// The model name the server reports and the eval sends (`--model`).
    pub alias: String,
    pub threads: usize,
    pub context_tokens: u32,
    pub port: u16,
}

impl ServerConfig {
    /// The embedded engine's settings for `model` (adapter-llama's `LlamaConfig` defaults:
    /// one thread per core, 8192 tokens of context) on a free port.
    pub(crate) fn like_embedded(model: &Path, alias: &str) -> Result<ServerConfig, String> {
        Ok(ServerConfig {
            model: model.to_path_buf(),
            alias: alias.to_string(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            context_tokens: 8192,
            port: free_port()?,
        })
    }
}

/// The command line of `llama-server` for `config`.
pub(crate) fn args(config: &ServerConfig) -> Vec<String> {
    let threads = config.threads.max(1).to_string();
    vec![
        "--model".into(),
        config.model.display().to_string(),
        "--alias".into(),
        config.alias.clone(),
        "--host".into(),
        "127.0.0.1".into(),
        "--port".into(),
        config.port.to_string(),
        "--threads".into(),
        threads.clone(),
        "--threads-batch".into(),
        threads,
        "--ctx-size".into(),
        config.context_tokens.to_string(),
        // One request at a time over the whole context, as the embedded engine serves them.
        "--parallel".into(),
        "1".into(),
        // The GGUF's own chat template through the Jinja engine: tool calls in and out of
        // `/v1/chat/completions` follow it (the default of this version, said anyway).
        "--jinja".into(),
        // Built without the web UI's assets.
        "--no-ui".into(),
        // Never reach out for a model or a template.
        "--offline".into(),
    ]
}

/// A port of 127.0.0.1 free a moment ago (the listener is dropped before the server binds).
pub(crate) fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port on 127.0.0.1: {e}"))
}

/// A started, healthy server; killed when dropped.
#[derive(Debug)]
pub(crate) struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Server {
    /// Starts `binary` with `config`, its output in `log`, and waits for `/health`.
    pub(crate) fn start(
        binary: &Path,
        config: &ServerConfig,
        log: &Path,
    ) -> Result<Server, String> {
        if !config.model.is_file() {
            return Err(format!("no model file at {}", config.model.display()));
        }
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        let out =
            std::fs::File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("opening {}: {e}", log.display()))?;
        let args = args(config);
        crate::report(&format!("$ {} {}", binary.display(), args.join(" ")));
        let child = Command::new(binary)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], config.port)),
            log: log.to_path_buf(),
        };
        let waited = health::wait_until_healthy(server.addr, READY_WITHIN, || server.exited());
        match waited {
            Ok(took) => {
                crate::report(&format!(
                    "llama-server ready on {} after {:.1} s (log: {})",
                    server.base_url(),
                    took.as_secs_f64(),
                    log.display()
                ));
                Ok(server)
            }
            Err(e) => Err(format!("{e}\n{}", server.log_tail())),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The OpenAI-compatible endpoint, as `planwright run --base-url` takes it.
    pub(crate) fn openai_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Why the process is gone, if it is.
    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot wait for it: {e}")),
        }
    }

    /// An error when the server has stopped since it started (with its log's end).
    pub(crate) fn check_running(&mut self) -> Result<(), String> {
        match self.exited() {
            None => Ok(()),
            Some(why) => Err(format!("llama-server stopped ({why})\n{}", self.log_tail())),
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        format!("last lines of {}:\n{tail}", self.log.display())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
            crate::report(&format!("llama-server on {} stopped", self.base_url()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_matches_the_embedded_engine() {
        let config = ServerConfig {
            model: PathBuf::from("/m/q.gguf"),
            alias: "qwen2.5-coder-1.5b".to_string(),
            threads: 2,
            context_tokens: 8192,
            port: 4242,
        };
        let line = args(&config).join(" ");
        for wanted in [
            "--model /m/q.gguf",
            "--alias qwen2.5-coder-1.5b",
            "--host 127.0.0.1 --port 4242",
            "--threads 2 --threads-batch 2",
            "--ctx-size 8192",
            "--parallel 1",
            "--jinja",
        ] {
            assert!(line.contains(wanted), "{wanted} missing: {line}");
        }
        assert!(free_port().expect("a port") > 0);
    }

    /// A binary that exits at once is reported with its log, not waited for until the
    /// time limit; a missing model file is refused before anything starts. (`sh` stands in
    /// for the server: it refuses `--model` as an option and exits.)
    #[test]
    fn a_server_that_dies_at_start_is_reported() {
        let dir = std::env::temp_dir().join(format!("xtask-server-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let model = dir.join("m.gguf");
        std::fs::write(&model, "GGUF").expect("model");
        let log = dir.join("server.log");
        let mut config = ServerConfig::like_embedded(&model, "m").expect("config");
        let err = Server::start(Path::new("sh"), &config, &log).expect_err("dies");
        assert!(
            err.contains("exited before it was ready") && err.contains("last lines of"),
            "{err}"
        );
        let logged = std::fs::read_to_string(&log).expect("log");
        assert!(!logged.trim().is_empty(), "sh's complaint is in the log");
        config.model = dir.join("missing.gguf");
        let err = Server::start(Path::new("sh"), &config, &log).expect_err("no model");
        assert!(err.contains("no model file"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
