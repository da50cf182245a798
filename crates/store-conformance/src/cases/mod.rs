//! The cases, one `pub async fn` each, named for what they check. Each takes the factory
//! of fresh stores and panics when the store breaks the port's contract.

mod events;
mod leases;
mod mailbox;
mod queue;
mod runs;

pub use events::*;
pub use leases::*;
pub use mailbox::*;
pub use queue::*;
pub use runs::*;

use domain::ports::{RunMailbox, RunStore, WorkQueue};

/// What the suite tests: the three store ports on one value.
pub trait Store: RunStore + WorkQueue + RunMailbox + 'static {}
impl<S: RunStore + WorkQueue + RunMailbox + 'static> Store for S {}
