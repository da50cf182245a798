//! The OTLP exporter's HTTP client: the workspace's reqwest (rustls, `http-client`'s roots)
//! behind `opentelemetry_http::HttpClient`, so the tree keeps one reqwest (the exporter's own
//! reqwest feature pins another). The exporter calls it from the batch processor's thread,
//! which has no tokio runtime: each request runs on a small runtime of its own thread.
//! A failed export (collector down, slow, or answering an error) is one warning line until
//! an export succeeds again; it never reaches a run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// How long one export request may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The exporter's client.
#[derive(Debug, Clone)]
pub struct OtlpHttpClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    /// Whether the warning for the current outage was given.
    warned: Arc<AtomicBool>,
    /// The collector as warnings name it (scheme, host and port: no path, no credentials).
    shown: String,
}

impl OtlpHttpClient {
    /// A client for `url` (its scheme picks the certificate roots); `None` when its runtime
    /// thread cannot start.
    pub fn new(url: &reqwest::Url) -> Result<OtlpHttpClient, String> {
        let client =
            http_client::client_builder::<&[u8]>(http_client::Roots::for_scheme(url.scheme()), &[])
                .map_err(|e| e.to_string())?
                .timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|e| http_client::error_chain(&e.without_url()))?;
        let runtime = export_runtime()?;
        let shown = format!(
            "{}://{}{}",
            url.scheme(),
            url.host_str().unwrap_or_default(),
            url.port().map(|p| format!(":{p}")).unwrap_or_default()
        );
        Ok(OtlpHttpClient {
            client,
            runtime,
            warned: Arc::new(AtomicBool::new(false)),
            shown,
        })
    }

    fn failed(&self, why: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "planwright::telemetry",
                "traces could not be sent to {} ({why}); runs go on, their spans are dropped \
                 until the collector answers",
                self.shown
            );
        }
    }
}

/// A current-thread runtime on a thread of its own, alive as long as the process.
fn export_runtime() -> Result<tokio::runtime::Handle, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the export runtime: {e}"))?;
    let handle = runtime.handle().clone();
    std::thread::Builder::new()
        .name("otlp-export".into())
        .spawn(move || runtime.block_on(std::future::pending::<()>()))
        .map_err(|e| format!("cannot start the export thread: {e}"))?;
    Ok(handle)
}

#[async_trait::async_trait]
impl HttpClient for OtlpHttpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let (parts, body) = request.into_parts();
        let task = self.runtime.spawn(async move {
            let mut builder = client.request(parts.method, parts.uri.to_string());
            for (name, value) in &parts.headers {
                builder = builder.header(name, value);
            }
            let response = builder.body(body).send().await?;
            let status = response.status();
            let bytes = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, bytes))
        });
        let outcome = match task.await {
            Ok(Ok((status, bytes))) => {
                if status.is_success() {
                    self.warned.store(false, Ordering::Relaxed);
                } else {
                    self.failed(&format!("HTTP {}", status.as_u16()));
                }
                Response::builder()
                    .status(status.as_u16())
                    .body(bytes)
                    .map_err(HttpError::from)
            }
            Ok(Err(e)) => {
                let why = http_client::error_chain(&e.without_url());
                self.failed(&why);
                Err(why.into())
            }
            Err(e) => {
                self.failed(&e.to_string());
                Err(e.to_string().into())
            }
        };
        outcome
    }
}
