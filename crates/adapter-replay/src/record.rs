//! [`RecordingLlm`]: passes calls through to another client and writes each to a cassette.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use domain::llm::{ChatRequest, ChatResponse};
use domain::ports::LlmClient;
use domain::LlmError;

use crate::cassette::{request_value, Entry, ErrorRecord, Header, CASSETTE_VERSION};
use crate::error::CassetteError;

/// Stands in for a secret in a cassette.
const REDACTED: &str = "[REDACTED]";

/// An [`LlmClient`] that forwards every call to `inner` and appends the request and its
/// outcome to a cassette file, one flushed JSON line per call.
///
/// A failure to write does not fail the call; it is logged and kept for
/// [`RecordingLlm::failure`], so the caller can report that the cassette is incomplete.
pub struct RecordingLlm {
    inner: Arc<dyn LlmClient>,
    path: PathBuf,
    file: Mutex<File>,
    next_seq: AtomicU64,
    secrets: Vec<String>,
    failure: Mutex<Option<String>>,
}

impl RecordingLlm {
    /// Creates (or truncates) the cassette at `path` and writes its header.
    pub fn create(
        path: impl AsRef<Path>,
        inner: Arc<dyn LlmClient>,
        model: Option<&str>,
    ) -> Result<RecordingLlm, CassetteError> {
        let path = path.as_ref().to_path_buf();
        let io = |doing, source| CassetteError::Io {
            doing,
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("create the folder of", e))?;
        }
        let mut file = File::create(&path).map_err(|e| io("create", e))?;
        let header = Header {
            cassette: CASSETTE_VERSION,
            created_at: Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            model: model.map(str::to_owned),
        };
        let line = serde_json::to_string(&header).map_err(|e| {
            io(
                "write",
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        })?;
        file.write_all(format!("{line}\n").as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| io("write", e))?;
        Ok(RecordingLlm {
            inner,
            path,
            file: Mutex::new(file),
            next_seq: AtomicU64::new(0),
            secrets: Vec::new(),
            failure: Mutex::new(None),
        })
    }

    /// Strings (API keys) replaced by `[REDACTED]` wherever they would appear in the file.
    /// Blank strings are ignored.
    pub fn with_secrets(mut self, secrets: impl IntoIterator<Item = String>) -> RecordingLlm {
        self.secrets.extend(
            secrets
                .into_iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty()),
        );
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the cassette is incomplete, if a line could not be written.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    fn write(&self, entry: &Entry) {
        let result = serde_json::to_string(entry)
            .map_err(|e| e.to_string())
            .and_then(|line| {
                let line = self.redact(line);
                let mut file = self
                    .file
                    .lock()
                    .map_err(|_| "the cassette lock is poisoned".to_owned())?;
                file.write_all(format!("{line}\n").as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = result {
            let message = format!(
                "cannot write call #{} to the cassette {}: {e}",
                entry.seq,
                self.path.display()
            );
            tracing::error!(error = %message, "recording failed");
            if let Ok(mut failure) = self.failure.lock() {
                failure.get_or_insert(message);
            }
        }
    }

    fn redact(&self, mut line: String) -> String {
        for secret in &self.secrets {
            if line.contains(secret.as_str()) {
                line = line.replace(secret.as_str(), REDACTED);
            }
        }
        line
    }
}

#[async_trait]
impl LlmClient for RecordingLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        // Numbered when made, so the order of requests survives parallel calls.
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed) + 1;
        let request_json = request_value(&request)
            .map_err(|e| LlmError::Permanent(format!("cannot record the request: {e}")))?;
        let result = self.inner.chat(request).await;
        let entry = match &result {
            Ok(response) => Entry {
                seq,
                request: request_json,
                response: Some(response.clone()),
                error: None,
            },
            Err(err) => Entry {
                seq,
                request: request_json,
                response: None,
                error: Some(ErrorRecord::from(err)),
            },
        };
        self.write(&entry);
        result
    }
}

impl fmt::Debug for RecordingLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingLlm")
            .field("path", &self.path)
            .field("secrets", &self.secrets.len())
            .finish_non_exhaustive()
    }
}
