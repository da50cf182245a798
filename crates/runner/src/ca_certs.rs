//! The `--ca-cert` files, read for the HTTP clients that talk to the outside (the
//! OpenAI-compatible and Anthropic clients, web search); the wiring of each reads them here.

use crate::{RunSettings, RunnerError};

/// The contents of every `--ca-cert FILE`, trusted beside the platform's roots by the
/// HTTP clients that talk to the outside (the LLM endpoint, web search).
pub fn read(args: &RunSettings) -> Result<Vec<Vec<u8>>, RunnerError> {
    args.ca_certs
        .iter()
        .map(|path| {
            std::fs::read(path).map_err(|e| {
                RunnerError::Config(format!(
                    "cannot read the CA certificate {}: {e}",
                    path.display()
                ))
            })
        })
        .collect()
}
