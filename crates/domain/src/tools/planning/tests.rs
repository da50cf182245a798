//! The `planning` tool's commands, schemas (snapshots) and fuzzing.
use serde_json::json;

use super::*;

fn tool_with_plan() -> PlanningTool {
    let mut t = PlanningTool::new("plan_1", "goal");
    t.execute(&json!({"command": "create", "title": "T", "steps": ["a", "[CODE] b", "c"]}))
        .expect("create succeeds");
    t
}

#[test]
fn create_sets_the_active_plan_and_returns_its_text() {
    let mut t = PlanningTool::new("plan_1", "goal");
    let out = t
        .execute(&json!({"command": "create", "title": "T", "steps": ["a", "b"]}))
        .expect("create succeeds");
    assert!(out.starts_with("Plan created successfully with ID: plan_1"));
    assert!(out.contains("0. [ ] a"));
    let plan = t.active_plan().expect("active plan");
    assert_eq!(plan.steps().len(), 2);
    assert_eq!(plan.goal, "goal");
}

#[test]
fn create_validates_its_parameters() {
    let mut t = PlanningTool::new("plan_1", "goal");
    for (args, needle) in [
        (json!({"title": "T"}), "`command` is required"),
        (
            json!({"command": "create", "title": "T"}),
            "`steps` is missing",
        ),
        (
            json!({"command": "create", "title": "T", "steps": []}),
            "must not be empty",
        ),
        (
            json!({"command": "create", "title": "T", "steps": ["a", 3]}),
            "step 1 must be a string",
        ),
        (
            json!({"command": "create", "title": "T", "steps": [{"id": "x", "description": "a"}, {"id": "x", "description": "b"}]}),
            "duplicate step id 'x'",
        ),
        (
            json!({"command": "explode"}),
            "unrecognized command: explode",
        ),
        (json!([1, 2]), "must be a JSON object"),
    ] {
        let err = t.execute(&args).expect_err("invalid call");
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }
    assert!(t
        .call("{not json")
        .expect_err("bad json")
        .contains("not valid JSON"));
    assert!(t.active_plan().is_none());
}

#[test]
fn duplicate_plan_ids_are_refused() {
    let mut t = tool_with_plan();
    let err = t
        .execute(&json!({"command": "create", "plan_id": "plan_1", "title": "T", "steps": ["a"]}))
        .expect_err("duplicate id");
    assert!(err.contains("already exists"));
}

#[test]
fn mark_step_checks_bounds_and_status() {
    let mut t = tool_with_plan();
    let err = t
        .execute(&json!({"command": "mark_step", "step_index": 3, "step_status": "completed"}))
        .expect_err("out of range");
    assert!(err.contains("Valid indices range from 0 to 2"), "{err}");
    let err = t
        .execute(&json!({"command": "mark_step", "step_index": -1}))
        .expect_err("negative");
    assert!(err.contains("invalid step_index: -1"));
    let err = t
        .execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "done"}))
        .expect_err("bad status");
    assert!(err.contains("invalid step_status: done"));
    let out = t
        .execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "completed", "step_notes": "n"}))
        .expect("walks through in_progress");
    assert!(out.contains("0. [✓] a"));
    assert!(out.contains("Notes: n"));
    let err = t
        .execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "in_progress"}))
        .expect_err("completed -> in_progress is illegal");
    assert!(
        err.contains("cannot move from completed to in_progress"),
        "{err}"
    );
}

#[test]
fn update_keeps_status_and_notes_of_unchanged_steps() {
    let mut t = tool_with_plan();
    t.execute(&json!({"command": "mark_step", "step_index": 0, "step_status": "completed", "step_notes": "kept"}))
        .expect("mark");
    t.execute(&json!({"command": "update", "steps": ["a", "new", "c"], "title": "T2"}))
        .expect("update");
    let p = t.active_plan().expect("active");
    assert_eq!(p.title, "T2");
    assert_eq!(p.steps()[0].status(), StepStatus::Completed);
    assert_eq!(p.steps()[0].notes, "kept");
    assert_eq!(p.steps()[1].status(), StepStatus::NotStarted);
    assert_eq!(p.steps()[1].id, "s4");
    assert_eq!(p.steps()[2].id, "s3");
    assert_eq!(p.version(), 2);
}

#[test]
fn list_get_set_active_delete() {
    let mut t = tool_with_plan();
    t.execute(&json!({"command": "create", "plan_id": "other", "title": "O", "steps": ["x"]}))
        .expect("second plan");
    let list = t.execute(&json!({"command": "list"})).expect("list");
    assert!(
        list.contains("• other (active): O - 0/1 steps completed"),
        "{list}"
    );
    assert!(list.contains("• plan_1: T - 0/3 steps completed"));
    t.execute(&json!({"command": "set_active", "plan_id": "plan_1"}))
        .expect("set_active");
    assert!(t
        .execute(&json!({"command": "get"}))
        .expect("get")
        .contains("(ID: plan_1)"));
    assert!(t
        .execute(&json!({"command": "set_active", "plan_id": "nope"}))
        .expect_err("unknown")
        .contains("no plan found with ID: nope"));
    t.execute(&json!({"command": "delete", "plan_id": "plan_1"}))
        .expect("delete");
    assert!(t.active_plan().is_none());
    assert!(t
        .execute(&json!({"command": "get"}))
        .expect_err("no active")
        .contains("no active plan"));
}

