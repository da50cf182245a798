//! `browser_screenshot`: a PNG in `<workspace>/screenshots/`.

use std::path::Path;

use chromiumoxide::cdp::browser_protocol::page::{CaptureScreenshotFormat, Viewport};
use chromiumoxide::page::ScreenshotParams;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use domain::ports::ToolOutput;

use super::Session;
use crate::error::BrowserError;

/// Tallest full-page screenshot, in CSS pixels.
const MAX_SCREENSHOT_HEIGHT: f64 = 16_384.0;

impl Session {
    pub(super) async fn screenshot(
        &mut self,
        full_page: bool,
        workspace: &Path,
        next: &mut u32,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let limit = self.config.action_timeout;
        let mut params = ScreenshotParams::builder().format(CaptureScreenshotFormat::Png);
        let mut note = String::new();
        if full_page {
            let metrics = self
                .guard(
                    "measuring the page",
                    limit,
                    cancel,
                    self.page.layout_metrics(),
                )
                .await?;
            let size = metrics.css_content_size;
            let height = size.height.min(MAX_SCREENSHOT_HEIGHT);
            if size.height > MAX_SCREENSHOT_HEIGHT {
                note = format!(
                    " (cut at {MAX_SCREENSHOT_HEIGHT} of {} px)",
                    size.height.round()
                );
            }
            params = params.capture_beyond_viewport(true).clip(Viewport {
                x: 0.0,
                y: 0.0,
                width: size.width.max(1.0),
                height: height.max(1.0),
                scale: 1.0,
            });
        }
        let png = self
            .guard(
                "taking the screenshot",
                limit,
                cancel,
                self.page.screenshot(params.build()),
            )
            .await?;
        let (relative, absolute) = save_png(workspace, next, &png).await?;
        let url = self.page_url(cancel).await;
        tracing::debug!(path = %absolute, bytes = png.len(), "screenshot saved");
        Ok(ToolOutput {
            content: format!(
                "Saved a {} screenshot of {url}{note} to {relative} ({} bytes).",
                if full_page { "full-page" } else { "window" },
                png.len()
            ),
            attachments: vec![relative],
            ..ToolOutput::default()
        })
    }

    pub(super) async fn page_url(&self, cancel: &CancellationToken) -> String {
        match self
            .eval("reading the address", "location.href".into(), cancel)
            .await
        {
            Ok(Value::String(s)) => s,
            _ => "the page".to_string(),
        }
    }
}

/// Writes `png` to `<workspace>/screenshots/<n>.png` with the first free `n >= *next`;
/// returns the workspace-relative and the absolute path.
async fn save_png(
    workspace: &Path,
    next: &mut u32,
    png: &[u8],
) -> Result<(String, String), BrowserError> {
    use tokio::io::AsyncWriteExt;
    let dir = workspace.join("screenshots");
    let fail = |e: std::io::Error| {
        BrowserError::Page(format!(
            "could not save the screenshot in the workspace: {e}"
        ))
    };
    if let Ok(meta) = tokio::fs::symlink_metadata(&dir).await {
        if meta.file_type().is_symlink() || !meta.is_dir() {
            return Err(BrowserError::Page(
                "could not save the screenshot: the workspace's screenshots entry is not a \
                 plain folder"
                    .to_string(),
            ));
        }
    }
    tokio::fs::create_dir_all(&dir).await.map_err(fail)?;
    let mut n = (*next).max(1);
    loop {
        let path = dir.join(format!("{n}.png"));
        match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await
        {
            Ok(mut file) => {
                file.write_all(png).await.map_err(fail)?;
                file.flush().await.map_err(fail)?;
                *next = n + 1;
                return Ok((format!("screenshots/{n}.png"), path.display().to_string()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(fail(e)),
        }
    }
}
