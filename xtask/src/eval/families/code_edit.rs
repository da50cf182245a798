//! `code_edit`: a small in-place edit of a code file: a constant given a new value, a typo
//! fixed in a message string, a default argument changed. A file beside it with the same
//! constant or message is not to be touched.

use super::text::{lines, py, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "code_edit",
    category: Category::Edit,
    language: "en",
    about: "a small in-place edit of a code file: a constant's value, a typo in a message \
            string, a default argument; a file beside it with the same constant stays as it is",
    generate,
};

const CONSTANTS: &[&str] = &[
    "MAX_RETRIES",
    "TIMEOUT_SECONDS",
    "PAGE_SIZE",
    "CACHE_TTL",
    "MAX_USERS",
    "BATCH_SIZE",
    "PORT",
    "WORKERS",
    "MAX_UPLOAD_MB",
    "POLL_INTERVAL",
];

/// (typo, fix, a message holding the typo with `{s}` for a noun)
const TYPOS: &[(&str, &str, &str)] = &[
    ("Succesfully", "Successfully", "Succesfully saved your {s}."),
    ("recieved", "received", "We have recieved your {s}."),
    ("adress", "address", "Please check the adress for your {s}."),
    (
        "seperate",
        "separate",
        "Use a seperate line for each of the {s}.",
    ),
    (
        "occured",
        "occurred",
        "An error occured while saving the {s}.",
    ),
    ("untill", "until", "Please wait untill the {s} are loaded."),
    ("wich", "which", "Choose wich {s} to keep."),
    ("acount", "account", "Your acount lists no {s} yet."),
    (
        "paswords",
        "passwords",
        "The paswords for your {s} do not match.",
    ),
    (
        "definately",
        "definitely",
        "This will definately delete your {s}.",
    ),
];

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    match rng.below(3) {
        0 => constant(rng, &mut names),
        1 => typo(rng, &mut names),
        _ => default_arg(rng, &mut names),
    }
}

fn constant(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.module(rng, &["settings", "config", "constants", "limits"], "py");
    let other = names.module(rng, &["defaults", "test_settings", "legacy_config"], "py");
    let picked = rng.sample(CONSTANTS, 4);
    let target = picked[0];
    let old = rng.range(2, 90);
    let new = loop {
        let n = rng.range(2, 200);
        if n != old {
            break n;
        }
    };
    let mut body: Vec<String> = vec![
        format!(
            "\"\"\"Settings of the {} service.\"\"\"",
            rng.pick(words::NOUNS)
        ),
        String::new(),
    ];
    let mut values = Vec::new();
    for c in &picked {
        let v = if *c == target { old } else { rng.range(1, 500) };
        values.push((*c, v));
    }
    rng.shuffle(&mut values);
    for (c, v) in &values {
        body.push(format!("{c} = {v}"));
    }
    let before = lines(&body);
    let after = before.replace(
        &format!("{target} = {old}\n"),
        &format!("{target} = {new}\n"),
    );
    let other_text = lines(&[
        format!("{target} = {old}"),
        format!("{} = {}", picked[1], rng.range(1, 500)),
    ]);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "constant");
    b.editable(&file, &before)
        .input(&other, &other_text)
        .text_is(&file, &after)
        .phrased(
            rng,
            vec![
                format!("In {file}, set {target} to {new}."),
                format!("change {target} from {old} to {new} in {file}, leave the other settings alone"),
                format!(
                    "We need {target} to be {new} now. Please update it in {file} (only there - \
                     {other} keeps its own value)."
                ),
            ],
        )
        .reference(&format!(
            "import re\nt = open({f}).read()\nopen({f}, 'w').write(re.sub(r'^{target} = \\d+$', '{target} = {new}', t, flags=re.M))\n",
            f = py(&file)
        ));
    b.build()
}

