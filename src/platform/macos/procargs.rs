//! The layout of what `sysctl(KERN_PROCARGS2)` returns for a process: how macOS lets a
//! process read another's command line and environment (the same user's, or any as
//! root). The process tree reads the job marker from it. Plain parsing, so its tests
//! also run in Linux test builds.
//!
//! The buffer holds, in order:
//! - `argc`, a native-endian 32-bit integer;
//! - the executable's path, NUL-terminated, then NUL bytes that pad it;
//! - `argc` NUL-terminated arguments;
//! - the environment's `NAME=value` strings, each NUL-terminated;
//! - strings the kernel adds for the loader (`executable_path=…`, `ptr_munge=…`: none is
//!   named like the crate's markers), and possibly NUL bytes up to the buffer's end.
//!
//! The environment is the one the program was started with (its exec), as Linux's
//! `/proc/<pid>/environ` shows it. The kernel leaves it out, and stops after the
//! arguments, for processes whose code signature marks them restricted (docs/macos.md).
//!
//! One ambiguity is not resolved: an empty first argument cannot be told from the
//! path's padding, so the arguments are then read one string late and the last one is
//! taken for the environment's first entry. Nothing starts a job's program that way.

/// The first environment entry named `name` (the whole `name=value`), as `getenv`
/// would find it; `None` when there is none, the environment was left out, or the
/// buffer is not of this layout.
pub fn env_entry<'a>(procargs: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let argc = i32::from_ne_bytes(procargs.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let rest = procargs.get(4..)?;
    // The executable's path, then the NUL bytes after it.
    let path_end = rest.iter().position(|&b| b == 0)?;
    let rest = &rest[path_end..];
    let first_argument = rest.iter().position(|&b| b != 0)?;
    let mut strings = rest[first_argument..].split(|&b| b == 0);
    for _ in 0..argc {
        strings.next()?;
    }
    let name = name.as_bytes();
    strings.find(|entry| entry.len() > name.len() && entry.starts_with(name) && entry[name.len()] == b'=')
}

#[cfg(test)]
mod tests {
    use super::env_entry;
    use proptest::prelude::*;

    fn procargs(argc: i32, strings: &[&str]) -> Vec<u8> {
        let mut buf = argc.to_ne_bytes().to_vec();
        for (i, s) in strings.iter().enumerate() {
            buf.extend_from_slice(s.as_bytes());
            buf.push(0);
            if i == 0 {
                // The path's padding.
                buf.extend_from_slice(&[0, 0, 0]);
            }
        }
        buf.extend_from_slice(&[0; 16]);
        buf
    }

    #[test]
    fn finds_the_first_entry_in_the_environment_and_never_in_the_arguments() {
        let buf = procargs(
            3,
            &[
                "/bin/sleep",
                "sleep",
                "NATIVE_SHELL_JOB=an.argument",
                "60",
                "PATH=/usr/bin:/bin",
                "NATIVE_SHELL_JOBS=another.name",
                "NATIVE_SHELL_JOB=abc123.7",
                "NATIVE_SHELL_JOB=second.8",
                "executable_path=/bin/sleep",
            ],
        );
        assert_eq!(
            env_entry(&buf, "NATIVE_SHELL_JOB"),
            Some(&b"NATIVE_SHELL_JOB=abc123.7"[..])
        );
        assert_eq!(env_entry(&buf, "PATH"), Some(&b"PATH=/usr/bin:/bin"[..]));
        assert_eq!(env_entry(&buf, "HOME"), None);
    }

    #[test]
    fn an_environment_left_out_finds_nothing() {
        let buf = procargs(2, &["/usr/bin/restricted", "restricted", "NATIVE_SHELL_JOB=x.1"]);
        assert_eq!(env_entry(&buf, "NATIVE_SHELL_JOB"), None);
    }

    #[test]
    fn an_entry_with_an_empty_value_is_found_but_a_bare_name_is_not() {
        let buf = procargs(1, &["/bin/sh", "sh", "NATIVE_SHELL_JOB", "NATIVE_SHELL_JOB="]);
        assert_eq!(env_entry(&buf, "NATIVE_SHELL_JOB"), Some(&b"NATIVE_SHELL_JOB="[..]));
    }

    #[test]
    fn buffers_of_another_shape_find_nothing() {
        assert_eq!(env_entry(b"", "A"), None);
        assert_eq!(env_entry(&[1, 0, 0], "A"), None);
        assert_eq!(env_entry(&procargs(-1, &["/bin/sh", "A=1"]), "A"), None);
        assert_eq!(env_entry(&procargs(5, &["/bin/sh", "sh", "A=1"]), "A"), None);
        // A path with no end.
        let mut buf = 1i32.to_ne_bytes().to_vec();
        buf.extend_from_slice(b"/bin/sh");
        assert_eq!(env_entry(&buf, "A"), None);
    }

    proptest! {
        #[test]
        fn any_bytes_are_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = env_entry(&bytes, "NATIVE_SHELL_JOB");
        }
    }
}
