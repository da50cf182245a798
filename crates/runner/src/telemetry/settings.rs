//! Where traces go and how they are labelled: the standard OpenTelemetry variables
//! (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_TRACES_SAMPLER`) over the config file's `[telemetry]` table, checked into an
//! [`ExportPlan`] (docs/observability.md). Export is off unless an endpoint is set; a value
//! that cannot be used turns it off with one [`SettingsError`], never stops a run.

use std::collections::BTreeMap;

/// The telemetry settings as given (the file's `[telemetry]` table, then the environment
/// over it: [`TelemetrySettings::with_env`]). Every field is optional; no endpoint means no
/// export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetrySettings {
    /// The OTLP base URL; traces go to `<endpoint>/v1/traces` (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub endpoint: Option<String>,
    /// The full traces URL, used as is (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
    pub traces_endpoint: Option<String>,
    /// `http/protobuf` (the only one supported; `OTEL_EXPORTER_OTLP_PROTOCOL`).
    pub protocol: Option<String>,
    /// `key=value,key2=value2`, values percent-encoded (`OTEL_EXPORTER_OTLP_HEADERS`,
    /// `OTEL_EXPORTER_OTLP_TRACES_HEADERS`): environment only, they often hold a secret.
    pub headers: Option<String>,
    /// `service.name` (`OTEL_SERVICE_NAME`); `planwright` when unset.
    pub service_name: Option<String>,
    /// More resource attributes, `key=value,...` (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Option<String>,
    /// `always_on`, `always_off`, `traceidratio`, `parentbased_always_on` (the default),
    /// `parentbased_always_off`, `parentbased_traceidratio` (`OTEL_TRACES_SAMPLER`).
    pub sampler: Option<String>,
    /// The ratio of the `*traceidratio` samplers (`OTEL_TRACES_SAMPLER_ARG`).
    pub sampler_arg: Option<String>,
    /// Whether prompts, replies and tool arguments and outputs are recorded on spans
    /// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`); never by default.
    pub capture_message_content: bool,
}

/// The one protocol spoken.
pub const HTTP_PROTOBUF: &str = "http/protobuf";

impl TelemetrySettings {
    /// These settings with the process's environment over them.
    pub fn with_env(self) -> TelemetrySettings {
        self.with_vars(|name| std::env::var(name).ok())
    }

    /// These settings with the variables `var` gives over them (an empty variable counts
    /// as unset).
    pub fn with_vars(mut self, var: impl Fn(&str) -> Option<String>) -> TelemetrySettings {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let over = |slot: &mut Option<String>, name: &str| {
            if let Some(v) = get(name) {
                *slot = Some(v);
            }
        };
        over(&mut self.endpoint, "OTEL_EXPORTER_OTLP_ENDPOINT");
        over(
            &mut self.traces_endpoint,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        );
        over(&mut self.protocol, "OTEL_EXPORTER_OTLP_PROTOCOL");
        over(&mut self.protocol, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
        over(&mut self.headers, "OTEL_EXPORTER_OTLP_HEADERS");
        over(&mut self.headers, "OTEL_EXPORTER_OTLP_TRACES_HEADERS");
        over(&mut self.service_name, "OTEL_SERVICE_NAME");
        over(&mut self.resource_attributes, "OTEL_RESOURCE_ATTRIBUTES");
        over(&mut self.sampler, "OTEL_TRACES_SAMPLER");
        over(&mut self.sampler_arg, "OTEL_TRACES_SAMPLER_ARG");
        if let Some(v) = get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") {
            self.capture_message_content = v.trim().eq_ignore_ascii_case("true");
        }
        self
    }

    /// Whether an endpoint is set at all (export is meant).
    pub fn export_meant(&self) -> bool {
        self.endpoint.is_some() || self.traces_endpoint.is_some()
    }

