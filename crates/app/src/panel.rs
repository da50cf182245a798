//! The plan panel of the live view on a terminal: the current plan with its markers, kept
//! at the bottom of the screen and redrawn in place (the run's log lines scroll above it).
//! Only on a terminal (stderr is one and `TERM` is not `dumb`); elsewhere the view only
//! appends lines.

use domain::model::plan::Plan;
use domain::model::plan_text::render_plan_digest;

/// What is drawn at the bottom of the screen.
#[derive(Debug, Default)]
pub struct PlanPanel {
    /// Lines of the panel on the screen now (0: none).
    drawn: usize,
    /// Columns of the terminal: panel lines are cut to fit, so each takes one line.
    width: usize,
}

impl PlanPanel {
    pub fn new(width: usize) -> PlanPanel {
        PlanPanel {
            drawn: 0,
            width: width.max(20),
        }
    }

    /// The escape sequence that removes the panel (the cursor is at the start of the line
    /// below it): up as many lines, then clear to the end of the screen.
    pub fn erase(&mut self) -> String {
        let n = std::mem::take(&mut self.drawn);
        if n == 0 {
            String::new()
        } else {
            format!("\x1b[{n}A\r\x1b[J")
        }
    }

    /// The panel for `plan`, remembered as drawn.
    pub fn draw(&mut self, plan: &Plan) -> String {
        let mut lines = vec![format!("── {} ──", plan.title)];
        lines.extend(render_plan_digest(plan).lines().map(|l| format!("  {l}")));
        let cut: Vec<String> = lines.iter().map(|l| fit(l, self.width - 1)).collect();
        self.drawn = cut.len();
        let mut text = cut.join("\n");
        text.push('\n');
        text
    }
}

/// `line` cut to `width` characters.
fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Whether the live view may redraw in place, and the terminal's width (`COLUMNS`, else 80).
pub fn live_terminal() -> Option<usize> {
    use std::io::IsTerminal;
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    if dumb || !std::io::stderr().is_terminal() {
        return None;
    }
    Some(
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(80),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_is_erased_by_as_many_lines_as_it_drew_and_lines_fit_the_width() {
        let plan = Plan::from_texts(
            "p",
            "Title",
            "g",
            &["one".to_string(), "a very long step ".repeat(10)],
        )
        .expect("plan");
        let mut panel = PlanPanel::new(40);
        assert_eq!(panel.erase(), "", "nothing drawn yet");
        let drawn = panel.draw(&plan);
        let lines: Vec<&str> = drawn.lines().collect();
        assert!(lines.len() >= 3, "{drawn}");
        assert!(lines.iter().all(|l| l.chars().count() < 40), "{drawn}");
        assert!(drawn.contains("[ ] one"), "{drawn}");
        assert_eq!(panel.erase(), format!("\x1b[{}A\r\x1b[J", lines.len()));
        assert_eq!(panel.erase(), "", "erased once");
    }
}
