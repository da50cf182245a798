//! Running one `bash -c` command in its own process group, with bounded output capture,
//! a timeout and cancellation; the whole group is killed when the call ends.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::capture::CappedBuffer;
use crate::env::filtered_env;

/// How long output is still read once the group is dead. Only a process that left the
/// group (`setsid`) can keep the pipes open that long; we stop listening to it.
const PIPE_GRACE: Duration = Duration::from_secs(2);
/// Read size for the output pipes.
const CHUNK: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandSpec<'a> {
    pub command: &'a str,
    /// Working directory (the canonical workspace); also exported as `PWD`.
    pub cwd: &'a Path,
    pub timeout: Duration,
    /// Bytes kept per stream.
    pub max_output_bytes: usize,
}

/// How the command ended.
#[derive(Debug)]
pub(crate) enum Ending {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

/// The outcome of [`run`].
#[derive(Debug)]
pub(crate) struct Finished {
    pub ending: Ending,
    pub stdout: CappedBuffer,
    pub stderr: CappedBuffer,
    /// Output pipes were still open after the group died and the grace period.
    pub streams_abandoned: bool,
}

/// Runs the command to its end, its timeout or `cancel`, then kills its process group.
pub(crate) async fn run(spec: CommandSpec<'_>, cancel: &CancellationToken) -> io::Result<Finished> {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(filtered_env())
        .env("PWD", spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("spawned process has no pid"))?;
    // Kills the group when dropped, even if this future is dropped mid-way.
    let mut group = GroupKiller::new(Pid::from_raw(pid));
    tracing::debug!(
        pid,
        timeout_s = spec.timeout.as_secs_f64(),
        "shell command started"
    );

    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut out = CappedBuffer::new(spec.max_output_bytes);
    let mut err = CappedBuffer::new(spec.max_output_bytes);

    let (ending, streams_abandoned) = {
        let reading = async {
            let (a, b) = tokio::join!(drain(stdout, &mut out), drain(stderr, &mut err));
            for e in [a, b].into_iter().filter_map(Result::err) {
                tracing::warn!(error = %e, "reading command output failed");
            }
        };
        tokio::pin!(reading);
        let deadline = tokio::time::sleep(spec.timeout);
        tokio::pin!(deadline);
        let mut reading_done = false;
        let ending = loop {
            tokio::select! {
                status = child.wait() => break status.map(Ending::Exited),
                () = &mut deadline => break Ok(Ending::TimedOut),
                () = cancel.cancelled() => break Ok(Ending::Cancelled),
                () = &mut reading, if !reading_done => reading_done = true,
            }
        };
        // Background children must not outlive the call nor hold the pipes open.
        group.kill();
        let ending = match ending {
            Ok(Ending::Exited(status)) => Ending::Exited(status),
            Ok(other) => {
                // Reap the killed main process.
                if let Err(e) = child.wait().await {
                    tracing::warn!(error = %e, "waiting for the killed command failed");
                }
                other
            }
            Err(e) => return Err(e),
        };
        let abandoned = !reading_done
            && tokio::time::timeout(PIPE_GRACE, &mut reading)
                .await
                .is_err();
        if abandoned {
            tracing::warn!(
                pid,
                "a process outside the command's group kept its output open"
            );
        }
        (ending, abandoned)
    };
    Ok(Finished {
        ending,
        stdout: out,
        stderr: err,
        streams_abandoned,
    })
}

async fn drain<R: AsyncRead + Unpin>(reader: Option<R>, sink: &mut CappedBuffer) -> io::Result<()> {
    let Some(mut reader) = reader else {
        return Ok(());
    };
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        sink.push(&chunk[..n]);
    }
}

/// Sends SIGKILL to a process group once, at the latest when dropped.
#[derive(Debug)]
struct GroupKiller {
    pgid: Option<Pid>,
}

impl GroupKiller {
    fn new(pgid: Pid) -> GroupKiller {
        GroupKiller { pgid: Some(pgid) }
    }

    fn kill(&mut self) {
        let Some(pgid) = self.pgid.take() else {
            return;
        };
        match killpg(pgid, Signal::SIGKILL) {
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(e) => {
                tracing::warn!(pgid = pgid.as_raw(), error = %e, "killing the process group failed")
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}
