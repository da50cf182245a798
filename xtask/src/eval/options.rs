//! `cargo xtask eval`'s command line: which tasks, modes and models, the time limit, where
//! the results go, and the arguments passed on to `planwright run`.

use std::path::PathBuf;
use std::time::Duration;

pub(crate) const USAGE: &str = "usage: cargo xtask eval [options] [-- planwright-run-args...]

  --model-path FILE  GGUF for the embedded model (default: planwright's default model);
                     with --base-url, the file the server serves (for the record only)
  --models a,b       embedded models of the catalogue by name (`cargo xtask model --list`),
                     each run in turn from the model cache
  --base-url URL     an OpenAI-compatible endpoint instead of the embedded model
  --model NAME       model name sent to that endpoint
  --server llama-cpp build (once, cached) and start llama.cpp's llama-server on each model
                     (--model-path, --models or the default) and run the suite through it
  --tasks a,b,c      run only these tasks (default: all)
  --mode MODE        planning mode passed to planwright run (default: auto)
  --modes a,b        several modes, each run in turn (e.g. direct,flow,plan-act,todo,dag,auto)
  --timeout SECS     time limit per task run (default: 300)
  --runs N           run each task N times (default: 1)
  --label TEXT       heading of the section in docs/eval.md (default: model, endpoint, mode);
                     with several modes or models, the prefix of each section's label and
                     of the mode × model table's (`TEXT: mode × model`)
  --binary PATH      use this planwright binary instead of building the release one
  --no-doc           print the tables without writing docs/eval.md
  --list             list the tasks and exit";

/// The mode the eval runs when none is given.
pub(crate) const DEFAULT_MODE: &str = "auto";

/// The eval's options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub model_path: Option<PathBuf>,
    /// Catalogue names of embedded models (`--models`); empty: `--model-path` or the default.
    pub models: Vec<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// `--server`: an endpoint the eval starts itself on each model.
    pub server: Option<Server>,
    pub tasks: Vec<String>,
    /// Planning modes, passed through to `planwright run --mode` as given.
    pub modes: Vec<String>,
    pub timeout: Duration,
    pub runs: u32,
    pub label: Option<String>,
    pub binary: Option<PathBuf>,
    pub write_doc: bool,
    pub list: bool,
    pub extra: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            model_path: None,
            models: Vec::new(),
            base_url: None,
            model: None,
            server: None,
            tasks: Vec::new(),
            modes: vec![DEFAULT_MODE.to_string()],
            timeout: Duration::from_secs(300),
            runs: 1,
            label: None,
            binary: None,
            write_doc: true,
            list: false,
            extra: Vec::new(),
        }
    }
}

impl Options {
    /// Whether the eval runs more than one (mode, model): then it writes the mode × model
    /// table too.
    pub(crate) fn is_matrix(&self) -> bool {
        self.modes.len() * self.models.len().max(1) > 1
    }
}

/// A server the eval starts on each model (`--server`), reached through its
/// OpenAI-compatible endpoint as `--base-url` would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Server {
    /// llama.cpp's own `llama-server` (xtask/src/llama_server/).
    LlamaCpp,
}

impl Server {
    /// The name in labels and tables.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Server::LlamaCpp => "llama-server",
        }
    }
}

