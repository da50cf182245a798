//! # fs-beneath
//!
//! Paths Planwright itself opens in a run's workspace (input restores, checkpoints and
//! undo, the server's downloads) are opened **beneath the workspace without following a
//! symbolic link at any component** (docs/security.md, "Links in the workspace"): a
//! command that swaps a folder for a link to `/` between Planwright's check and its use
//! makes the use fail, never reach outside.
//!
//! - [`Folder`]: an open folder (a descriptor, not a path). Every path given to it is
//!   relative, made of plain names (no `..`, no `/` at the start) and resolved from that
//!   descriptor with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (Linux ≥ 5.6), or,
//!   where the kernel lacks it, one component at a time with `openat(O_NOFOLLOW)`
//!   (`resolve.rs`). A link met on the way is the error `ELOOP` ([`is_link`]).
//! - Operations on one name of a folder ([`Folder::stat`], [`Folder::remove_file`],
//!   [`Folder::rename`], [`Folder::symlink`], ...) use the `*at` calls on its descriptor
//!   and never follow the name.
//! - [`Folder::make_folders`]: the folders of a path made real, whatever was in the way
//!   (a link, a file) removed first; [`Folder::remove_all`] removes a tree without
//!   following any link in it.
//!
//! On rustix (already in the tree through tempfile): safe wrappers over these system
//! calls, where the workspace forbids `unsafe` code. cap-std was not taken: it follows
//! links that stay beneath its root, and nothing here may follow any.

mod folder;
mod meta;
mod path;
mod resolve;

pub use folder::{Entry, Folder};
pub use meta::{Kind, Meta};
pub use path::{is_link, parts};
