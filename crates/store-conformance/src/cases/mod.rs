//! The cases, one `pub async fn` each, named for what they check. Each takes the factory
//! of fresh stores and panics when the store breaks the port's contract.

mod events;
mod leases;
mod queue;
mod runs;

pub use events::*;
pub use leases::*;
pub use queue::*;
pub use runs::*;

use domain::ports::{RunStore, WorkQueue};

/// What the suite tests: both store ports on one value.
pub trait Store: RunStore + WorkQueue + 'static {}
impl<S: RunStore + WorkQueue + 'static> Store for S {}
