//! The last line of defence against orphans on macOS: a tiny watcher process per Node
//! process, as on Linux (src/platform/linux/watchdog.rs).
//!
//! Exit hooks cover a normal exit, but a host killed by SIGKILL (or dying of a signal it
//! does not handle) runs no code. So a watcher holds the read end of a pipe whose only
//! writer is this process: when the host dies, however it dies, the kernel closes the
//! write end, the watcher reads end of file and kills every process carrying this
//! host's owner marker in its environment. (A pipe's end of file says as much as a
//! kqueue's NOTE_EXIT on the host would, and a shell can wait for it.)
//!
//! macOS has no `/proc`, so the environments are read with the system's `ps -E`, which
//! prints each process's environment after its arguments: the environment the process
//! was started with, taken from the kernel as `procargs.rs` describes. The watcher is
//! `/bin/sh` running a fixed script with `ps` and `awk`. It ignores SIGINT and SIGHUP (a
//! Ctrl-C or a closed terminal aimed at the host must not kill the watcher first) and
//! runs in its own process group.
//!
//! The owner entry reaches the watcher as the first line written to the pipe, never as
//! an argument or in its environment, so neither the watcher nor its `ps` and `awk`
//! carry it and the search cannot find them.
//!
//! What it finds: the processes (of this user; of any, where `ps` may read them) whose
//! `ps -E` line holds the owner entry `NATIVE_SHELL_OWNER=<token>` as a whole word. What
//! it misses: a process started with an environment that dropped the entry (as on
//! Linux), and processes whose code signature marks them restricted, whose environment
//! the kernel does not show. A process that names the entry in its arguments would be
//! taken too; only a program that knows the host's random token can do that.
//!
//! The script and filter need nothing of macOS but `ps`'s flag that adds environments,
//! so Linux test builds run them with procps' equivalent (`e`).

use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::platform::{JOB_MARKER, OWNER_MARKER};

/// `$1`: `ps`'s flag that adds each process's environment; `$2`: the awk filter below;
/// `$3`: the owner marker's name. The first line on stdin is the owner entry; end of
/// file on stdin means the host is gone.
const SCRIPT: &str = r#"
trap '' INT HUP
PATH=/bin:/usr/bin
export PATH
IFS= read -r entry || exit 0
case $entry in
  "$3"=?*) ;;
  *) exit 0 ;;
esac
while IFS= read -r _; do :; done
for round in 1 2 3 4 5; do
  pids=$(ps -A "$1" -ww -o pid= -o command= 2>/dev/null | awk -v entry="$entry" "$2")
  [ -z "$pids" ] && exit 0
  kill -KILL $pids 2>/dev/null
  sleep 0.05
done
"#;

/// Prints the pid of each `ps` line (pid, then the command, its arguments and its
/// environment, separated by spaces) that holds `entry` as a whole word.
const FILTER: &str = r#"index($0 " ", " " entry " ") > 0 { print $1 }"#;

/// The flag of macOS's `ps` that adds each process's environment to its command.
const PS_ENVIRONMENT: &str = "-E";

struct Watchdog {
    /// Held open for the life of the process; closing it is the signal.
    _write_end: std::fs::File,
}

static WATCHDOG: OnceLock<Mutex<Option<Watchdog>>> = OnceLock::new();

/// Starts the watcher for `owner_entry` (`NATIVE_SHELL_OWNER=<token>`) once.
pub fn ensure_started(owner_entry: &str) {
    let slot = WATCHDOG.get_or_init(|| Mutex::new(None));
    let Ok(mut guard) = slot.lock() else { return };
    if guard.is_none() {
        // Without a watcher jobs still die on a normal exit; only the crash path is lost.
        *guard = start(owner_entry, PS_ENVIRONMENT).ok();
    }
}

/// An entry the script can match safely: the owner marker's name, `=`, and a token of
/// letters, digits, `.`, `_` or `-` (an empty or spaced one would match far too much).
fn valid_entry(entry: &str) -> bool {
    entry
        .strip_prefix(OWNER_MARKER)
        .and_then(|rest| rest.strip_prefix('='))
        .is_some_and(|token| {
            !token.is_empty()
                && token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
        })
}

