//! One running `bash -c` command ([`Proc`]) in its own process group, watched by a
//! supervisor task that captures its output into bounded buffers, enforces the hard
//! timeout, honours cancellation and kill requests, and kills the whole group when the
//! command ends in any way.
//!
//! Output is read incrementally: [`Proc::take_output`] hands over what arrived since the
//! previous take. The command's stdin is an open pipe ([`Proc::write_stdin`]) until the
//! command ends.

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::capture::CappedBuffer;
use crate::cgroup::PidsCgroup;
use crate::env::ShellEnv;
use crate::sandbox::{self, BwrapPrograms};

/// How long output is still read once the group is dead. Only a process that left the
/// group (`setsid`) can keep the pipes open that long; we stop listening to it.
const PIPE_GRACE: Duration = Duration::from_secs(2);
/// Read size for the output pipes.
const CHUNK: usize = 64 * 1024;

/// How a command is started.
#[derive(Debug, Clone)]
pub(crate) enum Launch {
    /// `bash -c` in a new process group.
    Plain,
    /// `bwrap ... -- bash -c` (after the supervisor); see [`crate::sandbox`].
    Bwrap {
        programs: BwrapPrograms,
        allow_network: bool,
        /// Paths bound read-only over the workspace's own.
        read_only: std::sync::Arc<[std::path::PathBuf]>,
    },
}

/// What to run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandSpec<'a> {
    pub command: &'a str,
    /// Working directory (the canonical workspace); also exported as `PWD`.
    pub cwd: &'a Path,
    /// The hard limit: the group is killed when it expires.
    pub timeout: Duration,
    /// Bytes kept per stream between two looks at the output.
    pub max_output_bytes: usize,
    pub launch: &'a Launch,
    /// Which of Planwright's variables reach the command.
    pub env: &'a ShellEnv,
}

/// How the command ended.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ending {
    Exited(ExitStatus),
    TimedOut,
    /// The run was cancelled.
    Cancelled,
    /// Killed on request (`shell_kill`, the end of the run).
    Killed,
    /// Waiting for the process failed; it was killed.
    Lost,
}

/// A command's output since the previous look, with the ending if it is over.
#[derive(Debug)]
pub(crate) struct Finished {
    pub ending: Ending,
    pub stdout: CappedBuffer,
    pub stderr: CappedBuffer,
    /// Output pipes were still open after the group died and the grace period.
    pub streams_abandoned: bool,
}

/// Why [`Proc::write_stdin`] wrote nothing or not everything.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The command has ended (or its stdin was already found closed).
    Closed,
    /// The command closed its end of the pipe.
    ClosedByCommand,
    /// The command did not read its input within the limit.
    Stalled,
    Io(io::Error),
}

/// A running (or finished) command. Shared by the supervisor task, `shell_exec` and the
/// session registry.
#[derive(Debug)]
pub(crate) struct Proc {
    /// Pid of the command's leader process; also its process group id.
    pid: i32,
    started: Instant,
    timeout: Duration,
    max_output_bytes: usize,
    state: Mutex<State>,
    /// Fires once the ending is known and the output read to its end.
    ended: CancellationToken,
    /// Asks the supervisor to kill the group.
    kill_request: CancellationToken,
    /// Signalled whenever output arrives or the command ends.
    activity: Notify,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
}

#[derive(Debug)]
struct State {
    ending: Option<Ending>,
    stdout: CappedBuffer,
    stderr: CappedBuffer,
    streams_abandoned: bool,
    /// The group may still have members and its id is not yet free for reuse.
    group_alive: bool,
}

#[derive(Debug, Clone, Copy)]
enum Stream {
    Out,
    Err,
}

/// Starts the command and its supervisor task (on the current tokio runtime). The run's
/// `cancel` token kills it too.
pub(crate) fn spawn(spec: CommandSpec<'_>, cancel: CancellationToken) -> io::Result<Arc<Proc>> {
    let cgroup = PidsCgroup::create();
    let mut child = build(&spec, cgroup.as_ref()).spawn()?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("spawned process has no pid"))?;
    tracing::debug!(
        pid,
        timeout_s = spec.timeout.as_secs_f64(),
        sandboxed = matches!(spec.launch, Launch::Bwrap { .. }),
        "shell command started"
    );
    let proc = Arc::new(Proc {
        pid,
        started: Instant::now(),
        timeout: spec.timeout,
        max_output_bytes: spec.max_output_bytes,
        state: Mutex::new(State {
            ending: None,
            stdout: CappedBuffer::new(spec.max_output_bytes),
            stderr: CappedBuffer::new(spec.max_output_bytes),
            streams_abandoned: false,
            group_alive: true,
        }),
        ended: CancellationToken::new(),
        kill_request: CancellationToken::new(),
        activity: Notify::new(),
        stdin: tokio::sync::Mutex::new(child.stdin.take()),
    });
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    tokio::spawn(supervise(
        proc.clone(),
        child,
        stdout,
        stderr,
        cancel,
        cgroup,
    ));
    Ok(proc)
}

