//! [`ReplayLlm`]: serves a cassette's recorded responses to the same requests.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use domain::llm::{ChatRequest, ChatResponse};
use domain::ports::LlmClient;
use domain::LlmError;
use serde_json::Value;

use crate::cassette::{request_value, Entry, Header, CASSETTE_VERSION};
use crate::diff::first_difference;
use crate::error::CassetteError;

/// An [`LlmClient`] that answers from a cassette, with no network.
pub struct ReplayLlm {
    path: PathBuf,
    /// In `seq` order.
    entries: Vec<Entry>,
    header: Header,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    served: Vec<bool>,
    divergence: Option<String>,
}

impl ReplayLlm {
    /// Reads the cassette at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<ReplayLlm, CassetteError> {
        let path = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(|source| CassetteError::Io {
            doing: "read the cassette",
            path: path.clone(),
            source,
        })?;
        let parse_error = |line: usize, message: String| CassetteError::Parse {
            path: path.clone(),
            line,
            message,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .filter(|(_, l)| !l.trim().is_empty());
        let (n, first) = lines
            .next()
            .ok_or_else(|| parse_error(1, "the file is empty, not a cassette".into()))?;
        let header: Header = serde_json::from_str(first).map_err(|e| {
            parse_error(
                n,
                format!("not a cassette header ({e}); expected {{\"cassette\": 1, ...}}"),
            )
        })?;
        if header.cassette != CASSETTE_VERSION {
            return Err(parse_error(
                n,
                format!(
                    "cassette version {} is not supported (this build reads version {CASSETTE_VERSION})",
                    header.cassette
                ),
            ));
        }
        let mut entries = Vec::new();
        for (n, line) in lines {
            let entry: Entry = serde_json::from_str(line)
                .map_err(|e| parse_error(n, format!("not a recorded call: {e}")))?;
            if entry.response.is_none() == entry.error.is_none() {
                return Err(parse_error(
                    n,
                    "a recorded call needs exactly one of `response` and `error`".into(),
                ));
            }
            entries.push(entry);
        }
        entries.sort_by_key(|e| e.seq);
        Ok(ReplayLlm {
            state: Mutex::new(State {
                served: vec![false; entries.len()],
                divergence: None,
            }),
            path,
            entries,
            header,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// How many calls the cassette holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first divergence, once a request matched no recorded one (or none was left).
    pub fn divergence(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.divergence.clone())
    }

    /// `seq` numbers of recorded calls never requested.
    pub fn unserved(&self) -> Vec<u64> {
        let Ok(state) = self.state.lock() else {
            return Vec::new();
        };
        self.entries
            .iter()
            .zip(&state.served)
            .filter(|(_, served)| !**served)
            .map(|(e, _)| e.seq)
            .collect()
    }

    /// What is wrong with the replay once the run is over: the divergence, else recorded
    /// calls the run never made. `None` when the run made exactly the recorded requests.
    pub fn verdict(&self) -> Option<String> {
        if let Some(d) = self.divergence() {
            return Some(d);
        }
        let unserved = self.unserved();
        let first = unserved.first()?;
        Some(format!(
            "replay diverged: the run ended with {} of the {} recorded requests never made \
             (the first is request #{first}) in {}",
            unserved.len(),
            self.entries.len(),
            self.path.display()
        ))
    }

    fn serve(&self, live: &Value) -> Result<ChatResponse, LlmError> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| LlmError::Permanent("the replay state lock is poisoned".into()))?;
        if let Some(d) = &state.divergence {
            return Err(LlmError::Permanent(d.clone()));
        }
        let next = state.served.iter().position(|served| !served);
        let matched = next.and_then(|first| {
            (first..self.entries.len())
                .find(|&i| !state.served[i] && self.entries[i].request == *live)
        });
        let Some(i) = matched else {
            let message = self.divergence_message(next, live);
            tracing::error!(divergence = %message, "replay diverged");
            state.divergence = Some(message.clone());
            return Err(LlmError::Permanent(message));
        };
        state.served[i] = true;
        let entry = &self.entries[i];
        match (&entry.response, &entry.error) {
            (Some(response), _) => Ok(response.clone()),
            (None, Some(err)) => Err(LlmError::from(err)),
            (None, None) => Err(LlmError::Permanent(format!(
                "recorded request #{} has no outcome",
                entry.seq
            ))),
        }
    }

    fn divergence_message(&self, next: Option<usize>, live: &Value) -> String {
        let Some(next) = next else {
            let count = self.entries.len();
            return format!(
                "replay diverged at request #{}: the cassette {} has no more recorded requests \
                 (it holds {count}); the run made one more ({})",
                self.entries.last().map_or(1, |e| e.seq + 1),
                self.path.display(),
                purpose(live)
            );
        };
        let entry = &self.entries[next];
        let detail = match first_difference(&entry.request, live) {
            Some((path, recorded, now)) => {
                format!("at {path} the cassette has {recorded} but the run sent {now}")
            }
            None => "the requests are equal".to_owned(),
        };
        format!(
            "replay diverged at request #{} ({}) of {}: {detail}",
            entry.seq,
            purpose(&entry.request),
            self.path.display()
        )
    }
}

fn purpose(request: &Value) -> String {
    match request.get("purpose").and_then(Value::as_str) {
        Some(p) => format!("purpose {p}"),
        None => "no purpose".to_owned(),
    }
}

#[async_trait]
impl LlmClient for ReplayLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let live = request_value(&request)
            .map_err(|e| LlmError::Permanent(format!("cannot encode the request: {e}")))?;
        self.serve(&live)
    }
}

impl fmt::Debug for ReplayLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayLlm")
            .field("path", &self.path)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}
