//! `files_move`: copies, moves and renames of the user's files: a rename, named files
//! moved into a new folder, every file of one extension moved into a folder, a file copied
//! into a backup folder, several files given a new extension. Files the task does not name
//! stay where they are, byte for byte; moved files keep their content.

use super::text::{lines, py, py_list, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "files_move",
    category: Category::Edit,
    language: "en",
    about: "copies, moves and renames: a rename, named files moved into a new folder, every \
            file of one extension moved, a copy into a backup folder, files given a new \
            extension; files not named stay put, contents unchanged",
    generate,
};

fn content(rng: &mut Rng) -> String {
    let n = rng.range(1, 5) as usize;
    let body: Vec<String> = (0..n)
        .map(|_| {
            let len = rng.range(4, 10) as usize;
            sentence(rng, words::WORDS, len)
        })
        .collect();
    lines(&body)
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    match rng.below(5) {
        0 => {
            let from = names.file(rng, words::DOC_STEMS, "txt");
            let to = names.file(
                rng,
                &["final", "published", "approved", "sent", "v2", "clean"],
                "txt",
            );
            let other = names.file(rng, words::DOC_STEMS, "txt");
            let text = content(rng);
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "rename");
            b.editable(&from, &text)
                .input(&other, &content(rng))
                .text_is(&to, &text)
                .absent(&from)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "{from} should be called {to} from now on; keep its text as it is."
                        ),
                        format!("mv {from} {to}"),
                        format!(
                            "Could you give {from} the new name {to}? Don't change what's inside."
                        ),
                    ],
                )
                .reference(&format!(
                    "import os\nos.rename({}, {})\n",
                    py(&from),
                    py(&to)
                ));
            b.build()
        }
        1 => {
            let folder = names.file(rng, words::FOLDERS, "");
            let count = rng.range(2, 3) as usize;
            let moved: Vec<String> = (0..count)
                .map(|_| names.file(rng, words::DOC_STEMS, "txt"))
                .collect();
            let stays = names.file(rng, words::DOC_STEMS, "txt");
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "into_folder");
            for f in &moved {
                let text = content(rng);
                b.editable(f, &text)
                    .text_is(&format!("{folder}/{f}"), &text)
                    .absent(f);
            }
            b.input(&stays, &content(rng));
            let list = moved.join(" and ");
            b.phrased(
                rng,
                vec![
                    format!("{list} go into a new {folder} folder (create it); {stays} stays where it is."),
                    format!("mkdir {folder}, then move {} there", moved.join(", ")),
                    format!(
                        "Please tidy up: {list} belong in a new folder called {folder}. Move them \
                         there (keep their names and contents); leave {stays} alone."
                    ),
                ],
            )
            .reference(&format!(
                "import os, shutil\nos.makedirs({d}, exist_ok=True)\nfor f in {}:\n    shutil.move(f, os.path.join({d}, f))\n",
                py_list(&moved),
                d = py(&folder)
            ));
            b.build()
        }
        2 => {
            let (ext, other_ext, folder) = *rng.pick(&[
                ("log", "txt", "logs"),
                ("csv", "txt", "data"),
                ("md", "txt", "notes"),
                ("bak", "cfg", "backups"),
                ("txt", "md", "texts"),
            ]);
            names.take(folder);
            let count = rng.range(2, 4) as usize;
            let moved: Vec<String> = (0..count)
                .map(|_| names.file(rng, words::DATA_STEMS, ext))
                .collect();
            let stay_count = rng.range(1, 3) as usize;
            let stays: Vec<String> = (0..stay_count)
                .map(|_| names.file(rng, words::DATA_STEMS, other_ext))
                .collect();
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "by_extension");
            for f in &moved {
                let text = content(rng);
                b.editable(f, &text)
                    .text_is(&format!("{folder}/{f}"), &text)
                    .absent(f);
            }
            for f in &stays {
                b.input(f, &content(rng));
            }
            b.phrased(
                rng,
                vec![
                    format!("Move every .{ext} file of this folder into a new folder named {folder}. Other files stay where they are."),
                    format!("all *.{ext} -> {folder}/ (create it); leave the .{other_ext} files alone"),
                    format!("There are .{ext} files lying around next to my .{other_ext} files. Put all the .{ext} ones into a folder called {folder}, please."),
                ],
            )
            .reference(&format!(
                "import os, shutil\nos.makedirs({d}, exist_ok=True)\nfor f in sorted(os.listdir('.')):\n    if f.endswith({e}) and os.path.isfile(f):\n        shutil.move(f, os.path.join({d}, f))\n",
                d = py(folder),
                e = py(&format!(".{ext}"))
            ));
            b.build()
        }
        3 => {
            let ext = *rng.pick(&["csv", "txt", "json", "md"]);
            let file = names.file(rng, words::DATA_STEMS, ext);
            let folder = *rng.pick(&["backup", "backups", "safe", "copies"]);
            names.take(folder);
            let other = names.file(rng, words::DOC_STEMS, "txt");
            let text = content(rng);
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "copy");
            b.input(&file, &text)
                .input(&other, &content(rng))
                .text_is(&format!("{folder}/{file}"), &text)
                .phrased(
                    rng,
                    vec![
                        format!("Copy {file} into a new folder named {folder}. The original stays where it is."),
                        format!("cp {file} {folder}/ (make the folder first)"),
                        format!("Before I edit {file}, put a copy of it in a folder called {folder}, same name. Don't move the original."),
                    ],
                )
                .reference(&format!(
                    "import os, shutil\nos.makedirs({d}, exist_ok=True)\nshutil.copy({f}, os.path.join({d}, {f}))\n",
                    d = py(folder),
                    f = py(&file)
                ));
            b.build()
        }
        _ => {
            let (from_ext, to_ext) = *rng.pick(&[
                ("jpeg", "jpg"),
                ("htm", "html"),
                ("text", "txt"),
                ("yml", "yaml"),
            ]);
            let count = rng.range(2, 4) as usize;
            let stems: Vec<String> = (0..count)
                .map(|_| {
                    let f = names.file(rng, words::DATA_STEMS, from_ext);
                    f.trim_end_matches(&format!(".{from_ext}")).to_string()
                })
                .collect();
            let other = names.file(rng, words::DOC_STEMS, "md");
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "extension");
            for s in &stems {
                let text = content(rng);
                let from = format!("{s}.{from_ext}");
                names.take(&format!("{s}.{to_ext}"));
                b.editable(&from, &text)
                    .text_is(&format!("{s}.{to_ext}"), &text)
                    .absent(&from);
            }
            b.input(&other, &content(rng));
            b.phrased(
                rng,
                vec![
                    format!("Rename every .{from_ext} file here to .{to_ext} (same name otherwise)."),
                    format!("change the extension of all *.{from_ext} files to .{to_ext}"),
                    format!("My tool only accepts .{to_ext}. Please rename the .{from_ext} files so they end in .{to_ext} instead; nothing else changes."),
                ],
            )
            .reference(&format!(
                "import os\nfor f in sorted(os.listdir('.')):\n    if f.endswith({e}):\n        os.rename(f, f[: -len({e})] + {t})\n",
                e = py(&format!(".{from_ext}")),
                t = py(&format!(".{to_ext}"))
            ));
            b.build()
        }
    }
}
