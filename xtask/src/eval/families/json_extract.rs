//! `json_extract`: a fact read off a nested JSON file: the value at a nested path, the
//! length of a list, a field of the n-th item of a list, or the sum of a field over a list.

use super::json::Json;
use super::text::{ordinal, py, py_write, Names, PY_NUM};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "json_extract",
    category: Category::Single,
    language: "en",
    about: "a fact read off a nested JSON file: the value at a nested path, how many items a \
            list has, a field of the n-th item of a list, the sum of a field over a list",
    generate,
};

/// A generated document and the names of its parts the variants ask about.
struct Doc {
    json: Json,
    /// Paths to scalar leaves at depth 2 or 3.
    leaves: Vec<Vec<String>>,
    /// (path of a list of objects, a text field of its items, a number field of its items)
    records: (Vec<String>, String, String),
    /// Path of a list of strings.
    tags: Vec<String>,
}

fn config(rng: &mut Rng) -> Doc {
    let server = *rng.pick(&["server", "http", "api"]);
    let db = *rng.pick(&["database", "db", "storage"]);
    let creds = *rng.pick(&["credentials", "auth", "login"]);
    let features = *rng.pick(&["features", "plugins", "modules"]);
    let people = *rng.pick(&["admins", "maintainers", "owners"]);
    let level = *rng.pick(&["level", "rank", "weight"]);
    let app = format!("{}-{}", rng.pick(words::VERBS), rng.pick(words::NOUNS));
    let feature_count = rng.range(2, 8) as usize;
    let feature_list: Vec<Json> = rng
        .sample(
            &[
                "search", "cart", "wishlist", "reviews", "export", "chat", "maps", "sso",
                "billing", "audit",
            ],
            feature_count,
        )
        .into_iter()
        .map(Json::str)
        .collect();
    let admin_count = rng.range(2, 5) as usize;
    let admins: Vec<Json> = rng
        .sample(words::PEOPLE, admin_count)
        .into_iter()
        .map(|p| {
            Json::obj(vec![
                ("name", Json::str(p)),
                ("email", Json::str(&format!("{p}@{app}.example"))),
                (level, Json::int(rng.range(1, 9))),
            ])
        })
        .collect();
    let user = format!(
        "{}_{}",
        rng.pick(words::MODULES),
        rng.pick(&["rw", "ro", "admin", "app"])
    );
    let json = Json::obj(vec![
        ("name", Json::str(&app)),
        (
            "version",
            Json::str(&format!(
                "{}.{}.{}",
                rng.range(0, 4),
                rng.range(0, 20),
                rng.range(0, 9)
            )),
        ),
        (
            server,
            Json::obj(vec![
                (
                    "host",
                    Json::str(&format!(
                        "{}.{}",
                        rng.pick(words::NOUNS),
                        rng.pick(&["local", "internal", "lan"])
                    )),
                ),
                ("port", Json::int(rng.range(1025, 9999))),
                ("timeout_s", Json::int(rng.range(5, 120))),
            ]),
        ),
        (
            db,
            Json::obj(vec![
                (
                    "host",
                    Json::str(&format!("db{}.internal", rng.range(1, 9))),
                ),
                (
                    "port",
                    Json::int(*rng.pick(&[5432, 3306, 27017, 6379, 5433])),
                ),
                (
                    creds,
                    Json::obj(vec![
                        ("user", Json::str(&user)),
                        ("pool_size", Json::int(rng.range(2, 64))),
                    ]),
                ),
            ]),
        ),
        (features, Json::Arr(feature_list)),
        (people, Json::Arr(admins)),
    ]);
    let s = |p: &[&str]| p.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    Doc {
        json,
        leaves: vec![
            s(&[server, "port"]),
            s(&[server, "host"]),
            s(&[server, "timeout_s"]),
            s(&[db, "host"]),
            s(&[db, "port"]),
            s(&[db, creds, "user"]),
            s(&[db, creds, "pool_size"]),
        ],
        records: (s(&[people]), "name".to_string(), level.to_string()),
        tags: s(&[features]),
    }
}

fn order(rng: &mut Rng) -> Doc {
    let items = *rng.pick(&["items", "lines", "products"]);
    let customer = *rng.pick(&["customer", "buyer", "client"]);
    let notes = *rng.pick(&["tags", "labels", "flags"]);
    let item_count = rng.range(2, 6) as usize;
    let line_items: Vec<Json> = rng
        .sample(words::PRODUCE, item_count)
        .into_iter()
        .map(|p| {
            Json::obj(vec![
                ("sku", Json::str(p)),
                ("qty", Json::int(rng.range(1, 12))),
                ("price", Json::int(rng.range(1, 60))),
            ])
        })
        .collect();
    let tag_count = rng.range(1, 5) as usize;
    let tag_list: Vec<Json> = rng
        .sample(
            &[
                "gift", "express", "fragile", "repeat", "vip", "pickup", "eco",
            ],
            tag_count,
        )
        .into_iter()
        .map(Json::str)
        .collect();
    let person = *rng.pick(words::PEOPLE);
    let city = *rng.pick(words::CITIES);
    let json = Json::obj(vec![
        (
            "order_id",
            Json::str(&format!("ORD-{}", rng.range(10_000, 99_999))),
        ),
        (
            customer,
            Json::obj(vec![
                ("name", Json::str(person)),
                (
                    "address",
                    Json::obj(vec![
                        ("city", Json::str(city)),
                        ("zip", Json::str(&format!("{}", rng.range(10_000, 99_999)))),
                    ]),
                ),
            ]),
        ),
        ("paid", Json::Bool(rng.chance(50))),
        (items, Json::Arr(line_items)),
        (notes, Json::Arr(tag_list)),
    ]);
    let s = |p: &[&str]| p.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    Doc {
        json,
        leaves: vec![
            s(&[customer, "name"]),
            s(&[customer, "address", "city"]),
            s(&[customer, "address", "zip"]),
        ],
        records: (
            s(&[items]),
            "sku".to_string(),
            rng.pick(&["qty", "price"]).to_string(),
        ),
        tags: s(&[notes]),
    }
}