fn start(owner_entry: &str, environment_flag: &str) -> io::Result<Watchdog> {
    if !valid_entry(owner_entry) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the owner entry is not of the expected form",
        ));
    }
    let (read_end, write_end) = crate::platform::unix::pipes::pipe_pair()?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(SCRIPT)
        .arg("native-shell-watchdog")
        .arg(environment_flag)
        .arg(FILTER)
        .arg(OWNER_MARKER)
        .env_remove(JOB_MARKER)
        .env_remove(OWNER_MARKER)
        .stdin(Stdio::from(read_end))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    cmd.spawn()?;
    let mut write_end = std::fs::File::from(write_end);
    // One short line: the pipe's buffer takes it at once. Should the write fail, the
    // watcher reads end of file first and exits having killed nothing.
    write_end.write_all(format!("{owner_entry}\n").as_bytes())?;
    Ok(Watchdog { _write_end: write_end })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn only_a_marker_entry_with_a_plain_token_is_accepted() {
        assert!(valid_entry(&format!("{OWNER_MARKER}=0123abcd")));
        assert!(!valid_entry(&format!("{OWNER_MARKER}=")));
        assert!(!valid_entry(&format!("{OWNER_MARKER}=a b")));
        assert!(!valid_entry(&format!("{OWNER_MARKER}0=abc")));
        assert!(!valid_entry("PATH=/bin"));
        assert!(!valid_entry(""));
    }

    fn filter(entry: &str, lines: &str) -> String {
        let mut awk = Command::new("awk")
            .arg("-v")
            .arg(format!("entry={entry}"))
            .arg(FILTER)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("awk");
        awk.stdin
            .take()
            .expect("stdin")
            .write_all(lines.as_bytes())
            .expect("write");
        let out = awk.wait_with_output().expect("awk output");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn the_filter_takes_whole_words_only() {
        let entry = format!("{OWNER_MARKER}=feed01");
        let lines = format!(
            "  101 /bin/sleep 60 PATH=/bin {entry} HOME=/x\n\
             \x20 102 sleep 1 {entry}\n\
             \x20 103 sleep 1 {entry}2\n\
             \x20 104 sleep 1 X{entry}\n\
             \x20 105 awk -v entry={entry} prog\n\
             \x20 106 sleep 1 {OWNER_MARKER}=other\n"
        );
        assert_eq!(filter(&entry, &lines), "101\n102\n");
    }

    fn sleeper(owner: &str) -> std::process::Child {
        Command::new("sleep")
            .arg("30")
            .env(OWNER_MARKER, owner)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sleep")
    }

    fn exited_within(child: &mut std::process::Child, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// procps' flag for what macOS's `ps` calls `-E`.
    #[cfg(not(target_os = "macos"))]
    const TEST_PS_ENVIRONMENT: &str = "e";
    #[cfg(target_os = "macos")]
    const TEST_PS_ENVIRONMENT: &str = PS_ENVIRONMENT;

    /// The whole watcher (on Linux with procps' `e` for macOS's `-E`): when its pipe
    /// closes (the host is gone) it kills the processes carrying its entry, and only
    /// those.
    #[test]
    fn the_watcher_kills_the_owners_processes_when_the_pipe_closes() {
        let token = format!("t{}", std::process::id());
        let mut owned = sleeper(&token);
        let mut other = sleeper(&format!("{token}x"));
        let watchdog = start(&format!("{OWNER_MARKER}={token}"), TEST_PS_ENVIRONMENT).expect("start");
        // Nothing happens while the host lives.
        assert!(!exited_within(&mut owned, Duration::from_millis(300)));
        drop(watchdog);
        assert!(
            exited_within(&mut owned, Duration::from_secs(10)),
            "the owner's process survived"
        );
        assert!(
            !exited_within(&mut other, Duration::from_millis(200)),
            "another owner's process was killed"
        );
        let _ = other.kill();
        let _ = other.wait();
    }
}
