//! The retry loop of an HTTP call: attempts with exponential backoff and jitter (backon),
//! retried only while the failure says it may pass, waiting what the server asked
//! (`retry-after`) up to a cap, else the computed delay up to another. Each retry is also a
//! `retry` event on the current span (target [`SPAN_EVENTS`]), which the runner's trace
//! export sends as a span event of the LLM call's `chat` span (docs/observability.md).

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use crate::status::{is_success, StatusClass};
use crate::trace::SPAN_EVENTS;

/// How patiently a call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; it doubles per retry (with jitter) up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A server's `retry-after` is honoured up to this; longer waits are capped to it.
    pub max_retry_after: Duration,
}

/// What the retry loop needs to know of a failed attempt.
pub trait RetryableFailure {
    /// Whether trying again may succeed.
    fn is_retryable(&self) -> bool;
    /// The wait the server asked for, if it did.
    fn retry_after(&self) -> Option<Duration>;
    /// The HTTP status of the failed attempt; `None` when no reply came (a connection
    /// refused or cut, a timeout).
    fn status(&self) -> Option<u16>;
}

/// What went wrong with an attempt, as a retry event names it (`error.type`): the class of
/// its status (`rate_limited`, `transient`...), `transport` when no reply came,
/// `invalid_reply` when a 2xx reply could not be read.
pub fn retry_error_type(status: Option<u16>) -> &'static str {
    match status {
        None => "transport",
        Some(s) if is_success(s) => "invalid_reply",
        Some(s) => StatusClass::of(s).name(),
    }
}

/// Records a retry as an event of the current span: `attempt` (1-based) failed as `status`
/// says, and the next one starts after `delay`. Nothing of the failure's text (it may
/// quote a request).
fn retry_event(attempt: u32, status: Option<u16>, delay: Duration) {
    let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    tracing::event!(
        target: SPAN_EVENTS,
        tracing::Level::DEBUG,
        {
            planwright.retry.attempt = attempt,
            error.type = retry_error_type(status),
            http.response.status_code = status,
            planwright.retry.delay_ms = delay_ms,
        },
        "retry"
    );
}

impl RetryPolicy {
    fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_jitter()
            .with_factor(2.0)
            .with_min_delay(self.initial_backoff)
            .with_max_delay(self.max_backoff.max(self.initial_backoff))
            .with_max_times(usize::try_from(self.max_retries).unwrap_or(usize::MAX))
    }

    /// Runs `attempt` until it succeeds, fails for good, or the retries are used up (the
    /// last failure is returned). `before_retry` is told each failure about to be retried
    /// and the delay before the next attempt (for logs); each retry is also a `retry`
    /// event on the current span.
    pub async fn run<T, E, Fut>(
        &self,
        attempt: impl FnMut() -> Fut,
        mut before_retry: impl FnMut(&E, Duration),
    ) -> Result<T, E>
    where
        E: RetryableFailure,
        Fut: Future<Output = Result<T, E>>,
    {
        let max_backoff = self.max_backoff.max(self.initial_backoff);
        let max_retry_after = self.max_retry_after;
        let mut failed: u32 = 0;
        attempt
            .retry(self.backoff())
            .sleep(tokio::time::sleep)
            .when(RetryableFailure::is_retryable)
            .adjust(|failure: &E, computed| {
                // `None` means the retries are used up.
                let computed = computed?;
                Some(match failure.retry_after() {
                    Some(wait) => wait.min(max_retry_after),
                    None => computed.min(max_backoff),
                })
            })
            .notify(|failure, delay| {
                failed = failed.saturating_add(1);
                retry_event(failed, failure.status(), delay);
                before_retry(failure, delay);
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[derive(Debug, PartialEq)]
    struct Fail {
        retryable: bool,
        wait: Option<Duration>,
    }

    impl RetryableFailure for Fail {
        fn is_retryable(&self) -> bool {
            self.retryable
        }
        fn retry_after(&self) -> Option<Duration> {
            self.wait
        }
        fn status(&self) -> Option<u16> {
            Some(429)
        }
    }

    fn policy(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_retry_after: Duration::from_millis(5),
        }
    }

    #[tokio::test]
    async fn retries_what_may_pass_up_to_the_limit_and_caps_the_server_wait() {
        let calls = Cell::new(0);
        let mut delays = Vec::new();
        let result: Result<(), Fail> = policy(2)
            .run(
                || {
                    calls.set(calls.get() + 1);
                    async {
                        Err(Fail {
                            retryable: true,
                            wait: Some(Duration::from_secs(60)),
                        })
                    }
                },
                |_, delay| delays.push(delay),
            )
            .await;
        assert!(result.is_err());
        assert_eq!(calls.get(), 3);
        assert_eq!(delays, [Duration::from_millis(5); 2]);
    }

    #[tokio::test]
    async fn a_permanent_failure_is_not_retried_and_a_success_ends_it() {
        let calls = Cell::new(0);
        let result: Result<(), Fail> = policy(5)
            .run(
                || {
                    calls.set(calls.get() + 1);
                    async {
                        Err(Fail {
                            retryable: false,
                            wait: None,
                        })
                    }
                },
                |_, _| {},
            )
            .await;
        assert!(result.is_err());
        assert_eq!(calls.get(), 1);

        let calls = Cell::new(0);
        let result = policy(5)
            .run(
                || {
                    calls.set(calls.get() + 1);
                    let n = calls.get();
                    async move {
                        if n < 3 {
                            Err(Fail {
                                retryable: true,
                                wait: None,
                            })
                        } else {
                            Ok(n)
                        }
                    }
                },
                |_, _| {},
            )
            .await;
        assert_eq!(result, Ok(3));
    }

    #[test]
    fn a_retry_names_what_failed_by_its_class() {
        assert_eq!(retry_error_type(Some(429)), "rate_limited");
        assert_eq!(retry_error_type(Some(503)), "transient");
        assert_eq!(retry_error_type(Some(529)), "transient");
        assert_eq!(retry_error_type(None), "transport");
        assert_eq!(retry_error_type(Some(200)), "invalid_reply");
    }
}
