//! The data a run is made of: the plan and its step state machine, the event log, and the
//! plan's text forms. Pure data and pure functions: no async, no ports.

pub mod approval;
pub mod checkpoints;
pub mod event;
pub mod inputs;
pub mod json_text;
pub mod names;
pub mod observations;
pub mod plan;
pub mod plan_check;
pub mod plan_text;
pub mod status;
pub mod step;
pub mod step_input;
pub mod text;
pub mod tool_kind;
pub mod verification;
pub mod workspace_view;
