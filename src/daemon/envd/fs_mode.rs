//! An entry's permission string as envd writes it: Go's `os.FileMode.String()` of what
//! `os.Lstat` gives, which is not `ls -l`'s. The kind and the special bits come first as
//! letters, in Go's fixed order, and only those that are set (none: `-`); then the nine
//! rwx bits, never altered by the special bits. So a file is `-rw-r--r--`, a directory
//! `drwxr-xr-x`, a symlink `Lrwxrwxrwx`, `/tmp` `dtrwxrwxrwx`, a setuid program
//! `urwxr-xr-x`, `/dev/null` `Dcrw-rw-rw-`. The SDKs show this string as it comes, so
//! the daemon writes the same.

/// Go's letters for the kinds and special bits, highest bit first, paired with the test
/// on a Linux `st_mode` that sets each (Go's `fillFileStatFromSys`): directory, symlink,
/// device (block or character), named pipe, socket, setuid, setgid, character device,
/// sticky. Go's other letters (`a`, `l`, `T`, `?`) have no Linux `st_mode` bit.
fn kind_letters(st_mode: u32) -> impl Iterator<Item = char> {
    let format = st_mode & libc::S_IFMT;
    [
        ('d', format == libc::S_IFDIR),
        ('L', format == libc::S_IFLNK),
        ('D', format == libc::S_IFBLK || format == libc::S_IFCHR),
        ('p', format == libc::S_IFIFO),
        ('S', format == libc::S_IFSOCK),
        ('u', st_mode & libc::S_ISUID != 0),
        ('g', st_mode & libc::S_ISGID != 0),
        ('c', format == libc::S_IFCHR),
        ('t', st_mode & libc::S_ISVTX != 0),
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
    use super::go_mode_string;

    #[test]
    fn writes_what_go_writes() {
        for (st_mode, expected) in [
            (libc::S_IFREG | 0o644, "-rw-r--r--"),
            (libc::S_IFREG, "----------"),
            (libc::S_IFDIR | 0o755, "drwxr-xr-x"),
            (libc::S_IFLNK | 0o777, "Lrwxrwxrwx"),
            (libc::S_IFDIR | libc::S_ISVTX | 0o777, "dtrwxrwxrwx"),
            (libc::S_IFREG | libc::S_ISUID | 0o755, "urwxr-xr-x"),
            (libc::S_IFREG | libc::S_ISUID | libc::S_ISGID | 0o750, "ugrwxr-x---"),
            (libc::S_IFDIR | libc::S_ISGID | 0o2775 & 0o777, "dgrwxrwxr-x"),
            (libc::S_IFCHR | 0o666, "Dcrw-rw-rw-"),
            (libc::S_IFBLK | 0o660, "Drw-rw----"),
            (libc::S_IFIFO | 0o600, "prw-------"),
            (libc::S_IFSOCK | 0o755, "Srwxr-xr-x"),
        ] {
            assert_eq!(go_mode_string(st_mode), expected, "{st_mode:o}");
        }
    }
}
