//! `mcp_note`: a note only the MCP server `library` can read (the npm reference filesystem
//! server serving a folder outside the workspace, `mcp.rs`): the code a note holds, how
//! many lines a note has, or a note copied into the workspace.

use super::text::{lines, py, py_write, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "mcp_note",
    category: Category::Single,
    language: "en",
    about: "a note only the MCP server `library` can read (a folder outside the workspace): the \
            code it holds, how many lines it has, or the note copied into the workspace",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let note = names.file(
        rng,
        &["code", "memo", "secret", "note", "reminder", "pin"],
        "txt",
    );
    let other = names.file(rng, words::DOC_STEMS, "txt");
    let out = names.file(rng, words::OUT_STEMS, "txt");
    let server = "library";
    let word = *rng.pick(&["TEAL", "PLUM", "FERN", "OPAL", "KITE", "MOSS"]);
    let secret = format!("{word}-{}", rng.range(1000, 9999));
    let other_text = lines(&[
        sentence(rng, words::WORDS, 8),
        sentence(rng, words::WORDS, 6),
    ]);
    let read = format!(
        "note = open('../library/' + {}, encoding='utf-8').read()\n",
        py(&note)
    );
    let mut b;
    match rng.below(3) {
        0 => {
            let text = format!(
                "{}\nThe code is {secret}.\n",
                sentence(rng, words::WORDS, 7)
            );
            b = Builder::new(FAMILY.name, FAMILY.category, "code");
            b.library(&note, &text).text_is(&out, &secret).phrased(
                rng,
                vec![
                    format!(
                        "Using the tools of the {server} MCP server, open the note {note} and \
                         copy the code written in it into {out}."
                    ),
                    format!("use the {server} MCP server to open {note}; put just the code from it (like ABCD-1234) in {out}"),
                    format!(
                        "There's a code in the note {note}, which only the {server} MCP server \
                         can reach. Please fetch it through that server and save the code alone \
                         as {out} in the workspace."
                    ),
                ],
            );
            b.reference(&format!(
                "import re\n{read}{}",
                py_write(&out, r"re.search(r'[A-Z]+-\d+', note).group(0)")
            ));
        }
        1 => {
            let n = rng.range(3, 12) as usize;
            let body: Vec<String> = (0..n)
                .map(|_| {
                    let len = rng.range(3, 8) as usize;
                    sentence(rng, words::WORDS, len)
                })
                .collect();
            b = Builder::new(FAMILY.name, FAMILY.category, "lines");
            b.library(&note, &lines(&body))
                .number_is(&out, n as f64, 0.0)
                .phrased(
                    rng,
                    vec![
                        format!(
                        "Through the MCP server {server}, read the note {note} and write how many \
                         lines it has into {out}."
                    ),
                        format!("line count of {note} on the {server} MCP server -> {out}"),
                        format!(
                        "How long is the note {note} kept by the {server} MCP server? Count its \
                         lines and save just the number as {out}."
                    ),
                    ],
                );
            b.reference(&format!(
                "{read}{}",
                py_write(&out, "str(len(note.splitlines()))")
            ));
        }
        _ => {
            let n = rng.range(2, 6) as usize;
            let body: Vec<String> = (0..n)
                .map(|_| {
                    let len = rng.range(3, 9) as usize;
                    sentence(rng, words::WORDS, len)
                })
                .collect();
            let text = lines(&body);
            b = Builder::new(FAMILY.name, FAMILY.category, "copy");
            b.library(&note, &text).text_is(&out, &text).phrased(
                rng,
                vec![
                    format!(
                        "Copy the note {note} from the MCP server named {server} into the \
                         workspace as {out}, word for word."
                    ),
                    format!(
                        "get {note} via the {server} MCP server and save its exact text as {out}"
                    ),
                    format!(
                        "I keep {note} in the folder the {server} MCP server serves. Please \
                         bring it into the workspace under the name {out}, unchanged."
                    ),
                ],
            );
            b.reference(&format!(
                "{read}with open({}, 'w', encoding='utf-8') as f:\n    f.write(note)\n",
                py(&out)
            ));
        }
    }
    b.library(&other, &other_text);
    b.build()
}
