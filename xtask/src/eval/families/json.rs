//! A tiny JSON value with ordered keys and its pretty printer, so that a generated JSON
//! file is the same text whatever features serde_json was built with.

/// A JSON value whose objects keep their keys in the order given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Str(String),
    /// A number as written (`8080`, `4.5`).
    Num(String),
    Bool(bool),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn str(s: &str) -> Json {
        Json::Str(s.to_string())
    }

    pub(crate) fn int(n: i64) -> Json {
        Json::Num(n.to_string())
    }

    pub(crate) fn obj(fields: Vec<(&str, Json)>) -> Json {
        Json::Obj(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// The value at `path` (object keys, or list indexes as numbers).
    pub(crate) fn at(&self, path: &[&str]) -> Option<&Json> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        match self {
            Json::Obj(fields) => fields
                .iter()
                .find(|(k, _)| k == first)
                .and_then(|(_, v)| v.at(rest)),
            Json::Arr(items) => first
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .and_then(|v| v.at(rest)),
            _ => None,
        }
    }

    /// The value as the text a user would copy: a string without quotes, a number as
    /// written, `true`/`false`.
    pub(crate) fn plain(&self) -> String {
        match self {
            Json::Str(s) | Json::Num(s) => s.clone(),
            Json::Bool(b) => b.to_string(),
            other => other.pretty(2),
        }
    }

    /// Pretty-printed with `indent` spaces, a final newline.
    pub(crate) fn pretty(&self, indent: usize) -> String {
        let mut s = String::new();
        self.write(&mut s, indent, 0);
        s.push('\n');
        s
    }

    fn write(&self, out: &mut String, indent: usize, depth: usize) {
        let pad = |d: usize| " ".repeat(indent * d);
        match self {
            Json::Str(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
            Json::Num(n) => out.push_str(n),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Arr(items) => {
                // A list of scalars on one line, as people write short lists.
                if items
                    .iter()
                    .all(|i| !matches!(i, Json::Arr(_) | Json::Obj(_)))
                {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        item.write(out, indent, depth + 1);
                    }
                    out.push(']');
                    return;
                }
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    item.write(out, indent, depth + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push_str(": ");
                    v.write(out, indent, depth + 1);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_parses_back_and_paths_find_values() {
        let doc = Json::obj(vec![
            ("name", Json::str("shop \"one\"")),
            (
                "db",
                Json::obj(vec![("port", Json::int(5432)), ("ssl", Json::Bool(true))]),
            ),
            ("tags", Json::Arr(vec![Json::str("a"), Json::str("b")])),
            (
                "users",
                Json::Arr(vec![Json::obj(vec![("name", Json::str("ana"))])]),
            ),
        ]);
        let text = doc.pretty(2);
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(parsed["db"]["port"], 5432);
        assert!(text.contains("\"tags\": [\"a\", \"b\"]"), "{text}");
        assert_eq!(
            doc.at(&["db", "port"]).map(Json::plain),
            Some("5432".into())
        );
        assert_eq!(
            doc.at(&["users", "0", "name"]).map(Json::plain),
            Some("ana".into())
        );
        assert_eq!(doc.at(&["nope"]), None);
    }
}
