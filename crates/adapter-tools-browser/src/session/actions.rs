//! `browser_click`, `browser_input`, `browser_press_key`, `browser_scroll` and
//! `browser_select_option`.

use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use chromiumoxide::layout::Point;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use domain::ports::ToolOutput;

use super::{clip, ClickTarget, Session};
use crate::args::ScrollDirection;
use crate::error::{no_element, BrowserError};
use crate::keys;
use crate::scripts::{self, call};

impl Session {
    pub(super) async fn click(
        &mut self,
        target: ClickTarget,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let (what, point, index) = match target {
            ClickTarget::Index(index) => {
                let loc: Located = self
                    .eval_as(
                        "finding the element",
                        call(scripts::LOCATE_JS, &[json!(index)]),
                        cancel,
                    )
                    .await?;
                if !loc.found {
                    return Err(BrowserError::Page(no_element(index)));
                }
                if loc.tag == "select" {
                    return Err(BrowserError::Page(format!(
                        "element [{index}] is a <select>; use browser_select_option to choose one \
                         of its options"
                    )));
                }
                if loc.disabled {
                    return Err(BrowserError::Page(format!(
                        "element [{index}] {} is disabled",
                        loc.desc
                    )));
                }
                let point = loc.hit.then_some(Point { x: loc.x, y: loc.y });
                (format!("[{index}] {}", loc.desc), point, Some(index))
            }
            ClickTarget::Point { x, y } => {
                let (w, h) = self.config.window;
                if x < 0.0 || y < 0.0 || x > f64::from(w) || y > f64::from(h) {
                    return Err(BrowserError::Page(format!(
                        "the point ({x}, {y}) is outside the {w}x{h} window"
                    )));
                }
                (format!("at ({x}, {y})"), Some(Point { x, y }), None)
            }
        };
        let token = self.watch(cancel).await?;
        match (point, index) {
            (Some(point), _) => {
                self.guard(
                    "clicking",
                    self.config.action_timeout,
                    cancel,
                    self.page.click(point),
                )
                .await?;
            }
            (None, Some(index)) => {
                // Something covers the element's centre: click it from script instead.
                let clicked = self
                    .eval("clicking", call(scripts::JS_CLICK, &[json!(index)]), cancel)
                    .await?;
                if clicked != Value::Bool(true) {
                    return Err(BrowserError::Page(no_element(index)));
                }
            }
            (None, None) => {}
        }
        let settled = self.settle(token.as_deref(), cancel).await?;
        self.report(format!("Clicked {what}."), settled, true, cancel)
            .await
    }

    pub(super) async fn input(
        &mut self,
        index: u32,
        text: &str,
        press_enter: bool,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let prep: Prepared = self
            .eval_as(
                "finding the field",
                call(scripts::PREPARE_INPUT_JS, &[json!(index)]),
                cancel,
            )
            .await?;
        if !prep.found {
            return Err(BrowserError::Page(no_element(index)));
        }
        if !prep.ok {
            return Err(BrowserError::Page(format!(
                "cannot type into element [{index}]: {}",
                prep.reason
            )));
        }
        if prep.mode == "set" {
            self.eval(
                "setting the value",
                call(scripts::SET_VALUE_JS, &[json!(index), json!(text)]),
                cancel,
            )
            .await?;
        } else if !text.is_empty() {
            self.guard(
                "typing",
                self.config.action_timeout,
                cancel,
                self.page.execute(InsertTextParams::new(text)),
            )
            .await?;
        }
        let value = self
            .eval(
                "reading the field",
                call(scripts::FINISH_INPUT_JS, &[json!(index)]),
                cancel,
            )
            .await?;
        let value = match value {
            Value::String(s) => clip(&s, 200),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let mut summary = format!(
            "Typed into [{index}] {}; its value is now {}.",
            prep.desc,
            json!(value)
        );
        if !press_enter {
            return Ok(ToolOutput::ok(summary));
        }
        let token = self.watch(cancel).await?;
        self.press(&keys::parse("Enter").map_err(BrowserError::Page)?, cancel)
            .await?;
        let settled = self.settle(token.as_deref(), cancel).await?;
        summary.push_str(" Pressed Enter.");
        self.report(summary, settled, false, cancel).await
    }

    pub(super) async fn press_key(
        &mut self,
        key: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let chord = keys::parse(key).map_err(BrowserError::Page)?;
        let focused = match self
            .eval("reading the focus", call(scripts::FOCUSED_JS, &[]), cancel)
            .await?
        {
            Value::String(s) => s,
            _ => "the page".to_string(),
        };
        let token = self.watch(cancel).await?;
        self.press(&chord, cancel).await?;
        let settled = self.settle(token.as_deref(), cancel).await?;
        self.report(
            format!("Pressed {} on {focused}.", key.trim()),
            settled,
            false,
            cancel,
        )
        .await
    }

    pub(super) async fn press(
        &self,
        chord: &keys::Chord,
        cancel: &CancellationToken,
    ) -> Result<(), BrowserError> {
        for event in keys::events(chord) {
            self.guard(
                "pressing the key",
                self.config.action_timeout,
                cancel,
                self.page.execute(event),
            )
            .await?;
        }
        Ok(())
    }

    pub(super) async fn scroll(
        &mut self,
        direction: ScrollDirection,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let token = self.watch(cancel).await?;
        let pos: ScrollPos = self
            .eval_as(
                "scrolling",
                call(scripts::SCROLL_JS, &[json!(direction.as_str())]),
                cancel,
            )
            .await?;
        let settled = self.settle(token.as_deref(), cancel).await?;
        let below = (pos.height - pos.y - pos.viewport).max(0);
        let summary = format!(
            "Scrolled {}: the window now shows {}-{} of {} px ({below} px more below).",
            direction.as_str(),
            pos.y,
            pos.y + pos.viewport,
            pos.height
        );
        self.report(summary, settled, false, cancel).await
    }

    pub(super) async fn select_option(
        &mut self,
        index: u32,
        option: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, BrowserError> {
        let token = self.watch(cancel).await?;
        let chosen: Chosen = self
            .eval_as(
                "choosing the option",
                call(scripts::SELECT_JS, &[json!(index), json!(option)]),
                cancel,
            )
            .await?;
        if !chosen.found {
            return Err(BrowserError::Page(no_element(index)));
        }
        if !chosen.ok {
            if !chosen.reason.is_empty() {
                return Err(BrowserError::Page(chosen.reason));
            }
            return Err(BrowserError::Page(format!(
                "element [{index}] has no option {}; its options are: {}",
                json!(option),
                chosen.options.join(", ")
            )));
        }
        let settled = self.settle(token.as_deref(), cancel).await?;
        let summary = format!(
            "Selected {} (value {}) in [{index}].",
            json!(chosen.selected),
            json!(chosen.value)
        );
        self.report(summary, settled, false, cancel).await
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Located {
    found: bool,
    x: f64,
    y: f64,
    hit: bool,
    tag: String,
    desc: String,
    disabled: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Prepared {
    found: bool,
    ok: bool,
    reason: String,
    mode: String,
    desc: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Chosen {
    found: bool,
    ok: bool,
    reason: String,
    selected: String,
    value: String,
    options: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ScrollPos {
    y: i64,
    height: i64,
    viewport: i64,
}
