//! What a sandboxed job may not read although it may read the rest of the file system:
//! the well-known credential stores of the user's home directories (`CREDENTIAL_STORES`),
//! the caller's `readDeny` paths and the service's own output folders (added by
//! `crate::service`). Each is a canonical absolute path, whether it exists or not: a
//! store made after the sandbox was resolved is left out too.
//!
//! Landlock only grants, so on Linux "everything but these" is built by walking down
//! from `/` along the hidden paths' ancestors and granting every other entry
//! (`readable_except`), once per resolved sandbox
//! (src/platform/linux/sandbox/hidden.rs applies it). An entry made later in a
//! directory that was walked (the home directory, `~/.config`...) is not readable by
//! that sandbox's jobs (fail closed) until a new sandbox is resolved: a new service, or
//! a run's own `sandbox` object.
//!
//! Whose home: the home of the service's user in the password database, the service
//! process's `$HOME` when it differs (a caller or a test may point it elsewhere; jobs
//! inherit it, and tools look for these files there) and `/root` (root's, whoever runs
//! the service). A job's own `HOME` (`env`) is not consulted: it names no more secrets
//! than the user's own.

use std::path::{Path, PathBuf};

/// Credential stores under a home directory, with what each holds: the files a job
/// with network could read and send, and no build or test needs (a run that does
/// names it in `readAllow`). Relative to the home directory.
pub const CREDENTIAL_STORES: &[(&str, &str)] = &[
    (".ssh", "SSH private keys, and the hosts they open"),
    (".gnupg", "GnuPG private keys"),
    (".aws", "AWS access keys (credentials, SSO tokens)"),
    (".azure", "Azure CLI tokens"),
    (".config/gcloud", "Google Cloud credentials and tokens"),
    (".kube", "Kubernetes cluster credentials"),
    (".docker/config.json", "Docker registry logins"),
    (".netrc", "logins curl, git and ftp send"),
    (".git-credentials", "git's stored HTTPS passwords and tokens"),
    (
        ".config/git/credentials",
        "git's stored HTTPS passwords and tokens (XDG place)",
    ),
    (".config/gh", "GitHub CLI tokens"),
    (".npmrc", "npm registry tokens (npm then runs with its defaults)"),
    (".pypirc", "PyPI upload tokens"),
    (".cargo/credentials", "crates.io publish tokens"),
    (".cargo/credentials.toml", "crates.io publish tokens"),
    (".gemini/oauth_creds.json", "the Gemini CLI's own login"),
    (".vault-token", "HashiCorp Vault token"),
    (".pgpass", "PostgreSQL passwords"),
    (".password-store", "pass, the password manager"),
    (".config/1Password", "1Password's data"),
    (".config/op", "1Password CLI's sessions"),
    (
        ".local/share/keyrings",
        "GNOME Keyring (passwords, secrets of other programs)",
    ),
    (".local/share/kwalletd", "KDE Wallet"),
    (".mozilla", "Firefox profiles: cookies, saved passwords, sessions"),
    (
        ".config/google-chrome",
        "Chrome profiles: cookies, saved passwords, sessions",
    ),
    (
        ".config/chromium",
        "Chromium profiles: cookies, saved passwords, sessions",
    ),
    (
        ".config/BraveSoftware",
        "Brave profiles: cookies, saved passwords, sessions",
    ),
    (
        ".config/microsoft-edge",
        "Edge profiles: cookies, saved passwords, sessions",
    ),
    (".bash_history", "shell history: tokens typed on command lines"),
    (".zsh_history", "shell history: tokens typed on command lines"),
    ("Library/Keychains", "macOS keychains"),
    ("Library/Cookies", "macOS cookies"),
    ("Library/Application Support/Google/Chrome", "Chrome profiles (macOS)"),
    ("Library/Application Support/Firefox", "Firefox profiles (macOS)"),
];

/// The home directories whose credential stores are hidden: the user's in the password
/// database, `$HOME` and `/root`, each canonical, without repeats.
pub fn homes() -> Vec<PathBuf> {
    let mut homes = Vec::new();
    if let Some(home) = env_home() {
        homes.push(home);
    }
    #[cfg(unix)]
    if let Some(home) = passwd_home() {
        homes.push(home);
    }
    homes.push(PathBuf::from("/root"));
    let mut unique: Vec<PathBuf> = Vec::new();
    for home in homes {
        let home = canonical_lenient(&home);
        if !unique.contains(&home) {
            unique.push(home);
        }
    }
    unique
}

/// Every credential store of every home, canonical.
pub fn credential_stores(homes: &[PathBuf]) -> Vec<PathBuf> {
    homes
        .iter()
        .flat_map(|home| CREDENTIAL_STORES.iter().map(move |(rel, _)| home.join(rel)))
        .map(|p| canonical_lenient(&p))
        .collect()
}

/// `$HOME` when it is an absolute path.
fn env_home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute())
}

/// The effective user's home in the password database.
#[cfg(unix)]
fn passwd_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: a plain struct the call fills; zeroed is a valid (empty) value.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffer and the struct outlive the call; `found` is set to `&pwd` or null.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string inside `buf`, which lives until here.
    let dir = unsafe { CStr::from_ptr(pwd.pw_dir) };
    let dir = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
    dir.is_absolute().then_some(dir)
}

