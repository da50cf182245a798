//! `planwright tools list`: every tool offered, and why a family is not (MCP servers are
//! started to list theirs).

use std::process::ExitCode;

use crate::cli::RunOptions;
use crate::error::AppError;
use crate::mcp;
use crate::terminal::print_stdout;

pub async fn list(opts: &RunOptions) -> Result<ExitCode, AppError> {
    let settings = opts.settings();
    let (set, families) = runner::wiring::tools(
        &settings,
        domain::StepLimits::default().max_observation_bytes,
    )?;
    let mut out = String::new();
    for f in &families {
        match &f.not_offered {
            None => out.push_str(&format!("{}: {}\n", f.family, f.tools.join(", "))),
            Some(why) => out.push_str(&format!("{}: not offered ({why})\n", f.family)),
        }
    }
    let (mcp_lines, mcp_tools) =
        mcp::tools_lines(&settings.disabled_tools, &settings.mcp_servers).await;
    out.push_str(&mcp_lines);
    out.push_str(&format!(
        "always: complete_step, message_notify_user, message_ask_user\n{} tools offered in all\n",
        set.names().len() + mcp_tools + 3
    ));
    print_stdout(&out);
    Ok(ExitCode::SUCCESS)
}
