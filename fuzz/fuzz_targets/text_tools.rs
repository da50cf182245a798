//! Any model text under the text tool protocol decodes without panicking.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| adapter_openai::fuzzing::text_tools(text));
