//! The process's one signal handler: every Ctrl-C (SIGINT) and SIGTERM, in order, on one
//! channel. `run` and `resume` read it to cancel, then suspend, then quit
//! ([`stop_on_signals`]); `serve`, `worker` and `mcp serve` to shut down ([`first`]).

use std::io::Write;

use domain::RunControl;
use tokio::sync::mpsc;

/// A signal asking the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    /// What happened, as said on stderr (`interrupted: …`).
    pub fn said(self) -> &'static str {
        match self {
            Signal::Interrupt => "interrupted",
            Signal::Terminate => "terminated",
        }
    }
}

/// Starts listening; every Ctrl-C or SIGTERM from now on arrives on the channel (Ctrl-C only
/// when SIGTERM cannot be listened to; nothing when neither can).
pub fn listen() -> mpsc::UnboundedReceiver<Signal> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        loop {
            let signal = match &mut term {
                Some(t) => tokio::select! {
                    r = tokio::signal::ctrl_c() => r.ok().map(|()| Signal::Interrupt),
                    r = t.recv() => r.map(|()| Signal::Terminate),
                },
                None => tokio::signal::ctrl_c()
                    .await
                    .ok()
                    .map(|()| Signal::Interrupt),
            };
            let Some(signal) = signal else {
                return;
            };
            if tx.send(signal).is_err() {
                return;
            }
        }
    });
    rx
}

/// What the first signal did (`interrupted`, `terminated`): what a server's shutdown
/// waits for; never, when signals cannot be received.
pub async fn first(mut signals: mpsc::UnboundedReceiver<Signal>) -> &'static str {
    match signals.recv().await {
        Some(signal) => signal.said(),
        None => std::future::pending().await,
    }
}

/// How the CLI stops a run: the first Ctrl-C or SIGTERM cancels it (the run ends `failed`,
/// "the run was cancelled", with a summary); a second one suspends it (it stops at the next
/// safe point, without a summary, its tools closed and its lease released); a third quits.
pub fn stop_on_signals() -> RunControl {
    let control = RunControl::default();
    let signals = control.clone();
    let mut received = listen();
    tokio::spawn(async move {
        if received.recv().await.is_none() {
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "\ninterrupted: cancelling the run (again: stop at once, resumable)"
        );
        signals.cancel.cancel();
        if received.recv().await.is_none() {
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "\nstopping at the next safe point (again: quit now)"
        );
        signals.suspend.cancel();
        if received.recv().await.is_some() {
            // No unwinding past here: send the queued spans first (bounded wait).
            runner::telemetry::flush();
            std::process::exit(130);
        }
    });
    control
}
