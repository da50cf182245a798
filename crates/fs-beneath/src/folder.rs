//! [`Folder`]: an open folder, and what Planwright does beneath it without following links.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{
    mkdirat, readlinkat, renameat, statat, symlinkat, unlinkat, AtFlags, Dir, Mode, OFlags,
};
use rustix::io::Errno;

use crate::meta::{Kind, Meta};
use crate::path::{is_link, parts};
use crate::resolve::{method, open_beneath, Method};

/// How many times a step that a concurrent change undid (a folder made, then swapped) is
/// tried again before giving up.
const TRIES: usize = 8;

/// One entry of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    /// What the listing said it is (a link as a link).
    pub kind: Kind,
}

/// An open folder: paths given to it are resolved beneath it, never through a link.
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
    method: Method,
}

/// `name` when it is one plain name (not empty, no `/`, not `.` or `..`).
fn one_name(name: &OsStr) -> io::Result<&OsStr> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{}' is not one name", name.to_string_lossy()),
        ));
    }
    Ok(name)
}

impl Folder {
    /// Opens the folder at `path` (the caller's path: a link in it is followed, as the
    /// caller named it); what lies beneath it is then reached without following any.
    pub fn open(path: &Path) -> io::Result<Folder> {
        let fd = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Folder {
            fd,
            method: method(),
        })
    }

    #[cfg(test)]
    pub(crate) fn resolved_by(mut self, method: Method) -> Folder {
        self.method = method;
        self
    }

    fn open_at(&self, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        let names = parts(rel)?;
        open_beneath(self.method, self.fd.as_fd(), &names, flags, mode)
    }

    /// The folder `rel` beneath this one (`""`: this one again).
    pub fn folder(&self, rel: &Path) -> io::Result<Folder> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        Ok(Folder {
            fd,
            method: self.method,
        })
    }

    /// The file `rel` opened for reading (non-blocking: a FIFO put in its place does not
    /// hang the caller), with its facts taken from the open file. Anything but a regular
    /// file is refused (`InvalidInput`).
    pub fn open_file(&self, rel: &Path) -> io::Result<(File, Meta)> {
        let fd = self.open_at(rel, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())?;
        let meta = Meta::of_open(&fd)?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'{}' is not a regular file", rel.display()),
            ));
        }
        Ok((File::from(fd), meta))
    }

    /// A new file `name` in this folder, for writing (refused when anything is there).
    pub fn create_file(&self, name: &OsStr) -> io::Result<File> {
        let fd = open_beneath(
            self.method,
            self.fd.as_fd(),
            &[one_name(name)?],
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(0o600),
        )?;
        Ok(File::from(fd))
    }

    /// The facts of `rel` itself (a link is not followed, nor any folder on the way).
    pub fn stat(&self, rel: &Path) -> io::Result<Meta> {
        let names = parts(rel)?;
        let Some((last, folders)) = names.split_last() else {
            return Meta::of_open(&self.fd);
        };
        if folders.is_empty() {
            // A name of this folder: no descriptor to open on the way.
            return Ok(Meta::of(&statat(
                &self.fd,
                *last,
                AtFlags::SYMLINK_NOFOLLOW,
            )?));
        }
        let parent = open_beneath(
            self.method,
            self.fd.as_fd(),
            folders,
            OFlags::PATH | OFlags::DIRECTORY,
            Mode::empty(),
        )?;
        Ok(Meta::of(&statat(
            &parent,
            *last,
            AtFlags::SYMLINK_NOFOLLOW,
        )?))
    }

    /// The entries of this folder (without `.` and `..`), in the order the listing gives.
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        let readable = open_beneath(
            self.method,
            self.fd.as_fd(),
            &[],
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )?;
        let mut dir = Dir::new(readable)?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                rustix::fs::FileType::Unknown => {
                    match statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => Meta::of(&st).kind,
                        Err(Errno::NOENT) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                t => Kind::of(t),
            };
            entries.push(Entry {
                name: name.to_os_string(),
                kind,
            });
        }
        Ok(entries)
    }

    /// Where link `name` points.
    pub fn read_link(&self, name: &OsStr) -> io::Result<OsString> {
        let target = readlinkat(&self.fd, one_name(name)?, Vec::new())?;
        Ok(OsStr::from_bytes(target.as_bytes()).to_os_string())
    }

    /// A new link `name` pointing at `target` (never followed here).
    pub fn symlink(&self, target: &OsStr, name: &OsStr) -> io::Result<()> {
        Ok(symlinkat(target, &self.fd, one_name(name)?)?)
    }

    /// A new folder `name`.
    pub fn make_dir(&self, name: &OsStr) -> io::Result<()> {
        Ok(mkdirat(
            &self.fd,
            one_name(name)?,
            Mode::from_raw_mode(0o777),
        )?)
    }

    /// Removes `name`, a file or a link (never what it points at).
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        Ok(unlinkat(&self.fd, one_name(name)?, AtFlags::empty())?)
    }

    /// Removes the empty folder `name`.
    pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        Ok(unlinkat(&self.fd, one_name(name)?, AtFlags::REMOVEDIR)?)
    }

    /// Removes whatever `name` is: a file, a link, or a folder with all it holds (links in
    /// it removed as links). Nothing there is not an error.
    pub fn remove_all(&self, name: &OsStr) -> io::Result<()> {
        let name = one_name(name)?;
        for _ in 0..TRIES {
            let meta = match statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Meta::of(&st),
                Err(Errno::NOENT) => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            if !meta.is_folder() {
                match unlinkat(&self.fd, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => return Ok(()),
                    // Made a folder meanwhile: look again.
                    Err(Errno::ISDIR) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            let inner = match self.folder(Path::new(name)) {
                Ok(f) => f,
                // Swapped for a link or a file meanwhile: look again.
                Err(e) if is_link(&e) || e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) => {
                    continue
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            for entry in inner.entries()? {
                inner.remove_all(&entry.name)?;
            }
            match unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT) => return Ok(()),
                // Filled or swapped meanwhile: look again.
                Err(Errno::NOTEMPTY | Errno::NOTDIR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::other(format!(
            "'{}' kept changing while it was removed",
            name.to_string_lossy()
        )))
    }

    /// Renames `from` to `to`, both in this folder (what was at `to` is replaced).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(renameat(
            &self.fd,
            one_name(from)?,
            &self.fd,
            one_name(to)?,
        )?)
    }

    /// The folder `rel` beneath this one, each of its folders made real: a link, a file
    /// or anything else in the way is removed (never followed) and a folder made in its
    /// place; a missing one is made.
    pub fn make_folders(&self, rel: &Path) -> io::Result<Folder> {
        let mut here = self.folder(Path::new(""))?;
        for name in parts(rel)? {
            here = here.make_one_folder(name)?;
        }
        Ok(here)
    }

    fn make_one_folder(&self, name: &OsStr) -> io::Result<Folder> {
        for _ in 0..TRIES {
            match statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if Meta::of(&st).is_folder() => {}
                Ok(_) => {
                    self.remove_all(name)?;
                    continue;
                }
                Err(Errno::NOENT) => match mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                },
                Err(e) => return Err(e.into()),
            }
            match self.folder(Path::new(name)) {
                Ok(f) => return Ok(f),
                // Swapped meanwhile, or gone: look again.
                Err(e)
                    if is_link(&e)
                        || e.kind() == io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!(
            "'{}' kept changing while a folder was made there",
            name.to_string_lossy()
        )))
    }
}

#[cfg(test)]
mod tests;
