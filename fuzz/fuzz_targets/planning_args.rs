//! The planning tool's arguments as the model writes them (any text, broken JSON
//! included), one call per line: every call gets an answer, and a plan the tool holds
//! always has steps.
#![no_main]

use domain::tools::planning::PlanningTool;

libfuzzer_sys::fuzz_target!(|text: &str| {
    let mut tool = PlanningTool::new("plan_1", "goal").with_max_steps(6);
    for call in text.lines().take(8) {
        let _ = tool.call(call);
        if let Some(plan) = tool.active_plan() {
            assert!(!plan.steps.is_empty());
        }
    }
});
