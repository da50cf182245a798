//! A run's workspace files, as the HTTP API (`/v1/runs/{id}/files/...`) and the MCP
//! resources (`planwright://runs/{id}/files/...`) serve them: listed, and opened beneath the
//! workspace without following a symbolic link at any component (`fs_beneath`), so a link
//! a run's command swaps in during a download is never followed (docs/security.md, "Links
//! in the workspace").

use std::path::{Component, Path, PathBuf};

use fs_beneath::{Folder, Kind};
use serde_json::{json, Value};

use super::error::ApiError;

/// Largest file `/files` serves.
pub const MAX_DOWNLOAD_BYTES: u64 = 256 << 20;

/// A workspace file opened for download.
#[derive(Debug)]
pub struct ConfinedFile {
    pub name: String,
    pub file: std::fs::File,
    pub len: u64,
    /// Its first bytes are UTF-8 text.
    pub text: bool,
}

/// Opens `rel` inside `workspace` for download: relative paths only, no `..`, no symbolic
/// link at any component (one swapped in meanwhile included: the kernel resolves the path
/// from the workspace's descriptor in one call), and it must be a regular file with one
/// link (a hard link made to a file outside the workspace is refused) of at most
/// [`MAX_DOWNLOAD_BYTES`]. The checks are made on the opened file itself. `rel` may be any
/// bytes (a name that is not UTF-8 too).
pub fn open_confined(workspace: &Path, rel_path: &Path) -> Result<ConfinedFile, ApiError> {
    use std::io::{Read, Seek};
    let rel = rel_path.display();
    if rel_path.as_os_str().is_empty() {
        return Err(ApiError::BadRequest("no file path given".into()));
    }
    let outside = || ApiError::Forbidden(format!("'{rel}' is outside the run's workspace"));
    if rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(outside());
    }
    let root = Folder::open(workspace)
        .map_err(|_| ApiError::NotFound("the run's workspace does not exist".into()))?;
    let not_regular = || ApiError::NotFound(format!("'{rel}' is not a regular file"));
    // Non-blocking, so a file swapped for a FIFO meanwhile cannot hang the request.
    let (mut file, meta) = root.open_file(rel_path).map_err(|e| {
        if fs_beneath::is_link(&e) {
            ApiError::Forbidden(format!(
                "'{rel}' is or goes through a symbolic link; links in a workspace are not \
                 followed"
            ))
        } else if e.kind() == std::io::ErrorKind::InvalidInput {
            not_regular()
        } else {
            ApiError::NotFound(format!("no file '{rel}' in the workspace"))
        }
    })?;
    if meta.links > 1 {
        return Err(ApiError::Forbidden(format!(
            "'{rel}' has {} hard links; files linked from elsewhere are not served",
            meta.links
        )));
    }
    if meta.size > MAX_DOWNLOAD_BYTES {
        return Err(ApiError::TooLarge(format!(
            "'{rel}' has {} bytes; downloads are limited to {} MiB",
            meta.size,
            MAX_DOWNLOAD_BYTES >> 20
        )));
    }
    let mut head = Vec::with_capacity(8192);
    (&mut file)
        .take(8192)
        .read_to_end(&mut head)
        .and_then(|_| file.rewind())
        .map_err(|e| ApiError::Internal(format!("cannot read '{rel}': {e}")))?;
    // A multi-byte character cut at the end of the sample still counts as text.
    let text = match std::str::from_utf8(&head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    let name = rel_path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "file".to_string());
    Ok(ConfinedFile {
        name,
        file,
        len: meta.size,
        text,
    })
}

/// How far one listing of a workspace goes: a request never walks a whole workspace
/// (issue 29: a 200,000-folder workspace took seconds per request).
#[derive(Debug, Clone, Copy)]
pub struct ListLimits {
    /// Most files listed.
    pub max_files: usize,
    /// Most directory entries looked at (files, folders, links, anything).
    pub max_entries: usize,
    /// Deepest folder entered (the workspace itself is depth 0).
    pub max_depth: usize,
}

/// The limits of the run detail and of the MCP resources.
pub const LIST_LIMITS: ListLimits = ListLimits {
    max_files: 1000,
    max_entries: 4096,
    max_depth: 32,
};

/// A regular file of a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// Relative to the workspace.
    pub rel: PathBuf,
    pub bytes: u64,
}

impl ListedFile {
    /// The path as shown (a name that is not UTF-8 shown lossily).
    pub fn shown(&self) -> String {
        self.rel.to_string_lossy().into_owned()
    }

    /// The path's bytes percent-encoded: exact for any name, as the download route and the
    /// resource URIs take it.
    pub fn encoded(&self) -> String {
        super::percent::encode_path(&self.rel)
    }
}

/// What one bounded walk of a workspace found.
#[derive(Debug, Default)]
pub struct Listing {
    /// Sorted by path.
    pub files: Vec<ListedFile>,
    /// A limit stopped the walk: the workspace may hold more files.
    pub truncated: bool,
    /// Directory entries looked at.
    pub looked_at: usize,
}

impl Listing {
    /// The files as `{path, bytes, path_encoded}`: `path` to show (lossy for a name that is
    /// not UTF-8), `path_encoded` to download it by.
    pub fn to_json(&self) -> Vec<Value> {
        self.files
            .iter()
            .map(|f| json!({"path": f.shown(), "bytes": f.bytes, "path_encoded": f.encoded()}))
            .collect()
    }
}

