//! Where a program name is looked for, as `execvp` does it, but with the job's own
//! `PATH` (a caller's `env.PATH` must decide which `python3` runs, not the host's).

/// Used when the job's environment has no `PATH` at all (glibc's default).
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// The paths to try, in order. A name with a slash is a path itself (relative ones
/// are resolved in the job's directory, where the exec happens); an empty `PATH`
/// entry means the current directory.
pub fn candidates(program: &[u8], path: Option<&[u8]>) -> Vec<Vec<u8>> {
    if program.contains(&b'/') {
        return vec![program.to_vec()];
    }
    if program.is_empty() {
        // execve("") fails with ENOENT, which is the right error to report.
        return vec![Vec::new()];
    }
    path.unwrap_or(DEFAULT_PATH)
        .split(|&b| b == b':')
        .map(|dir| {
            let dir = if dir.is_empty() { &b"."[..] } else { dir };
            let mut full = Vec::with_capacity(dir.len() + 1 + program.len());
            full.extend_from_slice(dir);
            if !dir.ends_with(b"/") {
                full.push(b'/');
            }
            full.extend_from_slice(program);
            full
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::candidates;

    fn strings(v: Vec<Vec<u8>>) -> Vec<String> {
        v.into_iter()
            .map(|p| String::from_utf8(p).unwrap_or_default())
            .collect()
    }

    #[test]
    fn a_name_is_searched_in_each_directory_in_order() {
        assert_eq!(
            strings(candidates(b"python3", Some(b"/opt/py/bin:/usr/bin/:"))),
            ["/opt/py/bin/python3", "/usr/bin/python3", "./python3"]
        );
    }

    #[test]
    fn a_path_is_taken_as_it_is() {
        assert_eq!(strings(candidates(b"./run.sh", Some(b"/usr/bin"))), ["./run.sh"]);
        assert_eq!(strings(candidates(b"/bin/true", None)), ["/bin/true"]);
    }

    #[test]
    fn no_path_means_the_default_one() {
        assert_eq!(strings(candidates(b"ls", None)), ["/bin/ls", "/usr/bin/ls"]);
    }
}
