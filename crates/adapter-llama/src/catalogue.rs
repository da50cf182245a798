//! The embedded models Planwright knows by name: the names and file names of the
//! catalogue `cargo xtask model` fetches (xtask holds the pins, `xtask/src/model/
//! catalogue.rs`; keep both in step). See docs/models.md.

use std::path::PathBuf;

/// A model of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogueModel {
    /// The name users type (`--model-path NAME`, `cargo xtask model NAME`).
    pub name: &'static str,
    /// Its file in the model cache ([`crate::default_model_dir`]).
    pub file: &'static str,
}

/// Every model `cargo xtask model` can fetch.
pub const CATALOGUE: [CatalogueModel; 4] = [
    CatalogueModel {
        name: "qwen2.5-coder-0.5b",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    },
    CatalogueModel {
        name: "qwen2.5-coder-1.5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    },
    CatalogueModel {
        name: "gemma-3-270m",
        file: "gemma-3-270m-q4_k_m.gguf",
    },
    CatalogueModel {
        name: "smollm2-135m",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    },
];

/// The name of the default model.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";
/// Its file name.
pub(crate) const DEFAULT_MODEL_FILE: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

/// The file a `--model-path` value means: a catalogue name resolves to its file in the
/// model cache; anything else is a path.
pub fn resolve_model(name_or_path: &str) -> PathBuf {
    match CATALOGUE.iter().find(|m| m.name == name_or_path) {
        Some(m) => crate::default_model_dir().join(m.file),
        None => PathBuf::from(name_or_path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_in_the_cache_and_paths_stay_paths() {
        let default = CATALOGUE.iter().find(|m| m.name == DEFAULT_MODEL).unwrap();
        assert_eq!(default.file, DEFAULT_MODEL_FILE);
        assert_eq!(
            resolve_model("smollm2-135m"),
            crate::default_model_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf")
        );
        assert_eq!(resolve_model("./my.gguf"), PathBuf::from("./my.gguf"));
    }
}
