//! Packs: the small contents a checkpoint adds (file contents and folder listings of at most
//! [`PACKED_BYTES`]) written one after another into one file per checkpoint, with an index
//! of where each lies, instead of a file each: 100,000 small files meant 100,000 files
//! created and renamed into place, most of the first checkpoint's time (issue 41;
//! docs/benchmarks.md, "Checkpoints").
//!
//! ```text
//! packs/<name>.pack   the contents, back to back
//! packs/<name>.idx    JSON: digest → [offset, length]
//! ```
//!
//! A pack is written under `tmp/`, renamed into place, then its index is written beside it
//! (also through `tmp/`): an index never names a pack that is not there. Both are flushed
//! with the rest of the checkpoint before its manifest is written (`store.rs`).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::digest;

/// Contents up to this size go into the checkpoint's pack; bigger ones get a file each.
pub(crate) const PACKED_BYTES: u64 = 64 * 1024;

/// Hex digits of the index's digest naming a pack.
const NAME_LEN: usize = 24;

/// Where the contents of the packs on disk lie.
#[derive(Debug, Default)]
pub(crate) struct Packs {
    names: Vec<String>,
    at: HashMap<String, (usize, u64, u64)>,
}

/// One pack's index: digest → `[offset, length]`.
type PackIndex = BTreeMap<String, [u64; 2]>;

impl Packs {
    /// The indexes under `dir` (`packs/`); an unreadable one is skipped with a warning (its
    /// contents then count as missing).
    pub(crate) fn load(dir: &Path) -> Packs {
        let mut packs = Packs::default();
        let Ok(entries) = fs::read_dir(dir) else {
            return packs;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "idx") {
                continue;
            }
            let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            match fs::read(&path).map(|b| serde_json::from_slice::<PackIndex>(&b)) {
                Ok(Ok(index)) => packs.add(name, &index),
                _ => {
                    tracing::warn!(path = %path.display(), "a checkpoint pack index is unreadable")
                }
            }
        }
        packs
    }

    fn add(&mut self, name: &str, index: &PackIndex) {
        let n = self.names.len();
        self.names.push(name.to_string());
        for (digest, [offset, len]) in index {
            self.at.insert(digest.clone(), (n, *offset, *len));
        }
    }

    pub(crate) fn contains(&self, digest: &str) -> bool {
        self.at.contains_key(digest)
    }

    /// The content `digest`: its pack opened at its start, and its length.
    pub(crate) fn open(&self, dir: &Path, digest: &str) -> Option<io::Result<(fs::File, u64)>> {
        let (n, offset, len) = *self.at.get(digest)?;
        let path = dir.join(format!("{}.pack", self.names[n]));
        Some(fs::File::open(path).and_then(|mut file| {
            file.seek(SeekFrom::Start(offset))?;
            Ok((file, len))
        }))
    }
}

/// The pack of the checkpoint being taken.
#[derive(Debug)]
pub(crate) struct PackWriter {
    path: PathBuf,
    file: BufWriter<fs::File>,
    offset: u64,
    index: PackIndex,
}

/// A finished pack, still under `tmp/`: its name and index.
pub(crate) struct Finished {
    pub tmp: PathBuf,
    pub name: String,
    pub index_json: Vec<u8>,
    pub index: BTreeMap<String, [u64; 2]>,
}

impl PackWriter {
    /// A pack written into `file`, a new file at `path` under `tmp/`.
    pub(crate) fn new(path: PathBuf, file: fs::File) -> PackWriter {
        PackWriter {
            path,
            file: BufWriter::with_capacity(256 * 1024, file),
            offset: 0,
            index: BTreeMap::new(),
        }
    }

    pub(crate) fn contains(&self, digest: &str) -> bool {
        self.index.contains_key(digest)
    }

    /// Adds `bytes` (of digest `digest`) unless the pack holds them; the bytes added.
    pub(crate) fn add(&mut self, digest: &str, bytes: &[u8]) -> io::Result<u64> {
        if self.contains(digest) {
            return Ok(0);
        }
        self.file.write_all(bytes)?;
        let len = bytes.len() as u64;
        self.index.insert(digest.to_string(), [self.offset, len]);
        self.offset += len;
        Ok(len)
    }

    /// The pack written out (nothing when it holds nothing: its file is removed).
    pub(crate) fn finish(self) -> io::Result<Option<Finished>> {
        let PackWriter {
            path, file, index, ..
        } = self;
        let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        drop(file);
        if index.is_empty() {
            let _ = fs::remove_file(&path);
            return Ok(None);
        }
        let index_json = serde_json::to_vec(&index).map_err(io::Error::other)?;
        let name = digest::of(&index_json)[..NAME_LEN].to_string();
        Ok(Some(Finished {
            tmp: path,
            name,
            index_json,
            index,
        }))
    }

    /// The file being written, dropped unfinished.
    pub(crate) fn abandon(self) {
        let _ = fs::remove_file(&self.path);
    }
}

impl Packs {
    /// Adds the finished pack `name` (now in place) to what is known.
    pub(crate) fn added(&mut self, name: &str, index: &PackIndex) {
        self.add(name, index);
    }
}

/// Reads `len` bytes from `file` into `to`, at most `max` (`None`: longer than `max`).
pub(crate) fn read_at_most(file: fs::File, len: u64, max: u64) -> io::Result<Option<Vec<u8>>> {
    if len > max {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut bytes)?;
    if bytes.len() as u64 != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "a checkpoint pack is shorter than its index says",
        ));
    }
    Ok(Some(bytes))
}
