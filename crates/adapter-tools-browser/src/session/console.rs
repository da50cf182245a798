//! `browser_console_exec`: JavaScript in the page, its value as JSON or its exception.

use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::{
    CallFunctionOnParams, EvaluateParams, ReleaseObjectGroupParams, RemoteObject,
    RemoteObjectSubtype, RemoteObjectType, TerminateExecutionParams, TimeDelta,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use domain::ports::ToolOutput;

use super::{clip, exception_text, Session};
use crate::error::BrowserError;
use crate::scripts;

/// Object group of `browser_console_exec` results, released after each call.
const OBJECT_GROUP: &str = "planwright-console";

impl Session {
    pub(super) async fn console_exec(
        &mut self,
        js: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let limit = self.config.action_timeout;
        let mut params = EvaluateParams::new(js);
        params.await_promise = Some(true);
        params.repl_mode = Some(true);
        params.user_gesture = Some(true);
        params.object_group = Some(OBJECT_GROUP.to_string());
        params.timeout = Some(TimeDelta::new(limit.as_millis() as f64));
        let resp = match self
            .guard(
                "running the script",
                limit,
                cancel,
                self.page.execute(params),
            )
            .await
        {
            Ok(resp) => resp.result,
            Err(BrowserError::Page(m)) => {
                // A script stuck in a loop or an await that never ends: stop it.
                let _ = tokio::time::timeout(
                    Duration::from_secs(2),
                    self.page.execute(TerminateExecutionParams::default()),
                )
                .await;
                return Err(BrowserError::Page(m));
            }
            Err(e) => return Err(e),
        };
        let max = self.config.max_view_chars;
        if let Some(ex) = resp.exception_details {
            self.release_console_objects().await;
            return Ok(ToolOutput::error(clip(
                &format!("The script threw: {}", exception_text(&ex)),
                max,
            )));
        }
        let text = self.stringify(&resp.result, cancel).await;
        self.release_console_objects().await;
        Ok(ToolOutput::ok(clip(&text?, max)))
    }

    /// A result as JSON text (`undefined`, `null`, `"text"`, `{...}`, or its string form).
    pub(super) async fn stringify(
        &self,
        object: &RemoteObject,
        cancel: &CancellationToken,
    ) -> Result<String, BrowserError> {
        if let Some(u) = &object.unserializable_value {
            return Ok(u.inner().clone());
        }
        match object.r#type {
            RemoteObjectType::Undefined => return Ok("undefined".to_string()),
            RemoteObjectType::Object if object.subtype == Some(RemoteObjectSubtype::Null) => {
                return Ok("null".to_string())
            }
            _ => {}
        }
        if let Some(value) = &object.value {
            return Ok(value.to_string());
        }
        let Some(id) = object.object_id.clone() else {
            return Ok(object.description.clone().unwrap_or_default());
        };
        let mut params = CallFunctionOnParams::new(scripts::STRINGIFY_FN);
        params.object_id = Some(id);
        params.return_by_value = Some(true);
        let resp = self
            .guard(
                "reading the result",
                self.config.action_timeout,
                cancel,
                self.page.execute(params),
            )
            .await?;
        Ok(match resp.result.result.value {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => object.description.clone().unwrap_or_default(),
        })
    }

    pub(super) async fn release_console_objects(&self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.page
                .execute(ReleaseObjectGroupParams::new(OBJECT_GROUP)),
        )
        .await;
    }
}
