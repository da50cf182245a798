//! The OpenAI-compatible endpoint the run options name: `GET {base}/models` with a short
//! timeout says whether it is reachable, accepts the key, and which models it serves.

use super::{Check, Status};
use runner::RunSettings;

/// Models named at most on the line.
#[cfg(feature = "openai")]
const SHOWN_MODELS: usize = 10;

#[cfg(feature = "openai")]
pub async fn check(opts: &RunSettings, timeout_secs: u64) -> Check {
    let config = match runner::wiring::openai_config(opts) {
        Ok(Some(config)) => config,
        Ok(None) => {
            return Check::new(
                "endpoint",
                Status::Ok,
                "none configured: runs use the embedded model (set OPENAI_BASE_URL or \
                 OPENAI_API_KEY, or pick a server with --provider)",
            )
        }
        Err(e) => return Check::new("endpoint", Status::Fail, e.to_string()),
    };
    let base = config.base_url.trim_end_matches('/').to_string();
    let client = match http_client(opts, &base, timeout_secs) {
        Ok(c) => c,
        Err(e) => return Check::new("endpoint", Status::Fail, e),
    };
    let mut request = client.get(format!("{base}/models"));
    // As the client sends it: trimmed, none when blank.
    if let Some(key) = config
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        request = request.bearer_auth(key);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return Check::new(
                "endpoint",
                Status::Fail,
                format!(
                    "{base} is not reachable ({}): start the server or fix OPENAI_BASE_URL / \
                     --base-url",
                    e.without_url()
                ),
            )
        }
    };
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Check::new(
            "endpoint",
            Status::Fail,
            format!("{base} refused the key (HTTP {status}): check OPENAI_API_KEY"),
        );
    }
    if !status.is_success() {
        return Check::new(
            "endpoint",
            Status::Warn,
            format!(
                "{base} is reachable but answered HTTP {status} to GET /models (some servers \
                 do not list their models)"
            ),
        );
    }
    let models = match response.json::<serde_json::Value>().await {
        Ok(body) => model_ids(&body),
        Err(_) => Vec::new(),
    };
    served(&base, &config.model, &models)
}

/// The line of a reachable endpoint serving `models`; warns when `model` is not among them.
#[cfg(feature = "openai")]
fn served(base: &str, model: &str, models: &[String]) -> Check {
    if models.is_empty() {
        return Check::new(
            "endpoint",
            Status::Warn,
            format!("{base} is reachable but lists no model"),
        );
    }
    let mut shown = models
        .iter()
        .take(SHOWN_MODELS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if models.len() > SHOWN_MODELS {
        shown.push_str(&format!(" and {} more", models.len() - SHOWN_MODELS));
    }
    if models.iter().any(|m| m == model) {
        Check::new(
            "endpoint",
            Status::Ok,
            format!("{base} is reachable, serves {shown}"),
        )
    } else {
        Check::new(
            "endpoint",
            Status::Warn,
            format!(
                "{base} is reachable, serves {shown}, not the model {model}: pick one with \
                 --model or PLANWRIGHT_MODEL"
            ),
        )
    }
}

/// The `id`s of an OpenAI `GET /models` answer (`{"data": [{"id": ...}, ...]}`).
#[cfg(feature = "openai")]
fn model_ids(body: &serde_json::Value) -> Vec<String> {
    body["data"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// An HTTP client with the short timeout, trusting `--ca-cert` as runs do (the platform's
/// roots only for an https endpoint, as the OpenAI client).
#[cfg(feature = "openai")]
fn http_client(
    opts: &RunSettings,
    base: &str,
    timeout_secs: u64,
) -> Result<reqwest::Client, String> {
    let timeout = std::time::Duration::from_secs(timeout_secs);
    let scheme = base.split_once("://").map_or("", |(scheme, _)| scheme);
    let pems = runner::ca_certs::read(opts).map_err(|e| e.to_string())?;
    http_client::client_builder(http_client::Roots::for_scheme(scheme), &pems)
        .map_err(|e| format!("a --ca-cert file is not PEM: {e}"))?
        .timeout(timeout)
        .connect_timeout(timeout)
        .build()
        .map_err(|e| {
            format!(
                "cannot set up an HTTP client: {}",
                http_client::error_chain(&e)
            )
        })
}

#[cfg(not(feature = "openai"))]
pub async fn check(_opts: &RunSettings, _timeout_secs: u64) -> Check {
    Check::new(
        "endpoint",
        Status::Ok,
        "not part of this build (the `openai` feature): runs use the embedded model",
    )
}

#[cfg(all(test, feature = "openai"))]
mod tests {
    use super::*;

    #[test]
    fn the_served_models_are_named_and_a_missing_one_warns() {
        let body = serde_json::json!({"object": "list", "data": [
            {"id": "gpt-4o-mini", "object": "model"}, {"id": "other", "object": "model"}]});
        let models = model_ids(&body);
        assert_eq!(models, ["gpt-4o-mini", "other"]);
        let ok = served("http://h/v1", "gpt-4o-mini", &models);
        assert_eq!(ok.status, Status::Ok);
        assert!(ok.detail.contains("serves gpt-4o-mini, other"), "{ok:?}");
        let warn = served("http://h/v1", "llama3", &models);
        assert_eq!(warn.status, Status::Warn);
        assert!(warn.detail.contains("--model"), "{warn:?}");
    }
}
