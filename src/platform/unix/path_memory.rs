//! Where a program was found in `PATH`, remembered for a second: the next jobs' search
//! starts there (`LaunchPlan::start_child`, Linux, where the clone's child can tell the
//! parent which candidate it exec'd).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::search_path::DEFAULT_PATH;

/// How long a place a program was found in is tried first before the whole `PATH` is
/// searched again: a program put earlier in `PATH` is seen by the jobs started a second
/// later (a shell's `hash` table remembers until `hash -r`).
const REMEMBERED_FOR: Duration = Duration::from_secs(1);
/// Programs remembered at most (a few in practice: `bash`, the argv programs).
const MAX_REMEMBERED: usize = 64;

/// Where a program was found: its index among the candidates of its `PATH`, and when
/// the whole `PATH` was last searched for it.
struct Found {
    program: Vec<u8>,
    path: Vec<u8>,
    index: usize,
    searched_at: Instant,
}

static FOUND: Mutex<Vec<Found>> = Mutex::new(Vec::new());

/// Where `program` was found with `path` (the job's `PATH`, `None` for none) at most
/// `REMEMBERED_FOR` ago, as an index into its `candidates`. Tried first: the child's
/// search starts there instead of failing an `execve` in each directory before it
/// (`bash` is the tenth of twelve on the machine this was measured on, and each miss
/// cost 1.4–2 µs of the spawn's path, while the Node thread waits).
pub fn remembered(program: &[u8], path: Option<&[u8]>) -> Option<usize> {
    let path = path.unwrap_or(DEFAULT_PATH);
    let found = crate::base::sync::lock(&FOUND);
    found
        .iter()
        .find(|f| f.program == program && f.path == path)
        .filter(|f| f.searched_at.elapsed() < REMEMBERED_FOR)
        .map(|f| f.index)
}

/// Remembers that a whole search of `path` found `program` at `candidates[index]`.
/// Only a place no earlier candidate depends on the job's directory for: a relative
/// `PATH` entry ("", ".", "bin") names another file in each job's directory.
pub fn remember(program: &[u8], path: Option<&[u8]>, index: usize, candidates: &[impl AsRef<[u8]>]) {
    let Some(searched) = candidates.get(..=index) else {
        return;
    };
    if program.contains(&b'/') || !searched.iter().all(|c| c.as_ref().starts_with(b"/")) {
        return;
    }
    let path = path.unwrap_or(DEFAULT_PATH);
    let mut found = crate::base::sync::lock(&FOUND);
    found.retain(|f| !(f.program == program && f.path == path));
    if found.len() >= MAX_REMEMBERED {
        found.remove(0);
    }
    found.push(Found {
        program: program.to_vec(),
        path: path.to_vec(),
        index,
        searched_at: Instant::now(),
    });
}

/// The order the child tries `count` candidates in: the remembered one first, then all
/// the others in `PATH` order, so a remembered file since removed still leads to the
/// one `execvp` would find.
pub fn try_order(count: usize, first: Option<usize>) -> Vec<usize> {
    let first = first.filter(|&i| i < count);
    first
        .into_iter()
        .chain((0..count).filter(|&i| Some(i) != first))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::search_path::candidates;
    use super::{remember, remembered, try_order};

    #[test]
    fn the_remembered_candidate_is_tried_first_then_all_others_in_order() {
        assert_eq!(try_order(4, None), [0, 1, 2, 3]);
        assert_eq!(try_order(4, Some(2)), [2, 0, 1, 3]);
        assert_eq!(try_order(2, Some(5)), [0, 1]);
        assert_eq!(try_order(0, Some(0)), [] as [usize; 0]);
    }

    #[test]
    fn a_place_is_remembered_per_program_and_path_unless_it_depends_on_the_directory() {
        let path: &[u8] = b"/nonexistent/a:/nonexistent/b";
        let found = candidates(b"remembered-tool", Some(path));
        remember(b"remembered-tool", Some(path), 1, &found);
        assert_eq!(remembered(b"remembered-tool", Some(path)), Some(1));
        assert_eq!(remembered(b"remembered-tool", Some(b"/nonexistent/b")), None);
        assert_eq!(remembered(b"other-tool", Some(path)), None);
        // A relative entry before the place: each job's directory may hold another file.
        let relative: &[u8] = b"bin:/nonexistent/b";
        let found = candidates(b"remembered-tool", Some(relative));
        remember(b"remembered-tool", Some(relative), 1, &found);
        assert_eq!(remembered(b"remembered-tool", Some(relative)), None);
    }
}
