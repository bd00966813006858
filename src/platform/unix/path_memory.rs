//! Where a program was found in `PATH`, remembered for a second: the next jobs' search
//! starts there (`LaunchPlan::start_child`, Linux, where the clone's child can tell the
//! parent which candidate it exec'd).

use std::ffi::CString;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a place a program was found in is tried first before the whole `PATH` is
/// searched again: a program put earlier in `PATH` is seen by the jobs started a second
/// later (a shell's `hash` table remembers until `hash -r`).
const REMEMBERED_FOR: Duration = Duration::from_secs(1);
/// Searches remembered at most (a few in practice: `bash`, the argv programs).
const MAX_REMEMBERED: usize = 64;

/// Where a search found its program: the index among its candidates, and when the whole
/// list was last tried. A search is known by its candidates, which the program's name
/// and the job's `PATH` make (`search_path::candidates`), so nothing else is kept to
/// tell one from another, and a spawn copies nothing to ask.
struct Found {
    candidates: Vec<Vec<u8>>,
    index: usize,
    searched_at: Instant,
}

static FOUND: Mutex<Vec<Found>> = Mutex::new(Vec::new());

fn same(found: &[Vec<u8>], candidates: &[CString]) -> bool {
    found.len() == candidates.len() && found.iter().zip(candidates).all(|(f, c)| f[..] == *c.as_bytes())
}

/// Where the search of `candidates` found its program at most `REMEMBERED_FOR` ago, as
/// an index into them. Tried first: the child's search starts there instead of failing
/// an `execve` in each directory before it (`bash` is the tenth of twelve on the
/// machine this was measured on, and each miss cost 1.4–2 µs of the spawn's path, while
/// the Node thread waits).
pub fn remembered(candidates: &[CString]) -> Option<usize> {
    if candidates.len() < 2 {
        return None;
    }
    let found = crate::base::sync::lock(&FOUND);
    found
        .iter()
        .find(|f| same(&f.candidates, candidates))
        .filter(|f| f.searched_at.elapsed() < REMEMBERED_FOR)
        .map(|f| f.index)
}

/// Remembers that a whole search found its program at `candidates[index]`. Only a place
/// no candidate up to it depends on the job's directory for: a relative `PATH` entry
/// ("", ".", "bin") or program path names another file in each job's directory.
pub fn remember(candidates: &[CString], index: usize) {
    let Some(searched) = candidates.get(..=index) else {
        return;
    };
    if candidates.len() < 2 || !searched.iter().all(|c| c.as_bytes().starts_with(b"/")) {
        return;
    }
    let mut found = crate::base::sync::lock(&FOUND);
    found.retain(|f| !same(&f.candidates, candidates));
    if found.len() >= MAX_REMEMBERED {
        found.remove(0);
    }
    found.push(Found {
        candidates: candidates.iter().map(|c| c.as_bytes().to_vec()).collect(),
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
    use std::ffi::CString;

    use super::{remember, remembered, try_order};

    #[test]
    fn the_remembered_candidate_is_tried_first_then_all_others_in_order() {
        assert_eq!(try_order(4, None), [0, 1, 2, 3]);
        assert_eq!(try_order(4, Some(2)), [2, 0, 1, 3]);
        assert_eq!(try_order(2, Some(5)), [0, 1]);
        assert_eq!(try_order(0, Some(0)), [] as [usize; 0]);
    }

    fn candidates(program: &[u8], path: &[u8]) -> Vec<CString> {
        super::super::search_path::candidates(program, Some(path))
            .into_iter()
            .map(|c| CString::new(c).expect("no NUL"))
            .collect()
    }

    #[test]
    fn a_place_is_remembered_per_program_and_path_unless_it_depends_on_the_directory() {
        let path: &[u8] = b"/nonexistent/a:/nonexistent/b";
        let found = candidates(b"remembered-tool", path);
        remember(&found, 1);
        assert_eq!(remembered(&found), Some(1));
        assert_eq!(remembered(&candidates(b"remembered-tool", b"/nonexistent/b")), None);
        assert_eq!(remembered(&candidates(b"other-tool", path)), None);
        // A relative entry before the place: each job's directory may hold another file.
        let relative = candidates(b"remembered-tool", b"bin:/nonexistent/b");
        remember(&relative, 1);
        assert_eq!(remembered(&relative), None);
    }
}
