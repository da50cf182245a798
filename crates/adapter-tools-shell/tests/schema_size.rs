//! How much prompt the nine tools cost: the characters of their schemas as a model sees
//! them (name, description, parameters), printed with `--nocapture` and capped so they do
//! not grow back unnoticed.
//!
//! Before the descriptions were shortened (issue: short tool descriptions) the shell and
//! file tool schemas took 6,877 characters (about 4,700 of them descriptions); the cap is
//! half of that. `SHOW_SCHEMAS=1` prints them.
// The measurement is the test's output.
#![allow(clippy::print_stdout)]

use adapter_tools_shell::{shell_toolkit, ShellToolsConfig};
use serde_json::json;

#[test]
fn the_schemas_stay_short() {
    let toolkit = shell_toolkit(&ShellToolsConfig::default());
    let mut total = 0;
    let mut prose = 0;
    for tool in &toolkit.tools {
        let schema = json!({
            "name": tool.name(),
            "description": tool.description(),
            "parameters": tool.parameters(),
        })
        .to_string();
        println!("{:>6}  {}", schema.len(), tool.name());
        if std::env::var_os("SHOW_SCHEMAS").is_some() {
            println!("{schema}");
        }
        total += schema.len();
        prose += tool.description().len() + property_descriptions(&tool.parameters());
    }
    println!(
        "{total:>6}  all {} shell and file tools",
        toolkit.tools.len()
    );
    println!("{prose:>6}  of which descriptions (the tools' and their parameters')");
    // 3,438 (half of 6,877) until shell_exec's description took one line of shell idioms
    // for small models (sum of files, wc, grep -c, an awk column sum, jq: docs/direct.md,
    // "Compute, don't guess"); 3,500 until `code_run` (848: a whole program, its language
    // and the files it changes; docs/code-actions.md) and `file_str_replace`'s
    // `replace_all` and `edits` (+~400) came in: 4,705.
    assert!(
        total <= 4800,
        "the shell and file tool schemas grew to {total} characters"
    );
}

/// Characters of the parameters' descriptions.
fn property_descriptions(parameters: &serde_json::Value) -> usize {
    parameters["properties"]
        .as_object()
        .map(|p| {
            p.values()
                .filter_map(|v| v["description"].as_str())
                .map(str::len)
                .sum()
        })
        .unwrap_or(0)
}
