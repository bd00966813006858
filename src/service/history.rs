//! Execution history (README.md, `getExecutionHistory`): every finished job, newest
//! first, capped.

use std::collections::VecDeque;

use crate::job::JobStatus;

pub const DEFAULT_HISTORY_LIMIT: usize = 1000;
/// How much of a job's output an entry keeps.
pub const OUTPUT_PREVIEW_BYTES: usize = 1024;

/// Also what a restart in place carries of an ended job (src/service/carry.rs).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub handle: u32,
    pub command: String,
    pub args: Option<Vec<String>>,
    pub directory: String,
    pub status: JobStatus,
    pub started_at: u64,
    pub duration_ms: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub output: String,
}

pub struct History {
    entries: VecDeque<HistoryEntry>,
    limit: usize,
}

impl History {
    pub fn new(limit: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            limit,
        }
    }

    pub fn record(&mut self, entry: HistoryEntry) {
        if self.limit == 0 {
            return;
        }
        self.entries.push_front(entry);
        self.entries.truncate(self.limit);
    }

    /// Newest first; `limit` of `None` means all.
    pub fn list(&self, limit: Option<usize>) -> Vec<HistoryEntry> {
        self.entries.iter().take(limit.unwrap_or(usize::MAX)).cloned().collect()
    }

    pub fn clear(&mut self) -> usize {
        let n = self.entries.len();
        self.entries.clear();
        n
    }
}

/// The first `max` bytes of `text`, cut on a character boundary.
pub fn preview(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(handle: u32) -> HistoryEntry {
        HistoryEntry {
            handle,
            command: format!("cmd {handle}"),
            args: None,
            directory: ".".into(),
            status: JobStatus::Exited,
            started_at: 0,
            duration_ms: 0,
            exit_code: Some(0),
            signal: None,
            error: None,
            output: String::new(),
        }
    }

    #[test]
    fn newest_first_and_capped() {
        let mut h = History::new(3);
        for i in 1..=5 {
            h.record(entry(i));
        }
        let handles: Vec<u32> = h.list(None).iter().map(|e| e.handle).collect();
        assert_eq!(handles, vec![5, 4, 3]);
        assert_eq!(h.list(Some(1)).len(), 1);
        assert_eq!(h.clear(), 3);
        assert!(h.list(None).is_empty());
    }

    #[test]
    fn preview_cuts_on_char_boundary() {
        assert_eq!(preview("€€", 4), "€");
    }
}
