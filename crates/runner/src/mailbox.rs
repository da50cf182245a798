//! Reading a run's mailbox (docs/durability.md, "Workers"): the process executing a run
//! takes what other processes post for it (an API server: a cancellation, an answer to
//! `message_ask_user`), woken by the store's change feed, on a timer otherwise.

use std::sync::Arc;
use std::time::Duration;

use domain::ports::{Change, RunChanges, RunMailbox, RunMessage};
use tokio_util::sync::CancellationToken;

/// How often a run's owner reads the run's mailbox when the store does not say it changed.
const MAILBOX_POLL: Duration = Duration::from_millis(250);

/// Ticks an answer that arrived before its question waits to be delivered.
const EARLY_ANSWER_TICKS: u32 = 20;

/// The mailbox of one run, as its owner reads it.
pub struct MailboxReader {
    pub mailbox: Arc<dyn RunMailbox>,
    pub changes: Arc<dyn RunChanges>,
    pub run_id: String,
    /// The run's lease owner: messages are addressed to it.
    pub owner: String,
}

impl MailboxReader {
    /// Until `done` fires: a cancellation fires `cancel`; an answer or an approval goes to
    /// `deliver`, which says whether the run was waiting for it (one that came before its
    /// question is offered again for a few ticks, then dropped).
    pub async fn run(
        self,
        cancel: CancellationToken,
        deliver: impl Fn(&RunMessage) -> bool + Send,
        done: CancellationToken,
    ) {
        let mut early: Vec<(RunMessage, u32)> = Vec::new();
        let mut posted = self.changes.watch(&self.run_id, Change::Messages);
        loop {
            tokio::select! {
                _ = posted.changed(MAILBOX_POLL) => {}
                _ = done.cancelled() => return,
            }
            let messages = match self.mailbox.take(&self.run_id, &self.owner).await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(run_id = %self.run_id, error = %e, "cannot read the run's mailbox");
                    continue;
                }
            };
            for message in messages {
                match message {
                    RunMessage::Cancel => {
                        tracing::info!(run_id = %self.run_id, "cancelled through the store");
                        cancel.cancel();
                    }
                    other => early.push((other, 0)),
                }
            }
            early.retain_mut(|(message, ticks)| {
                if deliver(message) {
                    return false;
                }
                *ticks += 1;
                if *ticks >= EARLY_ANSWER_TICKS {
                    tracing::warn!(run_id = %self.run_id, "an answer came while the run asked nothing; dropped");
                    return false;
                }
                true
            });
        }
    }
}
