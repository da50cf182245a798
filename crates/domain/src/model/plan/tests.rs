use super::*;

fn plan(texts: &[&str]) -> Plan {
    let texts: Vec<String> = texts.iter().map(|s| s.to_string()).collect();
    Plan::from_texts("plan_1", "T", "goal", &texts).expect("valid plan")
}

#[test]
fn every_legal_transition_is_accepted_and_every_other_refused() {
    use StepStatus::*;
    let legal = [
        (NotStarted, InProgress),
        (InProgress, Completed),
        (InProgress, Failed),
        (InProgress, Blocked),
        (Failed, NotStarted),
        (Blocked, NotStarted),
        (NotStarted, Skipped),
        (InProgress, Skipped),
        (NotStarted, Blocked),
        (Skipped, NotStarted),
    ];
    for from in StepStatus::ALL {
        for to in StepStatus::ALL {
            assert_eq!(
                from.can_transition_to(to),
                legal.contains(&(from, to)),
                "{from} -> {to}"
            );
        }
    }
}

#[test]
fn illegal_transition_is_an_error_and_leaves_the_step_alone() {
    let mut p = plan(&["a", "b"]);
    let err = p
        .transition("s1", StepStatus::Completed)
        .expect_err("not_started -> completed is illegal");
    assert!(matches!(err, PlanError::IllegalTransition { .. }));
    assert_eq!(p.steps[0].status, StepStatus::NotStarted);
    assert!(matches!(
        p.transition("nope", StepStatus::InProgress),
        Err(PlanError::UnknownStep(_))
    ));
}

#[test]
fn starting_a_step_counts_an_attempt() {
    let mut p = plan(&["a"]);
    p.transition("s1", StepStatus::InProgress).expect("legal");
    p.transition("s1", StepStatus::Failed).expect("legal");
    p.transition("s1", StepStatus::NotStarted).expect("legal");
    p.transition("s1", StepStatus::InProgress).expect("legal");
    assert_eq!(p.steps[0].attempts, 2);
}

#[test]
fn kind_tags_are_parsed_from_step_text() {
    let p = plan(&[
        "[search] find docs",
        "[CODE]write it",
        "plain [x] text",
        "[not a tag] y",
    ]);
    assert_eq!(p.steps[0].kind.as_deref(), Some("SEARCH"));
    assert_eq!(p.steps[0].description, "find docs");
    assert_eq!(p.steps[1].kind.as_deref(), Some("CODE"));
    assert_eq!(p.steps[2].kind, None);
    assert_eq!(p.steps[3].kind, None);
    assert_eq!(p.steps[3].description, "[not a tag] y");
}

#[test]
fn replace_keeps_unchanged_steps_and_mints_fresh_ids() {
    let mut p = plan(&["a", "b", "c"]);
    p.transition("s1", StepStatus::InProgress).expect("legal");
    p.transition("s1", StepStatus::Completed).expect("legal");
    p.steps[0].notes = "done".into();
    p.replace_steps(&[
        StepSpec::text("a"),
        StepSpec::text("x"),
        StepSpec::text("c"),
    ])
    .expect("valid update");
    assert_eq!(p.version, 2);
    assert_eq!(p.steps[0].id, "s1");
    assert_eq!(p.steps[0].status, StepStatus::Completed);
    assert_eq!(p.steps[0].notes, "done");
    assert_eq!(p.steps[1].id, "s4", "a removed id is never reused");
    assert_eq!(p.steps[1].status, StepStatus::NotStarted);
    assert_eq!(p.steps[2].id, "s3");
}

#[test]
fn invalid_step_lists_are_refused() {
    let mut p = plan(&["a"]);
    assert!(matches!(p.replace_steps(&[]), Err(PlanError::EmptySteps)));
    assert!(matches!(
        p.replace_steps(&[StepSpec::text("  ")]),
        Err(PlanError::EmptyStepText)
    ));
    let dup = StepSpec {
        id: Some("k".into()),
        text: "one".into(),
        depends_on: vec![],
    };
    let dup2 = StepSpec {
        text: "two".into(),
        ..dup.clone()
    };
    assert!(matches!(
        p.replace_steps(&[dup, dup2]),
        Err(PlanError::DuplicateStepId(id)) if id == "k"
    ));
    let dangling = StepSpec {
        id: None,
        text: "x".into(),
        depends_on: vec!["zzz".into()],
    };
    assert!(matches!(
        p.replace_steps(&[dangling]),
        Err(PlanError::UnknownDependency { .. })
    ));
    assert_eq!(p.version, 1, "a refused update changes nothing");
    assert_eq!(p.steps.len(), 1);
}
