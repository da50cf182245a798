//! Opening a path beneath a folder's descriptor without following links: `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it (Linux ≥ 5.6, probed once
//! per process), else one component at a time with `openat(O_NOFOLLOW)`, each from the
//! descriptor of the folder before it, so a component swapped meanwhile for a link fails
//! instead of being followed. Both say `ELOOP` for a link on the way.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{openat, openat2, statat, AtFlags, FileType, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;

/// How paths are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// One `openat2` call (the kernel checks every component).
    Openat2,
    /// `openat` per component, `O_NOFOLLOW` each.
    Stepwise,
}

const UNKNOWN: u8 = 0;
const OPENAT2: u8 = 1;
const STEPWISE: u8 = 2;

static PROBED: AtomicU8 = AtomicU8::new(UNKNOWN);

/// The method this kernel allows, probed on first use.
pub(crate) fn method() -> Method {
    match PROBED.load(Ordering::Relaxed) {
        OPENAT2 => Method::Openat2,
        STEPWISE => Method::Stepwise,
        _ => {
            // ENOSYS before Linux 5.6; EPERM (or ENOSYS) where a seccomp filter refuses it.
            let works = openat2(
                CWD,
                ".",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
            )
            .is_ok();
            PROBED.store(if works { OPENAT2 } else { STEPWISE }, Ordering::Relaxed);
            if works {
                Method::Openat2
            } else {
                Method::Stepwise
            }
        }
    }
}

/// Opens `names` (plain names, checked by the caller) beneath `dir` with `flags` (and
/// `mode` when creating); no `names`: `dir` itself, opened anew.
pub(crate) fn open_beneath(
    method: Method,
    dir: BorrowedFd<'_>,
    names: &[&OsStr],
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Some((last, folders)) = names.split_last() else {
        return openat(dir, ".", flags, mode).map_err(io::Error::from);
    };
    match method {
        Method::Openat2 => {
            let path: PathBuf = names.iter().collect();
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            // EAGAIN: a rename elsewhere on the system raced the lookup; try again.
            for _ in 0..32 {
                match openat2(dir, &path, flags, mode, resolve) {
                    Err(Errno::AGAIN) => continue,
                    // `O_PATH | O_NOFOLLOW` opens a trailing link itself, and then
                    // `O_DIRECTORY` says ENOTDIR.
                    Err(Errno::NOTDIR) if folders.is_empty() => {
                        return Err(said_of_a_link(dir, last, Errno::NOTDIR))
                    }
                    Err(Errno::NOTDIR) => {
                        let parent: PathBuf = folders.iter().collect();
                        let parent = openat2(
                            dir,
                            &parent,
                            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                            Mode::empty(),
                            resolve,
                        );
                        return Err(match parent {
                            Ok(parent) => said_of_a_link(parent.as_fd(), last, Errno::NOTDIR),
                            Err(e) => e.into(),
                        });
                    }
                    other => return other.map_err(io::Error::from),
                }
            }
            Err(Errno::AGAIN.into())
        }
        Method::Stepwise => {
            let mut at: Option<OwnedFd> = None;
            for name in folders {
                let here = at.as_ref().map_or(dir, AsFd::as_fd);
                let next = openat(
                    here,
                    *name,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| said_of_a_link(here, name, e))?;
                at = Some(next);
            }
            let here = at.as_ref().map_or(dir, AsFd::as_fd);
            openat(here, *last, flags, mode).map_err(|e| said_of_a_link(here, last, e))
        }
    }
}

/// `e` as `openat2` would say it: `ELOOP` when `name` is a link (`O_PATH | O_NOFOLLOW`
/// says `ENOTDIR` for a link where a folder is asked).
fn said_of_a_link(dir: BorrowedFd<'_>, name: &OsStr, e: Errno) -> io::Error {
    if e == Errno::NOTDIR
        && statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
    {
        return Errno::LOOP.into();
    }
    e.into()
}
