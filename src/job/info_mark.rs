//! Whether a finished job's last `info.json` has been written, for a result handed
//! over before it was.
//!
//! At a short job's exit, writing `info.json` (a write and a rename) is about 20 µs,
//! and waking the JS thread that waits for `run`'s result is 40 µs or more (another
//! core, asleep). A wait that asks for it (`WaitSpec::early`: the binding's `run`) is
//! therefore given its outcome before the file is written, with this mark: its caller
//! hands the result on only once the mark says written, so whoever reads the job's
//! folder at the result still finds its end there, and the two costs overlap instead
//! of adding up (src/binding/settle.rs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::base::sync::lock;

type Then = Box<dyn FnOnce() + Send>;

#[derive(Default)]
pub struct InfoMark {
    written: AtomicBool,
    then: Mutex<Vec<Then>>,
}

impl std::fmt::Debug for InfoMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfoMark").field("written", &self.is_written()).finish()
    }
}

impl InfoMark {
    pub fn is_written(&self) -> bool {
        self.written.load(Ordering::Acquire)
    }

    /// Runs `then` once the file is written: at once, on this thread, if it is;
    /// otherwise on the thread that writes it, right after.
    pub fn when_written(&self, then: Then) {
        let mut waiting = lock(&self.then);
        if self.is_written() {
            drop(waiting);
            then();
            return;
        }
        waiting.push(then);
    }

    fn set_written(&self) {
        let waiting = {
            let mut waiting = lock(&self.then);
            self.written.store(true, Ordering::Release);
            std::mem::take(&mut *waiting)
        };
        for then in waiting {
            then();
        }
    }
}

/// Holds a mark unwritten until dropped: the mark is set even if the writing panics,
/// so no result waits on it for ever.
pub struct Writing(pub Arc<InfoMark>);

impl Drop for Writing {
    fn drop(&mut self) {
        self.0.set_written();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn what_waits_runs_once_when_written_and_at_once_after() {
        let mark = Arc::new(InfoMark::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        mark.when_written(Box::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        drop(Writing(mark.clone()));
        assert!(mark.is_written());
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        let counted = runs.clone();
        mark.when_written(Box::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_writer_that_panics_still_marks_written() {
        let mark = Arc::new(InfoMark::default());
        let held = Writing(mark.clone());
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _held = held;
            panic!("a write that fails badly");
        }));
        assert!(result.is_err());
        assert!(mark.is_written());
    }
}
