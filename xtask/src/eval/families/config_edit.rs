//! `config_edit`: one setting changed in a config file (INI, TOML, JSON, YAML or .env)
//! where the same key may sit in another section; every other line stays. A second config
//! file (an example or another environment) with the same key is not to be touched.

use super::json::Json;
use super::text::{py, Names};
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "config_edit",
    category: Category::Edit,
    language: "en",
    about: "one setting changed in a config file (INI, TOML, JSON, YAML or .env), the same key \
            possibly in another section; the other lines and a second config file stay",
    generate,
};

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i64),
    Str(String),
    Bool(bool),
}

type Config = Vec<(String, Vec<(String, Value)>)>;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Ini,
    Toml,
    Json,
    Yaml,
    Env,
}

fn config(rng: &mut Rng) -> Config {
    let mut sections: Config = Vec::new();
    let server = rng.pick(&["server", "http", "web"]).to_string();
    sections.push((
        server,
        vec![
            (
                "host".into(),
                Value::Str(rng.pick(&["0.0.0.0", "127.0.0.1", "localhost"]).to_string()),
            ),
            ("port".into(), Value::Int(rng.range(3000, 9000))),
            ("workers".into(), Value::Int(rng.range(1, 16))),
            ("debug".into(), Value::Bool(rng.chance(50))),
        ],
    ));
    let db = rng.pick(&["database", "db", "postgres"]).to_string();
    sections.push((
        db,
        vec![
            (
                "host".into(),
                Value::Str(format!("db{}.internal", rng.range(1, 9))),
            ),
            ("port".into(), Value::Int(*rng.pick(&[5432, 5433, 3306]))),
            (
                "name".into(),
                Value::Str(
                    rng.pick(&["shop", "crm", "blog", "wiki", "ledger"])
                        .to_string(),
                ),
            ),
            ("pool_size".into(), Value::Int(rng.range(2, 40))),
        ],
    ));
    if rng.chance(60) {
        sections.push((
            rng.pick(&["cache", "redis"]).to_string(),
            vec![
                ("host".into(), Value::Str("cache.internal".to_string())),
                ("port".into(), Value::Int(6379)),
                ("ttl".into(), Value::Int(rng.range(30, 3600))),
            ],
        ));
    }
    sections.push((
        "logging".to_string(),
        vec![
            (
                "level".into(),
                Value::Str(rng.pick(&["info", "warning", "error"]).to_string()),
            ),
            (
                "file".into(),
                Value::Str(format!("/var/log/{}.log", rng.pick(&["app", "api", "svc"]))),
            ),
        ],
    ));
    sections
}

