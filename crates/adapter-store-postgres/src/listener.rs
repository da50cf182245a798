//! The change feed ([`domain::ports::RunChanges`]) over LISTEN/NOTIFY: triggers on `events`
//! and `run_messages` (migration 3) notify `planwright_events` / `planwright_messages` with
//! the run id when a row commits, one on `runs` (migration 4) notifies `planwright_queue`
//! when a run becomes claimable; one dedicated connection per store LISTENs and fans the
//! notifications out to the watches. The connection is re-made when it drops (a restarted
//! server); meanwhile watches only time out, and their callers read the store on a timer.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::ports::{Change, ChangeWatch};
use futures_util::StreamExt;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_postgres::{AsyncMessage, NoTls};

/// How long `start` waits for the first LISTEN before going on without it.
const FIRST_LISTEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause before connecting again after the connection dropped.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// Notifications a slow watch may fall behind by (it then wakes, and its caller reads).
const FAN_OUT: usize = 1024;

const EVENTS: &str = "planwright_events";
const MESSAGES: &str = "planwright_messages";
const QUEUE: &str = "planwright_queue";

/// One notification, as fanned out to the watches.
#[derive(Debug, Clone)]
enum Notice {
    /// Something was written for a run.
    Run(Change, String),
    /// A run became claimable.
    Queue,
}

pub(crate) struct Listener {
    fan_out: broadcast::Sender<Notice>,
}

impl Listener {
    /// Starts listening; returns once the first LISTEN is in place (or after a timeout, the
    /// connection still being tried in the background).
    pub(crate) async fn start(config: tokio_postgres::Config, database: String) -> Arc<Listener> {
        let (fan_out, _) = broadcast::channel(FAN_OUT);
        let (ready_tx, ready_rx) = oneshot::channel();
        tokio::spawn(listen_forever(config, database, fan_out.clone(), ready_tx));
        let _ = tokio::time::timeout(FIRST_LISTEN_TIMEOUT, ready_rx).await;
        Arc::new(Listener { fan_out })
    }

    pub(crate) fn watch(&self, run_id: &str, change: Change) -> Box<dyn ChangeWatch> {
        Box::new(NotifiedWatch {
            notifications: self.fan_out.subscribe(),
            wanted: Wanted::Run(change, run_id.to_string()),
        })
    }

    pub(crate) fn watch_queue(&self) -> Box<dyn ChangeWatch> {
        Box::new(NotifiedWatch {
            notifications: self.fan_out.subscribe(),
            wanted: Wanted::Queue,
        })
    }
}

async fn listen_forever(
    config: tokio_postgres::Config,
    database: String,
    fan_out: broadcast::Sender<Notice>,
    ready: oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    loop {
        match listen_once(&config, &fan_out, &mut ready).await {
            Ok(()) => tracing::info!(%database, "the LISTEN connection closed; reconnecting"),
            Err(e) => tracing::warn!(%database, error = %e, "LISTEN failed; reconnecting"),
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

async fn listen_once(
    config: &tokio_postgres::Config,
    fan_out: &broadcast::Sender<Notice>,
    ready: &mut Option<oneshot::Sender<()>>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (forward, mut notifications) = mpsc::unbounded_channel();
    // The connection must be polled for the client's queries and the notifications alike.
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if forward.send(n).is_err() {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    client
        .batch_execute(&format!(
            "LISTEN {EVENTS}; LISTEN {MESSAGES}; LISTEN {QUEUE}"
        ))
        .await?;
    if let Some(ready) = ready.take() {
        let _ = ready.send(());
    }
    while let Some(n) = notifications.recv().await {
        let notice = match n.channel() {
            EVENTS => Notice::Run(Change::Events, n.payload().to_string()),
            MESSAGES => Notice::Run(Change::Messages, n.payload().to_string()),
            QUEUE => Notice::Queue,
            _ => continue,
        };
        let _ = fan_out.send(notice);
    }
    drop(client);
    match driver.await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

/// What a watch wakes for.
enum Wanted {
    Run(Change, String),
    Queue,
}

impl Wanted {
    fn matches(&self, notice: &Notice) -> bool {
        match (self, notice) {
            (Wanted::Run(change, run_id), Notice::Run(c, r)) => c == change && r == run_id,
            (Wanted::Queue, Notice::Queue) => true,
            _ => false,
        }
    }
}

struct NotifiedWatch {
    notifications: broadcast::Receiver<Notice>,
    wanted: Wanted,
}

#[async_trait]
impl ChangeWatch for NotifiedWatch {
    async fn changed(&mut self, timeout: Duration) -> bool {
        let woken = async {
            loop {
                match self.notifications.recv().await {
                    Ok(notice) if self.wanted.matches(&notice) => return true,
                    Ok(_) => {}
                    // Fell behind: ours may be among the dropped ones.
                    Err(broadcast::error::RecvError::Lagged(_)) => return true,
                    Err(broadcast::error::RecvError::Closed) => {
                        std::future::pending::<()>().await;
                    }
                }
            }
        };
        tokio::time::timeout(timeout, woken).await.unwrap_or(false)
    }
}
