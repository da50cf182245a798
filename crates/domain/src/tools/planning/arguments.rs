//! Reading the `planning` function's arguments leniently: numbers for strings, `steps` as
//! strings, objects, or a JSON string holding the list.

use serde_json::Value;

use crate::model::plan::StepSpec;

pub(super) fn opt_str(v: Option<&Value>, name: &str) -> Result<Option<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(format!(
            "Error: parameter `{name}` must be a string, got {other}"
        )),
    }
}

/// `steps` as strings (OpenManus) or, leniently, objects `{id?, description|text, depends_on?}`.
pub(super) fn parse_steps(v: Option<&Value>) -> Result<Option<Vec<StepSpec>>, String> {
    let items = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        // Some models send the list as a JSON string.
        Some(Value::String(s)) => {
            return match serde_json::from_str::<Value>(s) {
                Ok(inner @ Value::Array(_)) => parse_steps(Some(&inner)),
                _ => Err("Error: parameter `steps` must be a list of strings".to_string()),
            }
        }
        Some(_) => return Err("Error: parameter `steps` must be a list of strings".to_string()),
    };
    if items.is_empty() {
        return Err("Error: parameter `steps` must not be empty".to_string());
    }
    let mut specs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let spec = match item {
            Value::String(s) => StepSpec::text(s.clone()),
            Value::Object(o) => {
                let text = o
                    .get("description")
                    .or_else(|| o.get("text"))
                    .or_else(|| o.get("step"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("Error: step {i} has no `description`"))?;
                let text = match o.get("kind").and_then(Value::as_str) {
                    Some(k) if !text.trim_start().starts_with('[') => format!("[{k}] {text}"),
                    _ => text.to_string(),
                };
                let depends_on = match o.get("depends_on") {
                    Some(Value::Array(ds)) => ds
                        .iter()
                        .map(|d| match d {
                            Value::String(s) => Ok(s.clone()),
                            Value::Number(n) => Ok(n.to_string()),
                            _ => Err(format!("Error: step {i} has an invalid dependency")),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => Vec::new(),
                };
                StepSpec {
                    id: o.get("id").and_then(|v| match v {
                        Value::String(s) => Some(s.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        _ => None,
                    }),
                    text,
                    depends_on,
                }
            }
            _ => return Err(format!("Error: step {i} must be a string")),
        };
        if spec.text.trim().is_empty() {
            return Err(format!("Error: step {i} is empty"));
        }
        specs.push(spec);
    }
    Ok(Some(specs))
}
