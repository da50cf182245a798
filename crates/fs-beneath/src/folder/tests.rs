use std::io::Read;
use std::os::unix::fs::symlink;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;

const METHODS: [Method; 2] = [Method::Openat2, Method::Stepwise];

/// A workspace `ws` with `real/f.txt`, links `dlink -> real`, `flink -> real/f.txt` and
/// `out -> <outside>`; `outside` holds `f.txt` too.
struct Tree {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(ws.join("real")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("real/f.txt"), "inside").unwrap();
    std::fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
    symlink("real", ws.join("dlink")).unwrap();
    symlink("real/f.txt", ws.join("flink")).unwrap();
    symlink(&outside, ws.join("out")).unwrap();
    Tree {
        _dir: dir,
        ws,
        outside,
    }
}

/// The workspace opened with `method` (where the kernel lacks openat2, the stepwise method
/// stands in for it: `open_beneath` is then given what the kernel has).
fn root(t: &Tree, method: Method) -> Folder {
    let method = if crate::resolve::method() == Method::Openat2 {
        method
    } else {
        Method::Stepwise
    };
    Folder::open(&t.ws).unwrap().resolved_by(method)
}

fn read(folder: &Folder, rel: &str) -> io::Result<String> {
    let (mut file, _) = folder.open_file(Path::new(rel))?;
    let mut s = String::new();
    file.read_to_string(&mut s)?;
    Ok(s)
}

#[test]
fn no_link_is_followed_at_any_component() {
    for method in METHODS {
        let t = tree();
        let ws = root(&t, method);
        assert_eq!(read(&ws, "real/f.txt").unwrap(), "inside");
        assert_eq!(read(&ws, "./real//f.txt").unwrap(), "inside");
        for through_a_link in ["dlink/f.txt", "flink", "out/f.txt", "out"] {
            let e = read(&ws, through_a_link).unwrap_err();
            assert!(is_link(&e), "{method:?} {through_a_link}: {e}");
        }
        let e = ws.folder(Path::new("dlink")).map(|_| ()).unwrap_err();
        assert!(is_link(&e), "{method:?}: {e}");
        assert!(is_link(&ws.stat(Path::new("out/f.txt")).unwrap_err()));
        assert_eq!(ws.stat(Path::new("out")).unwrap().kind, Kind::Link);
        assert_eq!(ws.stat(Path::new("real")).unwrap().kind, Kind::Folder);
        assert_eq!(ws.stat(Path::new("real/f.txt")).unwrap().size, 6);
        for climbing in [
            "../outside/f.txt",
            "/etc/passwd",
            "real/../../outside/f.txt",
        ] {
            let e = read(&ws, climbing).unwrap_err();
            assert_eq!(
                e.kind(),
                io::ErrorKind::InvalidInput,
                "{method:?} {climbing}"
            );
        }
        let e = read(&ws, "real").unwrap_err();
        assert!(!is_link(&e), "a folder is not a file: {e}");
        assert_eq!(
            read(&ws, "missing.txt").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(ws.read_link(OsStr::new("flink")).unwrap(), "real/f.txt");
    }
}

#[test]
fn folders_are_made_real_and_trees_removed_without_following_links() {
    for method in METHODS {
        let t = tree();
        let ws = root(&t, method);
        // A link and a file stand where folders must be.
        std::fs::write(t.ws.join("file"), "in the way").unwrap();
        let deep = ws.make_folders(Path::new("out/a")).unwrap();
        deep.create_file(OsStr::new("new.txt")).unwrap();
        let deep = ws.make_folders(Path::new("file/b")).unwrap();
        deep.symlink(OsStr::new("/etc"), OsStr::new("etc")).unwrap();
        assert!(t.ws.join("out/a/new.txt").is_file());
        assert!(std::fs::symlink_metadata(t.ws.join("out"))
            .unwrap()
            .is_dir());
        assert!(std::fs::symlink_metadata(t.ws.join("file/b/etc"))
            .unwrap()
            .is_symlink());
        // A tree holding links to the outside and to /etc goes, they stay whole.
        symlink(&t.outside, t.ws.join("file/b/out2")).unwrap();
        ws.remove_all(OsStr::new("file")).unwrap();
        ws.remove_all(OsStr::new("dlink")).unwrap();
        ws.remove_all(OsStr::new("nothing-here")).unwrap();
        assert!(!t.ws.join("file").exists());
        assert!(!t.ws.join("dlink").exists());
        assert!(t.ws.join("real/f.txt").is_file(), "a link's target stays");
        assert_eq!(
            std::fs::read_to_string(t.outside.join("f.txt")).unwrap(),
            "OUTSIDE"
        );
        assert!(std::path::Path::new("/etc/passwd").exists());
        let names: Vec<OsString> = {
            let mut n: Vec<OsString> = ws.entries().unwrap().into_iter().map(|e| e.name).collect();
            n.sort();
            n
        };
        assert_eq!(names, ["flink", "out", "real"]);
        for bad in ["", "a/b", "..", "."] {
            assert!(ws.remove_all(OsStr::new(bad)).is_err(), "{bad}");
        }
    }
}

/// Exchanges `a` and `b` in a loop until `stop`.
fn swapping(a: std::path::PathBuf, b: std::path::PathBuf, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let _ = rustix::fs::renameat_with(
            rustix::fs::CWD,
            &a,
            rustix::fs::CWD,
            &b,
            rustix::fs::RenameFlags::EXCHANGE,
        );
    }
}

/// A folder swapped for a link to the outside as fast as a thread can: reading a file in
/// it gets the inside content or an error, never the outside's.
#[test]
fn a_folder_swapped_for_a_link_is_never_read_through() {
    for method in METHODS {
        let t = tree();
        let ws = root(&t, method);
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (a, b, stop) = (t.ws.join("real"), t.ws.join("out"), stop.clone());
            std::thread::spawn(move || swapping(a, b, stop))
        };
        let (mut inside, mut refused) = (0, 0);
        for _ in 0..20_000 {
            match read(&ws, "real/f.txt") {
                Ok(text) => {
                    assert_eq!(text, "inside", "{method:?}");
                    inside += 1;
                }
                Err(_) => refused += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(inside > 0 && refused > 0, "{method:?}: {inside} {refused}");
    }
}
