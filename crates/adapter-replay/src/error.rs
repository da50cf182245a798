//! [`CassetteError`]: why a cassette could not be written or read.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    #[error("cannot {doing} {}: {source}", path.display())]
    Io {
        doing: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}, line {line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
}