/// The workspace's regular files (symlinks left out, never followed), folders nearest the
/// workspace first, within `limits`; each folder is opened from the workspace's descriptor
/// when its turn comes, never through a link.
pub fn list_files(workspace: &Path, limits: ListLimits) -> Listing {
    let mut listing = Listing::default();
    let Ok(root) = Folder::open(workspace) else {
        return listing;
    };
    let mut folders = std::collections::VecDeque::from([(PathBuf::new(), 0usize)]);
    'walk: while let Some((at, depth)) = folders.pop_front() {
        let Ok(folder) = root.folder(&at) else {
            continue;
        };
        let Ok(entries) = folder.entries() else {
            continue;
        };
        for entry in entries {
            if listing.looked_at >= limits.max_entries || listing.files.len() >= limits.max_files {
                listing.truncated = true;
                break 'walk;
            }
            listing.looked_at += 1;
            let name = Path::new(&entry.name);
            match entry.kind {
                Kind::Folder if depth + 1 > limits.max_depth => listing.truncated = true,
                Kind::Folder => folders.push_back((at.join(name), depth + 1)),
                Kind::File => {
                    let bytes = folder.stat(name).map(|m| m.size).unwrap_or(0);
                    listing.files.push(ListedFile {
                        rel: at.join(name),
                        bytes,
                    });
                }
                Kind::Link | Kind::Special => {}
            }
        }
    }
    listing.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    listing
}

/// [`list_files`] off the async threads.
pub async fn list_in(workspace: PathBuf, limits: ListLimits) -> Listing {
    tokio::task::spawn_blocking(move || list_files(&workspace, limits))
        .await
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: ListLimits = ListLimits {
        max_files: 1000,
        max_entries: 100,
        max_depth: 3,
    };

    #[test]
    fn a_workspace_within_the_limits_is_listed_whole_and_sorted() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("a/b")).expect("mkdir");
        std::fs::write(dir.path().join("z.txt"), "zz").expect("write");
        std::fs::write(dir.path().join("a/b/c.txt"), "c").expect("write");
        let listing = list_files(dir.path(), SMALL);
        assert!(!listing.truncated);
        assert_eq!(
            listing.to_json(),
            vec![
                json!({"path": "a/b/c.txt", "bytes": 1, "path_encoded": "a/b/c.txt"}),
                json!({"path": "z.txt", "bytes": 2, "path_encoded": "z.txt"}),
            ]
        );
    }

    #[test]
    fn a_workspace_of_many_folders_is_walked_only_up_to_the_entry_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Issue 29's workspace, smaller: many empty folders and one file.
        for i in 0..5000 {
            std::fs::create_dir(dir.path().join(format!("d{i}"))).expect("mkdir");
        }
        std::fs::create_dir(dir.path().join("d0/inner")).expect("mkdir");
        std::fs::write(dir.path().join("d0/inner/f.txt"), "f").expect("write");
        let limits = ListLimits {
            max_files: 1000,
            max_entries: 1000,
            max_depth: 32,
        };
        let listing = list_files(dir.path(), limits);
        assert!(listing.truncated);
        assert_eq!(listing.looked_at, 1000);
        assert!(listing.files.is_empty(), "{:?}", listing.files);
        let all = list_files(
            dir.path(),
            ListLimits {
                max_entries: 20_000,
                ..limits
            },
        );
        assert!(!all.truncated);
        assert_eq!(all.looked_at, 5002);
        assert_eq!(all.files.len(), 1);
    }

    #[test]
    fn folders_deeper_than_the_limit_are_not_entered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deep = dir.path().join("1/2/3/4");
        std::fs::create_dir_all(&deep).expect("mkdir");
        std::fs::write(dir.path().join("1/2/3/three.txt"), "3").expect("write");
        std::fs::write(deep.join("four.txt"), "4").expect("write");
        let listing = list_files(dir.path(), SMALL);
        assert!(listing.truncated);
        let paths: Vec<String> = listing.files.iter().map(ListedFile::shown).collect();
        assert_eq!(paths, vec!["1/2/3/three.txt"]);
    }

    #[test]
    fn the_file_limit_cuts_the_listing_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..10 {
            std::fs::write(dir.path().join(format!("f{i}")), "").expect("write");
        }
        let exact = list_files(
            dir.path(),
            ListLimits {
                max_files: 10,
                ..SMALL
            },
        );
        assert_eq!((exact.files.len(), exact.truncated), (10, false));
        let cut = list_files(
            dir.path(),
            ListLimits {
                max_files: 4,
                ..SMALL
            },
        );
        assert_eq!((cut.files.len(), cut.truncated), (4, true));
    }

    /// Issue 29: a name that is not UTF-8 was listed lossily and could not be downloaded.
    #[test]
    fn a_name_that_is_not_utf8_is_listed_exactly_and_opens_by_that_name() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let name = std::ffi::OsStr::from_bytes(b"r\xffport.txt");
        std::fs::write(dir.path().join(name), "bytes").expect("write");
        let listing = list_files(dir.path(), SMALL);
        let json = listing.to_json();
        assert_eq!(json[0]["path"], "r\u{fffd}port.txt");
        assert_eq!(json[0]["path_encoded"], "r%FFport.txt");
        let rel = super::super::percent::decode_path("r%FFport.txt").expect("decodes");
        let opened = open_confined(dir.path(), &rel).expect("opens");
        assert_eq!(opened.len, 5);
    }
}
