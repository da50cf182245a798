//! The names users type for modes, schedules, revise policies and approval modes
//! (`model/names.rs`): each reads back, and the spellings stay.

use crate::engine::config::{Mode, Revise, Schedule};
use crate::model::approval::ApprovalMode;
use crate::model::names::Named;

/// Every name reads back as its value, and an unknown one lists the names.
fn round_trips<T: Named + std::fmt::Debug>() {
    for v in T::all() {
        assert_eq!(T::from_name(v.name()), Ok(*v), "{}", v.name());
    }
    let err = T::from_name("nope").expect_err("unknown");
    assert_eq!(err.available, T::names().join(", "));
    assert!(err
        .to_string()
        .starts_with(&format!("unknown {} 'nope'", T::WHAT)));
}

#[test]
fn every_name_reads_back_and_the_spellings_stay() {
    round_trips::<Mode>();
    round_trips::<Schedule>();
    round_trips::<Revise>();
    round_trips::<ApprovalMode>();
    // What users type and stores keep: changing one is a migration (docs/configuration.md).
    assert_eq!(
        Mode::names(),
        ["flow", "plan-act", "todo", "dag", "auto", "direct"]
    );
    assert_eq!(Schedule::names(), ["event", "superstep"]);
    assert_eq!(Revise::names(), ["on-failure", "every-step"]);
    assert_eq!(ApprovalMode::names(), ["auto", "ask", "read-only"]);
}
