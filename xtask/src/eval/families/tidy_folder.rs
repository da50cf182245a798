//! `tidy_folder`: a multi-step tidy-up: make two folders, move the files of one kind into
//! the first and of another kind into the second, leave the rest, and write the list of
//! what was moved.

use super::text::{lines, py, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "tidy_folder",
    category: Category::Multi,
    language: "en",
    about: "make two folders, move the files of one kind into the first and of another kind \
            into the second, leave the rest, and write the list of the files moved",
    generate,
};

/// (extensions, folder names) of a kind of file.
const KINDS: &[(&[&str], &[&str])] = &[
    (&["png", "jpg"], &["images", "pictures", "photos"]),
    (&["pdf"], &["documents", "pdfs", "papers"]),
    (&["csv"], &["data", "tables", "spreadsheets"]),
    (&["mp3", "wav"], &["music", "audio", "sounds"]),
    (&["zip"], &["archives", "zips"]),
];

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let kinds = rng.sample(KINDS, 2);
    let folders: Vec<String> = kinds.iter().map(|(_, f)| rng.pick(f).to_string()).collect();
    for f in &folders {
        names.take(f);
    }
    let list = names.file(rng, &["moved", "moved_files", "tidy_log", "changes"], "txt");
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "two_kinds");
    let mut moved = Vec::new();
    for ((exts, _), folder) in kinds.iter().zip(&folders) {
        let count = rng.range(1, 3) as usize;
        for _ in 0..count {
            let ext = *rng.pick(exts);
            let f = names.file(rng, words::DATA_STEMS, ext);
            let len = rng.range(3, 8) as usize;
            let text = format!("{}\n", sentence(rng, words::WORDS, len));
            b.editable(&f, &text)
                .text_is(&format!("{folder}/{f}"), &text)
                .absent(&f);
            moved.push(f);
        }
    }
    let stays_count = rng.range(1, 3) as usize;
    for _ in 0..stays_count {
        let ext = *rng.pick(&["txt", "md"]);
        let f = names.file(rng, words::DOC_STEMS, ext);
        let len = rng.range(3, 8) as usize;
        b.input(&f, &lines(&[sentence(rng, words::WORDS, len)]));
    }
    b.lines_are(&list, &moved, false);
    let describe = |(exts, _): &(&[&str], &[&str])| {
        exts.iter()
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let (k0, k1) = (describe(&kinds[0]), describe(&kinds[1]));
    let (f0, f1) = (&folders[0], &folders[1]);
    b.phrased(
        rng,
        vec![
            format!(
                "Tidy this folder: make the folders {f0} and {f1}, move every {k0} file into {f0} \
                 and every {k1} file into {f1}, and leave the other files where they are. Then \
                 write the names of the files you moved into {list}, one per line."
            ),
            format!("mkdir {f0} {f1}; {k0} -> {f0}/, {k1} -> {f1}/; list of moved file names -> {list}"),
            format!(
                "My downloads are a mess. Please put the {k0} files in a new folder {f0} and the {k1} \
                 files in a new folder {f1} (don't touch anything else), and give me a list of what \
                 you moved in {list}, one file name per line."
            ),
        ],
    )
    .reference(&format!(
        "import os, shutil\nkinds = [({e0}, {f0}), ({e1}, {f1})]\nmoved = []\nfor exts, d in kinds:\n    os.makedirs(d, exist_ok=True)\n    for f in sorted(os.listdir('.')):\n        if os.path.isfile(f) and any(f.endswith(e) for e in exts):\n            shutil.move(f, os.path.join(d, f))\n            moved.append(f)\nopen({l}, 'w').write('\\n'.join(moved) + '\\n')\n",
        e0 = super::text::py_list(&kinds[0].0.iter().map(|e| format!(".{e}")).collect::<Vec<_>>()),
        e1 = super::text::py_list(&kinds[1].0.iter().map(|e| format!(".{e}")).collect::<Vec<_>>()),
        f0 = py(f0),
        f1 = py(f1),
        l = py(&list)
    ));
    b.build()
}