fn build(spec: &CommandSpec<'_>, cgroup: Option<&PidsCgroup>) -> Command {
    // The supervisor first (see `crate::supervisor`): it joins the command's own pids
    // cgroup (see `crate::cgroup`), so everything after runs inside it, and sets the limits.
    let mut line: Vec<OsString> = crate::supervisor::prefix(cgroup.map(PidsCgroup::procs));
    match spec.launch {
        Launch::Plain => {
            // Contained (see `crate::containment`), then bash.
            line.extend(crate::containment::prefix());
        }
        Launch::Bwrap {
            programs,
            allow_network,
            read_only,
        } => {
            line.push(programs.bwrap.clone().into_os_string());
            let etc = crate::etc_stage::for_workspace(spec.cwd);
            line.extend(sandbox::bwrap_args(
                spec.cwd,
                *allow_network,
                read_only,
                etc.as_ref(),
            ));
            line.push("--".into());
        }
    }
    line.push("bash".into());
    let (first, rest) = line.split_at(1);
    let mut command = Command::new(&first[0]);
    // A process group of its own, whose id is the supervisor's pid and so, after `exec`,
    // bwrap's (see `crate::sandbox`): killing it kills the command.
    command
        .args(rest)
        .process_group(0)
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.build(std::env::vars_os(), spec.cwd))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

impl Proc {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The ending, once the command is over and its output read.
    pub(crate) fn ending(&self) -> Option<Ending> {
        let state = self.state();
        state.ending.filter(|_| self.ended.is_cancelled())
    }

    /// Completes when the command is over and its output read.
    pub(crate) async fn ended(&self) {
        self.ended.cancelled().await;
    }

    pub(crate) fn is_running(&self) -> bool {
        !self.ended.is_cancelled()
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A future completing at the next output or at the end. It counts from this call,
    /// not from its first poll: `notify_waiters` wakes every `Notified` already created.
    pub(crate) fn activity(&self) -> tokio::sync::futures::Notified<'_> {
        self.activity.notified()
    }

    /// The output that arrived since the previous take (capped, head and tail kept), and
    /// whether the streams were abandoned.
    pub(crate) fn take_output(&self) -> (CappedBuffer, CappedBuffer, bool) {
        let mut state = self.state();
        let stdout = std::mem::replace(&mut state.stdout, CappedBuffer::new(self.max_output_bytes));
        let stderr = std::mem::replace(&mut state.stderr, CappedBuffer::new(self.max_output_bytes));
        (stdout, stderr, state.streams_abandoned)
    }

    /// Asks for the group to be killed; the group is signalled at once, the ending
    /// ([`Ending::Killed`]) is recorded by the supervisor. No effect once it has ended.
    pub(crate) fn kill(&self) {
        if !self.is_running() {
            return;
        }
        self.kill_request.cancel();
        self.signal_group(false);
    }

    /// SIGKILLs the group if it may still exist; `retire` marks it gone for good (its id
    /// may then be reused by an unrelated process, so it is never signalled again).
    fn signal_group(&self, retire: bool) {
        let mut state = self.state();
        if !state.group_alive {
            return;
        }
        match killpg(Pid::from_raw(self.pid), Signal::SIGKILL) {
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(e) => {
                tracing::warn!(pgid = self.pid, error = %e, "killing the process group failed")
            }
        }
        if retire {
            state.group_alive = false;
        }
    }

