//! Each run's workspace files as MCP resources, `planwright://runs/{run_id}/files/{path}`
//! (the path percent-encoded), listed from the store's runs and read confined to the
//! workspace like the HTTP API's downloads (`files::open_confined`); and what each run
//! changed, `planwright://runs/{run_id}/diff` (the JSON of `GET /v1/runs/{id}/diff`,
//! docs/checkpoints.md).

use std::io::Read;

use base64::Engine;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use super::super::error::ApiError;
use super::super::percent::{decode_path, decode_text, encode};
use super::super::{files, State};
use runner::service::{Caller, RunWorkspace};

const SCHEME: &str = "planwright://runs/";

/// How much one `resources/list` page holds and walks.
#[derive(Debug, Clone, Copy)]
struct PageLimits {
    /// Most resources on a page.
    resources: usize,
    /// Most runs whose workspaces one page lists (each a bounded walk,
    /// `files::LIST_LIMITS`): a page never walks every run.
    runs: usize,
}

const PAGE_LIMITS: PageLimits = PageLimits {
    resources: 1000,
    runs: 10,
};

/// Largest file read as a resource.
const MAX_READ_BYTES: u64 = 16 << 20;

/// The resource URI of `path` in the workspace of `run_id`.
pub fn uri(run_id: &str, path: &str) -> String {
    encoded_uri(run_id, &encode(path.as_bytes()))
}

/// The resource URI of the file whose path is `path_encoded` (`percent::encode`, exact for
/// a name that is not UTF-8) in the workspace of `run_id`.
pub fn encoded_uri(run_id: &str, path_encoded: &str) -> String {
    format!("{SCHEME}{}/files/{path_encoded}", encode(run_id.as_bytes()))
}

/// The template clients fill in for a file they know the path of.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{SCHEME}{{run_id}}/files/{{path}}"), "run-file")
        .with_title("A file of a Planwright run's workspace")
        .with_description(
            "A file the run wrote in its workspace; `path` is relative to the workspace, \
             percent-encoded (slashes kept).",
        )
}

/// The template of a run's changes.
pub fn diff_template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{SCHEME}{{run_id}}/diff"), "run-diff")
        .with_title("What a Planwright run changed in its workspace")
        .with_description(
            "The files the run created, modified and deleted, from its checkpoints, with a \
             unified diff for text files (JSON, as the run_diff tool answers).",
        )
        .with_mime_type("application/json")
}

/// The run of a `planwright://runs/{run_id}/diff` URI, when it is one.
fn diff_run(uri: &str) -> Option<String> {
    let run_id = uri.strip_prefix(SCHEME)?.strip_suffix("/diff")?;
    decode_text(run_id).filter(|r| !r.is_empty() && !r.contains('/'))
}

/// One page of `resources/list`: the files of the newest runs first.
#[derive(Debug)]
pub struct Page {
    pub resources: Vec<Resource>,
    /// Where the next page starts (MCP's `nextCursor`); `None` on the last page.
    pub next_cursor: Option<String>,
}

/// The page of `resources/list` that starts at `cursor` (the first page when `None`), over
/// the runs the client may see.
pub async fn list(
    state: &State,
    client: &Caller,
    cursor: Option<String>,
) -> Result<Page, ApiError> {
    let runs = state.service.workspaces(client).await?;
    tokio::task::spawn_blocking(move || {
        page(&runs, cursor.as_deref(), PAGE_LIMITS, |workspace| {
            files::list_files(workspace, files::LIST_LIMITS)
        })
    })
    .await
    .map_err(|e| ApiError::Internal(format!("listing the files failed: {e}")))?
}

/// Where a page starts: the run, and how many of its listed files earlier pages held.
#[derive(Debug, PartialEq, Eq)]
struct Cursor {
    run_id: String,
    skip: usize,
}

impl Cursor {
    fn to_text(&self) -> String {
        format!("{}:{}", self.skip, encode(self.run_id.as_bytes()))
    }

    fn parse(text: &str) -> Result<Cursor, ApiError> {
        let bad = || ApiError::BadRequest(format!("'{text}' is not a cursor this server gave"));
        let (skip, run_id) = text.split_once(':').ok_or_else(bad)?;
        Ok(Cursor {
            skip: skip.parse().map_err(|_| bad())?,
            run_id: decode_text(run_id).ok_or_else(bad)?,
        })
    }
}

