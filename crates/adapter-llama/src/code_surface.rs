//! The code surface (docs/code-actions.md): when a request offers `code_run`, the embedded
//! model acts by writing a fenced program, never code inside a JSON string (whose escapes a
//! small model loses). A reply is one of:
//!
//! - a program: ```` ```python ```` or ```` ```bash ````, the code, then ```` ``` ```` —
//!   read back as a `code_run` call. Nothing asks it to name the files it will change
//!   first: measured, a small model that had to name them first named its inputs and then
//!   wrote its results into them (docs/code-actions.md, "Which existing files a call may
//!   change"). A first line
//!   `# changes: FILES` written anyway (older transcripts) is still read as `changes`;
//! - `ASK: question` — a `message_ask_user` call;
//! - `DONE: answer` / `FAILED: why` — a `complete_step` call, success or not;
//! - a JSON call `{"tool": …, "arguments": …}` of any other offered tool.
//!
//! The transcript is rendered back the same way, so the model sees its own earlier turns in
//! the form it writes them. The domain sees ordinary tool calls either way.

use domain::llm::{ChatMessage, ToolCall, ToolSchema};
use domain::tools::builtin::{ASK_USER, COMPLETE_STEP};
use domain::tools::code::{CodeLanguage, CHANGES, CODE, CODE_RUN, LANGUAGE};
use serde_json::{json, Value};

use crate::grammar::CodeForms;
use crate::tools_text::describe_tools;

/// The first line of a program of older transcripts, before the files it names.
const CHANGES_LINE: &str = "# changes:";

/// Whether a request's tools call for the code surface: it offers `code_run`.
pub(crate) fn applies(tools: &[ToolSchema]) -> bool {
    tools.iter().any(|t| t.name == CODE_RUN)
}

/// The forms a reply may take, from the tools offered to it.
pub(crate) fn forms<'a>(offered: &[&'a ToolSchema]) -> CodeForms<'a> {
    let mut forms = CodeForms::default();
    for tool in offered {
        match tool.name.as_str() {
            CODE_RUN => forms.program = true,
            ASK_USER => forms.ask = true,
            COMPLETE_STEP => forms.finish = true,
            _ => forms.others.push(tool),
        }
    }
    forms
}

/// The answer format, for the end of the system prompt. In words, with no placeholder to
/// copy: shown `<the program>` in a template, the embedded model ran that line as its
/// program, over and over (docs/code-actions.md).
pub(crate) fn describe(forms: &CodeForms<'_>) -> String {
    let mut out = String::from("Answer in exactly one of these forms, and nothing else:\n");
    if forms.program {
        out.push_str(
            "- To run a program (code_run): a fenced block: a line ```python, then the whole \
             program, whose last line is final_answer(result) with the result it computed, \
             then a line ```. (```bash works the same way; its last line is final_answer \
             \"$result\".)\n",
        );
    }
    // The other tools come right after programs, before the ways to stop: they do what a
    // program cannot (a web page, a server's data). Listed last, after `FAILED:`, they were
    // passed over: a small model gave up on a web task with the browser offered.
    if let Some(first) = forms.others.first() {
        out.push_str("- To use a tool instead of a program: ");
        out.push_str(&describe_tools(&forms.others, false));
        out.push_str(&format!("\n  For example: {}\n", example_call(first)));
    }
    if forms.ask {
        out.push_str(
            "- To ask the user (message_ask_user): a line ASK: followed by your question\n",
        );
    }
    if forms.finish {
        out.push_str(
            "- When the step is done (complete_step): a line DONE: followed by the result, with \
             no code block. If it cannot be done: a line FAILED: followed by why\n",
        );
    }
    out.trim_end().to_string()
}

/// A call of `tool` in the JSON form, its first required parameter shown (`…` for the
/// value): a small model follows a written call more readily than a described one.
fn example_call(tool: &ToolSchema) -> String {
    let arguments = match required(tool).first() {
        Some(&name) => json!({ name: "…" }),
        None => json!({}),
    };
    // In the order the answer format names them (and the grammar writes them).
    format!(
        "{{\"tool\": {}, \"arguments\": {arguments}}}",
        Value::String(tool.name.clone())
    )
}