    /// Writes `bytes` to the command's stdin within `limit`.
    pub(crate) async fn write_stdin(
        &self,
        bytes: &[u8],
        limit: Duration,
    ) -> Result<(), WriteError> {
        let mut stdin = self.stdin.lock().await;
        if !self.is_running() {
            return Err(WriteError::Closed);
        }
        let Some(pipe) = stdin.as_mut() else {
            return Err(WriteError::Closed);
        };
        let written = tokio::time::timeout(limit, async {
            pipe.write_all(bytes).await?;
            pipe.flush().await
        })
        .await;
        match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                *stdin = None;
                Err(WriteError::ClosedByCommand)
            }
            Ok(Err(e)) => Err(WriteError::Io(e)),
            Err(_) => Err(WriteError::Stalled),
        }
    }

    fn push(&self, stream: Stream, data: &[u8]) {
        {
            let mut state = self.state();
            match stream {
                Stream::Out => state.stdout.push(data),
                Stream::Err => state.stderr.push(data),
            }
        }
        self.activity.notify_waiters();
    }
}

/// Kills the group when dropped: at the end of the supervisor, or when the runtime drops
/// the supervisor task (process exit), so no command outlives its owner.
struct RetireOnDrop(Arc<Proc>);

impl Drop for RetireOnDrop {
    fn drop(&mut self) {
        self.0.signal_group(true);
    }
}

/// Watches the command until it exits, times out, is cancelled or killed; then kills the
/// group, reaps the leader, reads the remaining output and records the ending.
async fn supervise(
    proc: Arc<Proc>,
    mut child: Child,
    stdout: Option<impl AsyncRead + Unpin>,
    stderr: Option<impl AsyncRead + Unpin>,
    cancel: CancellationToken,
    cgroup: Option<PidsCgroup>,
) {
    let retire = RetireOnDrop(proc.clone());
    let reading = async {
        let (a, b) = tokio::join!(
            drain(stdout, &proc, Stream::Out),
            drain(stderr, &proc, Stream::Err)
        );
        for e in [a, b].into_iter().filter_map(Result::err) {
            tracing::warn!(error = %e, "reading command output failed");
        }
    };
    tokio::pin!(reading);
    let deadline = tokio::time::sleep(proc.timeout);
    tokio::pin!(deadline);
    let mut reading_done = false;
    let waited = loop {
        tokio::select! {
            status = child.wait() => break status.map(Ending::Exited),
            () = &mut deadline => break Ok(Ending::TimedOut),
            () = cancel.cancelled() => break Ok(Ending::Cancelled),
            () = proc.kill_request.cancelled() => break Ok(Ending::Killed),
            () = &mut reading, if !reading_done => reading_done = true,
        }
    };
    if !matches!(waited, Ok(Ending::Exited(_))) {
        // The leader first (before it can start anything more), then its group.
        if let Err(e) = child.start_kill() {
            tracing::debug!(error = %e, "killing the command's leader failed");
        }
    }
    // Background children must not outlive the command nor hold the pipes open.
    drop(retire);
    // Whatever is left in the command's cgroup, however it detached, ends with it.
    drop(cgroup);
    let ending = match waited {
        Ok(Ending::Exited(status)) => Ending::Exited(status),
        Ok(other) => {
            if let Err(e) = child.wait().await {
                tracing::warn!(error = %e, "waiting for the killed command failed");
            }
            other
        }
        Err(e) => {
            tracing::warn!(error = %e, "waiting for the command failed");
            Ending::Lost
        }
    };
    let abandoned = !reading_done
        && tokio::time::timeout(PIPE_GRACE, &mut reading)
            .await
            .is_err();
    if abandoned {
        tracing::warn!(
            pid = proc.pid,
            "a process outside the command's group kept its output open"
        );
    }
    proc.stdin.lock().await.take();
    {
        let mut state = proc.state();
        state.ending = Some(ending);
        state.streams_abandoned = abandoned;
    }
    tracing::debug!(pid = proc.pid, ?ending, "shell command ended");
    proc.ended.cancel();
    proc.activity.notify_waiters();
}

async fn drain<R: AsyncRead + Unpin>(
    reader: Option<R>,
    proc: &Proc,
    stream: Stream,
) -> io::Result<()> {
    let Some(mut reader) = reader else {
        return Ok(());
    };
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        proc.push(stream, &chunk[..n]);
    }
}

/// Waits for the command's end and hands over all of its (remaining) output.
pub(crate) async fn finish(proc: &Proc) -> Finished {
    proc.ended().await;
    let (stdout, stderr, streams_abandoned) = proc.take_output();
    Finished {
        ending: proc.ending().unwrap_or(Ending::Lost),
        stdout,
        stderr,
        streams_abandoned,
    }
}