/// `~` or `~/rest` as a path in the first home (`$HOME`, else the password database's);
/// anything else unchanged.
#[cfg_attr(not(unix), allow(dead_code))]
pub fn expand_home(path: &str) -> PathBuf {
    let rest = match path.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => return PathBuf::from(path),
    };
    match homes().into_iter().next() {
        Some(home) if rest.is_empty() => home,
        Some(home) => home.join(rest),
        None => PathBuf::from(path),
    }
}

/// `path` with its longest existing prefix made canonical (symlinks followed as they
/// are now) and the rest appended as named: what the path will be if it is made later.
pub fn canonical_lenient(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut here = path;
    loop {
        if let Ok(found) = here.canonicalize() {
            let mut out = found;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (here.parent(), here.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                here = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The platform's rules for a sandbox's hidden paths, made once, at its first job
/// (Linux: the descriptor of a Landlock ruleset, or why it could not be made). A cache
/// of what the sandbox's other fields say: two slots always compare equal.
#[derive(Default)]
pub struct LayerSlot(std::sync::OnceLock<Result<Option<Layer>, String>>);

#[cfg(unix)]
pub type Layer = std::os::fd::OwnedFd;
#[cfg(not(unix))]
pub type Layer = ();

impl LayerSlot {
    pub fn get_or_init(&self, make: impl FnOnce() -> Result<Option<Layer>, String>) -> &Result<Option<Layer>, String> {
        self.0.get_or_init(make)
    }
}

impl std::fmt::Debug for LayerSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "LayerSlot(made)"
        } else {
            "LayerSlot"
        })
    }
}

impl PartialEq for LayerSlot {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for LayerSlot {}

/// `path` is `dir` or lies beneath it (by components).
pub fn within(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

/// What may be read of `from` (a directory held open) with `hidden` left out: `from`
/// itself when no hidden path lies beneath it, else each of its entries that is not
/// hidden, going down into those that have a hidden path beneath. Entries are opened
/// from their directory's descriptor without following symlinks, and a symlink gets no
/// rule (it leads under another rule, or to what stays unreadable): a job's symlink in
/// the home directory cannot widen what is granted. `skip` leaves entries of `/` out
/// (`/dev`, which has rules of its own). Calls `grant` with each.
#[cfg(unix)]
pub fn readable_except(
    from: &super::Anchor,
    hidden: &[PathBuf],
    skip: &[&Path],
    grant: &mut dyn FnMut(&super::Anchor) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use rustix::fs::{openat, Dir, Mode, OFlags};
    let beneath = |p: &Path| hidden.iter().any(|h| h != p && within(h, p));
    if !beneath(from.path()) {
        return grant(from);
    }
    // A directory the service's user cannot list (another user's home, `/root` for
    // anyone but root) gets no rule: its jobs could not read it anyway (fail closed).
    let Ok(listing) = openat(
        from.fd(),
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Ok(());
    };
    let mut names = Vec::new();
    for entry in Dir::new(listing)? {
        // An entry that cannot be read gets no rule (fail closed).
        let Ok(entry) = entry else { break };
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            use std::os::unix::ffi::OsStrExt;
            names.push(std::ffi::OsStr::from_bytes(name).to_os_string());
        }
    }
    names.sort();
    for name in names {
        let path = from.path().join(&name);
        if hidden.contains(&path) || skip.contains(&path.as_path()) {
            continue;
        }
        // Gone since it was listed, or a symlink (ELOOP): no rule.
        let Ok(entry) = from.open_beneath(Path::new(&name)) else {
            continue;
        };
        if entry.is_dir() && beneath(&path) {
            readable_except(&entry, hidden, skip, grant)?;
        } else {
            grant(&entry)?;
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tail_is_kept_as_named_under_the_canonical_prefix() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(real.join("home")).expect("mkdir");
        std::os::unix::fs::symlink(real.join("home"), real.join("link")).expect("symlink");
        assert_eq!(canonical_lenient(&real.join("link/.ssh/id")), real.join("home/.ssh/id"));
    }

    #[test]
    fn everything_but_the_hidden_paths_is_granted_and_symlinks_get_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().canonicalize().expect("canonical");
        for d in [".ssh", ".config/gcloud", ".config/nvim", "src/app"] {
            std::fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        std::fs::write(home.join(".npmrc"), "x").expect("write");
        std::fs::write(home.join(".profile"), "x").expect("write");
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).expect("symlink");
        let hidden = vec![home.join(".ssh"), home.join(".config/gcloud"), home.join(".npmrc")];
        let from = super::super::Anchor::open(&home).expect("home");
        let mut granted = Vec::new();
        readable_except(&from, &hidden, &[], &mut |a| {
            granted.push(a.path().strip_prefix(&home).expect("inside").to_path_buf());
            Ok(())
        })
        .expect("walk");
        let want: Vec<PathBuf> = [".config/nvim", ".profile", "src"].iter().map(PathBuf::from).collect();
        assert_eq!(granted, want);
    }
}
