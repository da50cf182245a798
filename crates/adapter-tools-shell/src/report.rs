//! The text the model reads about a command: a status line, then stdout, then stderr.
//!
//! - A command that ended within `shell_exec`'s wait: `exit code: N` (or how it ended),
//!   `--- stdout ---`, `--- stderr ---`.
//! - A command still running when the wait is over: `still running after N s; session
//!   id: shN`, a hint line, then the output so far.
//! - A session (`shell_view`, `shell_wait`, `shell_write`, `shell_kill`): `session shN:
//!   STATUS`, then `--- new stdout ---` and `--- new stderr ---`: only the output produced
//!   since the previous reply about that session (each stream capped, its beginning and
//!   end kept).

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use domain::ports::ToolOutput;

use crate::capture::CappedBuffer;
use crate::process::{Ending, Finished, Proc};

/// How a command ended, and whether that is a failure.
fn status_line(ending: &Ending, timeout: Duration) -> (String, bool) {
    match ending {
        Ending::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => (format!("exit code: {code}"), code != 0),
            (None, Some(signal)) => (format!("killed by signal {signal}"), true),
            (None, None) => ("exit status unknown".to_string(), true),
        },
        Ending::TimedOut => (
            format!(
                "timed out after {} s; process group killed (output below is partial)",
                timeout.as_secs()
            ),
            true,
        ),
        Ending::Cancelled => ("cancelled; process group killed".to_string(), true),
        Ending::Killed => ("killed on request; process group killed".to_string(), false),
        Ending::Lost => (
            "lost track of the command; process group killed".to_string(),
            true,
        ),
    }
}

/// The reply of a `shell_exec` whose command ended within the wait.
pub(crate) fn report(finished: &Finished, timeout: Duration) -> ToolOutput {
    let (mut content, failed) = status_line(&finished.ending, timeout);
    section(&mut content, "stdout", &finished.stdout);
    section(&mut content, "stderr", &finished.stderr);
    if finished.streams_abandoned {
        abandoned(&mut content);
    }
    outcome(content, failed)
}

/// The reply of a `shell_exec` whose command outlived the wait and became session `id`.
pub(crate) fn still_running(id: &str, waited: Duration, proc: &Proc) -> ToolOutput {
    let mut content = format!(
        "still running after {} s; session id: {id}\nThe command keeps running (it is \
         killed {} s after it started). Use shell_view or shell_wait to see its new \
         output, shell_write to type into its stdin, shell_kill to stop it.",
        waited.as_secs(),
        proc.timeout().as_secs()
    );
    let (stdout, stderr, _) = proc.take_output();
    if stdout.is_empty() && stderr.is_empty() {
        // A small model writes `awk '{s+=$3} END {print s}'` without the file name.
        content.push_str(
            "\nIt printed nothing yet: if it is waiting for input (awk, sort, grep, wc or \
             cat given no file name read stdin), kill it and run it again with the file name.",
        );
    }
    section(&mut content, "stdout", &stdout);
    section(&mut content, "stderr", &stderr);
    ToolOutput::ok(content)
}

/// A session's status and its output since the previous reply about it. `lead` goes
/// below the status line (what the tool did, notes). An ended session reports failure
/// the way `shell_exec` does (non-zero exit, signal, timeout).
pub(crate) fn session_report(id: &str, proc: &Proc, lead: Option<String>) -> ToolOutput {
    let ending = proc.ending();
    let (status, failed) = match &ending {
        Some(ending) => status_line(ending, proc.timeout()),
        None => (
            format!(
                "still running after {} s (killed at {} s)",
                proc.elapsed().as_secs(),
                proc.timeout().as_secs()
            ),
            false,
        ),
    };
    let mut content = format!("session {id}: {status}");
    if let Some(lead) = lead {
        content.push('\n');
        content.push_str(&lead);
    }
    let (stdout, stderr, streams_abandoned) = proc.take_output();
    section(&mut content, "new stdout", &stdout);
    section(&mut content, "new stderr", &stderr);
    if ending.is_some() && streams_abandoned {
        abandoned(&mut content);
    }
    outcome(content, failed)
}

fn outcome(content: String, failed: bool) -> ToolOutput {
    if failed {
        ToolOutput::error(content)
    } else {
        ToolOutput::ok(content)
    }
}

fn abandoned(content: &mut String) {
    content.push_str(
        "\n[a process that left the command's process group kept the output open; \
         stopped reading]",
    );
}

fn section(content: &mut String, label: &str, buffer: &CappedBuffer) {
    if buffer.is_empty() {
        let _ = write!(content, "\n--- {label}: (empty) ---");
        return;
    }
    let text = buffer.render();
    let _ = write!(
        content,
        "\n--- {label} ---\n{}",
        text.strip_suffix('\n').unwrap_or(&text)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_layout() {
        let mut stdout = CappedBuffer::new(100);
        stdout.push(b"hello\n");
        let finished = Finished {
            ending: Ending::Exited(std::process::ExitStatus::from_raw(3 << 8)),
            stdout,
            stderr: CappedBuffer::new(100),
            streams_abandoned: false,
        };
        let out = report(&finished, Duration::from_secs(1));
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "exit code: 3\n--- stdout ---\nhello\n--- stderr: (empty) ---"
        );
    }

    #[test]
    fn signal_and_timeout_are_errors() {
        let finished = Finished {
            ending: Ending::Exited(std::process::ExitStatus::from_raw(9)),
            stdout: CappedBuffer::new(10),
            stderr: CappedBuffer::new(10),
            streams_abandoned: false,
        };
        let out = report(&finished, Duration::from_secs(1));
        assert!(out.is_error);
        assert!(out.content.starts_with("killed by signal 9"));
        let finished = Finished {
            ending: Ending::TimedOut,
            ..finished
        };
        let out = report(&finished, Duration::from_secs(2));
        assert!(out.is_error);
        assert!(out
            .content
            .starts_with("timed out after 2 s; process group killed"));
    }

    #[test]
    fn a_requested_kill_is_not_a_failure() {
        let (line, failed) = status_line(&Ending::Killed, Duration::from_secs(1));
        assert_eq!(line, "killed on request; process group killed");
        assert!(!failed);
        assert!(status_line(&Ending::Cancelled, Duration::from_secs(1)).1);
        assert!(status_line(&Ending::Lost, Duration::from_secs(1)).1);
    }
}