    /// The checked plan; `Ok(None)` when no endpoint is set (export off).
    pub fn plan(&self) -> Result<Option<ExportPlan>, SettingsError> {
        if !self.export_meant() {
            return Ok(None);
        }
        let protocol = self
            .protocol
            .as_deref()
            .map(str::trim)
            .unwrap_or(HTTP_PROTOBUF);
        if protocol != HTTP_PROTOBUF {
            return Err(SettingsError::Protocol(protocol.to_string()));
        }
        let url = match (&self.traces_endpoint, &self.endpoint) {
            (Some(traces), _) => traces.trim().to_string(),
            (None, Some(base)) => format!("{}/v1/traces", base.trim().trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        let parsed = reqwest::Url::parse(&url)
            .map_err(|e| SettingsError::Endpoint(format!("{url}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(SettingsError::Endpoint(format!(
                "{url}: not an http:// or https:// URL"
            )));
        }
        let headers = match &self.headers {
            Some(text) => key_values(text).map_err(SettingsError::Headers)?,
            None => BTreeMap::new(),
        };
        for name in headers.keys() {
            reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| SettingsError::Headers(format!("{name:?} is not a header name")))?;
        }
        for (name, value) in &headers {
            reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                SettingsError::Headers(format!("the value of {name} is not a header value"))
            })?;
        }
        let mut resource = match &self.resource_attributes {
            Some(text) => key_values(text).map_err(SettingsError::ResourceAttributes)?,
            None => BTreeMap::new(),
        };
        let service_name = self
            .service_name
            .clone()
            .or_else(|| resource.remove("service.name"))
            .unwrap_or_else(|| "planwright".to_string());
        resource.remove("service.name");
        let sampler = Sampler::parse(self.sampler.as_deref(), self.sampler_arg.as_deref())?;
        Ok(Some(ExportPlan {
            url: parsed.to_string(),
            headers,
            service_name,
            resource,
            sampler,
        }))
    }
}

/// A checked export: where, with which headers, under which resource and sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPlan {
    /// The full URL spans are POSTed to.
    pub url: String,
    pub headers: BTreeMap<String, String>,
    pub service_name: String,
    pub resource: BTreeMap<String, String>,
    pub sampler: Sampler,
}

/// Which traces are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampler {
    AlwaysOn,
    AlwaysOff,
    Ratio(f64),
    ParentBasedAlwaysOn,
    ParentBasedAlwaysOff,
    ParentBasedRatio(f64),
}

impl Sampler {
    fn parse(name: Option<&str>, arg: Option<&str>) -> Result<Sampler, SettingsError> {
        let ratio = || -> Result<f64, SettingsError> {
            match arg.map(str::trim) {
                None => Ok(1.0),
                Some(text) => text
                    .parse::<f64>()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| {
                        SettingsError::Sampler(format!("ratio {text:?} is not in 0..1"))
                    }),
            }
        };
        Ok(
            match name.map(str::trim).unwrap_or("parentbased_always_on") {
                "always_on" => Sampler::AlwaysOn,
                "always_off" => Sampler::AlwaysOff,
                "traceidratio" => Sampler::Ratio(ratio()?),
                "parentbased_always_on" => Sampler::ParentBasedAlwaysOn,
                "parentbased_always_off" => Sampler::ParentBasedAlwaysOff,
                "parentbased_traceidratio" => Sampler::ParentBasedRatio(ratio()?),
                other => return Err(SettingsError::Sampler(format!("unknown sampler {other:?}"))),
            },
        )
    }
}

/// Why the telemetry settings cannot be used: traces are then not exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("unsupported OTLP protocol {0:?} (only \"http/protobuf\")")]
    Protocol(String),
    #[error("malformed OTLP endpoint {0}")]
    Endpoint(String),
    #[error("malformed OTEL_EXPORTER_OTLP_HEADERS: {0}")]
    Headers(String),
    #[error("malformed OTEL_RESOURCE_ATTRIBUTES: {0}")]
    ResourceAttributes(String),
    #[error("bad OTEL_TRACES_SAMPLER: {0}")]
    Sampler(String),
}