fn typo(rng: &mut Rng, names: &mut Names) -> Instance {
    let python = rng.chance(60);
    let ext = if python { "py" } else { "js" };
    let file = names.module(
        rng,
        &[
            "messages", "notify", "mailer", "signup", "checkout", "alerts",
        ],
        ext,
    );
    let other = names.module(rng, &["messages_old", "drafts", "archive"], ext);
    let (wrong, right, template) = *rng.pick(TYPOS);
    let noun = *rng.pick(words::NOUNS);
    let message = template.replace("{s}", noun);
    let fixed = message.replace(wrong, right);
    let other_msgs = [
        "Please try again later.",
        "Thanks for waiting.",
        "All done.",
        "Nothing to do.",
    ];
    let picked = rng.sample(&other_msgs, 2);
    let body: Vec<String> = if python {
        vec![
            format!("def {}_message(name):", rng.pick(words::VERBS)),
            format!("    return {}", py(picked[0])),
            String::new(),
            String::new(),
            "def saved_message():".to_string(),
            format!("    return {}", py(&message)),
            String::new(),
            String::new(),
            "def bye_message():".to_string(),
            format!("    return {}", py(picked[1])),
        ]
    } else {
        vec![
            "export const messages = {".to_string(),
            format!("  hello: {},", py(picked[0])),
            format!("  saved: {},", py(&message)),
            format!("  bye: {},", py(picked[1])),
            "};".to_string(),
        ]
    };
    let before = lines(&body);
    let after = before.replace(&message, &fixed);
    let other_text = lines(&[format!("// {message}"), format!("// {}", picked[0])]);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "typo");
    b.editable(&file, &before)
        .input(&other, &other_text)
        .text_is(&file, &after)
        .phrased(
            rng,
            vec![
                format!("Fix the typo \"{wrong}\" in the message in {file}; it should read \"{right}\"."),
                format!("{file} says {wrong} somewhere in a string - correct it to {right}"),
                format!(
                    "A customer spotted a spelling mistake: one of the messages in {file} has \
                     \"{wrong}\" instead of \"{right}\". Please fix it in that file and change \
                     nothing else."
                ),
            ],
        )
        .reference(&format!(
            "t = open({f}).read()\nopen({f}, 'w').write(t.replace({}, {}))\n",
            py(wrong),
            py(right),
            f = py(&file)
        ));
    b.build()
}

fn default_arg(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.module(rng, words::MODULES, "py");
    let other = names.module(rng, &["client_old", "legacy", "compat"], "py");
    let func = format!("{}_{}", rng.pick(words::VERBS), rng.pick(words::NOUNS));
    let (param, old, new) = match rng.below(3) {
        0 => ("timeout", rng.range(5, 60), rng.range(61, 300)),
        1 => ("retries", rng.range(1, 4), rng.range(5, 10)),
        _ => ("limit", rng.range(10, 50), rng.range(51, 500)),
    };
    let body = lines(&[
        format!("def {func}(source, {param}={old}):"),
        format!("    \"\"\"Reads source, giving up after {param}.\"\"\""),
        format!("    return [source] * min({param}, 3)"),
        String::new(),
        String::new(),
        "def describe(source):".to_string(),
        format!("    return \"{func} of \" + str(source)"),
    ]);
    let after = body.replacen(&format!("{param}={old}"), &format!("{param}={new}"), 1);
    let other_text = lines(&[
        format!("def {func}(source, {param}={old}):"),
        "    return source".to_string(),
    ]);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "default_arg");
    b.editable(&file, &body)
        .input(&other, &other_text)
        .text_is(&file, &after)
        .check(Check::Runs {
            program: "python3".to_string(),
            args: vec![
                "-c".to_string(),
                format!(
                    "import inspect, {m}; assert inspect.signature({m}.{func}).parameters['{param}'].default == {new}",
                    m = file.trim_end_matches(".py")
                ),
            ],
            stdout: None,
            other_data: Vec::new(),
        })
        .phrased(
            rng,
            vec![
                format!("In {file}, change the default value of {param} in {func} from {old} to {new}."),
                format!("{file}: {func}() should default to {param}={new} (now {old})"),
                format!(
                    "The default {param} of {func} in {file} is too small. Make it {new} \
                     instead of {old}, and leave the rest of the file as it is."
                ),
            ],
        )
        .reference(&format!(
            "t = open({f}).read()\nopen({f}, 'w').write(t.replace({}, {}, 1))\n",
            py(&format!("{param}={old}")),
            py(&format!("{param}={new}")),
            f = py(&file)
        ));
    b.build()
}
