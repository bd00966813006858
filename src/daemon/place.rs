//! Where the daemon lives and how one daemon per socket is had: a directory of mode
//! 0700 owned by the user, a lock file held for the daemon's life, the socket.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// `$XDG_RUNTIME_DIR/native-shell-service/daemon.sock`, else
/// `<temp dir>/native-shell-service-<uid>/daemon.sock` (the clients use the same rule).
pub fn default_socket() -> PathBuf {
    crate::base::places::daemon_dir().join("daemon.sock")
}

/// Makes the socket's directory (mode 0700) or checks the one there: a real directory
/// (not a symlink) of this user with no group or other access. Fails closed: a
/// directory someone else controls could hold their socket in place of ours, and a
/// client would hand its commands to them.
pub fn prepare_dir(socket: &Path) -> Result<PathBuf, String> {
    let dir = socket
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| format!("socket path {} has no directory", socket.display()))?
        .to_path_buf();
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot make {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let uid = rustix::process::getuid().as_raw();
    if !meta.file_type().is_dir() {
        return Err(format!("{} is not a directory (a symlink is refused)", dir.display()));
    }
    if meta.uid() != uid {
        return Err(format!("{} belongs to uid {}, not {uid}", dir.display(), meta.uid()));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} has mode {:o}: group and others must have no access",
            dir.display(),
            meta.permissions().mode() & 0o777
        ));
    }
    Ok(dir)
}

/// The daemon's lock beside the socket, held (exclusively) for its life; `None` when
/// another daemon holds it. Closed on exec: a job must not inherit it, or a job that
/// outlived its daemon would keep the next one from starting.
pub fn take_lock(dir: &Path) -> Result<Option<File>, String> {
    let path = dir.join("daemon.lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}
