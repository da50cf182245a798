//! A configured API base URL checked (http or https, no query or fragment) and an
//! endpoint's URL shown without the credentials it may carry.

use reqwest::Url;

/// Why a base URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    #[error("{0}")]
    NotAUrl(String),
    #[error("the scheme must be http or https (as in {example}), not '{scheme}'")]
    Scheme { scheme: String, example: String },
    #[error("a base URL cannot have a query or fragment")]
    QueryOrFragment,
}

/// `base_url` trimmed of blanks and trailing `/`, once checked to be an http(s) URL with no
/// query or fragment; `example` is a good base URL, named in the error.
pub fn checked_base_url<'a>(base_url: &'a str, example: &str) -> Result<&'a str, BaseUrlError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let base = Url::parse(trimmed).map_err(|e| BaseUrlError::NotAUrl(e.to_string()))?;
    if !matches!(base.scheme(), "http" | "https") {
        return Err(BaseUrlError::Scheme {
            scheme: base.scheme().to_owned(),
            example: example.to_owned(),
        });
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(BaseUrlError::QueryOrFragment);
    }
    Ok(trimmed)
}

/// `url` with any user name or password removed, for messages and logs.
pub fn shown_url(url: &Url) -> String {
    let mut shown = url.clone();
    // Both only fail for URLs that cannot have credentials at all.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_and_trimmed() {
        let ex = "http://localhost:8080/v1";
        assert_eq!(
            checked_base_url(" http://h:1/v1/ ", ex),
            Ok("http://h:1/v1")
        );
        assert!(matches!(
            checked_base_url("h:1", ex),
            Err(BaseUrlError::Scheme { .. })
        ));
        assert!(matches!(
            checked_base_url("not a url", ex),
            Err(BaseUrlError::NotAUrl(_))
        ));
        let scheme = checked_base_url("ftp://h", ex).unwrap_err();
        assert!(scheme.to_string().contains(ex), "{scheme}");
        assert_eq!(
            checked_base_url("https://h/v1?x=1", ex),
            Err(BaseUrlError::QueryOrFragment)
        );
    }

    #[test]
    fn credentials_are_not_shown() {
        let url = Url::parse("https://user:pw@h/v1/x").unwrap();
        assert_eq!(shown_url(&url), "https://h/v1/x");
    }
}
