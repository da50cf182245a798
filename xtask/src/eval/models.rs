//! Which models the eval runs, and the facts each section records of one: its name (a
//! catalogue name where there is one), the file passed to `planwright run --model-path`,
//! and that file's name and sha256.

use std::path::PathBuf;

use super::options::Options;

/// One model the suite runs on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelChoice {
    /// In labels and the mode × model table: the catalogue's name, else the file's name,
    /// else (an endpoint) the model name sent to it.
    pub name: String,
    /// `--model-path` for the run: with an endpoint, the file it serves (for the record);
    /// `None`: planwright's default.
    pub path: Option<PathBuf>,
    pub file_name: String,
    pub sha256: String,
}

/// The models of `opts`, in order: each of `--models` from the model cache, else the one of
/// `--model-path`, the endpoint or the default. Every file is checked before any task runs.
pub(crate) fn resolve(opts: &Options) -> Result<Vec<ModelChoice>, String> {
    if !opts.models.is_empty() {
        return opts
            .models
            .iter()
            .map(|name| {
                let path = crate::model::cached_model_path(name)?;
                described(name.clone(), Some(path.clone()), Some(path))
            })
            .collect();
    }
    let record = match (&opts.model_path, &opts.base_url) {
        (Some(p), _) => Some(p.clone()),
        (None, None) => Some(crate::model::default_model_path()),
        (None, Some(_)) => None,
    };
    let name = match (&opts.base_url, &record) {
        (Some(_), _) => opts
            .model
            .clone()
            .unwrap_or_else(|| "planwright's default name".to_string()),
        (None, Some(p)) => crate::model::catalogue_name_of(p).map_or_else(
            || {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            },
            str::to_string,
        ),
        (None, None) => "planwright's default".to_string(),
    };
    Ok(vec![described(name, opts.model_path.clone(), record)?])
}

/// The choice with the name and hash of `record`, the file it stands for.
fn described(
    name: String,
    path: Option<PathBuf>,
    record: Option<PathBuf>,
) -> Result<ModelChoice, String> {
    let (file_name, sha256) = match &record {
        Some(p) if p.is_file() => (
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            ),
            crate::model::sha256_of(p)?,
        ),
        Some(p) => return Err(format!("no model file at {}", p.display())),
        None => (
            "the server's (not given)".to_string(),
            "unknown".to_string(),
        ),
    };
    Ok(ModelChoice {
        name,
        path,
        file_name,
        sha256,
    })
}
