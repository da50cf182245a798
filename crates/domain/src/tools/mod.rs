//! The domain's own tools and what tool adapters share.

pub mod args;
pub mod builtin;
pub mod code;
pub mod combined;
pub mod planning;