/// A program's `changes` argument as an older transcript's first line `# changes: …` says
/// it; `None` when the program has no such line.
fn changes_of(code: &str) -> Option<Vec<String>> {
    let rest = code
        .lines()
        .next()
        .and_then(|l| l.trim().strip_prefix(CHANGES_LINE))?;
    Some(
        rest.split([',', ' ', '\t'])
            .map(|w| w.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '[' | ']')))
            .filter(|w| !w.is_empty() && !matches!(w.to_ascii_lowercase().as_str(), "none" | "-"))
            .map(str::to_string)
            .collect(),
    )
}

/// What the model wrote, read back: a tool call, or `None` when it is none of the forms.
/// `tools`: the tools offered, so that a program that is only a call of one of the other
/// tools as a function is read as that tool's call.
/// The program up to a line made of backticks alone (two or more, spaces aside): the
/// model's attempt at closing the fence that the grammar split (it allows a closing
/// ```` ``` ```` only at the very end, so a model that wanted to write on after it wrote
/// ```` `` ` ````, and the program failed with a `SyntaxError` on that line, on every
/// retry). No Python or bash program has such a line.
fn before_broken_fence(code: &str) -> &str {
    let mut end = 0;
    for line in code.split_inclusive('\n') {
        let t = line.trim();
        if t.chars().filter(|&c| c == '`').count() >= 2 && t.chars().all(|c| c == '`' || c == ' ') {
            return code[..end].trim_end();
        }
        end += line.len();
    }
    code
}

/// The program without a first line that only names a language (`python` right after
/// ```` ```python ````): a small model repeated the fence's name there, and the program
/// stopped on it (`NameError: name 'python' is not defined`) on every retry. No program
/// opens with such a line on purpose.
fn without_language_line(code: &str) -> &str {
    let body = code.trim_start_matches(['\n', '\r']);
    match body.split_once('\n') {
        Some((first, rest)) if CodeLanguage::from_fence(first).is_some() => rest,
        None if CodeLanguage::from_fence(body).is_some() => "",
        _ => code,
    }
}

pub(crate) fn parse(text: &str, id: String, tools: &[ToolSchema]) -> Option<ToolCall> {
    let text = text.trim();
    let call = |name: &str, arguments: Value| ToolCall {
        id: id.clone(),
        name: name.to_string(),
        arguments: arguments.to_string(),
    };
    if let Some(rest) = text.strip_prefix("```") {
        let (info, body) = rest.split_once('\n')?;
        let language = CodeLanguage::from_fence(info)?;
        let code = without_language_line(before_broken_fence(
            body.trim_end()
                .strip_suffix("```")
                .unwrap_or(body)
                .trim_end(),
        ));
        // A small model that opens every turn with a fence writes its answer inside one
        // (a comment line, then `DONE: …`): that is the answer, not a program.
        let statements = code
            .lines()
            .skip_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(answer) = plain_form(&statements, &call) {
            return Some(answer);
        }
        // A program that is one call of another tool with literal arguments
        // (`browser_navigate("http://…")`) is that tool's call: the model reads its whole
        // output next. A longer program runs, calling the tools as functions
        // (docs/code-actions.md, "Tools in a program").
        let mut lines = statements
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        if let (Some(only), None) = (lines.next(), lines.next()) {
            if let Some((name, arguments)) = function_call(only, tools) {
                return Some(call(&name, arguments));
            }
        }
        let mut arguments = json!({LANGUAGE: language.name(), CODE: format!("{code}\n")});
        if let Some(changes) = changes_of(code) {
            arguments[CHANGES] = json!(changes);
        }
        return Some(call(CODE_RUN, arguments));
    }
    if let Some(answer) = plain_form(text, &call) {
        return Some(answer);
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let name = value.get("tool")?.as_str()?;
    let arguments = value.get("arguments").cloned().unwrap_or_else(|| json!({}));
    Some(call(name, arguments))
}

/// `line` as a call of one of `tools` other than the code surface's own forms (its
/// [`forms`]' others: `[x = ]name(args)`), its positional arguments the required parameters in order, its
/// keyword arguments by name; every argument a literal (a string, a number, `True`,
/// `False`, `None`). `None` for anything else.
fn function_call(line: &str, tools: &[ToolSchema]) -> Option<(String, Value)> {
    let line = line.trim();
    let line = match line.split_once('=') {
        Some((target, rest))
            if !target.contains('(') && is_identifier(target.trim()) && !rest.starts_with('=') =>
        {
            rest.trim_start()
        }
        _ => line,
    };
    let (name, rest) = line.split_once('(')?;
    let name = name.trim();
    let offered: Vec<&ToolSchema> = tools.iter().collect();
    let tool = *forms(&offered).others.iter().find(|t| t.name == name)?;
    let inner = rest.trim_end().strip_suffix(')')?;
    let required = required(tool);
    let mut arguments = serde_json::Map::new();
    let mut scan = Literals { rest: inner };
    let mut position = 0;
    while let Some((key, value)) = scan.next_argument()? {
        let key = match key {
            Some(k) => k,
            None => {
                let k = required.get(position)?.to_string();
                position += 1;
                k
            }
        };
        arguments.insert(key, value);
    }
    Some((tool.name.clone(), Value::Object(arguments)))
}

/// The names of `tool`'s required parameters, in the schema's order.
fn required(tool: &ToolSchema) -> Vec<&str> {
    tool.parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The arguments of a call, read one at a time: `Some(None)` at their end, `None` when one
/// is not a literal.
struct Literals<'a> {
    rest: &'a str,
}

impl Literals<'_> {
    #[allow(clippy::option_option)]
    fn next_argument(&mut self) -> Option<Option<(Option<String>, Value)>> {
        let rest = self.rest.trim_start();
        if rest.is_empty() {
            return Some(None);
        }
        let (key, rest) = match rest.split_once('=') {
            Some((k, v)) if is_identifier(k.trim()) && !v.starts_with('=') => {
                (Some(k.trim().to_string()), v.trim_start())
            }
            _ => (None, rest),
        };
        let (value, rest) = literal(rest)?;
        let rest = rest.trim_start();
        self.rest = match rest.strip_prefix(',') {
            Some(after) => after,
            None if rest.is_empty() => rest,
            None => return None,
        };
        Some(Some((key, value)))
    }
}

