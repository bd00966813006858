//! A started job process and its exit, as an event: the wait is registered with the
//! system thread pool (`super::signaled`), so no thread of ours is parked per job.

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::System::Threading::GetExitCodeProcess;

use super::job_object::succeeded;
use super::signaled::signaled;
use crate::platform::Exit;

pub struct ChildProcess {
    process: OwnedHandle,
    exit: Option<Exit>,
}

impl ChildProcess {
    pub(super) fn new(process: OwnedHandle) -> Self {
        Self { process, exit: None }
    }

    /// The exit, if already known; the wait below learns it (no reaping on Windows).
    pub fn exited_now(&mut self) -> Option<io::Result<Exit>> {
        self.exit.map(Ok)
    }

    /// Linux's exit ring is asked at the hang-up; nothing to ask here.
    pub fn arm_now(&mut self) {}

    /// Resolves when the process has exited. Cancel-safe. Windows has no signals: the
    /// exit code is all there is (a process ended by `kill` has the code the Job Object
    /// was terminated with, `super::processes::KILLED`).
    pub async fn wait(&mut self) -> io::Result<Exit> {
        if let Some(exit) = self.exit {
            return Ok(exit);
        }
        signaled(&self.process).await?;
        let mut code = 0u32;
        // SAFETY: the handle is open with all access (we created the process); `code`
        // outlives the call.
        succeeded(unsafe { GetExitCodeProcess(self.process.as_raw_handle(), &mut code) })?;
        let exit = Exit {
            // The field is an i32: NTSTATUS-style codes (0xC000013A, ...) read as negative.
            code: Some(code as i32),
            signal: None,
        };
        self.exit = Some(exit);
        Ok(exit)
    }
}
