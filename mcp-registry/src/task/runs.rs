//! The runs of a registry's tasks in this process, as a store shared with other processes
//! sees them ([`TaskRuns`]): which tasks run here, and how what another process received for
//! one of them (a cancellation, answers to its input requests) reaches its run.

use std::sync::Weak;

use serde_json::{Map, Value};

use super::Tasks;
use crate::sync::MutexExt;

/// The tasks a registry runs in this process, handed to its store by
/// [`TaskStore::attach`](super::TaskStore::attach).
///
/// A task's run (its future, its cancellation, the answers it waits for) lives in the
/// process that started it; any process sharing the store may answer for the task. A store
/// shared across processes uses this handle to keep the runs here in step with what the
/// others did: it learns which tasks run here ([`running`](Self::running)), stops the run of
/// a task that ended elsewhere ([`stop`](Self::stop)) and hands a run the answers another
/// process received for it ([`deliver`](Self::deliver)). The handle does not keep the
/// registry alive.
#[derive(Clone)]
pub struct TaskRuns(pub(super) Weak<Tasks>);

impl std::fmt::Debug for TaskRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRuns")
            .field("alive", &self.is_alive())
            .finish()
    }
}

impl TaskRuns {
    /// Whether the registry is still there (once it is dropped, nothing runs here).
    pub fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }

    /// The ids of the tasks running in this process.
    pub fn running(&self) -> Vec<String> {
        self.0
            .upgrade()
            .map(|tasks| tasks.live.lock_unpoisoned().keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The task `id` ended elsewhere (cancelled through another process, failed, expired):
    /// its run here is stopped (its cancellation token fires, its future is dropped), and
    /// those following it here are told. The store keeps the record as the other process
    /// left it.
    pub fn stop(&self, id: &str) {
        let Some(tasks) = self.0.upgrade() else {
            return;
        };
        // The run, stopped, records its end (a no-op on an ended record: its status
        // notification still goes out) and leaves the live map itself.
        let cancel = tasks
            .live
            .lock_unpoisoned()
            .get(id)
            .map(|live| live.cancel.clone());
        if let Some(cancel) = cancel {
            cancel.cancel();
        }
    }

    /// Answers to the input requests of the task `id` running here, received by another
    /// process (which recorded them answered): handed to the asks waiting for them, by key.
    /// How many were waited for (answers to keys nothing waits for are dropped).
    pub fn deliver(&self, id: &str, answers: Map<String, Value>) -> usize {
        let Some(tasks) = self.0.upgrade() else {
            return 0;
        };
        let waiting = tasks
            .live
            .lock_unpoisoned()
            .get(id)
            .map(|live| live.input.clone());
        let Some(waiting) = waiting else {
            return 0;
        };
        answers
            .into_iter()
            .map(|(key, answer)| waiting.deliver(&key, answer))
            .filter(|delivered| *delivered)
            .count()
    }
}
