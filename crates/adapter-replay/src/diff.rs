//! The first place two JSON values differ, for divergence messages.

use serde_json::Value;

/// How much of each differing value a message shows.
const MAX_SHOWN_CHARS: usize = 160;

/// The first difference between `recorded` and `live`, depth first in key order:
/// `(path, recorded value, live value)`, values as shortened JSON text (`(absent)` when a key
/// or element exists on one side only). `None` when equal.
pub(crate) fn first_difference(recorded: &Value, live: &Value) -> Option<(String, String, String)> {
    let mut path = String::from("$");
    walk(recorded, live, &mut path)
}

fn walk(a: &Value, b: &Value, path: &mut String) -> Option<(String, String, String)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let len = path.len();
                push_key(path, key);
                let found = match (x.get(key), y.get(key)) {
                    (Some(va), Some(vb)) => walk(va, vb, path),
                    (va, vb) => Some((path.clone(), shown(va), shown(vb))),
                };
                if found.is_some() {
                    return found;
                }
                path.truncate(len);
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => walk(va, vb, path),
                    (va, vb) => Some((path.clone(), shown(va), shown(vb))),
                };
                if found.is_some() {
                    return found;
                }
                path.truncate(len);
            }
            None
        }
        _ if a == b => None,
        (Value::String(x), Value::String(y)) => {
            let (x, y) = around_first_change(x, y);
            Some((path.clone(), x, y))
        }
        _ => Some((path.clone(), shown(Some(a)), shown(Some(b)))),
    }
}

/// Both strings as JSON text, starting a little before their first differing character
/// (with a leading `…`) when they share a long prefix, so the difference is always shown.
fn around_first_change(a: &str, b: &str) -> (String, String) {
    const CONTEXT: usize = 40;
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let skip = same.saturating_sub(CONTEXT);
    let cut = |s: &str| {
        let rest: String = s.chars().skip(skip).collect();
        let text = shown(Some(&Value::String(rest)));
        if skip > 0 {
            format!("…{text}")
        } else {
            text
        }
    };
    (cut(a), cut(b))
}

fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{}]", Value::String(key.to_owned())));
    }
}

fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".to_owned();
    };
    let text = value.to_string();
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_have_no_difference() {
        let v = json!({"a": [1, {"b": null}], "c": "x"});
        assert_eq!(first_difference(&v, &v.clone()), None);
    }

    #[test]
    fn paths_name_the_first_difference() {
        let a = json!({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task A"}]});
        let b = json!({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task B"}]});
        assert_eq!(
            first_difference(&a, &b),
            Some((
                "$.messages[1].content".into(),
                "\"task A\"".into(),
                "\"task B\"".into()
            ))
        );
        assert_eq!(
            first_difference(&json!({"a": [1]}), &json!({"a": [1, 2]})),
            Some(("$.a[1]".into(), "(absent)".into(), "2".into()))
        );
        assert_eq!(
            first_difference(&json!({"x-y": 1}), &json!({})),
            Some(("$[\"x-y\"]".into(), "1".into(), "(absent)".into()))
        );
        assert_eq!(
            first_difference(&json!(1), &json!("1")),
            Some(("$".into(), "1".into(), "\"1\"".into()))
        );
    }

    #[test]
    fn long_strings_are_shown_from_just_before_the_change() {
        let prefix = "p".repeat(500);
        let (path, a, b) = first_difference(
            &json!({"s": format!("{prefix} task A")}),
            &json!({"s": format!("{prefix} task B")}),
        )
        .unwrap();
        assert_eq!(path, "$.s");
        assert!(a.starts_with("…\"ppp"), "{a}");
        assert!(a.ends_with(" task A\""), "{a}");
        assert!(b.ends_with(" task B\""), "{b}");
    }

    #[test]
    fn long_values_are_shortened() {
        let (_, a, _) = first_difference(&json!("x".repeat(1000)), &json!("y")).unwrap();
        assert!(a.chars().count() <= MAX_SHOWN_CHARS + 1);
        assert!(a.ends_with('…'));
    }
}
