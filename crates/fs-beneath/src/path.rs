//! The relative paths a [`crate::Folder`] takes: plain names only.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path};

use rustix::io::Errno;

/// The names of `rel`, in order (`.` components dropped); refused (`InvalidInput`) when
/// `rel` is absolute or holds `..`.
pub fn parts(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("'{}' is not a path beneath the folder", rel.display()),
                ))
            }
        }
    }
    Ok(names)
}

/// Whether `e` says a symbolic link was met where none may be followed.
pub fn is_link(e: &io::Error) -> bool {
    e.raw_os_error() == Some(Errno::LOOP.raw_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_taken() {
        assert_eq!(parts(Path::new("a/./b//c")).unwrap(), ["a", "b", "c"]);
        assert!(parts(Path::new("")).unwrap().is_empty());
        for bad in ["/etc", "a/../b", "..", "../x"] {
            let e = parts(Path::new(bad)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
    }
}
