//! The planning styles.

pub mod auto;
pub(crate) mod dag;
pub(crate) mod flow;
pub(crate) mod plan_act;
pub mod response_schemas;
pub(crate) mod revise;
pub(crate) mod todo;