fn dotted(path: &[String]) -> String {
    path.join(".")
}

fn py_path(path: &[String]) -> String {
    path.iter().map(|p| format!("[{}]", py(p))).collect()
}

fn generate(rng: &mut Rng) -> Instance {
    let doc = if rng.chance(55) {
        config(rng)
    } else {
        order(rng)
    };
    let mut names = Names::default();
    let stems: &[&str] = &[
        "config", "settings", "app", "order", "payload", "data", "export", "service",
    ];
    let file = names.file(rng, stems, "json");
    let out = names.file(rng, words::OUT_STEMS, "txt");
    let indent = *rng.pick(&[2, 4]);
    let text = doc.json.pretty(indent);
    let load = format!(
        "import json\nd = json.load(open({}, encoding='utf-8'))\n",
        py(&file)
    );
    let mut b;
    match rng.below(4) {
        0 => {
            let path = rng.pick(&doc.leaves).clone();
            let refs: Vec<&str> = path.iter().map(String::as_str).collect();
            let value = doc.json.at(&refs).map(Json::plain).unwrap_or_default();
            let p = dotted(&path);
            let last = path.last().cloned().unwrap_or_default();
            let parents = path[..path.len() - 1].join(" → ");
            b = Builder::new(FAMILY.name, FAMILY.category, "path");
            b.text_is(&out, &value).phrased(
                rng,
                vec![
                    format!("Read {file} and write the value of {p} into {out} (just the value, no quotes)."),
                    format!("what's {p} set to in {file}? put the bare value in {out}"),
                    format!(
                        "In {file} there is a field called {last} under {parents}. Copy its value \
                         into {out}, without quotes or anything else."
                    ),
                ],
            );
            b.reference(&format!(
                "{load}v = d{}\n{}",
                py_path(&path),
                py_write(&out, "str(v)")
            ));
        }
        1 => {
            let list = if rng.chance(50) {
                doc.tags.clone()
            } else {
                doc.records.0.clone()
            };
            let refs: Vec<&str> = list.iter().map(String::as_str).collect();
            let len = match doc.json.at(&refs) {
                Some(Json::Arr(items)) => items.len(),
                _ => 0,
            };
            let p = dotted(&list);
            b = Builder::new(FAMILY.name, FAMILY.category, "length");
            b.number_is(&out, len as f64, 0.0).phrased(
                rng,
                vec![
                    format!("How many entries does the {p} list in {file} have? Write the number into {out}."),
                    format!("count the items of \"{p}\" in {file} -> {out} (number only)"),
                    format!(
                        "{file} contains a list named {p}. Please save how many elements it holds \
                         in {out}, as a bare number."
                    ),
                ],
            );
            b.reference(&format!(
                "{load}{}",
                py_write(&out, &format!("str(len(d{}))", py_path(&list)))
            ));
        }
        2 => {
            let (list, text_field, _) = doc.records.clone();
            let refs: Vec<&str> = list.iter().map(String::as_str).collect();
            let items = match doc.json.at(&refs) {
                Some(Json::Arr(items)) => items.clone(),
                _ => Vec::new(),
            };
            let k = rng.below(items.len());
            let value = items[k]
                .at(&[&text_field])
                .map(Json::plain)
                .unwrap_or_default();
            let p = dotted(&list);
            let nth = ordinal(k + 1);
            b = Builder::new(FAMILY.name, FAMILY.category, "nth");
            b.text_is(&out, &value).phrased(
                rng,
                vec![
                    format!("In {file}, what is the {text_field} of the {nth} item of {p}? Write it into {out}."),
                    format!(
                        "Look at the {p} list in {file} and take item number {} (counting from 1). \
                         Write its {text_field} field, without quotes, to {out}.",
                        k + 1
                    ),
                    format!("{file}: {text_field} of {p}[{k}] (zero-based index {k}) -> {out}"),
                ],
            );
            b.reference(&format!(
                "{load}{}",
                py_write(
                    &out,
                    &format!("str(d{}[{k}][{}])", py_path(&list), py(&text_field))
                )
            ));
        }
        _ => {
            let (list, _, num_field) = doc.records.clone();
            let refs: Vec<&str> = list.iter().map(String::as_str).collect();
            let total: f64 = match doc.json.at(&refs) {
                Some(Json::Arr(items)) => items
                    .iter()
                    .filter_map(|i| i.at(&[&num_field]).map(Json::plain))
                    .filter_map(|v| v.parse::<f64>().ok())
                    .sum(),
                _ => 0.0,
            };
            let p = dotted(&list);
            b = Builder::new(FAMILY.name, FAMILY.category, "sum");
            b.number_is(&out, total, 1e-9).phrased(
                rng,
                vec![
                    format!("Add up the {num_field} of every item in the {p} list of {file} and write the total into {out}."),
                    format!("sum of {p}[*].{num_field} in {file}? just the number into {out} please"),
                    format!(
                        "Each entry of {p} in {file} has a {num_field}. What do they come to \
                         altogether? Save only the total in {out}."
                    ),
                ],
            );
            b.reference(&format!(
                "{load}{PY_NUM}t = sum(x[{}] for x in d{})\n{}",
                py(&num_field),
                py_path(&list),
                py_write(&out, "num(t)")
            ));
        }
    }
    b.input(&file, &text);
    b.build()
}
