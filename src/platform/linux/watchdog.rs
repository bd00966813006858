//! The last line of defence against orphans: a tiny watcher process per Node process.
//!
//! Exit hooks cover a normal exit, but a host killed by SIGKILL (or dying of a signal
//! it does not handle) runs no code. A PTY hang-up does not reach `setsid` children,
//! and pipe jobs have no terminal at all. So a watcher holds the read end of a pipe
//! whose only writer is this process: when the host dies, for any reason, the kernel
//! closes the write end, the watcher reads EOF, kills everything in this host's parent
//! cgroup (every contained job, however its processes detached: `super::cgroup`) and
//! every process carrying this host's owner marker in its environment (jobs that could
//! not be contained), then removes the emptied cgroups.
//!
//! A job no cgroup holds is found by its marker and by descent: its first process is a
//! subreaper (`crate::platform::unix::launch`), so what detached from it with a cleared
//! environment is still below it. The marked processes are stopped first, so none
//! exits and hands its children on to init while the tree is read.
//!
//! The watcher is `bash` running a fixed script; the token and the cgroup path reach it
//! as arguments, never spliced into the script. It is started the plain way, so it
//! stays in Node's cgroup, outside the subtree it kills. It ignores SIGINT and SIGHUP (a Ctrl-C or a closed
//! terminal aimed at the host must not kill the watcher first) and runs in its own
//! session.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::platform::{JOB_MARKER, OWNER_MARKER};

const SCRIPT: &str = r#"
trap '' INT HUP
read -r _
[ -n "$2" ] && echo 1 2>/dev/null >"$2/cgroup.kill"
tree() {
  local -A set=()
  local p f line rest grew=1
  for p in "$@"; do set[$p]=1; done
  while [ "$grew" = 1 ]; do
    grew=0
    for f in /proc/[0-9]*/stat; do
      read -r line 2>/dev/null <"$f" || continue
      p=${line%% *}; rest=${line##*) }; rest=${rest#* }
      if [ -n "${set[${rest%% *}]}" ] && [ -z "${set[$p]}" ]; then set[$p]=1; grew=1; fi
    done
  done
  echo "${!set[@]}"
}
for round in 1 2 3 4 5; do
  pids=$(grep -lsxzF -- "$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
  [ -z "$pids" ] && break
  kill -STOP $pids 2>/dev/null
  kill -KILL $(tree $pids) 2>/dev/null
  sleep 0.05
done
[ -n "$2" ] || exit 0
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  rmdir "$2"/*/ "$2" 2>/dev/null
  [ -d "$2" ] || exit 0
  sleep 0.05
done
"#;

struct Watchdog {
    /// Held open for the life of the process; closing it is the signal.
    _write_end: OwnedFd,
}

static WATCHDOG: OnceLock<Mutex<Option<Watchdog>>> = OnceLock::new();

/// Starts the watcher for `owner_entry` (`NATIVE_SHELL_OWNER=<token>`) once.
pub fn ensure_started(owner_entry: &str) {
    let slot = WATCHDOG.get_or_init(|| Mutex::new(None));
    let Ok(mut guard) = slot.lock() else { return };
    if guard.is_none() {
        // Without a watcher jobs still die on a normal exit; only the crash path is lost.
        *guard = start(owner_entry).ok();
    }
}

/// The watcher's pipe (its write end), while one runs: a restart in place
/// (src/daemon/upgrade/) keeps it open across the exec, or the watcher would read the
/// exec's close as this process's death and kill every job the restart carries.
pub fn write_fd() -> Option<std::os::fd::RawFd> {
    use std::os::fd::AsRawFd;
    let guard = WATCHDOG.get()?.lock().ok()?;
    guard.as_ref().map(|w| w._write_end.as_raw_fd())
}

/// Takes back the watcher of this process's previous image (its pipe's write end,
/// inherited across a restart in place): the same watcher guards the carried jobs
/// and the ones started from now on, with the same owner marker.
pub fn adopt(write_end: OwnedFd) {
    let slot = WATCHDOG.get_or_init(|| Mutex::new(None));
    if let Ok(mut guard) = slot.lock() {
        if guard.is_none() {
            *guard = Some(Watchdog { _write_end: write_end });
        }
    }
}

fn start(owner_entry: &str) -> io::Result<Watchdog> {
    let (read_end, write_end) = crate::platform::unix::pipes::pipe_pair()?;
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(SCRIPT)
        .arg("native-shell-watchdog")
        .arg(owner_entry)
        .arg(super::cgroup::parent().map(|p| p.as_os_str()).unwrap_or_default())
        .env_remove(JOB_MARKER)
        .env_remove(OWNER_MARKER)
        .stdin(Stdio::from(read_end))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    cmd.spawn()?;
    Ok(Watchdog { _write_end: write_end })
}