/// The page starting at `cursor` over `runs` (newest first), each run's files from `list`.
fn page(
    runs: &[RunWorkspace],
    cursor: Option<&str>,
    limits: PageLimits,
    list: impl Fn(&std::path::Path) -> files::Listing,
) -> Result<Page, ApiError> {
    let (first, mut skip) = match cursor.map(Cursor::parse).transpose()? {
        None => (0, 0),
        Some(c) => {
            let at = runs
                .iter()
                .position(|r| r.run_id == c.run_id)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "the cursor's run '{}' is gone; list again from the start",
                        c.run_id
                    ))
                })?;
            (at, c.skip)
        }
    };
    let mut resources = Vec::new();
    for (walked, run) in runs.iter().skip(first).enumerate() {
        if walked == limits.runs {
            return Ok(Page {
                resources,
                next_cursor: Some(
                    Cursor {
                        run_id: run.run_id.clone(),
                        skip: 0,
                    }
                    .to_text(),
                ),
            });
        }
        let listing = list(&run.workspace);
        for (index, file) in listing.files.iter().enumerate().skip(skip) {
            if resources.len() == limits.resources {
                return Ok(Page {
                    resources,
                    next_cursor: Some(
                        Cursor {
                            run_id: run.run_id.clone(),
                            skip: index,
                        }
                        .to_text(),
                    ),
                });
            }
            let mut resource =
                Resource::new(encoded_uri(&run.run_id, &file.encoded()), file.shown())
                    .with_description(format!("written by run {} ({})", run.run_id, run.task));
            resource.size = Some(file.bytes);
            resources.push(resource);
        }
        skip = 0;
    }
    Ok(Page {
        resources,
        next_cursor: None,
    })
}

/// Reads the resource at `uri`: text as text, anything else as base64.
pub async fn read(
    state: &State,
    client: &Caller,
    uri_text: &str,
) -> Result<ResourceContents, ApiError> {
    if let Some(run_id) = diff_run(uri_text) {
        let diff = state.service.diff(client, &run_id, None).await?;
        let json = runner::json::diff_json(&run_id, None, &diff);
        return Ok(
            ResourceContents::text(json.to_string(), uri_text.to_string())
                .with_mime_type("application/json"),
        );
    }
    let (run_id, path) = parse(uri_text)?;
    let workspace = state.service.workspace(client, &run_id).await?;
    let uri_owned = uri_text.to_string();
    tokio::task::spawn_blocking(move || -> Result<ResourceContents, ApiError> {
        let confined = files::open_confined(&workspace, &path)?;
        if confined.len > MAX_READ_BYTES {
            return Err(ApiError::TooLarge(format!(
                "'{}' has {} bytes; resources are limited to {} MiB (the HTTP API's \
                 /v1/runs/{{id}}/files/{{path}} serves larger files)",
                path.display(),
                confined.len,
                MAX_READ_BYTES >> 20
            )));
        }
        let mut bytes = Vec::new();
        let mut file = confined.file;
        (&mut file)
            .take(MAX_READ_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| ApiError::Internal(format!("cannot read '{}': {e}", path.display())))?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::text(text, uri_owned),
            Err(e) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                uri_owned,
            )
            .with_mime_type("application/octet-stream"),
        })
    })
    .await
    .map_err(|e| ApiError::Internal(format!("reading the file failed: {e}")))?
}

