//! A server's SSE stream, cut into reads where the input has byte 0xFF: the assembler
//! answers with a reply or an error, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| adapter_openai::fuzzing::sse(data));