/// A literal at the start of `text`, and what follows it.
fn literal(text: &str) -> Option<(Value, &str)> {
    let quote = text.chars().next()?;
    if quote == '"' || quote == '\'' {
        let mut out = String::new();
        let mut chars = text.char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    let (_, e) = chars.next()?;
                    out.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
                c if c == quote => return Some((Value::String(out), &text[i + 1..])),
                c => out.push(c),
            }
        }
        return None;
    }
    let end = text.find([',', ')']).unwrap_or(text.len());
    let word = text[..end].trim();
    let value = match word {
        "True" => Value::Bool(true),
        "False" => Value::Bool(false),
        "None" => Value::Null,
        _ => {
            if let Ok(n) = word.parse::<i64>() {
                Value::from(n)
            } else {
                Value::from(word.parse::<f64>().ok()?)
            }
        }
    };
    Some((value, &text[end..]))
}

/// `ASK: …`, `DONE: …` or `FAILED: …` as its call.
fn plain_form(text: &str, call: &impl Fn(&str, Value) -> ToolCall) -> Option<ToolCall> {
    let text = text.trim();
    if let Some(question) = text.strip_prefix("ASK:") {
        return Some(call(ASK_USER, json!({"question": question.trim()})));
    }
    for (prefix, success) in [("DONE:", true), ("FAILED:", false)] {
        if let Some(result) = text.strip_prefix(prefix) {
            return Some(call(
                COMPLETE_STEP,
                json!({"success": success, "result": result.trim()}),
            ));
        }
    }
    None
}

/// An assistant turn as the model writes it on this surface.
pub(crate) fn render_assistant(m: &ChatMessage) -> String {
    if m.tool_calls.is_empty() {
        return m.content.clone().unwrap_or_default();
    }
    let mut parts = Vec::new();
    for call in &m.tool_calls {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
        parts.push(match call.name.as_str() {
            CODE_RUN => format!("```{}\n{}\n```", text(LANGUAGE), text(CODE).trim_end()),
            ASK_USER => format!("ASK: {}", text("question")),
            COMPLETE_STEP => {
                let done = args.get("success").and_then(Value::as_bool).unwrap_or(true);
                let word = if done { "DONE" } else { "FAILED" };
                format!("{word}: {}", text("result"))
            }
            // Any other tool: the JSON form of the text protocol.
            _ => {
                let args: Value = serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                json!({"tool": call.name, "arguments": args}).to_string()
            }
        });
    }
    parts.join("\n")
}

