//! Windows: a process tree that can be ended as a whole, held in a Job Object.
//!
//! On Linux `process_tree` and `kill` find a job's descendants through its process group
//! and /proc. Windows has no process groups, and a walk over parent pids has a gap: a
//! child that exits leaves its own children behind with a parent pid that names nobody
//! (or, once reused, somebody else), so the walk can no longer reach them. A Job Object
//! has no such gap: every process that a member creates joins the job at creation, before
//! it runs an instruction, so nothing has to be found later.
//!
//! `JobTree` owns one anonymous job made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when
//! its last handle closes, by our `Drop` or by the kernel tidying up after this process
//! died in any way, every process still in the job is ended. That is the Windows
//! counterpart of `watchdog`. Breakaway is not allowed, so no member can leave the job.
//!
//! Every job of the service gets its own `JobTree` (`super::launch` assigns the process
//! while it is still suspended); `kill` ends the tree with `terminate`. See docs/windows.md.

use std::ffi::c_void;
use std::io;
use std::mem::{offset_of, size_of};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::ptr;

use windows_sys::Win32::Foundation::{ERROR_MORE_DATA, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, IsProcessInJob, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
    JOBOBJECT_BASIC_PROCESS_ID_LIST, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
// What only the tests' std-based `spawn` uses.
#[cfg(test)]
use std::os::windows::process::CommandExt;
#[cfg(test)]
use std::process::{Child, Command};
#[cfg(test)]
use windows_sys::Win32::Foundation::{GetLastError, ERROR_NO_MORE_FILES, INVALID_HANDLE_VALUE};
#[cfg(test)]
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
#[cfg(test)]
use windows_sys::Win32::System::Threading::{OpenThread, ResumeThread, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME};

/// A process tree held in an anonymous Job Object. Dropping it ends every process
/// still in the tree (the job handle closes, and the job kills on close).
#[derive(Debug)]
pub struct JobTree {
    job: OwnedHandle,
}

impl JobTree {
    /// An empty tree: a new job that kills its members when its last handle closes.
    pub fn new() -> io::Result<Self> {
        // SAFETY: both pointers may be null: no security attributes means default
        // security and a handle children do not inherit (a child holding it would keep
        // the job alive after we die); no name means nobody else can open the job.
        let job = unsafe { CreateJobObjectW(ptr::null(), ptr::null()) };
        let job = owned(job, ptr::null_mut())?;
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        // Only this flag: no JOB_OBJECT_LIMIT_BREAKAWAY_OK / SILENT_BREAKAWAY_OK, so a
        // member cannot start a process outside the job.
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the job handle is open; the pointer and size describe `limits`, the
        // structure this information class expects, which lives across the call.
        let set = unsafe {
            SetInformationJobObject(
                job.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast::<c_void>(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        succeeded(set)?;
        Ok(Self { job })
    }

    /// Starts `command` inside the tree (the tests' way to build trees out of std
    /// processes; the service launches through `super::launch`, which holds the thread
    /// handle and needs no thread snapshot). The child is created suspended, put in the job,
    /// and only then resumed, so even a process it starts at once is in the tree.
    ///
    /// This sets the command's creation flags to `CREATE_SUSPENDED`, replacing flags set
    /// on it before (std offers no way to read them back and add ours).
    #[cfg(test)]
    pub fn spawn(&self, command: &mut Command) -> io::Result<Child> {
        let mut child = command.creation_flags(CREATE_SUSPENDED).spawn()?;
        if let Err(error) = self.contain(&child).and_then(|()| resume_threads(child.id())) {
            // A suspended child left behind would sit forever, outside our control.
            let _ = child.kill();
            let _ = child.wait();
            return Err(error);
        }
        Ok(child)
    }

    /// Puts a running process in the tree; what it starts from now on joins too. What it
    /// started before this call does not: use `spawn` to leave no such window.
    #[cfg(test)]
    pub fn contain(&self, process: &Child) -> io::Result<()> {
        self.assign(process.as_raw_handle())
    }

    /// Puts the process behind `process` (a handle with PROCESS_SET_QUOTA and
    /// PROCESS_TERMINATE access, open for the call) in the tree.
    pub fn assign(&self, process: HANDLE) -> io::Result<()> {
        // SAFETY: the job handle is ours and open; the caller keeps `process` open.
        succeeded(unsafe { AssignProcessToJobObject(self.job.as_raw_handle(), process) })
    }

    /// Whether the process behind `process` (open, with query access) is in the tree.
    pub fn holds(&self, process: HANDLE) -> bool {
        let mut inside = 0;
        // SAFETY: both handles are open for the call; `inside` outlives it.
        let asked = unsafe { IsProcessInJob(process, self.job.as_raw_handle(), &mut inside) };
        asked != 0 && inside != 0
    }

    /// The ids of the processes in the tree now. An id can be reused once its process has
    /// gone, so open a handle to one before relying on it.
    pub fn pids(&self) -> io::Result<Vec<u32>> {
        self.pids_with_room(32)
    }

    /// `pids`, starting with room for `room` ids and growing when the job holds more.
    fn pids_with_room(&self, mut room: usize) -> io::Result<Vec<u32>> {
        // The list is a small header and then one usize per process. A Vec<usize> gives
        // the alignment; `head` is the header's length counted in usizes.
        let head = offset_of!(JOBOBJECT_BASIC_PROCESS_ID_LIST, ProcessIdList) / size_of::<usize>();
        // Each retry makes room for all the processes the job had; only processes joining
        // faster than we can ask would need more than a few.
        for _ in 0..8 {
            let mut buffer = vec![0usize; head + room.max(1)];
            let bytes = u32::try_from(buffer.len() * size_of::<usize>())
                .map_err(|_| io::Error::other("process id list larger than 4 GiB"))?;
            // SAFETY: the job handle is open; the pointer and size describe `buffer`,
            // which is aligned for the structure and at least as large as it.
            let queried = unsafe {
                QueryInformationJobObject(
                    self.job.as_raw_handle(),
                    JobObjectBasicProcessIdList,
                    buffer.as_mut_ptr().cast::<c_void>(),
                    bytes,
                    ptr::null_mut(),
                )
            };
            // Read the error before anything else can overwrite it.
            let error = (queried == 0).then(io::Error::last_os_error);
            // SAFETY: `buffer` is aligned and large enough for the header structure, and
            // every bit pattern is a valid value of it (all its fields are integers).
            let list = unsafe { buffer.as_ptr().cast::<JOBOBJECT_BASIC_PROCESS_ID_LIST>().read() };
            let assigned = list.NumberOfAssignedProcesses as usize;
            let listed = (list.NumberOfProcessIdsInList as usize).min(buffer.len() - head);
            match error {
                // The ids are DWORDs stored in ULONG_PTR slots, so the cast loses nothing.
                None if listed >= assigned => {
                    return Ok(buffer[head..head + listed].iter().map(|&pid| pid as u32).collect())
                }
                // Too small a buffer fails with ERROR_MORE_DATA but still fills in how
                // many processes the job has: make room for them (and a few newcomers).
                Some(error) if error.raw_os_error() != Some(ERROR_MORE_DATA as i32) => return Err(error),
                _ => room = room.max(assigned) + assigned / 2 + 8,
            }
        }
        Err(io::Error::other(
            "the job's process list kept growing while it was read",
        ))
    }

    /// Ends every process in the tree with `exit_code`. The kernel ends them
    /// asynchronously: wait on a process handle to know one has gone.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job handle is open for the call.
        succeeded(unsafe { TerminateJobObject(self.job.as_raw_handle(), exit_code) })
    }
}

/// Resumes every thread of process `pid`. A process created suspended has exactly one,
/// and std does not hand out its handle, so it is found in a thread snapshot. The pid
/// cannot have been reused: the caller holds a handle to the process.
#[cfg(test)]
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: plain call; the process-id argument is ignored for thread snapshots,
    // which list every thread of the system.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    let snapshot = owned(snapshot, INVALID_HANDLE_VALUE)?;
    let mut entry = THREADENTRY32 {
        dwSize: size_of::<THREADENTRY32>() as u32,
        ..Default::default()
    };
    let mut resumed = 0;
    // SAFETY: the snapshot is open and `entry` is a THREADENTRY32 with dwSize set.
    let mut found = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while found {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: plain call with a thread id; a null result is handled by `owned`.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            let thread = owned(thread, ptr::null_mut())?;
            // SAFETY: the thread handle is open and has THREAD_SUSPEND_RESUME access.
            if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for Thread32First.
        found = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    // The walk ends with ERROR_NO_MORE_FILES; any other reason is a failure.
    // SAFETY: plain call, made right after the failing Thread32First/Thread32Next.
    let reason = unsafe { GetLastError() };
    if reason != ERROR_NO_MORE_FILES {
        return Err(io::Error::from_raw_os_error(reason as i32));
    }
    if resumed == 0 {
        return Err(io::Error::other(format!("no thread of process {pid} found to resume")));
    }
    Ok(())
}

/// Takes ownership of a handle a Win32 call returned, `failed` being that call's value
/// for failure (null or INVALID_HANDLE_VALUE, depending on the call).
pub(super) fn owned(handle: HANDLE, failed: HANDLE) -> io::Result<OwnedHandle> {
    if handle == failed || handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the handle is open and nothing else owns it: the call just returned it.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// A Win32 BOOL result as an io::Result.
pub(super) fn succeeded(result: windows_sys::core::BOOL) -> io::Result<()> {
    if result == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The trees are made of this test binary itself, run again with a role in the
    //! environment (see `role`), so they need nothing but the binary: no cmd.exe builtins.

    use super::*;
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::time::Duration;
    use windows_sys::Win32::Foundation::{WAIT_OBJECT_0, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, WaitForSingleObject, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
    };

    const ROLE: &str = "NSS_WINDOWS_TREE_ROLE";
    /// How long a helper process lives at most, so a failing test leaves nothing for long.
    const LINGER: Duration = Duration::from_secs(60);
    /// How long a helper may take to start and say its pids (Wine can be slow).
    const SAY_WITHIN: Duration = Duration::from_secs(30);
    /// How long a process may take to go after it was ended (Wine can be slow).
    const GONE_WITHIN_MS: u32 = 15_000;
    /// The exit code we end trees with, so a test can tell our kill from any other end.
    const KILLED: u32 = 0x4b1d;

    /// Not a test: the body of the helper processes. It does nothing unless the test that
    /// started this process named a role in the environment.
    #[test]
    #[ignore = "helper process for the tree tests, which run it with NSS_WINDOWS_TREE_ROLE set"]
    fn role() {
        let Ok(role) = std::env::var(ROLE) else { return };
        match role.as_str() {
            "exit" => return,
            "sleep" => {}
            // Starts a sleeping grandchild and says its pid.
            "parent" => say_pids(&[start("sleep").id()]),
            // The same, but then exits at once, orphaning the grandchild.
            "orphaner" => {
                say_pids(&[start("sleep").id()]);
                return;
            }
            // Holds a tree of its own (a parent and its child) and says their pids, so a
            // test can kill this owner and see the tree go with it.
            "owner" => {
                let tree = JobTree::new().expect("owner: job");
                let mut child = tree.spawn(&mut helper("parent")).expect("owner: spawn");
                let grandchild = read_pids(&mut child)[0];
                say_pids(&[child.id(), grandchild]);
                std::thread::sleep(LINGER);
                drop(tree);
            }
            other => panic!("unknown role {other}"),
        }
        std::thread::sleep(LINGER);
    }

    /// A command that runs this binary as a helper in `role`. Its stdout is a pipe, on
    /// which it says pids (`read_pids`).
    fn helper(role: &str) -> Command {
        let exe = std::env::current_exe().expect("current_exe");
        let mut command = Command::new(exe);
        command
            .args([
                "platform::windows::job_object::tests::role",
                "--exact",
                "--ignored",
                "--nocapture",
                "-q",
                "--test-threads=1",
            ])
            .env(ROLE, role)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command
    }

    /// Starts a helper the plain way (it joins whatever job its starter is in).
    fn start(role: &str) -> Child {
        helper(role).stdout(Stdio::null()).spawn().expect("start helper")
    }

    fn say_pids(pids: &[u32]) {
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        // The harness may have printed on this line already; `read_pids` looks for the tag.
        println!("\nPIDS {}", list.join(" "));
    }

    /// Reads the pids a helper says on its stdout. A helper that never says them (say, one
    /// left suspended) fails the test after `SAY_WITHIN` instead of hanging it.
    fn read_pids(child: &mut Child) -> Vec<u32> {
        let stdout = child.stdout.take().expect("helper stdout is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("PIDS ") {
                    let pids: Vec<u32> = line[at + 5..]
                        .split_whitespace()
                        .filter_map(|pid| pid.parse().ok())
                        .collect();
                    let _ = tx.send(pids);
                    return;
                }
            }
        });
        match rx.recv_timeout(SAY_WITHIN) {
            Ok(pids) if !pids.is_empty() => pids,
            outcome => {
                let _ = child.kill();
                panic!(
                    "helper {} did not say its pids within {SAY_WITHIN:?}: {outcome:?}",
                    child.id()
                );
            }
        }
    }

    /// A handle to a live process, taken before it is killed so its pid cannot be reused
    /// under us while we wait.
    fn open(pid: u32) -> OwnedHandle {
        // SAFETY: plain call with a pid; a null result is handled by `owned`.
        let handle = unsafe { OpenProcess(PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        owned(handle, ptr::null_mut()).unwrap_or_else(|e| panic!("open process {pid}: {e}"))
    }

    /// The exit code of the process, once it has gone, if that happens within `ms`.
    fn exit_code_within(process: &OwnedHandle, ms: u32) -> Option<u32> {
        // SAFETY: the handle is open and has SYNCHRONIZE access.
        match unsafe { WaitForSingleObject(process.as_raw_handle(), ms) } {
            WAIT_OBJECT_0 => {
                let mut code = 0;
                // SAFETY: the handle is open with query access; `code` outlives the call.
                succeeded(unsafe { GetExitCodeProcess(process.as_raw_handle(), &mut code) }).expect("exit code");
                Some(code)
            }
            WAIT_TIMEOUT => None,
            other => panic!("wait failed ({other}): {}", io::Error::last_os_error()),
        }
    }

    fn assert_members(tree: &JobTree, pids: &[u32]) {
        let members = tree.pids().expect("pids");
        for pid in pids {
            assert!(members.contains(pid), "pid {pid} is not in the tree {members:?}");
        }
    }

    /// A child that starts a grandchild, both checked to be in `tree`: the child, the two
    /// pids, and a handle on each (kept open so their exit codes can be read later).
    fn child_and_grandchild(tree: &JobTree) -> (Child, [u32; 2], Vec<OwnedHandle>) {
        let mut child = tree.spawn(&mut helper("parent")).expect("spawn");
        let tree_pids = [child.id(), read_pids(&mut child)[0]];
        assert_members(tree, &tree_pids);
        let handles = tree_pids.iter().map(|&pid| open(pid)).collect();
        (child, tree_pids, handles)
    }

    #[test]
    fn terminate_ends_the_child_and_its_grandchild() {
        let tree = JobTree::new().expect("job");
        let (mut child, tree_pids, handles) = child_and_grandchild(&tree);
        tree.terminate(KILLED).expect("terminate");
        for (pid, handle) in tree_pids.iter().zip(&handles) {
            assert_eq!(exit_code_within(handle, GONE_WITHIN_MS), Some(KILLED), "pid {pid}");
        }
        assert_eq!(tree.pids().expect("pids"), Vec::<u32>::new());
        let _ = child.wait();
    }

    #[test]
    fn a_grandchild_whose_parent_exited_is_still_killed() {
        let tree = JobTree::new().expect("job");
        let mut child = tree.spawn(&mut helper("orphaner")).expect("spawn");
        let grandchild = read_pids(&mut child)[0];
        let handle = open(grandchild);
        child.wait().expect("orphaner exits");
        // The orphan runs on, with no living parent to find it through, yet is a member.
        assert_eq!(exit_code_within(&handle, 0), None, "the grandchild should still run");
        let members = tree.pids().expect("pids");
        assert_eq!(members, vec![grandchild]);
        tree.terminate(KILLED).expect("terminate");
        assert_eq!(exit_code_within(&handle, GONE_WITHIN_MS), Some(KILLED));
    }

    #[test]
    fn dropping_the_tree_kills_it() {
        let tree = JobTree::new().expect("job");
        let (mut child, tree_pids, handles) = child_and_grandchild(&tree);
        drop(tree);
        for (pid, handle) in tree_pids.iter().zip(&handles) {
            assert!(
                exit_code_within(handle, GONE_WITHIN_MS).is_some(),
                "pid {pid} outlived its tree"
            );
        }
        let _ = child.wait();
    }

    #[test]
    fn the_tree_dies_with_its_owner() {
        // The owner is an ordinary process holding a JobTree; killing it (no destructors
        // run) must still end its tree: the kernel closes the job handle.
        let mut owner = helper("owner").spawn().expect("spawn owner");
        let tree_pids = read_pids(&mut owner);
        assert_eq!(tree_pids.len(), 2);
        let handles: Vec<OwnedHandle> = tree_pids.iter().map(|&pid| open(pid)).collect();
        for (pid, handle) in tree_pids.iter().zip(&handles) {
            assert_eq!(
                exit_code_within(handle, 0),
                None,
                "pid {pid} should run while its owner does"
            );
        }
        owner.kill().expect("kill owner");
        owner.wait().expect("owner gone");
        for (pid, handle) in tree_pids.iter().zip(&handles) {
            assert!(
                exit_code_within(handle, GONE_WITHIN_MS).is_some(),
                "pid {pid} outlived its owner"
            );
        }
    }

    #[test]
    fn contain_takes_in_a_running_process() {
        let tree = JobTree::new().expect("job");
        let mut child = start("sleep");
        tree.contain(&child).expect("contain");
        assert_members(&tree, &[child.id()]);
        tree.terminate(KILLED).expect("terminate");
        assert_eq!(child.wait().expect("wait").code(), Some(KILLED as i32));
    }

    #[test]
    fn pids_grows_past_a_small_buffer() {
        let tree = JobTree::new().expect("job");
        let mut child = tree.spawn(&mut helper("parent")).expect("spawn");
        let grandchild = read_pids(&mut child)[0];
        let mut members = tree.pids_with_room(1).expect("pids");
        members.sort_unstable();
        let mut expected = vec![child.id(), grandchild];
        expected.sort_unstable();
        assert_eq!(members, expected);
        tree.terminate(KILLED).expect("terminate");
        let _ = child.wait();
    }

    #[test]
    fn misuse_gives_errors_not_panics() {
        let tree = JobTree::new().expect("job");
        // Ending an empty tree, and ending one twice, are no-ops.
        assert_eq!(tree.pids().expect("pids"), Vec::<u32>::new());
        tree.terminate(KILLED).expect("terminate an empty tree");
        let mut child = tree.spawn(&mut helper("sleep")).expect("spawn");
        tree.terminate(KILLED).expect("terminate");
        tree.terminate(KILLED).expect("terminate again");
        assert_eq!(child.wait().expect("wait").code(), Some(KILLED as i32));

        // A program that does not exist: the spawn error, and no process left over.
        let missing = tree
            .spawn(&mut Command::new("nss-no-such-program.exe"))
            .expect_err("spawn a missing program");
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);

        // A process that has exited cannot join a job.
        let mut gone = start("exit");
        gone.wait().expect("wait");
        assert!(tree.contain(&gone).is_err(), "an exited process joined the tree");
    }
}
