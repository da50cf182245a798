//! The task families of the eval (docs/eval.md, "Families"): each a generator of everyday
//! tasks with random file names, data, values and phrasing, whose expected outputs it
//! computes from the data it made. One file per family; the word lists, tables, logs and
//! JSON they draw on beside them.

mod json;
mod logs;
mod table;
mod text;
mod words;

mod ask_user;
mod backup_edit;
mod browser_secret;
mod bug_fix;
mod code_edit;
mod code_rename;
mod column_math;
mod columns_reorder;
mod config_edit;
mod count_text;
mod csv_extract;
mod es_edit;
mod files_move;
mod fr_extract;
mod generate_numbers;
mod group_totals;
mod json_extract;
mod list_edit;
mod log_digest;
mod log_extract;
mod mcp_note;
mod replace_all;
mod report_job;
mod script_run;
mod split_csv;
mod text_transform;
mod tidy_folder;

use super::family::Family;

/// Every family, in the order of the docs' table.
pub(crate) const FAMILIES: &[Family] = &[
    csv_extract::FAMILY,
    json_extract::FAMILY,
    log_extract::FAMILY,
    count_text::FAMILY,
    column_math::FAMILY,
    group_totals::FAMILY,
    text_transform::FAMILY,
    columns_reorder::FAMILY,
    generate_numbers::FAMILY,
    ask_user::FAMILY,
    browser_secret::FAMILY,
    mcp_note::FAMILY,
    fr_extract::FAMILY,
    replace_all::FAMILY,
    code_rename::FAMILY,
    code_edit::FAMILY,
    config_edit::FAMILY,
    bug_fix::FAMILY,
    list_edit::FAMILY,
    files_move::FAMILY,
    es_edit::FAMILY,
    split_csv::FAMILY,
    report_job::FAMILY,
    backup_edit::FAMILY,
    script_run::FAMILY,
    log_digest::FAMILY,
    tidy_folder::FAMILY,
];

/// The families named in `names` (all when empty), in the order asked, or which name is
/// unknown.
pub(crate) fn select(names: &[String]) -> Result<Vec<&'static Family>, String> {
    if names.is_empty() {
        return Ok(FAMILIES.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            FAMILIES.iter().find(|f| f.name == n).ok_or_else(|| {
                let known: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
                format!("unknown family '{n}' (families: {})", known.join(", "))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