/// A tool's result as the model reads it on this surface.
pub(crate) fn render_result(tool: &str, result: &str) -> String {
    match tool {
        CODE_RUN => format!("The program ran:\n{result}"),
        ASK_USER | COMPLETE_STEP => result.to_string(),
        other => format!("Result of {other}:\n{result}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forms with no other tool offered.
    fn parse(text: &str, id: String) -> Option<ToolCall> {
        super::parse(text, id, &[])
    }

    fn browse_tool() -> ToolSchema {
        ToolSchema {
            name: "browser_navigate".into(),
            description: "Open a URL".into(),
            parameters: json!({"type": "object", "properties": {"url": {"type": "string"},
                "wait": {"type": "boolean"}}, "required": ["url"]}),
        }
    }

    #[test]
    fn a_program_that_only_calls_another_tool_is_that_call() {
        let tools = [browse_tool()];
        for (text, args) in [
            (
                "```python\n# changes: none\nbrowser_navigate(\"http://x/a?b=1\")\n```",
                json!({"url": "http://x/a?b=1"}),
            ),
            (
                "```python\n# changes: none\npage = browser_navigate(url='http://x/a', wait=True)\n```",
                json!({"url": "http://x/a", "wait": true}),
            ),
        ] {
            let call = super::parse(text, "c".into(), &tools).unwrap();
            assert_eq!(call.name, "browser_navigate", "{text}");
            assert_eq!(serde_json::from_str::<Value>(&call.arguments).unwrap(), args);
        }
        // Not a literal, not offered, the code surface's own, or one line of a longer
        // program (which calls the tool as a function): a program.
        for text in [
            "```python\nbrowser_navigate(\"http://x/a?b=1\")\nfinal_answer(browser_view())\n```",
            "```python\n# changes: none\nbrowser_navigate(address)\n```",
            "```python\n# changes: none\nbrowser_click(3)\n```",
            "```python\n# changes: none\ncode_run(\"x\")\n```",
            "```python\n# changes: none\nx == browser_navigate(\"http://x\")\n```",
        ] {
            let call = super::parse(text, "c".into(), &tools).unwrap();
            assert_eq!(call.name, CODE_RUN, "{text}");
        }
    }

    fn args(call: &ToolCall) -> Value {
        serde_json::from_str(&call.arguments).unwrap()
    }

    #[test]
    fn a_fenced_program_is_a_code_run_call() {
        let call = parse("```bash\nmv a b\n```", "c2".into()).unwrap();
        assert_eq!(call.name, CODE_RUN);
        let a = args(&call);
        assert_eq!(
            (a[LANGUAGE].as_str(), a[CODE].as_str()),
            (Some("bash"), Some("mv a b\n"))
        );
        assert!(a.get(CHANGES).is_none(), "nothing named: {a}");
    }

    /// Older transcripts opened programs with `# changes: …`: still read as `changes`.
    #[test]
    fn an_older_programs_changes_line_is_still_read() {
        let call = parse(
            "```python\n# changes: settings.txt, 'b.txt'\ns = open('settings.txt').read()\n```",
            "c1".into(),
        )
        .unwrap();
        assert_eq!(call.name, CODE_RUN);
        let a = args(&call);
        assert_eq!(a[LANGUAGE], "python");
        assert_eq!(a[CHANGES], json!(["settings.txt", "b.txt"]));
        let code = a[CODE].as_str().unwrap();
        assert!(
            code.starts_with("# changes:") && code.ends_with("read()\n"),
            "{code:?}"
        );
        let call = parse("```bash\n# changes: none\nmv a b\n```", "c2".into()).unwrap();
        assert_eq!(args(&call)[CHANGES], json!([]));
    }

    #[test]
    fn an_answer_written_inside_a_fence_is_the_answer() {
        let done = parse(
            "```bash\n# changes: none\nDONE: hello.txt holds the text\n```",
            "c".into(),
        )
        .unwrap();
        assert_eq!(done.name, COMPLETE_STEP);
        assert_eq!(args(&done)["result"], "hello.txt holds the text");
        let ask = parse(
            "```python\n# changes: none\nASK: Which city?\n```",
            "c".into(),
        )
        .unwrap();
        assert_eq!(ask.name, ASK_USER);
        let program = parse("```bash\necho DONE: x\n```", "c".into()).unwrap();
        assert_eq!(program.name, CODE_RUN);
    }

    #[test]
    fn escapes_in_code_stay_as_written() {
        let call = parse("```python\nprint('a\\nb')\n```", "c".into()).unwrap();
        assert_eq!(
            args(&call)[CODE],
            "print('a\\nb')\n",
            "the backslash-n inside the string is the program's"
        );
    }

    #[test]
    fn the_other_tools_come_before_the_ways_to_stop_with_a_written_call() {
        let browse = ToolSchema {
            name: "browser_navigate".into(),
            description: "Open a URL".into(),
            parameters: json!({"type": "object", "properties": {"url": {"type": "string"}},
                "required": ["url"]}),
        };
        let forms = CodeForms {
            program: true,
            ask: true,
            finish: true,
            others: vec![&browse],
        };
        let text = describe(&forms);
        let tool = text.find("browser_navigate(url: string)").unwrap();
        assert!(tool < text.find("ASK:").unwrap() && tool < text.find("FAILED:").unwrap());
        assert!(
            text.contains(r#"For example: {"tool": "browser_navigate", "arguments": {"url":"…"}}"#),
            "{text}"
        );
    }

    #[test]
    fn a_program_ends_at_a_fence_the_grammar_split() {
        let call = parse(
            "```python\nprint(1)\nx = `a` if False else 2\n`` `\nThis program prints 1.\n```",
            "c".into(),
        )
        .unwrap();
        assert_eq!(
            args(&call)["code"],
            json!("print(1)\nx = `a` if False else 2\n")
        );
        let whole = parse("```bash\necho `date`\n```", "c".into()).unwrap();
        assert_eq!(args(&whole)["code"], json!("echo `date`\n"));
    }

    /// The fence's language repeated as the program's first line is dropped; a program that
    /// uses such a word later, or opens with anything else, is left as written.
    #[test]
    fn a_first_line_naming_the_language_is_not_part_of_the_program() {
        for (text, code) in [
            ("```python\npython\nprint(1)\n```", "print(1)\n"),
            ("```python\n\nPython3 \nprint(1)\n```", "print(1)\n"),
            ("```bash\nbash\necho hi\n```", "echo hi\n"),
            ("```python\nprint(1)\npython\n```", "print(1)\npython\n"),
            (
                "```python\npython = 3\nprint(python)\n```",
                "python = 3\nprint(python)\n",
            ),
        ] {
            let call = parse(text, "c".into()).unwrap();
            assert_eq!(args(&call)["code"], json!(code), "{text}");
        }
    }

    #[test]
    fn the_format_has_no_template_to_copy() {
        let forms = CodeForms {
            program: true,
            ask: true,
            finish: true,
            others: Vec::new(),
        };
        let text = describe(&forms);
        assert!(!text.contains('<'), "{text}");
        assert!(text.contains("final_answer(result)"), "{text}");
    }

    #[test]
    fn questions_answers_and_json_calls() {
        let ask = parse("ASK: Which city?", "c".into()).unwrap();
        assert_eq!(
            (ask.name.as_str(), args(&ask)["question"].clone()),
            (ASK_USER, json!("Which city?"))
        );
        let done = parse("DONE: wrote sum.txt (9)", "c".into()).unwrap();
        assert_eq!(
            args(&done),
            json!({"success": true, "result": "wrote sum.txt (9)"})
        );
        let failed = parse("FAILED: no such file", "c".into()).unwrap();
        assert_eq!(args(&failed)["success"], false);
        let other = parse(
            r#"{"tool": "browser_navigate", "arguments": {"url": "http://x"}}"#,
            "c".into(),
        )
        .unwrap();
        assert_eq!(other.name, "browser_navigate");
        assert!(parse("just prose", "c".into()).is_none());
        assert!(parse("```rust\nfn main(){}\n```", "c".into()).is_none());
    }

    #[test]
    fn turns_render_back_in_the_form_they_were_written() {
        for text in [
            "```python\nopen('a.txt','w').write('x')\n```",
            "```python\n# changes: a.txt\nopen('a.txt','w').write('x')\n```",
            "ASK: Which city?",
            "DONE: wrote sum.txt",
            "FAILED: no input",
        ] {
            let call = parse(text, "c".into()).unwrap();
            let mut m = ChatMessage::assistant("");
            m.tool_calls.push(call);
            assert_eq!(render_assistant(&m), text);
        }
        let mut m = ChatMessage::assistant("");
        m.tool_calls.push(ToolCall {
            id: "c".into(),
            name: CODE_RUN.into(),
            arguments: json!({"language": "bash", "code": "ls", "changes": ["x"]}).to_string(),
        });
        assert_eq!(render_assistant(&m), "```bash\nls\n```");
    }
}
