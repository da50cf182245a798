//! One generated task (an instance of a family, docs/eval.md "Families"): what the user
//! types, the files seeded in the workspace, which of them the task asks to change, the
//! checks run on the workspace afterwards (with the expected values the generator computed
//! from the data it made), scripted answers, and a reference solution for the tests.

/// The kind of job, as the targets split them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Category {
    /// One goal: a value, a list or a file made from the seeded files.
    Single,
    /// In-place edits of the user's own files (code, config, lists), moves and renames.
    Edit,
    /// Jobs of 3-6 actions (folders, several outputs, a script written and run).
    Multi,
}

impl Category {
    pub(crate) const ALL: [Category; 3] = [Category::Single, Category::Edit, Category::Multi];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Category::Single => "single",
            Category::Edit => "edit",
            Category::Multi => "multi",
        }
    }
}

/// One assertion on the workspace after the run. Whitespace around a file's content, a
/// trailing newline and CRLF line ends are accepted everywhere (see `checks.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Check {
    /// The file holds exactly this text.
    Text { file: String, expected: String },
    /// The file holds one number within `tolerance` of `value`.
    Number {
        file: String,
        value: f64,
        tolerance: f64,
    },
    /// The file's non-empty lines (each trimmed, inner runs of spaces made one) are these;
    /// in this order when `ordered`, else in any order.
    Lines {
        file: String,
        expected: Vec<String>,
        ordered: bool,
    },
    /// The file's items, split on whitespace and commas, are these (order as for `Lines`).
    Items {
        file: String,
        expected: Vec<String>,
        ordered: bool,
    },
    /// A CSV file: this header, these rows (numbers compared as numbers, quotes around a
    /// cell ignored); rows in this order when `ordered`.
    Csv {
        file: String,
        separator: char,
        header: Vec<String>,
        rows: Vec<Vec<String>>,
        ordered: bool,
    },
    /// A JSON file equal, as data, to this JSON text (key order and layout free).
    Json { file: String, expected: String },
    /// The file is gone (moved or renamed away).
    Absent { file: String },
    /// `program args…`, run in a copy of the workspace after the run, exits 0, and when
    /// `stdout` is given prints these lines (compared as for `Lines`).
    Runs {
        program: String,
        args: Vec<String>,
        stdout: Option<(Vec<String>, bool)>,
        /// Files written into the copy before it runs: other data than the seed's, so that a
        /// program that prints fixed text instead of computing it fails (empty: none).
        other_data: Vec<(String, String)>,
    },
}

impl Check {
    /// The output file this check reads, if it reads one.
    pub(crate) fn output(&self) -> Option<&str> {
        match self {
            Check::Text { file, .. }
            | Check::Number { file, .. }
            | Check::Lines { file, .. }
            | Check::Items { file, .. }
            | Check::Csv { file, .. }
            | Check::Json { file, .. } => Some(file),
            Check::Absent { .. } | Check::Runs { .. } => None,
        }
    }
}

/// A generated task.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instance {
    /// `family-NN` within its split.
    pub id: String,
    pub family: &'static str,
    pub category: Category,
    /// Which variant of the family this is (e.g. `sum`, `lookup`).
    pub variant: &'static str,
    /// Which of the variant's phrasings the text uses (0-based).
    pub phrasing: usize,
    /// What the user types. The browser family's holds `{url}`, replaced by the page's
    /// address when the task runs.
    pub text: String,
    /// Files written into the workspace before the run: (path, content).
    pub seed: Vec<(String, String)>,
    /// The seeded files the task asks to change (edit, rename, move away); every other
    /// seeded file must be byte for byte as seeded after the run (`inputs.rs`).
    pub may_change: Vec<String>,
    pub checks: Vec<Check>,
    /// Scripted answers to a question to the user (`planwright run --answer`).
    pub answers: Vec<String>,
    /// Files of a folder outside the workspace served by the MCP server `library`
    /// (`mcp.rs`); empty: no MCP server.
    pub library: Vec<(String, String)>,
    /// The page served at the `{url}` of the text (the browser family).
    pub page: Option<String>,
    /// A Python 3 program that does the task from the seeded files, run by the tests in a
    /// copy of the workspace (with the MCP folder at `../library` and `{url}` replaced).
    pub reference: String,
}

/// Where a task's text finds the local web page.
pub(crate) const URL_PLACEHOLDER: &str = "{url}";

