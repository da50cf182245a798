//! The seam between the server and the runner (docs/architecture.md, "The server crate"):
//! the API's routes served over a fake [`RunService`], no queue runner behind them.

use std::sync::Arc;

use async_trait::async_trait;
use axum::http::StatusCode;
use serde_json::{json, Value};

use domain::model::approval::ApprovalDecision;
use domain::model::event::{Event, EventKind, RunUsage};
use domain::ports::{Restored, WorkspaceDiff};
use runner::service::{
    Caller, Cancelled, FeedItem, NewRun, Progress, Queued, RunFeed, RunService, RunServiceError,
    RunWorkspace, ShownRun, UndoRequest,
};

/// Answers every operation with a fixed value, and records the tasks it was asked to queue.
#[derive(Default)]
struct FakeRuns {
    queued: std::sync::Mutex<Vec<(Option<String>, String)>>,
    /// Every run's workspace, when set.
    workspace: Option<std::path::PathBuf>,
}

#[async_trait]
impl RunService for FakeRuns {
    async fn queue(&self, caller: &Caller, run: NewRun) -> Result<Queued, RunServiceError> {
        if let Ok(mut queued) = self.queued.lock() {
            queued.push((caller.name().map(str::to_string), run.task));
        }
        Ok(Queued {
            run_id: "run_fake".into(),
            position: Some(3),
        })
    }

    async fn list(&self, _: &Caller) -> Result<Vec<Value>, RunServiceError> {
        Ok(vec![json!({"run_id": "run_fake", "status": "queued"})])
    }

    async fn show(&self, _: &Caller, run_id: &str) -> Result<ShownRun, RunServiceError> {
        Err(runner::service::unknown_run(run_id))
    }

    async fn cancel(&self, _: &Caller, run_id: &str) -> Result<Cancelled, RunServiceError> {
        Err(RunServiceError::Conflict(format!(
            "run '{run_id}' is not running"
        )))
    }

    async fn answer(&self, _: &Caller, _: &str, _: String) -> Result<(), RunServiceError> {
        Err(RunServiceError::Unavailable("down".into()))
    }

    async fn decide(
        &self,
        _: &Caller,
        _: &str,
        _: &str,
        _: ApprovalDecision,
    ) -> Result<(), RunServiceError> {
        Err(RunServiceError::Forbidden("no".into()))
    }

    async fn diff(
        &self,
        _: &Caller,
        _: &str,
        step: Option<u32>,
    ) -> Result<WorkspaceDiff, RunServiceError> {
        Err(RunServiceError::BadRequest(format!("no step {step:?}")))
    }

    async fn undo(&self, _: &Caller, _: &str, _: UndoRequest) -> Result<Restored, RunServiceError> {
        Err(RunServiceError::Conflict("running".into()))
    }

    /// Two events after `after`: a message, then the run's end.
    async fn follow(
        &self,
        _: &Caller,
        run_id: &str,
        after: u64,
    ) -> Result<RunFeed, RunServiceError> {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let event = |seq: u64, kind: EventKind| Event {
            run_id: run_id.to_string(),
            seq: after + seq,
            at: chrono::Utc::now(),
            kind,
        };
        let message = EventKind::Message {
            step_id: None,
            text: "hello".into(),
        };
        let end = EventKind::RunCompleted {
            summary: "done".into(),
            usage: RunUsage::default(),
            verified: false,
        };
        for item in [event(1, message), event(2, end)] {
            let _ = tx.send(FeedItem::Event(Box::new(item))).await;
        }
        Ok(RunFeed::new(rx))
    }

    async fn progress(&self, _: &Caller, _: &str) -> Result<Progress, RunServiceError> {
        Ok(Progress {
            settled: true,
            done: 1,
            total: 1,
            message: "completed".into(),
        })
    }

    async fn workspace(
        &self,
        _: &Caller,
        run_id: &str,
    ) -> Result<std::path::PathBuf, RunServiceError> {
        self.workspace
            .clone()
            .ok_or_else(|| runner::service::unknown_run(run_id))
    }

    async fn workspaces(&self, _: &Caller) -> Result<Vec<RunWorkspace>, RunServiceError> {
        Ok(Vec::new())
    }
}

