//! Any file as a cassette: opening it gives a cassette or a clear error, never a panic.
#![no_main]

use std::io::Write;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("planwright-fuzz-{}.jsonl", std::process::id()));
    let written = std::fs::File::create(&path).and_then(|mut f| f.write_all(data));
    if written.is_ok() {
        if let Err(e) = adapter_replay::ReplayLlm::open(&path) {
            assert!(!e.to_string().is_empty());
        }
    }
});
