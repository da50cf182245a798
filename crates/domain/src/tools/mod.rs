//! The domain's own tools and what tool adapters share.

pub mod args;
pub mod builtin;
pub mod combined;
pub mod planning;
