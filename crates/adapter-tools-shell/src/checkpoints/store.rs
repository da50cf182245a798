//! The on-disk store of one run's checkpoints (docs/checkpoints.md, "Where they are"):
//!
//! ```text
//! <runs root>/<run id>/checkpoints/
//!   objects/ab/cdef…   file contents and folder listings by SHA-256 (each content once),
//!                      bigger than 64 KiB
//!   packs/<name>.pack  the smaller ones a checkpoint added, back to back, and
//!   packs/<name>.idx   where each lies (`pack.rs`)
//!   manifests/<id>.json  one per checkpoint: folder → its listing's digest; the id is the
//!                      manifest's digest
//!   index.json         size, time and digest of each file at the last checkpoint
//!   restore.json       an undo under way (its target and paths)
//!   tmp/               files being written (renamed into place when whole)
//! ```
//!
//! Every file is written under `tmp/` and renamed into place, so a crash leaves either the
//! old or the new version. Small contents and listings go into one pack per checkpoint
//! (`pack.rs`; 100,000 small files took 336 s as 100,000 files each flushed on its own,
//! issue 41); each file a checkpoint wrote (its pack, its large contents) is flushed before
//! the manifest naming them is written and flushed, so a manifest on disk never names a
//! content that is not. A folder's listing (name → entry) is an object like a file's
//! content, so a checkpoint that changed one file stores that file, its folder's new
//! listing and a manifest of one line per folder, not a list of every path (as git's trees;
//! docs/benchmarks.md, "Checkpoints").

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use domain::ports::{CheckpointError, CheckpointId, LeftOut, LeftOutReason};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::digest::{self, hex};
use super::pack::{read_at_most, PackWriter, Packs, PACKED_BYTES};

/// Version of the manifest format: 1 listed every path in the manifest; 2 lists each
/// folder's listing by digest ([`StoredManifest`]).
const MANIFEST_VERSION: u32 = 2;
/// Hex digits of a manifest digest kept as the checkpoint id.
const ID_LEN: usize = 24;

/// What a checkpoint recorded of one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Entry {
    File {
        digest: String,
        size: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        executable: bool,
        /// Its permission bits (absent in checkpoints of earlier versions: then only
        /// `executable` is known).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    Link {
        target: String,
    },
    /// Seen, content not kept: a change shows as a new size or time.
    NotKept {
        size: u64,
        modified_ns: u64,
        reason: LeftOutReason,
    },
}

impl Entry {
    pub(crate) fn size(&self) -> Option<u64> {
        match self {
            Entry::File { size, .. } | Entry::NotKept { size, .. } => Some(*size),
            Entry::Link { .. } => None,
        }
    }
}

/// One checkpoint: every path it recorded (sorted), and what it left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub version: u32,
    pub entries: BTreeMap<String, Entry>,
    pub left_out: Vec<LeftOut>,
    pub complete: bool,
}

impl Manifest {
    pub(crate) fn new(
        entries: BTreeMap<String, Entry>,
        left_out: Vec<LeftOut>,
        complete: bool,
    ) -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            entries,
            left_out,
            complete,
        }
    }
}

/// A manifest as stored (version 2): each folder that holds entries ("" for the top) and the
/// digest of its listing, a `BTreeMap<name, Entry>` kept as an object.
#[derive(Debug, Serialize, Deserialize)]
struct StoredManifest {
    version: u32,
    folders: BTreeMap<String, String>,
    left_out: Vec<LeftOut>,
    complete: bool,
}

/// The folder and the name of a recorded path.
fn folder_and_name(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// What the last checkpoint saw of a file it kept, to skip reading it again when its size
/// and time did not change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct IndexEntry {
    pub size: u64,
    pub modified_ns: u64,
    pub executable: bool,
    #[serde(default)]
    pub mode: Option<u32>,
    pub digest: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Index {
    /// When that checkpoint started, nanoseconds since the epoch.
    pub taken_ns: u64,
    pub files: BTreeMap<String, IndexEntry>,
}

/// One folder's listing (name → entry) and the digest it is stored under.
pub(crate) struct Listing {
    pub entries: BTreeMap<String, Entry>,
    pub digest: String,
}

impl Listing {
    /// Whether `listing` holds the same names and entries.
    pub(crate) fn same_as(&self, listing: &BTreeMap<&str, &Entry>) -> bool {
        self.entries.len() == listing.len()
            && self
                .entries
                .iter()
                .zip(listing)
                .all(|((a, x), (b, y))| a == b && x == *y)
    }
}

/// An undo under way: written before its first change, removed after its last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PendingRestore {
    pub target: CheckpointId,
    pub paths: Vec<String>,
}

