//! An entry's permission string as envd writes it: Go's `os.FileMode.String()` of what
//! `os.Lstat` gives, which is not `ls -l`'s. The kind and the special bits come first as
//! letters, in Go's fixed order, and only those that are set (none: `-`); then the nine
//! rwx bits, never altered by the special bits. So a file is `-rw-r--r--`, a directory
//! `drwxr-xr-x`, a symlink `Lrwxrwxrwx`, `/tmp` `dtrwxrwxrwx`, a setuid program
//! `urwxr-xr-x`, `/dev/null` `Dcrw-rw-rw-`. The SDKs show this string as it comes, so
//! the daemon writes the same.

// The `st_mode` bits, as POSIX fixes them (the same numbers on Linux and macOS, where
// libc's own constants differ in type: u32 and u16).
const S_IFMT: u32 = 0o170_000;
#[cfg(test)]
const S_IFREG: u32 = 0o100_000;
const S_IFSOCK: u32 = 0o140_000;
const S_IFLNK: u32 = 0o120_000;
const S_IFBLK: u32 = 0o060_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFIFO: u32 = 0o010_000;
const S_ISUID: u32 = 0o4000;
const S_ISGID: u32 = 0o2000;
const S_ISVTX: u32 = 0o1000;

/// Go's letters for the kinds and special bits, highest bit first, paired with the test
/// on a Linux `st_mode` that sets each (Go's `fillFileStatFromSys`): directory, symlink,
/// device (block or character), named pipe, socket, setuid, setgid, character device,
/// sticky. Go's other letters (`a`, `l`, `T`, `?`) have no Linux `st_mode` bit.
fn kind_letters(st_mode: u32) -> impl Iterator<Item = char> {
    let format = st_mode & S_IFMT;
    [
        ('d', format == S_IFDIR),
        ('L', format == S_IFLNK),
        ('D', format == S_IFBLK || format == S_IFCHR),
        ('p', format == S_IFIFO),
        ('S', format == S_IFSOCK),
        ('u', st_mode & S_ISUID != 0),
        ('g', st_mode & S_ISGID != 0),
        ('c', format == S_IFCHR),
        ('t', st_mode & S_ISVTX != 0),
    ]
    .into_iter()
    .filter_map(|(letter, set)| set.then_some(letter))
}

/// `st_mode` (type, special and permission bits) as Go's `FileMode.String()`.
pub fn go_mode_string(st_mode: u32) -> String {
    let mut out: String = kind_letters(st_mode).collect();
    if out.is_empty() {
        out.push('-');
    }
    for (i, letter) in "rwxrwxrwx".chars().enumerate() {
        let bit = 1 << (8 - i);
        out.push(if st_mode & bit != 0 { letter } else { '-' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_go_writes() {
        for (st_mode, expected) in [
            (S_IFREG | 0o644, "-rw-r--r--"),
            (S_IFREG, "----------"),
            (S_IFDIR | 0o755, "drwxr-xr-x"),
            (S_IFLNK | 0o777, "Lrwxrwxrwx"),
            (S_IFDIR | S_ISVTX | 0o777, "dtrwxrwxrwx"),
            (S_IFREG | S_ISUID | 0o755, "urwxr-xr-x"),
            (S_IFREG | S_ISUID | S_ISGID | 0o750, "ugrwxr-x---"),
            (S_IFDIR | S_ISGID | 0o2775 & 0o777, "dgrwxrwxr-x"),
            (S_IFCHR | 0o666, "Dcrw-rw-rw-"),
            (S_IFBLK | 0o660, "Drw-rw----"),
            (S_IFIFO | 0o600, "prw-------"),
            (S_IFSOCK | 0o755, "Srwxr-xr-x"),
        ] {
            assert_eq!(go_mode_string(st_mode), expected, "{st_mode:o}");
        }
    }
}
