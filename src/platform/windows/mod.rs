//! Windows: every job in a Job Object of its own (created suspended, assigned, resumed:
//! `launch`), so `kill` ends the whole tree and every job dies with Node however Node
//! dies; PTY jobs on a pseudoconsole (`conpty`), pipes jobs on anonymous pipes read by a
//! thread each (`pipes`); exits and the end of a PTY job's processes awaited in the
//! system thread pool (`signaled`).
//!
//! What does not hold as on Linux (docs/windows.md): no polite ending (kill terminates
//! the Job Object at once), no input detection (`Terminal::input_state` is always the
//! default), `backgroundPids` is always empty (as the seeds specify for Windows).

mod child;
mod conpty;
mod directory;
pub mod job_object;
mod launch;
mod pipes;
mod processes;
mod signaled;

use std::io;
use std::sync::Arc;

pub use child::ChildProcess;
pub use conpty::Terminal;
pub use directory::{open_directory, opened_path};
pub use pipes::{PipeReader, PipeWriter};
pub use processes::{
    background_roots, containment_mode, detached_roots, end_processes, group_exists, is_alive, job_processes,
    program_name, start_ticks, Containment, ProcInfo, Snapshot,
};

use crate::platform::{Mode, SpawnSpec, Spawned};

/// Starts the job's process in a new Job Object. Must run inside a tokio runtime.
pub fn spawn(spec: &SpawnSpec<'_>) -> io::Result<Spawned> {
    // Admission refuses a sandbox here (`platform::sandbox_support`); never run one
    // unconfined should a caller get past it.
    if spec.sandbox.is_some() {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "no sandbox on Windows"));
    }
    let job = Arc::new(job_object::JobTree::new()?);
    let (child, pid, io) = match spec.mode {
        Mode::Pty => conpty::spawn(spec, &job)?,
        Mode::Pipes => pipes::spawn(spec, &job)?,
    };
    Ok(Spawned {
        child,
        pid,
        io,
        containment: Containment::new(job, pid),
    })
}

pub mod watchdog {
    //! Nothing to start on Windows: each job's Job Object is made with
    //! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` and its only handles are Node's, so when Node
    //! dies, however it dies, the kernel closes them and ends every job's processes.

    pub fn ensure_started(_owner_entry: &str) {}
}

#[cfg(test)]
mod tests {
    //! The backend driven directly, with cmd.exe: what the Node suite (__test__/windows)
    //! cannot see from JavaScript.

    use std::ffi::OsString;
    use std::fs::File;
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::platform::{Ending, JobIdentity, ProcessIo, Read, ReadBuffer};

    /// Long enough for Wine, which starts processes slowly.
    const WITHIN: Duration = Duration::from_secs(30);

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// A temporary working directory, opened as the service opens one.
    fn workdir() -> (tempfile::TempDir, PathBuf, File) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().canonicalize().expect("canonical path");
        let handle = open_directory(&path).expect("open the directory");
        (tmp, path, handle)
    }

    /// `cmd.exe /d /s /c "<line>"`, as `crate::job::spawn::command` writes it.
    fn cmd(line: &str, cwd: &(tempfile::TempDir, PathBuf, File), mode: Mode) -> io::Result<Spawned> {
        spawn(&SpawnSpec {
            program: "cmd.exe".into(),
            args: ["/d", "/s", "/c", &format!("\"{line}\"")].map(OsString::from).to_vec(),
            env: std::env::vars_os().collect(),
            cwd: &cwd.1,
            cwd_handle: &cwd.2,
            mode,
            cols: 80,
            rows: 24,
            sandbox: None,
            spare_pty: &crate::platform::SparePty,
        })
    }

    #[test]
    fn a_pty_job_reaches_eof_once_its_processes_are_gone() {
        let dir = workdir();
        runtime().block_on(async {
            let spawned = cmd("exit 5", &dir, Mode::Pty).expect("spawn");
            let ProcessIo::Pty(terminal) = spawned.io else {
                panic!("a PTY job has a terminal")
            };
            let mut child = spawned.child;
            let exit = tokio::time::timeout(WITHIN, child.wait())
                .await
                .expect("exits")
                .expect("wait");
            assert_eq!(exit.code, Some(5));
            assert_eq!(exit.signal, None);
            // The pseudoconsole is closed once the job is empty, so its output ends.
            let mut buf = ReadBuffer::new();
            let eof = tokio::time::timeout(WITHIN, async {
                while let Read::Data(_) = terminal.read(&mut buf).await {}
            })
            .await;
            assert!(eof.is_ok(), "no EOF from the pseudoconsole after the job ended");
            assert_eq!(terminal.write_some(b"x"), 0);
            assert_eq!(
                terminal.input_state(0, true, true),
                crate::platform::InputState::default()
            );
        });
    }

    #[test]
    fn a_job_is_listed_and_ended_through_its_job_object() {
        let dir = workdir();
        runtime().block_on(async {
            // `ping` would do, but Wine's needs privileges: cmd waiting on its own input.
            let spawned = cmd("set /p x=", &dir, Mode::Pipes).expect("spawn");
            let pid = spawned.pid as i32;
            let identity = JobIdentity {
                pid,
                start_ticks: start_ticks(pid),
                marker: "",
                containment: &spawned.containment,
            };
            assert!(identity.start_ticks > 0);
            assert!(is_alive(pid));
            assert!(group_exists(pid));
            assert_eq!(program_name(pid).map(|n| n.to_lowercase()).as_deref(), Some("cmd.exe"));
            let members = job_processes(&identity);
            assert!(members.iter().any(|p| p.pid == pid), "{members:?}");
            assert_eq!(Snapshot::take(0).members(&identity).len(), members.len());
            assert_eq!(background_roots(&members, pid), Vec::<u32>::new());
            end_processes(&identity, &members, Ending::Politely);
            let mut child = spawned.child;
            let exit = tokio::time::timeout(WITHIN, child.wait())
                .await
                .expect("ends")
                .expect("wait");
            assert_eq!(exit.code, Some(processes::KILLED as i32));
            assert!(!is_alive(pid));
            assert!(!group_exists(pid));
            assert!(job_processes(&identity).is_empty());
        });
    }

    #[test]
    fn pipes_keep_stdout_and_stderr_apart() {
        let dir = workdir();
        runtime().block_on(async {
            let spawned = cmd("echo out& echo err 1>&2", &dir, Mode::Pipes).expect("spawn");
            let ProcessIo::Pipes { stdout, stderr, .. } = spawned.io else {
                panic!("a pipes job has pipes")
            };
            async fn all(mut pipe: PipeReader) -> String {
                let mut text = Vec::new();
                let mut buf = [0u8; 7];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    text.extend_from_slice(&buf[..n]);
                }
                String::from_utf8_lossy(&text).into_owned()
            }
            let (out, err) = tokio::time::timeout(WITHIN, async { tokio::join!(all(stdout), all(stderr)) })
                .await
                .expect("both pipes reach EOF");
            assert_eq!(out.trim_end(), "out");
            assert_eq!(err.trim_end(), "err");
        });
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let dir = workdir();
        runtime().block_on(async {
            let error = spawn(&SpawnSpec {
                program: "nss-no-such-program".into(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: &dir.1,
                cwd_handle: &dir.2,
                mode: Mode::Pipes,
                cols: 80,
                rows: 24,
                sandbox: None,
                spare_pty: &crate::platform::SparePty,
            })
            .err()
            .expect("no such program");
            assert_eq!(error.kind(), io::ErrorKind::NotFound);
        });
    }
}