pub(crate) fn io_error(what: &str, path: &Path, e: &io::Error) -> CheckpointError {
    CheckpointError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// One run's checkpoint folder, for one operation (a checkpoint, a diff, an undo).
#[derive(Debug)]
pub(crate) struct RunStore {
    dir: PathBuf,
    /// Where the packs' contents lie, read on first use.
    packs: Mutex<Option<Packs>>,
    /// The pack of the checkpoint being taken, written out by `save_manifest`.
    writing: Mutex<Option<PackWriter>>,
    /// What this operation wrote and has not flushed to disk yet (`sync`).
    unflushed: Mutex<Vec<PathBuf>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Drop for RunStore {
    fn drop(&mut self) {
        // A checkpoint that failed before its manifest: its unfinished pack goes.
        if let Some(writer) = locked(&self.writing).take() {
            writer.abandon();
        }
    }
}

/// A content being written to the store while it is hashed.
pub(crate) struct Incoming {
    path: PathBuf,
    file: fs::File,
    hasher: Sha256,
    pub written: u64,
}

impl Incoming {
    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        self.file.write_all(bytes)
    }

    /// The content's digest; the temporary file stays until [`RunStore::admit`] or
    /// [`RunStore::drop_incoming`].
    pub(crate) fn finish(&mut self) -> io::Result<String> {
        self.file.flush()?;
        Ok(hex(&std::mem::take(&mut self.hasher).finalize()))
    }
}

impl RunStore {
    pub(crate) fn new(dir: PathBuf) -> RunStore {
        RunStore {
            dir,
            packs: Mutex::new(None),
            writing: Mutex::new(None),
            unflushed: Mutex::new(Vec::new()),
        }
    }

    /// Whether checkpoint `id`'s manifest is on disk.
    pub(crate) fn has_manifest(&self, id: &CheckpointId) -> bool {
        self.manifest_path(id).is_ok_and(|p| p.is_file())
    }

    fn tmp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    fn packs_dir(&self) -> PathBuf {
        self.dir.join("packs")
    }

    /// `f` over the packs on disk (read on first use).
    fn with_packs<T>(&self, f: impl FnOnce(&Packs) -> T) -> T {
        let mut packs = locked(&self.packs);
        f(packs.get_or_insert_with(|| Packs::load(&self.packs_dir())))
    }

    /// A new file under `tmp/` (the folder made on first use).
    fn new_tmp(&self) -> Result<(PathBuf, fs::File), CheckpointError> {
        let tmp_dir = self.tmp_dir();
        tempfile_in(&tmp_dir).or_else(|_| {
            fs::create_dir_all(&tmp_dir).map_err(|e| io_error("create", &tmp_dir, &e))?;
            tempfile_in(&tmp_dir)
        })
    }

    /// Renames `from` (under `tmp/`) to `to`, making `to`'s folder when it is missing.
    fn place(&self, from: &Path, to: &Path) -> Result<(), CheckpointError> {
        let renamed = fs::rename(from, to).or_else(|e| match to.parent() {
            Some(parent) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(parent)?;
                fs::rename(from, to)
            }
            _ => Err(e),
        });
        renamed.map_err(|e| {
            let _ = fs::remove_file(from);
            io_error("write", to, &e)
        })?;
        locked(&self.unflushed).push(to.to_path_buf());
        Ok(())
    }

    fn object_path(&self, digest: &str) -> PathBuf {
        let (head, rest) = digest.split_at(digest.len().min(2));
        self.dir.join("objects").join(head).join(rest)
    }

    fn manifest_path(&self, id: &CheckpointId) -> Result<PathBuf, CheckpointError> {
        let plain = !id.as_str().is_empty() && id.as_str().chars().all(|c| c.is_ascii_hexdigit());
        if !plain {
            return Err(CheckpointError::NotFound(id.clone()));
        }
        Ok(self.dir.join("manifests").join(format!("{id}.json")))
    }

    /// Writes `bytes` to `to` whole: into `tmp/`, then renamed; flushed to disk first when
    /// `durable`.
    fn write_whole(&self, to: &Path, bytes: &[u8], durable: bool) -> Result<(), CheckpointError> {
        let mut tmp = self.new_tmp()?;
        tmp.1
            .write_all(bytes)
            .and_then(|()| if durable { tmp.1.sync_all() } else { Ok(()) })
            .map_err(|e| {
                let _ = fs::remove_file(&tmp.0);
                io_error("write", &tmp.0, &e)
            })?;
        drop(tmp.1);
        self.place(&tmp.0, to)
    }

    /// Starts writing a content of the store.
    pub(crate) fn incoming(&self) -> Result<Incoming, CheckpointError> {
        let (path, file) = self.new_tmp()?;
        Ok(Incoming {
            path,
            file,
            hasher: Sha256::new(),
            written: 0,
        })
    }

    /// Whether the store holds content `digest` of `len` bytes where a content of that size
    /// is kept: a file of its own when bigger than a pack takes, else a pack or the pack
    /// being written (a small content kept in a file of its own by an earlier version is not
    /// looked for: at worst it is stored once more).
    pub(crate) fn has_object(&self, digest: &str, len: u64) -> bool {
        if len > PACKED_BYTES {
            return self.object_path(digest).is_file();
        }
        locked(&self.writing)
            .as_ref()
            .is_some_and(|w| w.contains(digest))
            || self.with_packs(|p| p.contains(digest))
    }

    /// Moves a finished [`Incoming`] into the store as `digest` (nothing when it is there
    /// already). Returns the bytes added.
    pub(crate) fn admit(&self, incoming: Incoming, digest: &str) -> Result<u64, CheckpointError> {
        let to = self.object_path(digest);
        if to.is_file() {
            self.drop_incoming(incoming);
            return Ok(0);
        }
        let written = incoming.written;
        let Incoming { path, file, .. } = incoming;
        // Not flushed here: `save_manifest` flushes the filesystem once for all of them.
        drop(file);
        self.place(&path, &to)?;
        Ok(written)
    }

    /// Stores `bytes` (whose digest is `digest`; the caller found the store without them):
    /// in the checkpoint's pack when small, else in a file of their own. Returns the bytes
    /// added.
    pub(crate) fn put_object(&self, digest: &str, bytes: &[u8]) -> Result<u64, CheckpointError> {
        if bytes.len() as u64 > PACKED_BYTES {
            self.write_whole(&self.object_path(digest), bytes, false)?;
            return Ok(bytes.len() as u64);
        }
        let mut writing = locked(&self.writing);
        if writing.is_none() {
            let (path, file) = self.new_tmp()?;
            *writing = Some(PackWriter::new(path, file));
        }
        let Some(writer) = writing.as_mut() else {
            return Err(CheckpointError::Io("no pack to write to".into()));
        };
        writer
            .add(digest, bytes)
            .map_err(|e| io_error("write", &self.packs_dir(), &e))
    }

    /// Writes out the checkpoint's pack, if it holds anything: renamed into `packs/`, then
    /// its index beside it. Returns whether anything was written.
    fn finish_pack(&self) -> Result<bool, CheckpointError> {
        let Some(writer) = locked(&self.writing).take() else {
            return Ok(false);
        };
        let finished = writer
            .finish()
            .map_err(|e| io_error("write", &self.packs_dir(), &e))?;
        let Some(pack) = finished else {
            return Ok(false);
        };
        let dir = self.packs_dir();
        self.place(&pack.tmp, &dir.join(format!("{}.pack", pack.name)))?;
        self.write_whole(
            &dir.join(format!("{}.idx", pack.name)),
            &pack.index_json,
            false,
        )?;
        if let Some(packs) = locked(&self.packs).as_mut() {
            packs.added(&pack.name, &pack.index);
        }
        Ok(true)
    }

    /// Content `digest` opened at its start, with its length when it lies in a pack.
    fn open_object(
        &self,
        digest: &str,
    ) -> Result<(fs::File, Option<u64>, PathBuf), CheckpointError> {
        let packs_dir = self.packs_dir();
        if let Some(found) = self.with_packs(|p| p.open(&packs_dir, digest)) {
            let (file, len) = found.map_err(|e| io_error("read", &packs_dir, &e))?;
            return Ok((file, Some(len), packs_dir));
        }
        let path = self.object_path(digest);
        let file = fs::File::open(&path).map_err(|e| io_error("read", &path, &e))?;
        Ok((file, None, path))
    }

    pub(crate) fn drop_incoming(&self, incoming: Incoming) {
        let Incoming { path, file, .. } = incoming;
        drop(file);
        let _ = fs::remove_file(path);
    }

    /// The content `digest`, at most `max` bytes of it (`None`: longer than `max`).
    pub(crate) fn read_object(
        &self,
        digest: &str,
        max: u64,
    ) -> Result<Option<Vec<u8>>, CheckpointError> {
        let (file, packed, path) = self.open_object(digest)?;
        if let Some(len) = packed {
            return read_at_most(file, len, max).map_err(|e| io_error("read", &path, &e));
        }
        let mut bytes = Vec::new();
        file.take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| io_error("read", &path, &e))?;
        Ok((bytes.len() as u64 <= max).then_some(bytes))
    }

    /// Copies content `digest` into `to` (a new file, not yet in place), checking on the way
    /// that it still has that digest (a damaged store is an error, never a wrong file).
    pub(crate) fn copy_object(
        &self,
        digest: &str,
        to: &mut impl Write,
    ) -> Result<(), CheckpointError> {
        let (file, packed, from) = self.open_object(digest)?;
        let mut file = file.take(packed.unwrap_or(u64::MAX));
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| io_error("read", &from, &e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            to.write_all(&buf[..n])
                .map_err(|e| io_error("write a copy of", &from, &e))?;
        }
        if hex(&hasher.finalize()) != digest {
            return Err(CheckpointError::Io(format!(
                "the checkpoint store is damaged: {} does not hold what its name says",
                from.display()
            )));
        }
        Ok(())
    }

    /// Flushes what was written to the store so far to disk, in one call.
    fn sync(&self) -> Result<(), CheckpointError> {
        let written = std::mem::take(&mut *locked(&self.unflushed));
        for path in written {
            fs::File::open(&path)
                .and_then(|f| f.sync_data())
                .map_err(|e| io_error("flush", &path, &e))?;
        }
        Ok(())
    }

    /// Records `manifest` and returns its id (the same manifest: the same id, stored once)
    /// and its folders' listings. Each folder's listing is stored as an object (written only
    /// when new, and not looked for when the manifest is there already); a listing the same
    /// as in `known` (the previous checkpoint's) is neither encoded nor hashed again. What
    /// this checkpoint wrote (its pack, its large contents) is flushed to disk, then the
    /// manifest naming them is written and flushed.
    pub(crate) fn save_manifest(
        &self,
        manifest: &Manifest,
        mut known: BTreeMap<String, Listing>,
    ) -> Result<(CheckpointId, BTreeMap<String, Listing>), CheckpointError> {
        let mut listings: BTreeMap<&str, BTreeMap<&str, &Entry>> = BTreeMap::new();
        for (path, entry) in &manifest.entries {
            let (folder, name) = folder_and_name(path);
            listings.entry(folder).or_default().insert(name, entry);
        }
        let mut folders = BTreeMap::new();
        let mut kept = BTreeMap::new();
        let mut encoded = Vec::new();
        for (folder, listing) in listings {
            if let Some(same) = known.remove(folder).filter(|k| k.same_as(&listing)) {
                folders.insert(folder.to_string(), same.digest.clone());
                kept.insert(folder.to_string(), same);
                continue;
            }
            let json = encode(&listing)?;
            let digest = digest::of(&json);
            folders.insert(folder.to_string(), digest.clone());
            let entries = listing
                .iter()
                .map(|(name, entry)| ((*name).to_string(), (*entry).clone()))
                .collect();
            kept.insert(
                folder.to_string(),
                Listing {
                    entries,
                    digest: digest.clone(),
                },
            );
            encoded.push((digest, json));
        }
        let stored = StoredManifest {
            version: MANIFEST_VERSION,
            folders,
            left_out: manifest.left_out.clone(),
            complete: manifest.complete,
        };
        let json = encode(&stored)?;
        let id = CheckpointId::new(&digest::of(&json)[..ID_LEN]);
        let path = self.manifest_path(&id)?;
        let new = !path.is_file();
        if new {
            // A listing kept from the previous checkpoint is in the store already.
            for (digest, listing) in &encoded {
                if !self.has_object(digest, listing.len() as u64) {
                    self.put_object(digest, listing)?;
                }
            }
        }
        self.finish_pack()?;
        if new {
            self.sync()?;
            self.write_whole(&path, &json, true)?;
        }
        Ok((id, kept))
    }

    pub(crate) fn load_manifest(&self, id: &CheckpointId) -> Result<Manifest, CheckpointError> {
        let path = self.manifest_path(id)?;
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(CheckpointError::NotFound(id.clone()))
            }
            Err(e) => return Err(io_error("read", &path, &e)),
        };
        let unreadable = |e: &dyn std::fmt::Display| {
            CheckpointError::Io(format!(
                "checkpoint {id} cannot be read ({}): {e}",
                path.display()
            ))
        };
        #[derive(Deserialize)]
        struct Version {
            version: u32,
        }
        let version: Version = serde_json::from_slice(&bytes).map_err(|e| unreadable(&e))?;
        if version.version == 1 {
            return serde_json::from_slice(&bytes).map_err(|e| unreadable(&e));
        }
        let stored: StoredManifest = serde_json::from_slice(&bytes).map_err(|e| unreadable(&e))?;
        let mut entries = BTreeMap::new();
        for (folder, digest) in &stored.folders {
            let listing = self.read_object(digest, u64::MAX)?.unwrap_or_default();
            let listing: BTreeMap<String, Entry> =
                serde_json::from_slice(&listing).map_err(|e| unreadable(&e))?;
            for (name, entry) in listing {
                let path = if folder.is_empty() {
                    name
                } else {
                    format!("{folder}/{name}")
                };
                entries.insert(path, entry);
            }
        }
        Ok(Manifest {
            version: stored.version,
            entries,
            left_out: stored.left_out,
            complete: stored.complete,
        })
    }

    /// The index of the last checkpoint; empty when there is none or it cannot be read (the
    /// next checkpoint then reads every file).
    pub(crate) fn load_index(&self) -> Index {
        fs::read(self.dir.join("index.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub(crate) fn save_index(&self, index: &Index) -> Result<(), CheckpointError> {
        let json = serde_json::to_vec(index)
            .map_err(|e| CheckpointError::Io(format!("cannot encode the index: {e}")))?;
        // Not flushed: a lost index only makes the next checkpoint read every file again.
        self.write_whole(&self.dir.join("index.json"), &json, false)
    }

    pub(crate) fn begin_restore(&self, pending: &PendingRestore) -> Result<(), CheckpointError> {
        let json = serde_json::to_vec(pending)
            .map_err(|e| CheckpointError::Io(format!("cannot encode the undo journal: {e}")))?;
        self.write_whole(&self.dir.join("restore.json"), &json, true)
    }

    pub(crate) fn end_restore(&self) -> Result<(), CheckpointError> {
        let path = self.dir.join("restore.json");
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error("remove", &path, &e)),
        }
    }

    /// Bytes of every file of the store.
    pub(crate) fn space_used(&self) -> Result<u64, CheckpointError> {
        let mut total = 0;
        let mut stack = vec![self.dir.clone()];
        while let Some(dir) = stack.pop() {
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error("list", &dir, &e)),
            };
            for entry in entries.filter_map(Result::ok) {
                let Ok(meta) = fs::symlink_metadata(entry.path()) else {
                    continue;
                };
                if meta.is_dir() {
                    stack.push(entry.path());
                } else {
                    total += meta.len();
                }
            }
        }
        Ok(total)
    }

    pub(crate) fn discard(&self) -> Result<(), CheckpointError> {
        match fs::remove_dir_all(&self.dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("remove", &self.dir, &e)),
        }
        // The run's folder too, when nothing else is in it.
        if let Some(run_dir) = self.dir.parent() {
            let _ = fs::remove_dir(run_dir);
        }
        Ok(())
    }
}