/// `a, b,,c` as `[a, b, c]`.
fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub(crate) fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"))
        };
        let mut non_empty_list = |name: &str| {
            let items = list(&value(name)?);
            if items.is_empty() {
                Err(format!("{name} wants a comma-separated list of names"))
            } else {
                Ok(items)
            }
        };
        match arg.as_str() {
            "--model-path" => o.model_path = Some(PathBuf::from(value(arg)?)),
            "--models" => o.models = non_empty_list(arg)?,
            "--base-url" => o.base_url = Some(value(arg)?),
            "--model" => o.model = Some(value(arg)?),
            "--server" => {
                o.server = match value(arg)?.as_str() {
                    "llama-cpp" => Some(Server::LlamaCpp),
                    other => {
                        return Err(format!("--server knows llama-cpp, not '{other}'"));
                    }
                }
            }
            "--tasks" => o.tasks = list(&value(arg)?),
            "--mode" => o.modes = vec![value(arg)?],
            "--modes" => o.modes = non_empty_list(arg)?,
            "--timeout" => {
                let v = value(arg)?;
                let secs: u64 = v.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    format!("--timeout wants a positive number of seconds, not '{v}'")
                })?;
                o.timeout = Duration::from_secs(secs);
            }
            "--runs" => {
                let v = value(arg)?;
                o.runs = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--runs wants a positive count, not '{v}'"))?;
            }
            "--label" => o.label = Some(value(arg)?),
            "--binary" => o.binary = Some(PathBuf::from(value(arg)?)),
            "--no-doc" => o.write_doc = false,
            "--list" => o.list = true,
            "--" => {
                o.extra = it.by_ref().cloned().collect();
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown option '{other}'\n\n{USAGE}")),
        }
    }
    if o.server.is_some() && (o.base_url.is_some() || o.model.is_some()) {
        return Err(
            "--server starts its own endpoint and names the model after its file: drop \
             --base-url and --model"
                .to_string(),
        );
    }
    if o.model.is_some() && o.base_url.is_none() {
        return Err("--model names the endpoint's model: give --base-url too".to_string());
    }
    if !o.models.is_empty() {
        if o.base_url.is_some() {
            return Err(
                "--models names embedded models of the catalogue; an endpoint takes --model"
                    .to_string(),
            );
        }
        if o.model_path.is_some() {
            return Err("give --models or --model-path, not both".to_string());
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_parse_with_extra_args_after_the_separator() {
        let o = parse(&args(&[
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--model",
            "qwen",
            "--tasks",
            "sum, hello",
            "--timeout",
            "60",
            "--runs",
            "2",
            "--label",
            "server",
            "--",
            "--max-steps",
            "4",
        ]))
        .expect("valid");
        assert_eq!(o.base_url.as_deref(), Some("http://127.0.0.1:8000/v1"));
        assert_eq!(o.model.as_deref(), Some("qwen"));
        assert_eq!(o.tasks, ["sum", "hello"]);
        assert_eq!(o.timeout, Duration::from_secs(60));
        assert_eq!(o.runs, 2);
        assert_eq!(o.label.as_deref(), Some("server"));
        assert_eq!(o.extra, ["--max-steps", "4"]);
        assert_eq!(o.modes, [DEFAULT_MODE]);
        assert!(!o.is_matrix());
        assert_eq!(parse(&[]).expect("defaults"), Options::default());
    }

    #[test]
    fn several_modes_and_models_make_a_matrix() {
        let o = parse(&args(&[
            "--modes",
            "direct,flow, plan-act,todo,dag,auto",
            "--models",
            "qwen2.5-coder-1.5b,qwen2.5-coder-0.5b",
        ]))
        .expect("valid");
        assert_eq!(
            o.modes,
            ["direct", "flow", "plan-act", "todo", "dag", "auto"]
        );
        assert_eq!(o.models, ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]);
        assert!(o.is_matrix());
        let one_mode = parse(&args(&["--mode", "direct", "--models", "a,b"])).expect("valid");
        assert_eq!(one_mode.modes, ["direct"]);
        assert!(one_mode.is_matrix());
        let one_model = parse(&args(&["--modes", "direct,flow"])).expect("valid");
        assert!(one_model.is_matrix());
        assert!(!parse(&args(&["--modes", "flow", "--models", "a"]))
            .expect("valid")
            .is_matrix());
    }

    #[test]
    fn bad_options_say_what_is_wrong() {
        let err = |a: &[&str]| parse(&args(a)).expect_err("invalid");
        assert!(err(&["--timeout", "0"]).contains("--timeout wants a positive"));
        assert!(err(&["--runs", "x"]).contains("--runs wants a positive count, not 'x'"));
        assert!(err(&["--label"]).contains("--label needs a value"));
        assert!(err(&["--bogus"]).contains("unknown option '--bogus'"));
        assert!(err(&["--model", "m"]).contains("give --base-url too"));
        assert!(err(&["--modes", " , "]).contains("--modes wants a comma-separated list"));
        assert!(err(&["--models", ""]).contains("--models wants a comma-separated list"));
        assert!(err(&["--models", "a", "--base-url", "http://x/v1"])
            .contains("an endpoint takes --model"));
        assert!(err(&["--models", "a", "--model-path", "m.gguf"])
            .contains("--models or --model-path, not both"));
        assert!(err(&["--server", "vllm"]).contains("--server knows llama-cpp, not 'vllm'"));
        assert!(err(&["--server", "llama-cpp", "--base-url", "http://x/v1"])
            .contains("drop --base-url and --model"));
    }

    #[test]
    fn a_started_server_combines_with_the_other_options() {
        let o = parse(&args(&[
            "--server",
            "llama-cpp",
            "--models",
            "qwen2.5-coder-1.5b,qwen2.5-coder-0.5b",
            "--modes",
            "direct,auto",
            "--tasks",
            "hello",
        ]))
        .expect("valid");
        assert_eq!(o.server, Some(Server::LlamaCpp));
        assert_eq!(o.server.map(Server::name), Some("llama-server"));
        assert!(o.is_matrix());
        assert_eq!(o.base_url, None);
    }
}