/// `key=value,key2=value2` (W3C baggage-like, as the OpenTelemetry variables are written),
/// values percent-decoded.
fn key_values(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("{pair:?} is not key=value"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("{pair:?} has no key"));
        }
        let value =
            percent_decode(value.trim()).ok_or_else(|| format!("bad escape in {pair:?}"))?;
        map.insert(key.to_string(), value);
    }
    Ok(map)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> TelemetrySettings {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TelemetrySettings::default().with_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn no_endpoint_means_no_export() {
        assert_eq!(from(&[("OTEL_SERVICE_NAME", "x")]).plan(), Ok(None));
    }

    #[test]
    fn the_base_endpoint_gets_the_traces_path_and_the_traces_endpoint_is_used_as_is() {
        let plan = from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:6006/")])
            .plan()
            .unwrap()
            .unwrap();
        assert_eq!(plan.url, "http://127.0.0.1:6006/v1/traces");
        assert_eq!(plan.service_name, "planwright");
        assert_eq!(plan.sampler, Sampler::ParentBasedAlwaysOn);
        let plan = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/x/traces"),
        ])
        .plan()
        .unwrap()
        .unwrap();
        assert_eq!(plan.url, "https://b/x/traces");
    }

    #[test]
    fn the_environment_beats_the_file() {
        let file = TelemetrySettings {
            endpoint: Some("http://file:1".into()),
            service_name: Some("from-file".into()),
            ..TelemetrySettings::default()
        };
        let merged =
            file.with_vars(|name| (name == "OTEL_SERVICE_NAME").then(|| "from-env".to_string()));
        assert_eq!(merged.service_name.as_deref(), Some("from-env"));
        assert_eq!(merged.endpoint.as_deref(), Some("http://file:1"));
    }

    #[test]
    fn headers_resource_and_sampler_are_read() {
        let plan = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:1"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Basic%20abc, x-team = ops",
            ),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=svc,deployment.environment=prod",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ])
        .plan()
        .unwrap()
        .unwrap();
        assert_eq!(plan.headers["Authorization"], "Basic abc");
        assert_eq!(plan.headers["x-team"], "ops");
        assert_eq!(plan.service_name, "svc");
        assert_eq!(plan.resource["deployment.environment"], "prod");
        assert!(!plan.resource.contains_key("service.name"));
        assert_eq!(plan.sampler, Sampler::ParentBasedRatio(0.25));
    }

    #[test]
    fn each_bad_value_is_one_clear_error() {
        let bad = |vars: &[(&str, &str)]| {
            let mut all = vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:1")];
            all.extend_from_slice(vars);
            from(&all).plan().unwrap_err().to_string()
        };
        assert_eq!(
            bad(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]),
            "unsupported OTLP protocol \"grpc\" (only \"http/protobuf\")"
        );
        assert!(bad(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "not a url")])
            .starts_with("malformed OTLP endpoint not a url/v1/traces"));
        assert!(bad(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://h/")]).contains("not an http"));
        assert_eq!(
            bad(&[("OTEL_EXPORTER_OTLP_HEADERS", "novalue")]),
            "malformed OTEL_EXPORTER_OTLP_HEADERS: \"novalue\" is not key=value"
        );
        assert!(bad(&[("OTEL_EXPORTER_OTLP_HEADERS", "bad name=1")]).contains("not a header name"));
        assert_eq!(
            bad(&[("OTEL_TRACES_SAMPLER", "sometimes")]),
            "bad OTEL_TRACES_SAMPLER: unknown sampler \"sometimes\""
        );
        assert!(bad(&[
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "2")
        ])
        .contains("not in 0..1"));
    }

    #[test]
    fn message_content_is_captured_only_when_the_switch_says_true() {
        assert!(!from(&[]).capture_message_content);
        assert!(
            !from(&[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "1")])
                .capture_message_content
        );
        assert!(
            from(&[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE")])
                .capture_message_content
        );
    }
}
