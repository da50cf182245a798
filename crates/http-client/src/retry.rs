//! The retry loop of an HTTP call: attempts with exponential backoff and jitter (backon),
//! retried only while the failure says it may pass, waiting what the server asked
//! (`retry-after`) up to a cap, else the computed delay up to another.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

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
    /// and the delay before the next attempt (for logs).
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
            .notify(|failure, delay| before_retry(failure, delay))
            .await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
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
}