impl Instance {
    /// The files the checks expect the run to leave (a run that completed with one of them
    /// missing or empty is counted apart), each once, in check order.
    pub(crate) fn outputs(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for file in self.checks.iter().filter_map(Check::output) {
            if !out.contains(&file) {
                out.push(file);
            }
        }
        out
    }

    /// The seeded files the task does not ask to change.
    #[cfg(test)]
    pub(crate) fn protected(&self) -> impl Iterator<Item = &(String, String)> {
        self.seed
            .iter()
            .filter(|(f, _)| !self.may_change.iter().any(|m| m == f))
    }
}

/// Builds an instance inside a family's generator.
#[derive(Debug)]
pub(crate) struct Builder {
    instance: Instance,
}

impl Builder {
    pub(crate) fn new(family: &'static str, category: Category, variant: &'static str) -> Self {
        Builder {
            instance: Instance {
                id: String::new(),
                family,
                category,
                variant,
                phrasing: 0,
                text: String::new(),
                seed: Vec::new(),
                may_change: Vec::new(),
                checks: Vec::new(),
                answers: Vec::new(),
                library: Vec::new(),
                page: None,
                reference: String::new(),
            },
        }
    }

    /// A seeded file the task must leave as it is.
    pub(crate) fn input(&mut self, file: &str, text: &str) -> &mut Self {
        self.instance
            .seed
            .push((file.to_string(), text.to_string()));
        self
    }

    /// A seeded file the task asks to change.
    pub(crate) fn editable(&mut self, file: &str, text: &str) -> &mut Self {
        self.input(file, text);
        self.instance.may_change.push(file.to_string());
        self
    }

    pub(crate) fn check(&mut self, check: Check) -> &mut Self {
        self.instance.checks.push(check);
        self
    }

    pub(crate) fn text_is(&mut self, file: &str, expected: &str) -> &mut Self {
        self.check(Check::Text {
            file: file.to_string(),
            expected: expected.to_string(),
        })
    }

    pub(crate) fn number_is(&mut self, file: &str, value: f64, tolerance: f64) -> &mut Self {
        self.check(Check::Number {
            file: file.to_string(),
            value,
            tolerance,
        })
    }

    pub(crate) fn lines_are(
        &mut self,
        file: &str,
        expected: &[String],
        ordered: bool,
    ) -> &mut Self {
        self.check(Check::Lines {
            file: file.to_string(),
            expected: expected.to_vec(),
            ordered,
        })
    }

    pub(crate) fn items_are(
        &mut self,
        file: &str,
        expected: &[String],
        ordered: bool,
    ) -> &mut Self {
        self.check(Check::Items {
            file: file.to_string(),
            expected: expected.to_vec(),
            ordered,
        })
    }

    pub(crate) fn absent(&mut self, file: &str) -> &mut Self {
        self.check(Check::Absent {
            file: file.to_string(),
        })
    }

    pub(crate) fn answer(&mut self, answer: &str) -> &mut Self {
        self.instance.answers.push(answer.to_string());
        self
    }

    pub(crate) fn library(&mut self, file: &str, text: &str) -> &mut Self {
        self.instance
            .library
            .push((file.to_string(), text.to_string()));
        self
    }

    pub(crate) fn page(&mut self, html: &str) -> &mut Self {
        self.instance.page = Some(html.to_string());
        self
    }

    pub(crate) fn reference(&mut self, program: &str) -> &mut Self {
        self.instance.reference = program.to_string();
        self
    }

    /// The text: one of `phrasings`, chosen with `rng`.
    pub(crate) fn phrased(
        &mut self,
        rng: &mut super::rng::Rng,
        phrasings: Vec<String>,
    ) -> &mut Self {
        let k = rng.below(phrasings.len());
        self.instance.phrasing = k;
        self.instance.text = phrasings.into_iter().nth(k).unwrap_or_default();
        self
    }

    pub(crate) fn build(&mut self) -> Instance {
        self.instance.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_the_checked_files_once_and_protected_are_the_rest_of_the_seed() {
        let mut b = Builder::new("f", Category::Edit, "v");
        b.input("a.csv", "x\n")
            .editable("list.txt", "a\n")
            .text_is("list.txt", "a\nb")
            .number_is("n.txt", 2.0, 0.0)
            .text_is("n.txt", "2")
            .absent("old.txt");
        let i = b.build();
        assert_eq!(i.outputs(), ["list.txt", "n.txt"]);
        let protected: Vec<&str> = i.protected().map(|(f, _)| f.as_str()).collect();
        assert_eq!(protected, ["a.csv"]);
        assert_eq!(Category::Multi.name(), "multi");
    }
}
