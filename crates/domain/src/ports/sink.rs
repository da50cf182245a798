//! The event sink port: live listeners of a run's events.

use crate::model::event::Event;

/// A live listener for events (the CLI view, later the SSE stream). Must not block.
#[cfg_attr(test, mockall::automock)]
pub trait EventSink: Send + Sync {
    fn publish(&self, event: &Event);
}

/// A sink that drops everything.
#[derive(Debug, Default)]
pub struct NoEventSink;

impl EventSink for NoEventSink {
    fn publish(&self, _event: &Event) {}
}
