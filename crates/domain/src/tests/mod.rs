mod memory_store;
mod names;
mod runtime;
mod styles;
mod support;
