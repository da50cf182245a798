mod memory_store;
mod runtime;
mod styles;
mod support;
