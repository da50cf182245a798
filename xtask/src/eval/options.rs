//! `cargo xtask eval`'s command line: which splits, families and how many instances, the
//! modes, models and action kinds, the time limit, where the results go, and the arguments
//! passed on to `planwright run`.

use std::path::PathBuf;
use std::time::Duration;

use super::splits::Split;

pub(crate) const USAGE: &str = "usage: cargo xtask eval [options] [-- planwright-run-args...]

  --split dev|test|both  which split to run (default: both). dev: a fixed seed, the same
                     instances every run, failures shown with their transcripts; test: a new
                     seed each run (printed; --seed N repeats it), texts and transcripts hidden
  --per-family N     instances per family per split (default: 10)
  --families a,b     only these families (default: all; --list names them)
  --seed N           the test split's seed (default: a new one)
  --show-transcripts show the test split's failures with their transcripts too
  --model-path FILE  GGUF for the embedded model (default: planwright's default model);
                     with --base-url, the file the server serves (for the record only)
  --models a,b       embedded models of the catalogue by name (`cargo xtask model --list`),
                     each run in turn from the model cache
  --base-url URL     an OpenAI-compatible endpoint instead of the embedded model
  --model NAME       model name sent to that endpoint
  --server llama-cpp build (once, cached) and start llama.cpp's llama-server on each model
                     (--model-path, --models or the default) and run the eval through it
  --mode MODE        planning mode passed to planwright run (default: auto)
  --modes a,b        several modes, each run in turn (e.g. direct,flow,plan-act,todo,dag,auto)
  --actions a,b      action kinds (code, tools, both), each run in turn as
                     `planwright run --actions X`; without it nothing is passed (the
                     binary's default)
  --timeout SECS     time limit per task run (default: 300)
  --label TEXT       heading of the section in docs/eval.md (default: model, endpoint, mode);
                     with several modes, models or action kinds, the prefix of each section's
                     label and of the matrix table's (`TEXT: mode × model`)
  --binary PATH      use this planwright binary instead of building the release one
  --no-doc           print the report without writing docs/eval.md and docs/eval-history.jsonl
  --list             run nothing: list the families and how many instances each split
                     makes, with the dev instances' texts (the test split's with
                     --show-transcripts)";

/// The mode the eval runs when none is given.
pub(crate) const DEFAULT_MODE: &str = "auto";

/// Instances per family per split when `--per-family` is not given.
pub(crate) const DEFAULT_PER_FAMILY: usize = 10;

/// The action kinds `planwright run --actions` takes.
const ACTIONS: [&str; 3] = ["code", "tools", "both"];

/// Which splits run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Splits {
    Dev,
    Test,
    Both,
}

impl Splits {
    pub(crate) fn list(self) -> Vec<Split> {
        match self {
            Splits::Dev => vec![Split::Dev],
            Splits::Test => vec![Split::Test],
            Splits::Both => vec![Split::Dev, Split::Test],
        }
    }
}

/// The eval's options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub splits: Splits,
    pub per_family: usize,
    pub families: Vec<String>,
    /// The test split's seed (`--seed`); `None`: a new one.
    pub seed: Option<u64>,
    pub show_transcripts: bool,
    pub model_path: Option<PathBuf>,
    /// Catalogue names of embedded models (`--models`); empty: `--model-path` or the default.
    pub models: Vec<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// `--server`: an endpoint the eval starts itself on each model.
    pub server: Option<Server>,
    /// Planning modes, passed through to `planwright run --mode` as given.
    pub modes: Vec<String>,
    /// Action kinds (`--actions`), each passed to `planwright run --actions` in turn; empty:
    /// nothing is passed (the binary's default).
    pub actions: Vec<String>,
    pub timeout: Duration,
    pub label: Option<String>,
    pub binary: Option<PathBuf>,
    pub write_doc: bool,
    pub list: bool,
    pub extra: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            splits: Splits::Both,
            per_family: DEFAULT_PER_FAMILY,
            families: Vec::new(),
            seed: None,
            show_transcripts: false,
            model_path: None,
            models: Vec::new(),
            base_url: None,
            model: None,
            server: None,
            modes: vec![DEFAULT_MODE.to_string()],
            actions: Vec::new(),
            timeout: Duration::from_secs(300),
            label: None,
            binary: None,
            write_doc: true,
            list: false,
            extra: Vec::new(),
        }
    }
}

impl Options {
    /// The action kinds each run in turn: those given, or `None` (pass nothing) when
    /// `--actions` was not given.
    pub(crate) fn action_runs(&self) -> Vec<Option<String>> {
        if self.actions.is_empty() {
            vec![None]
        } else {
            self.actions.iter().cloned().map(Some).collect()
        }
    }

