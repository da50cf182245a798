//! [`Swapper`]: a thread that keeps exchanging two paths (`renameat2(RENAME_EXCHANGE)`:
//! atomic, neither name is ever missing), as a hostile command swapping a file or folder
//! for a symbolic link does, for the race tests of docs/security.md ("Links in the
//! workspace").

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use nix::fcntl::{renameat2, RenameFlags};

/// Exchanges `a` and `b` in a loop until stopped (or dropped).
pub struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
    a: PathBuf,
    b: PathBuf,
}

impl Swapper {
    /// Starts exchanging `a` and `b` (both must exist).
    pub fn start(a: &Path, b: &Path) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (a, b) = (a.to_path_buf(), b.to_path_buf());
        let thread = {
            let (stop, swaps, a, b) = (stop.clone(), swaps.clone(), a.clone(), b.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if renameat2(None, &a, None, &b, RenameFlags::RENAME_EXCHANGE).is_ok() {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
            a,
            b,
        }
    }

    /// How many exchanges were made so far.
    pub fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    /// Stops the thread and leaves the two paths as they were when it started (`true`) or
    /// exchanged (`false`).
    pub fn stop(mut self, as_started: bool) {
        self.halt();
        let exchanged = self.swaps() % 2 == 1;
        if exchanged == as_started {
            let _ = renameat2(None, &self.a, None, &self.b, RenameFlags::RENAME_EXCHANGE);
        }
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.halt();
    }
}