#[test]
fn a_missing_title_defaults_to_the_task_head() {
    let mut t = PlanningTool::new("plan_1", "write hello.txt");
    t.execute(&json!({"command": "create", "steps": ["Write hello.txt"]}))
        .expect("created without a title");
    assert_eq!(
        t.active_plan().expect("active").title,
        "Plan for: write hello.txt"
    );
}

#[test]
fn create_and_update_refuse_junk_steps_beyond_the_bound() {
    let mut t = PlanningTool::new("plan_1", "goal").with_max_steps(3);
    let err = t
        .execute(&json!({"command": "create", "title": "T", "steps": ["1", "2", "create", "Write x", "Write x"]}))
        .expect_err("junk");
    assert!(
        !err.contains("at most 3"),
        "a create over the bound is cut: {err}"
    );
    assert!(
        err.contains("steps 0 (\"1\"), 1 (\"2\") are only a number"),
        "{err}"
    );
    assert!(err.contains("step 2 (\"create\") is a command"), "{err}");
    assert!(err.contains("step 4 repeats step 3"), "{err}");
    assert!(t.active_plan().is_none());
    t.execute(&json!({"command": "create", "title": "T", "steps": ["Write x", "Read x"]}))
        .expect("valid");
    let err = t
        .execute(&json!({"command": "update", "steps": ["Write x", "Write x"]}))
        .expect_err("duplicate in update");
    assert!(err.contains("step 1 repeats step 0"), "{err}");
    let err = t
        .execute(&json!({"command": "update", "steps": ["a b", "c d", "e f", "g h"]}))
        .expect_err("an update over the bound");
    assert!(err.contains("4 steps, at most 3"), "{err}");
}

#[test]
fn a_create_over_the_bound_keeps_its_first_steps() {
    let mut t = PlanningTool::new("plan_1", "goal").with_max_steps(2);
    t.execute(
        &json!({"command": "create", "title": "T", "steps": ["Write a", "Write b", "Write c"]}),
    )
    .expect("cut, not refused");
    assert_eq!(t.truncated_from(), Some(3));
    let kept: Vec<String> = t
        .active_plan()
        .expect("active")
        .steps()
        .iter()
        .map(|s| s.description.clone())
        .collect();
    assert_eq!(kept, ["Write a", "Write b"]);
}

#[test]
fn narrowed_schemas_snapshot() {
    insta::assert_json_snapshot!(
        "narrowed_schemas",
        json!({
            "create": PlanningTool::create_schema(6).parameters,
            "update": PlanningTool::update_schema(8).parameters,
        })
    );
}

#[test]
fn schema_snapshot() {
    insta::assert_json_snapshot!(PlanningTool::schema().parameters);
}

mod fuzz {
    use proptest::prelude::*;

    use super::*;

    /// JSON values shaped like what models send the planning tool: its argument names,
    /// any types, nesting.
    fn arb_args() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            prop_oneof![
                Just("create".to_string()),
                Just("update".to_string()),
                Just("mark_step".to_string()),
                Just("get".to_string()),
                Just("delete".to_string()),
                Just("plan_1".to_string()),
                Just("completed".to_string()),
                "\\PC{0,30}",
            ]
            .prop_map(Value::from),
        ];
        let value = leaf.prop_recursive(3, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map("[a-z_]{1,12}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        let key = prop_oneof![
            Just("command".to_string()),
            Just("plan_id".to_string()),
            Just("title".to_string()),
            Just("steps".to_string()),
            Just("step_index".to_string()),
            Just("step_status".to_string()),
            Just("step_notes".to_string()),
            "[a-z_]{1,10}",
        ];
        prop::collection::btree_map(key, value, 0..7)
            .prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    proptest! {
        /// Any arguments, in any order of calls, get an answer (a result or an error for
        /// the model), never a panic; a plan the tool holds always stays valid.
        #[test]
        fn fuzz_any_arguments_never_panic(calls in prop::collection::vec(arb_args(), 1..6)) {
            let mut tool = PlanningTool::new("plan_1", "goal").with_max_steps(6);
            for args in &calls {
                let _ = tool.execute(args);
                if let Some(plan) = tool.active_plan() {
                    prop_assert!(!plan.steps().is_empty());
                }
            }
        }

        /// Raw text as the model's arguments string (broken JSON included).
        #[test]
        fn fuzz_any_argument_text_never_panics(text in "\\PC{0,200}") {
            let mut tool = PlanningTool::new("plan_1", "goal");
            let _ = tool.call(&text);
        }
    }
}
