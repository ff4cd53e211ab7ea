//! Running blocking work from a tool without stalling the runtime or outliving the timeout.

/// Runs `work` on Tokio's blocking thread pool and waits for it, so a tool that does
/// blocking I/O or long CPU work neither stalls the async runtime nor ignores the call's
/// timeout and cancellation.
///
/// Rust cannot stop a running thread: when the call times out or is cancelled, the caller
/// gets its answer ([`CallError::Timeout`](crate::CallError::Timeout) or
/// [`CallError::Cancelled`](crate::CallError::Cancelled)) at once, while `work` goes on
/// until it returns and its result is discarded. A panic in `work` is the call's panic
/// (reported as [`CallError::Panicked`](crate::CallError::Panicked)). Outside a Tokio
/// runtime `work` runs in place.
///
/// `#[mcp_tool(blocking)]` on a plain `fn` does the same for the whole function.
///
/// ```
/// use mcp_registry::{mcp_tool, run_blocking};
///
/// /// Count the lines of a file.
/// #[mcp_tool(read_only)]
/// async fn count_lines(path: String) -> Result<String, String> {
///     let text = run_blocking(move || std::fs::read_to_string(path))
///         .await
///         .map_err(|e| e.to_string())?;
///     Ok(text.lines().count().to_string())
/// }
/// ```
pub async fn run_blocking<T, F>(work: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(e) => match e.try_into_panic() {
            Ok(payload) => std::panic::resume_unwind(payload),
            // The runtime is shutting down: nothing will ever answer this call.
            Err(_) => std::future::pending().await,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    #[test]
    fn outside_a_runtime_the_work_runs_in_place() {
        let mut fut = pin!(super::run_blocking(|| 7));
        let mut cx = Context::from_waker(Waker::noop());
        assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(7));
    }
}