/// The run id and the workspace path (any bytes) of a resource URI.
fn parse(uri: &str) -> Result<(String, std::path::PathBuf), ApiError> {
    let bad = || {
        ApiError::NotFound(format!(
            "'{uri}' is not a Planwright resource (planwright://runs/{{run_id}}/files/{{path}})"
        ))
    };
    let rest = uri.strip_prefix(SCHEME).ok_or_else(bad)?;
    let (run_id, path) = rest.split_once("/files/").ok_or_else(bad)?;
    let run_id = decode_text(run_id).ok_or_else(bad)?;
    let path = decode_path(path).ok_or_else(bad)?;
    if run_id.is_empty() || path.as_os_str().is_empty() {
        return Err(bad());
    }
    Ok((run_id, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_uri_names_its_run() {
        assert_eq!(
            diff_run("planwright://runs/run-1/diff").as_deref(),
            Some("run-1")
        );
        assert_eq!(diff_run("planwright://runs/run-1/files/diff"), None);
        assert_eq!(diff_run("planwright://runs//diff"), None);
    }

    #[test]
    fn a_uri_round_trips_to_its_run_and_path() {
        let u = uri("run-1", "out/a file ü%.txt");
        assert_eq!(
            u,
            "planwright://runs/run-1/files/out/a%20file%20%C3%BC%25.txt"
        );
        assert_eq!(
            parse(&u).expect("parses"),
            ("run-1".to_string(), "out/a file ü%.txt".into())
        );
    }

    /// `runs` runs, each with `files_each` files, as `page` sees them.
    fn runs_with_files(runs: usize, files_each: usize) -> (tempfile::TempDir, Vec<RunWorkspace>) {
        let root = tempfile::tempdir().expect("tempdir");
        let list = (0..runs)
            .map(|r| {
                let workspace = root.path().join(format!("run{r}"));
                std::fs::create_dir(&workspace).expect("mkdir");
                for f in 0..files_each {
                    std::fs::write(workspace.join(format!("f{f}.txt")), "x").expect("write");
                }
                RunWorkspace {
                    run_id: format!("run{r}"),
                    task: "t".into(),
                    workspace,
                }
            })
            .collect();
        (root, list)
    }

    /// Every page from the first, and how many workspaces each page listed.
    fn all_pages(runs: &[RunWorkspace], limits: PageLimits) -> (Vec<String>, Vec<usize>) {
        let mut uris = Vec::new();
        let mut walks = Vec::new();
        let mut cursor = None;
        loop {
            let walked = std::cell::Cell::new(0);
            let page = page(runs, cursor.as_deref(), limits, |w| {
                walked.set(walked.get() + 1);
                files::list_files(w, files::LIST_LIMITS)
            })
            .expect("page");
            walks.push(walked.get());
            uris.extend(page.resources.iter().map(|r| r.uri.clone()));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return (uris, walks),
            }
        }
    }

    #[test]
    fn a_page_lists_a_bounded_number_of_runs_and_the_cursor_reaches_the_rest() {
        let (_root, runs) = runs_with_files(25, 1);
        let limits = PageLimits {
            resources: 1000,
            runs: 10,
        };
        let (uris, walks) = all_pages(&runs, limits);
        // Issue 29: the listing walked every run's workspace per request.
        assert_eq!(walks, vec![10, 10, 5]);
        let want: Vec<String> = (0..25).map(|r| uri(&format!("run{r}"), "f0.txt")).collect();
        assert_eq!(uris, want);
    }

    #[test]
    fn a_run_with_more_files_than_a_page_holds_goes_on_on_the_next_page() {
        let (_root, runs) = runs_with_files(2, 5);
        let limits = PageLimits {
            resources: 3,
            runs: 10,
        };
        let (uris, _) = all_pages(&runs, limits);
        let mut want = Vec::new();
        for r in 0..2 {
            for f in 0..5 {
                want.push(uri(&format!("run{r}"), &format!("f{f}.txt")));
            }
        }
        assert_eq!(uris, want);
    }

    #[test]
    fn a_broken_or_stale_cursor_is_a_clear_error() {
        let (_root, runs) = runs_with_files(1, 1);
        for bad in ["nonsense", "x:run0", "0:run-gone"] {
            let got = page(&runs, Some(bad), PAGE_LIMITS, |w| {
                files::list_files(w, files::LIST_LIMITS)
            });
            assert!(matches!(got, Err(ApiError::BadRequest(_))), "{bad}");
        }
    }

    #[test]
    fn a_foreign_or_broken_uri_is_refused() {
        for bad in [
            "file:///etc/passwd",
            "planwright://runs/run-1/plan",
            "planwright://runs/run-1/files/%zz",
            "planwright://runs//files/a",
        ] {
            assert!(matches!(parse(bad), Err(ApiError::NotFound(_))), "{bad}");
        }
    }
}