fn encode(value: &impl Serialize) -> Result<Vec<u8>, CheckpointError> {
    serde_json::to_vec(value)
        .map_err(|e| CheckpointError::Io(format!("cannot encode a checkpoint: {e}")))
}

/// A new file of a unique name in `dir`.
fn tempfile_in(dir: &Path) -> Result<(PathBuf, fs::File), CheckpointError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    for _ in 0..100 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{}-{n}", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_error("create", &path, &e)),
        }
    }
    Err(CheckpointError::Io(format!(
        "cannot create a temporary file in {}",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_id_is_its_digest_and_unknown_ids_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(dir.path().join("c"));
        let m = Manifest::new(BTreeMap::new(), Vec::new(), true);
        let a = store.save_manifest(&m, BTreeMap::new()).unwrap().0;
        assert_eq!(store.save_manifest(&m, BTreeMap::new()).unwrap().0, a);
        assert_eq!(store.load_manifest(&a).unwrap(), m);
        // A second manifest that changes one file of one folder adds that folder's listing
        // and its own few lines, not the other folders' listings again.
        let file = |digest: String| Entry::File {
            digest,
            size: 1,
            executable: false,
            mode: Some(0o644),
        };
        let mut entries: BTreeMap<String, Entry> = (0..50)
            .flat_map(|f| (0..20).map(move |i| (format!("d{f}/f{i}"), file(format!("{f:064x}")))))
            .collect();
        entries.insert("top.txt".into(), file("bb".into()));
        let big = Manifest::new(entries.clone(), Vec::new(), true);
        let (first, known) = store.save_manifest(&big, BTreeMap::new()).unwrap();
        let used = store.space_used().unwrap();
        entries.insert("d7/f3".into(), file("cc".into()));
        let changed = Manifest::new(entries, Vec::new(), true);
        let second = store.save_manifest(&changed, BTreeMap::new()).unwrap().0;
        assert_ne!(first, second);
        // The first's listings kept in memory: the same manifest, the changed folder's
        // listing made again.
        let (again, listings) = store.save_manifest(&changed, known).unwrap();
        assert_eq!(again, second);
        assert_eq!(listings.len(), 51);
        let added = store.space_used().unwrap() - used;
        assert!(
            added * 8 < used,
            "{added} bytes added for one changed file, {used} for the first"
        );
        assert_eq!(store.load_manifest(&first).unwrap(), big);
        assert_eq!(store.load_manifest(&second).unwrap(), changed);
        // A manifest of the first format (every path in it) still reads.
        let old = Manifest {
            version: 1,
            ..changed
        };
        let old_id = CheckpointId::new("0123456789abcdef01234567");
        store
            .write_whole(
                &store.manifest_path(&old_id).unwrap(),
                &serde_json::to_vec(&old).unwrap(),
                false,
            )
            .unwrap();
        assert_eq!(store.load_manifest(&old_id).unwrap(), old);
        for bad in ["../index", "", "0123"] {
            let id = CheckpointId::new(bad);
            assert_eq!(
                store.load_manifest(&id),
                Err(CheckpointError::NotFound(id.clone()))
            );
        }
    }

    #[test]
    fn packed_contents_read_back_and_a_damaged_pack_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(dir.path().join("c"));
        let (small, big) = (b"small content".to_vec(), vec![7u8; 100 * 1024]);
        let (d_small, d_big) = (digest::of(&small), digest::of(&big));
        assert!(!store.has_object(&d_small, small.len() as u64));
        assert_eq!(store.put_object(&d_small, &small).unwrap(), 13);
        assert!(
            store.has_object(&d_small, 13),
            "the pack being written counts"
        );
        assert_eq!(
            store.put_object(&d_small, &small).unwrap(),
            0,
            "once per pack"
        );
        store.put_object(&d_big, &big).unwrap();
        assert!(store.finish_pack().unwrap());
        assert!(!store.finish_pack().unwrap(), "nothing left to write");
        // Read back by another operation, from the pack and from the big file's own.
        let again = RunStore::new(dir.path().join("c"));
        assert!(again.has_object(&d_small, 13) && again.has_object(&d_big, big.len() as u64));
        assert_eq!(
            again.read_object(&d_small, 100).unwrap(),
            Some(small.clone())
        );
        assert_eq!(
            again.read_object(&d_small, 5).unwrap(),
            None,
            "longer than asked"
        );
        let mut copy = Vec::new();
        again.copy_object(&d_big, &mut copy).unwrap();
        assert_eq!(copy, big);
        // A pack damaged on disk: a copy is refused, never written wrong.
        let packs = dir.path().join("c/packs");
        let pack = fs::read_dir(&packs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "pack"))
            .unwrap();
        fs::write(&pack, b"SMALL CONTENT").unwrap();
        let damaged = RunStore::new(dir.path().join("c"));
        let err = damaged.copy_object(&d_small, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("damaged"), "{err}");
        // An unfinished pack of a failed checkpoint is removed with its operation.
        let failed = RunStore::new(dir.path().join("c"));
        failed.put_object(&digest::of(b"x"), b"x").unwrap();
        drop(failed);
        assert_eq!(fs::read_dir(dir.path().join("c/tmp")).unwrap().count(), 0);
    }
}