fn render(c: &Config, f: Format) -> String {
    let mut s = String::new();
    match f {
        Format::Ini | Format::Toml => {
            for (i, (section, keys)) in c.iter().enumerate() {
                if i > 0 {
                    s.push('\n');
                }
                s.push_str(&format!("[{section}]\n"));
                for (k, v) in keys {
                    let v = match (v, f) {
                        (Value::Str(x), Format::Toml) => format!("\"{x}\""),
                        (Value::Str(x), _) => x.clone(),
                        (Value::Int(n), _) => n.to_string(),
                        (Value::Bool(b), _) => b.to_string(),
                    };
                    s.push_str(&format!("{k} = {v}\n"));
                }
            }
        }
        Format::Yaml => {
            for (section, keys) in c {
                s.push_str(&format!("{section}:\n"));
                for (k, v) in keys {
                    let v = match v {
                        Value::Str(x) => x.clone(),
                        Value::Int(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                    };
                    s.push_str(&format!("  {k}: {v}\n"));
                }
            }
        }
        Format::Env => {
            for (section, keys) in c {
                for (k, v) in keys {
                    let v = match v {
                        Value::Str(x) => x.clone(),
                        Value::Int(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                    };
                    s.push_str(&format!(
                        "{}_{}={v}\n",
                        section.to_uppercase(),
                        k.to_uppercase()
                    ));
                }
            }
        }
        Format::Json => {
            let doc = Json::Obj(
                c.iter()
                    .map(|(section, keys)| {
                        (
                            section.clone(),
                            Json::Obj(
                                keys.iter()
                                    .map(|(k, v)| {
                                        let j = match v {
                                            Value::Str(x) => Json::str(x),
                                            Value::Int(n) => Json::int(*n),
                                            Value::Bool(b) => Json::Bool(*b),
                                        };
                                        (k.clone(), j)
                                    })
                                    .collect(),
                            ),
                        )
                    })
                    .collect(),
            );
            s = doc.pretty(2);
        }
    }
    s
}

/// A new value of the same kind as `v`.
fn changed(rng: &mut Rng, key: &str, v: &Value) -> Value {
    match v {
        Value::Int(n) => loop {
            let m = if key == "port" {
                rng.range(1025, 9999)
            } else {
                rng.range(1, 4000)
            };
            if m != *n {
                return Value::Int(m);
            }
        },
        Value::Bool(b) => Value::Bool(!b),
        Value::Str(s) => {
            let options: &[&str] = match key {
                "level" => &["debug", "info", "warning", "error"],
                "host" => &[
                    "10.0.0.5",
                    "db.prod.internal",
                    "127.0.0.1",
                    "cache2.internal",
                ],
                "name" => &["shop_test", "crm2", "blog_new", "archive"],
                _ => &["/srv/log/app.log", "/tmp/app.log", "/var/log/new.log"],
            };
            loop {
                let o = *rng.pick(options);
                if o != s {
                    return Value::Str(o.to_string());
                }
            }
        }
    }
}

fn shown(v: &Value) -> String {
    match v {
        Value::Str(x) => x.clone(),
        Value::Int(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
    }
}

fn generate(rng: &mut Rng) -> Instance {
    let format = *rng.pick(&[
        Format::Ini,
        Format::Toml,
        Format::Json,
        Format::Yaml,
        Format::Env,
    ]);
    let c = config(rng);
    let si = rng.below(c.len());
    let ki = rng.below(c[si].1.len());
    let (section, key) = (c[si].0.clone(), c[si].1[ki].0.clone());
    let old = c[si].1[ki].1.clone();
    let new = changed(rng, &key, &old);
    let mut after = c.clone();
    after[si].1[ki].1 = new.clone();
    let mut names = Names::default();
    let (ext, stems): (&str, &[&str]) = match format {
        Format::Ini => ("ini", &["app", "settings", "service", "config"]),
        Format::Toml => ("toml", &["app", "settings", "service", "config"]),
        Format::Json => ("json", &["app", "settings", "service", "config"]),
        Format::Yaml => ("yaml", &["app", "settings", "service", "config"]),
        Format::Env => ("", &[".env"]),
    };
    let file = if format == Format::Env {
        names.take(".env");
        ".env".to_string()
    } else {
        names.file(rng, stems, ext)
    };
    let other = if format == Format::Env {
        ".env.example".to_string()
    } else if rng.chance(50) {
        format!("{file}.example")
    } else {
        file.replacen('.', "_prod.", 1)
    };
    names.take(&other);
    let before = render(&c, format);
    let other_text = render(&c, format);
    let (old_s, new_s) = (shown(&old), shown(&new));
    let (what, path) = match format {
        Format::Env => {
            let var = format!("{}_{}", section.to_uppercase(), key.to_uppercase());
            (var.clone(), var)
        }
        Format::Ini | Format::Toml => (
            format!("{key} in the [{section}] section"),
            format!("{section}.{key}"),
        ),
        Format::Json | Format::Yaml => {
            (format!("{key} under {section}"), format!("{section}.{key}"))
        }
    };
    let mut b = Builder::new(
        FAMILY.name,
        FAMILY.category,
        match format {
            Format::Ini => "ini",
            Format::Toml => "toml",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Env => "env",
        },
    );
    b.editable(&file, &before).input(&other, &other_text);
    if format == Format::Json {
        b.check(Check::Json {
            file: file.clone(),
            expected: render(&after, format),
        });
    } else {
        b.text_is(&file, &render(&after, format));
    }
    b.phrased(
        rng,
        vec![
            format!("{file}: {what} is {old_s} and should become {new_s}. Every other line stays untouched."),
            format!("set {path} = {new_s} in {file} (don't touch {other})"),
            format!(
                "Please update {file}: {what} should now be {new_s} (it is {old_s}). The rest of \
                 the file must stay the same."
            ),
        ],
    );
    let new_py = match (&new, format) {
        (Value::Str(x), Format::Toml) => format!("\"{x}\""),
        (v, _) => shown(v),
    };
    let reference = match format {
        Format::Json => format!(
            "import json\nd = json.load(open({f}))\nd[{s}][{k}] = {v}\nopen({f}, 'w').write(json.dumps(d, indent=2) + '\\n')\n",
            f = py(&file),
            s = py(&section),
            k = py(&key),
            v = match &new {
                Value::Str(x) => py(x),
                Value::Int(n) => n.to_string(),
                Value::Bool(b) => if *b { "True".into() } else { "False".into() },
            }
        ),
        Format::Env => format!(
            "lines = open({f}).read().splitlines()\nlines = [({var} + '=' + {v}) if l.startswith({var} + '=') else l for l in lines]\nopen({f}, 'w').write('\\n'.join(lines) + '\\n')\n",
            f = py(&file),
            var = py(&path),
            v = py(&new_py)
        ),
        Format::Yaml => format!(
            "out = []\ncur = None\nfor l in open({f}).read().splitlines():\n    if l and not l.startswith(' '):\n        cur = l.strip()\n    if cur == {head} and l.startswith({prefix}):\n        l = {prefix} + {v}\n    out.append(l)\nopen({f}, 'w').write('\\n'.join(out) + '\\n')\n",
            f = py(&file),
            head = py(&format!("{section}:")),
            prefix = py(&format!("  {key}: ")),
            v = py(&new_py)
        ),
        Format::Ini | Format::Toml => format!(
            "out = []\ncur = None\nfor l in open({f}).read().splitlines():\n    if l.startswith('['):\n        cur = l.strip()\n    if cur == {head} and l.startswith({prefix}):\n        l = {prefix} + {v}\n    out.append(l)\nopen({f}, 'w').write('\\n'.join(out) + '\\n')\n",
            f = py(&file),
            head = py(&format!("[{section}]")),
            prefix = py(&format!("{key} = ")),
            v = py(&new_py)
        ),
    };
    b.reference(&reference);
    b.build()
}