    /// Whether the eval runs more than one (mode, model, actions): then it writes the
    /// matrix table too.
    pub(crate) fn is_matrix(&self) -> bool {
        self.modes.len() * self.models.len().max(1) * self.action_runs().len() > 1
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
            "--split" => {
                let v = value(arg)?;
                o.splits = match v.as_str() {
                    "dev" => Splits::Dev,
                    "test" => Splits::Test,
                    "both" => Splits::Both,
                    _ => return Err(format!("--split wants dev, test or both, not '{v}'")),
                };
            }
            "--per-family" => {
                let v = value(arg)?;
                o.per_family = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--per-family wants a positive count, not '{v}'"))?;
            }
            "--families" => o.families = non_empty_list(arg)?,
            "--seed" => {
                let v = value(arg)?;
                o.seed = Some(
                    v.parse()
                        .map_err(|_| format!("--seed wants a whole number, not '{v}'"))?,
                );
            }
            "--show-transcripts" => o.show_transcripts = true,
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
            "--mode" => o.modes = vec![value(arg)?],
            "--modes" => o.modes = non_empty_list(arg)?,
            "--actions" => {
                let kinds = non_empty_list(arg)?;
                if let Some(bad) = kinds.iter().find(|k| !ACTIONS.contains(&k.as_str())) {
                    return Err(format!(
                        "--actions takes {}, not '{bad}'",
                        ACTIONS.join(", ")
                    ));
                }
                o.actions = kinds;
            }
            "--timeout" => {
                let v = value(arg)?;
                let secs: u64 = v.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    format!("--timeout wants a positive number of seconds, not '{v}'")
                })?;
                o.timeout = Duration::from_secs(secs);
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
    if o.seed.is_some() && o.splits == Splits::Dev {
        return Err(
            "--seed sets the test split's seed; the dev split's is fixed (use --split test or both)"
                .to_string(),
        );
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
            "--split",
            "test",
            "--per-family",
            "3",
            "--families",
            "csv_extract, bug_fix",
            "--seed",
            "12345",
            "--show-transcripts",
            "--timeout",
            "60",
            "--label",
            "server",
            "--",
            "--max-steps",
            "4",
        ]))
        .expect("valid");
        assert_eq!(o.base_url.as_deref(), Some("http://127.0.0.1:8000/v1"));
        assert_eq!(o.model.as_deref(), Some("qwen"));
        assert_eq!(o.splits, Splits::Test);
        assert_eq!(o.per_family, 3);
        assert_eq!(o.families, ["csv_extract", "bug_fix"]);
        assert_eq!(o.seed, Some(12345));
        assert!(o.show_transcripts);
        assert_eq!(o.timeout, Duration::from_secs(60));
        assert_eq!(o.label.as_deref(), Some("server"));
        assert_eq!(o.extra, ["--max-steps", "4"]);
        assert_eq!(o.modes, [DEFAULT_MODE]);
        assert!(!o.is_matrix());
        let d = parse(&[]).expect("defaults");
        assert_eq!(d, Options::default());
        assert_eq!(d.splits.list(), [Split::Dev, Split::Test]);
        assert_eq!(d.per_family, 10);
    }

    #[test]
    fn several_modes_models_or_action_kinds_make_a_matrix() {
        let o = parse(&args(&[
            "--modes",
            "direct,flow, plan-act,todo,dag,auto",
            "--models",
            "qwen2.5-coder-1.5b,qwen2.5-coder-0.5b",
        ]))
        .expect("valid");
        assert_eq!(o.modes.len(), 6);
        assert!(o.is_matrix());
        assert!(parse(&args(&["--modes", "direct,flow"]))
            .expect("valid")
            .is_matrix());
        assert!(!parse(&args(&["--modes", "flow", "--models", "a"]))
            .expect("valid")
            .is_matrix());
        let actions = parse(&args(&["--actions", "code,tools,both"])).expect("valid");
        assert!(actions.is_matrix());
        assert_eq!(
            actions.action_runs(),
            [
                Some("code".to_string()),
                Some("tools".to_string()),
                Some("both".to_string())
            ]
        );
        // One kind is passed on too (the lead's code-only or tools-only run); none passes
        // nothing, leaving the binary's default.
        let one = parse(&args(&["--actions", "code"])).expect("valid");
        assert_eq!(one.action_runs(), [Some("code".to_string())]);
        assert!(!one.is_matrix());
        assert_eq!(Options::default().action_runs(), [None]);
    }

    #[test]
    fn bad_options_say_what_is_wrong() {
        let err = |a: &[&str]| parse(&args(a)).expect_err("invalid");
        assert!(err(&["--timeout", "0"]).contains("--timeout wants a positive"));
        assert!(err(&["--per-family", "0"]).contains("--per-family wants a positive count"));
        assert!(err(&["--split", "train"]).contains("--split wants dev, test or both"));
        assert!(err(&["--seed", "x"]).contains("--seed wants a whole number"));
        assert!(err(&["--split", "dev", "--seed", "3"]).contains("the dev split's is fixed"));
        assert!(err(&["--actions", "code,json"]).contains("not 'json'"));
        assert!(err(&["--label"]).contains("--label needs a value"));
        assert!(err(&["--bogus"]).contains("unknown option '--bogus'"));
        assert!(err(&["--tasks", "a"]).contains("unknown option '--tasks'"));
        assert!(err(&["--model", "m"]).contains("give --base-url too"));
        assert!(err(&["--modes", " , "]).contains("--modes wants a comma-separated list"));
        assert!(err(&["--families", ""]).contains("--families wants a comma-separated list"));
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
            "--actions",
            "code,tools",
            "--split",
            "dev",
            "--families",
            "csv_extract",
        ]))
        .expect("valid");
        assert_eq!(o.server, Some(Server::LlamaCpp));
        assert_eq!(o.server.map(Server::name), Some("llama-server"));
        assert!(o.is_matrix());
        assert_eq!(o.base_url, None);
        assert_eq!(o.families, ["csv_extract"]);
        assert_eq!(o.action_runs().len(), 2);
        // The test split's seed too.
        let seeded = parse(&args(&[
            "--server",
            "llama-cpp",
            "--split",
            "test",
            "--seed",
            "7",
        ]))
        .expect("valid");
        assert_eq!(seeded.seed, Some(7));
        assert_eq!(seeded.server, Some(Server::LlamaCpp));
    }
}
