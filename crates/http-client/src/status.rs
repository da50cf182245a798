//! What an HTTP status says about a failed call, whatever the API: the classes every LLM
//! adapter maps to the port's error kinds (each adds what its own error bodies say, such
//! as a context overflow or a used-up quota).

/// The class of a non-2xx status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusClass {
    /// 401, 403: bad or missing credentials; retrying will not help.
    Auth,
    /// 429: wait (as `retry-after` says) and try again.
    RateLimited,
    /// 413: the request is larger than the server takes.
    TooLarge,
    /// 408, 409, 425 and every 5xx (with 529, "overloaded"): worth retrying.
    Transient,
    /// Any other 4xx: the server refused the request itself.
    Refused,
    /// Anything else (1xx, 3xx): not a status an API answers with.
    Unexpected,
}

impl StatusClass {
    /// The class of `status`.
    pub fn of(status: u16) -> StatusClass {
        match status {
            401 | 403 => StatusClass::Auth,
            429 => StatusClass::RateLimited,
            413 => StatusClass::TooLarge,
            408 | 409 | 425 | 500..=599 => StatusClass::Transient,
            400..=499 => StatusClass::Refused,
            _ => StatusClass::Unexpected,
        }
    }

    /// The class as a span or log names it (`error.type`: `rate_limited`, `transient`...).
    pub fn name(self) -> &'static str {
        match self {
            StatusClass::Auth => "auth",
            StatusClass::RateLimited => "rate_limited",
            StatusClass::TooLarge => "too_large",
            StatusClass::Transient => "transient",
            StatusClass::Refused => "refused",
            StatusClass::Unexpected => "unexpected_status",
        }
    }
}

/// Whether `status` is a success (2xx).
pub fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_have_their_classes() {
        use StatusClass::*;
        let cases = [
            (401, Auth),
            (403, Auth),
            (429, RateLimited),
            (413, TooLarge),
            (408, Transient),
            (409, Transient),
            (425, Transient),
            (500, Transient),
            (503, Transient),
            (529, Transient),
            (400, Refused),
            (404, Refused),
            (422, Refused),
            (302, Unexpected),
        ];
        for (status, class) in cases {
            assert_eq!(StatusClass::of(status), class, "{status}");
        }
        assert!(is_success(200) && is_success(204) && !is_success(302) && !is_success(400));
    }
}
