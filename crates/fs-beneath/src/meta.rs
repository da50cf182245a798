//! What a `stat` without following says of an entry.

use rustix::fs::{FileType, Stat};

/// The kind of an entry, a link as a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
    Link,
    /// A FIFO, socket or device.
    Special,
}

impl Kind {
    pub(crate) fn of(t: FileType) -> Kind {
        match t {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Folder,
            FileType::Symlink => Kind::Link,
            _ => Kind::Special,
        }
    }
}

/// An entry's facts (the entry itself: a link is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub kind: Kind,
    pub size: u64,
    /// Last modification, nanoseconds since the Unix epoch (0 before it).
    pub modified_ns: u64,
    /// The permission bits (`0o7777`).
    pub mode: u32,
    /// Hard links to the same content.
    pub links: u64,
}

impl Meta {
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // field types vary by arch
    pub(crate) fn of(st: &Stat) -> Meta {
        let secs = i64::from(st.st_mtime);
        let nanos = u64::try_from(st.st_mtime_nsec).unwrap_or(0);
        let modified_ns = u64::try_from(secs)
            .ok()
            .and_then(|s| s.checked_mul(1_000_000_000))
            .and_then(|s| s.checked_add(nanos))
            .unwrap_or(0);
        Meta {
            kind: Kind::of(FileType::from_raw_mode(st.st_mode)),
            size: u64::try_from(st.st_size).unwrap_or(0),
            modified_ns,
            mode: (st.st_mode as u32) & 0o7777,
            links: st.st_nlink as u64,
        }
    }

    /// The facts of an open file or folder.
    pub fn of_open(fd: impl std::os::fd::AsFd) -> std::io::Result<Meta> {
        Ok(Meta::of(&rustix::fs::fstat(fd)?))
    }

    pub fn is_file(&self) -> bool {
        self.kind == Kind::File
    }

    pub fn is_folder(&self) -> bool {
        self.kind == Kind::Folder
    }
}