/// The API over `fake` on a local port, with the token `t0ken`; its address.
#[allow(clippy::unwrap_used)]
async fn serve_over(fake: Arc<FakeRuns>, folder: &std::path::Path) -> std::net::SocketAddr {
    let store = Arc::new(domain::testing::MemoryStore::new());
    let Ok(mut state) = Arc::try_unwrap(super::test_state(store)) else {
        panic!("the state is shared");
    };
    state.tokens = super::tokens::TokenBook::new("t0ken".into(), folder).unwrap();
    state.service = fake;
    let app = super::api::router(Arc::new(state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

#[tokio::test]
#[allow(clippy::unwrap_used)]
async fn the_api_serves_runs_from_any_run_service() {
    let folder = tempfile::tempdir().unwrap();
    let fake = Arc::new(FakeRuns::default());
    let addr = serve_over(fake.clone(), folder.path()).await;
    let http = reqwest::Client::new();
    let url = |path: &str| format!("http://{addr}/v1{path}");

    let created = http
        .post(url("/runs"))
        .bearer_auth("t0ken")
        .json(&json!({"task": "write a haiku"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::ACCEPTED);
    let body: Value = created.json().await.unwrap();
    assert_eq!(
        body,
        json!({"run_id": "run_fake", "queued": true, "position": 3})
    );
    assert_eq!(
        *fake.queued.lock().unwrap(),
        vec![(None, "write a haiku".to_string())],
        "the admin token calls as the unnamed admin"
    );

    let listed: Value = http
        .get(url("/runs"))
        .bearer_auth("t0ken")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["runs"][0]["run_id"], "run_fake");

    for (method, path, status) in [
        ("GET", "/runs/run_x", StatusCode::NOT_FOUND),
        ("POST", "/runs/run_x/cancel", StatusCode::CONFLICT),
        ("GET", "/runs/run_x/diff?step=9", StatusCode::BAD_REQUEST),
        ("GET", "/runs/run_x/diff?step=x", StatusCode::BAD_REQUEST),
        ("POST", "/runs/run_x/undo", StatusCode::CONFLICT),
    ] {
        let answer = http
            .request(method.parse().unwrap(), url(path))
            .bearer_auth("t0ken")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), status, "{method} {path}");
    }

    // The event stream is the service's feed as SSE frames, after `Last-Event-ID`.
    let stream = http
        .get(url("/runs/run_fake/events"))
        .bearer_auth("t0ken")
        .header("last-event-id", "7")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let body = stream.text().await.unwrap();
    let ids: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    let kinds: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(ids, ["8", "9"], "{body}");
    assert_eq!(kinds, ["message", "run_completed"], "{body}");

    // A file of a run the service does not know is a 404.
    let file = http
        .get(url("/runs/run_x/files/a.txt"))
        .bearer_auth("t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), StatusCode::NOT_FOUND);
}

/// Issue 41, High 4: a run's shell swapped a workspace file for a link to
/// `../../../server-token` while a client holding `read` downloaded it in a loop; 273 of
/// 25,146 downloads returned the token. Here a thread exchanges the file and such a link as
/// fast as it can while the client downloads: no download may return the outside file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::unwrap_used)]
async fn a_link_swapped_in_during_downloads_is_never_served() {
    const SECRET: &str = "pw_admin_token_9f3c";
    let folder = tempfile::tempdir().unwrap();
    let ws = folder.path().join("runs/run_1/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(folder.path().join("server-token"), SECRET).unwrap();
    std::fs::write(ws.join("report.txt"), "the run's report").unwrap();
    std::os::unix::fs::symlink("../../../server-token", ws.join("swap")).unwrap();
    let fake = Arc::new(FakeRuns {
        workspace: Some(ws.clone()),
        ..FakeRuns::default()
    });
    let addr = serve_over(fake, folder.path()).await;
    let http = reqwest::Client::new();
    let url = format!("http://{addr}/v1/runs/run_1/files/report.txt");

    let swapper = test_support::Swapper::start(&ws.join("report.txt"), &ws.join("swap"));
    let (mut served, mut refused) = (0u32, 0u32);
    for _ in 0..4000 {
        let answer = http.get(&url).bearer_auth("t0ken").send().await.unwrap();
        let status = answer.status();
        let body = answer.text().await.unwrap_or_default();
        assert!(
            !body.contains(SECRET),
            "download {served}: served the outside file"
        );
        if status == StatusCode::OK {
            assert_eq!(body, "the run's report");
            served += 1;
        } else {
            refused += 1;
        }
    }
    let swaps = swapper.swaps();
    swapper.stop(true);
    assert!(
        swaps > 100,
        "the swapping thread hardly ran ({swaps} swaps)"
    );
    assert!(
        served > 0 && refused > 0,
        "{served} served, {refused} refused"
    );
}
