//! Starting a job's process with `CreateProcessW`, for both modes.
//!
//! Not `std::process::Command`: a PTY job must be attached to a pseudoconsole, which
//! takes a `STARTUPINFOEXW` attribute std cannot pass, and every job must be created
//! suspended, put in its Job Object and only then resumed (std does not hand out the
//! thread handle, and the flags it takes replace ours). One path for both modes keeps
//! the order of those steps in one place:
//! 1. the program is found in the job's own `PATH` (as on Unix, the caller's `env.PATH`
//!    decides which program runs), then in the system directory;
//! 2. the process is created suspended, with exactly the handles it should inherit
//!    (`PROC_THREAD_ATTRIBUTE_HANDLE_LIST`: its three pipe ends, or none for ConPTY);
//! 3. it is assigned to the job's Job Object, and only then its thread resumes, so
//!    nothing it starts can escape the job.

use std::ffi::{c_void, OsStr, OsString};
use std::io;
use std::mem::{size_of, size_of_val};
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::ptr;

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Console::HPCON;
use windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, InitializeProcThreadAttributeList, ResumeThread, TerminateProcess,
    UpdateProcThreadAttribute, CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
    PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

use super::job_object::{succeeded, JobTree};
use crate::platform::SpawnSpec;

/// The exit code of a process ended because its launch could not be completed.
const LAUNCH_FAILED: u32 = 1;

/// What the process is attached to.
pub(super) enum Console<'a> {
    /// Pipes mode: these handles are its stdin, stdout and stderr, and it gets a console
    /// of its own with no window (`CREATE_NO_WINDOW`), so a console program runs, `chcp`
    /// changes only the job's code page, and nothing reaches Node's console.
    Hidden([&'a OwnedHandle; 3]),
    /// PTY mode: attached to this pseudoconsole, inheriting no handle. Its standard
    /// handles are left null, so the pseudoconsole's own are used even when Node's are
    /// redirected (a child would otherwise get Node's).
    Pseudo(HPCON),
}

pub(super) struct Launched {
    pub process: OwnedHandle,
    pub pid: u32,
}

/// Starts the process of `spec` inside `job` (see the module comment).
pub(super) fn launch(spec: &SpawnSpec<'_>, console: Console<'_>, job: &JobTree) -> io::Result<Launched> {
    let cwd = plain_path(spec.cwd);
    let program = find_program(&spec.program, &spec.env, &cwd)?;
    let mut command_line = nul_terminated(&command_line(&program, &spec.args));
    let environment = environment_block(&spec.env);
    let cwd = nul_terminated(cwd.as_os_str());

    let mut attributes = AttributeList::new()?;
    let mut startup = STARTUPINFOEXW::default();
    startup.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    // Must live until the attribute list is gone: the list points into it.
    let inherited: [HANDLE; 3];
    let (inherit, flags) = match console {
        Console::Hidden(stdio) => {
            inherited = stdio.map(|h| h.as_raw_handle());
            // SAFETY: the value points at `inherited`, which outlives the list.
            unsafe {
                attributes.set(
                    PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                    inherited.as_ptr().cast(),
                    size_of_val(&inherited),
                )?;
            }
            startup.StartupInfo.hStdInput = inherited[0];
            startup.StartupInfo.hStdOutput = inherited[1];
            startup.StartupInfo.hStdError = inherited[2];
            (1, CREATE_NO_WINDOW)
        }
        Console::Pseudo(console) => {
            // SAFETY: this attribute takes the HPCON value itself (not a pointer to it),
            // which stays open across the launch (the caller owns it).
            unsafe {
                attributes.set(
                    PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE,
                    console as *const c_void,
                    size_of::<HPCON>(),
                )?;
            }
            (0, 0)
        }
    };
    startup.lpAttributeList = attributes.as_ptr();

    let mut info = PROCESS_INFORMATION::default();
    // SAFETY: every pointer is to a live, NUL-terminated (or double-NUL-terminated, the
    // environment) buffer or structure that outlives the call; the command line buffer
    // is writable, as CreateProcessW requires.
    let created = unsafe {
        CreateProcessW(
            ptr::null(),
            command_line.as_mut_ptr(),
            ptr::null(),
            ptr::null(),
            inherit,
            flags | CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT,
            environment.as_ptr().cast(),
            cwd.as_ptr(),
            &startup.StartupInfo,
            &mut info,
        )
    };
    succeeded(created)?;
    // SAFETY: CreateProcessW succeeded: both handles are open and ours alone.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(info.hProcess),
            OwnedHandle::from_raw_handle(info.hThread),
        )
    };
    let resumed = job.assign(process.as_raw_handle()).and_then(|()| {
        // SAFETY: the thread handle is open, with all access (we created it).
        if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    });
    if let Err(error) = resumed {
        // A suspended process left behind would sit forever, outside any job.
        // SAFETY: the process handle is open with all access.
        unsafe { TerminateProcess(process.as_raw_handle(), LAUNCH_FAILED) };
        return Err(error);
    }
    Ok(Launched {
        process,
        pid: info.dwProcessId,
    })
}

/// A `PROC_THREAD_ATTRIBUTE_LIST` with room for one attribute.
struct AttributeList {
    buffer: Vec<usize>,
}

impl AttributeList {
    fn new() -> io::Result<Self> {
        let mut size = 0usize;
        // SAFETY: a null list asks only for the size, which is written to `size`.
        unsafe { InitializeProcThreadAttributeList(ptr::null_mut(), 1, 0, &mut size) };
        if size == 0 {
            return Err(io::Error::last_os_error());
        }
        // usize elements: the list is aligned as the pointers it holds.
        let mut buffer = vec![0usize; size.div_ceil(size_of::<usize>())];
        // SAFETY: the buffer is at least `size` bytes and aligned for the list.
        succeeded(unsafe { InitializeProcThreadAttributeList(buffer.as_mut_ptr().cast(), 1, 0, &mut size) })?;
        Ok(Self { buffer })
    }

    fn as_ptr(&mut self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
        self.buffer.as_mut_ptr().cast()
    }

    /// # Safety
    /// `value` and `size` must be what `attribute` expects, and what `value` points at
    /// must outlive the list.
    unsafe fn set(&mut self, attribute: u32, value: *const c_void, size: usize) -> io::Result<()> {
        // SAFETY: the list was initialised; the caller vouches for value and size.
        succeeded(unsafe {
            UpdateProcThreadAttribute(
                self.as_ptr(),
                0,
                attribute as usize,
                value,
                size,
                ptr::null_mut(),
                ptr::null(),
            )
        })
    }
}

impl Drop for AttributeList {
    fn drop(&mut self) {
        // SAFETY: the list was initialised in `new` and is deleted once, here.
        unsafe { DeleteProcThreadAttributeList(self.as_ptr()) };
    }
}

fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().collect()
}

fn nul_terminated(s: &OsStr) -> Vec<u16> {
    let mut w = wide(s);
    w.push(0);
    w
}

/// The command line: the program's full path in quotes (argv[0] takes no escapes, and a
/// Windows path cannot hold `"`), then the arguments, which `crate::job::spawn::command` has
/// already written in the form their reader expects (MSVCRT quoting in argv mode, cmd's
/// own syntax after `/c`).
fn command_line(program: &Path, args: &[OsString]) -> OsString {
    let mut line = OsString::from("\"");
    line.push(program.as_os_str());
    line.push("\"");
    for arg in args {
        line.push(" ");
        line.push(arg);
    }
    line
}

/// The environment as `CreateProcessW` takes it: `NAME=value\0` entries sorted by name
/// without regard to case (as Windows keeps its own), ending with one more `\0`.
fn environment_block(env: &[(OsString, OsString)]) -> Vec<u16> {
    let mut entries: Vec<(Vec<u16>, &OsString, &OsString)> =
        env.iter().map(|(name, value)| (upper(name), name, value)).collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut block = Vec::new();
    for (_, name, value) in entries {
        block.extend(name.encode_wide());
        block.push(u16::from(b'='));
        block.extend(value.encode_wide());
        block.push(0);
    }
    if block.is_empty() {
        // An empty block is still two NULs.
        block.push(0);
    }
    block.push(0);
    block
}

fn upper(s: &OsStr) -> Vec<u16> {
    s.encode_wide()
        .map(|c| {
            if (u16::from(b'a')..=u16::from(b'z')).contains(&c) {
                c - 32
            } else {
                c
            }
        })
        .collect()
}

/// A path without the `\\?\` prefix that `canonicalize` and `GetFinalPathNameByHandleW`
/// put in front: cmd.exe refuses such a working directory ("UNC paths are not
/// supported") and falls back to the Windows directory.
pub(super) fn plain_path(path: &Path) -> PathBuf {
    let w = wide(path.as_os_str());
    let verbatim: Vec<u16> = r"\\?\".encode_utf16().collect();
    let unc: Vec<u16> = r"\\?\UNC\".encode_utf16().collect();
    if w.starts_with(&unc) {
        let mut plain: Vec<u16> = r"\\".encode_utf16().collect();
        plain.extend_from_slice(&w[unc.len()..]);
        return PathBuf::from(OsString::from_wide(&plain));
    }
    let rest = w.get(verbatim.len()..).unwrap_or_default();
    if w.starts_with(&verbatim) && rest.get(1) == Some(&u16::from(b':')) {
        return PathBuf::from(OsString::from_wide(rest));
    }
    path.to_path_buf()
}

/// The value of `PATH` in the job's environment (names are case-insensitive).
fn search_path(env: &[(OsString, OsString)]) -> Option<&OsString> {
    env.iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("PATH"))
        .map(|(_, value)| value)
}

fn system_directory() -> Option<PathBuf> {
    let mut buf = vec![0u16; 512];
    // SAFETY: the pointer and length describe `buf`.
    let n = unsafe { GetSystemDirectoryW(buf.as_mut_ptr(), buf.len() as u32) } as usize;
    (n > 0 && n < buf.len()).then(|| PathBuf::from(OsString::from_wide(&buf[..n])))
}

/// The names to try for `path`: as given when it names an executable's extension, else
/// with `.exe` and `.com` first (as CreateProcess appends `.exe`), then as given (a
/// `.bat` or `.cmd`, which CreateProcess runs through cmd.exe).
fn with_extensions(path: PathBuf) -> Vec<PathBuf> {
    let named = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("exe") || e.eq_ignore_ascii_case("com"));
    if named {
        return vec![path];
    }
    let mut candidates: Vec<PathBuf> = [".exe", ".com"]
        .iter()
        .map(|ext| {
            let mut with = path.clone().into_os_string();
            with.push(ext);
            PathBuf::from(with)
        })
        .collect();
    candidates.push(path);
    candidates
}

/// Where `program` is: a path (relative ones from the job's directory), or a name looked
/// up in the job's `PATH` and then the system directory (so `cmd.exe` is found even for
/// a job whose environment was cleared).
fn find_program(program: &OsStr, env: &[(OsString, OsString)], cwd: &Path) -> io::Result<PathBuf> {
    let not_found = || {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("program not found: {}", program.display()),
        )
    };
    if program.is_empty() {
        return Err(not_found());
    }
    let given = Path::new(program);
    let dirs: Vec<PathBuf> = if given.components().count() > 1 || given.is_absolute() || given.has_root() {
        vec![cwd.join(given).parent().map(Path::to_path_buf).unwrap_or_default()]
    } else {
        let mut dirs: Vec<PathBuf> = search_path(env)
            .map(|path| {
                std::env::split_paths(path)
                    .filter(|d| !d.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        dirs.extend(system_directory());
        dirs
    };
    let name = given.file_name().ok_or_else(not_found)?;
    dirs.into_iter()
        .flat_map(|dir| with_extensions(cwd.join(dir).join(name)))
        .find(|candidate| candidate.is_file())
        .ok_or_else(not_found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_prefixes_are_dropped() {
        assert_eq!(plain_path(Path::new(r"\\?\C:\work\x")), PathBuf::from(r"C:\work\x"));
        assert_eq!(
            plain_path(Path::new(r"\\?\UNC\srv\share\x")),
            PathBuf::from(r"\\srv\share\x")
        );
        assert_eq!(plain_path(Path::new(r"C:\work")), PathBuf::from(r"C:\work"));
        assert_eq!(plain_path(Path::new(r"\\?\")), PathBuf::from(r"\\?\"));
    }

    #[test]
    fn environment_block_is_sorted_and_double_nul_terminated() {
        let env = vec![
            (OsString::from("b"), OsString::from("2")),
            (OsString::from("A"), OsString::from("1")),
        ];
        let block = String::from_utf16_lossy(&environment_block(&env));
        assert_eq!(block, "A=1\0b=2\0\0");
        assert_eq!(String::from_utf16_lossy(&environment_block(&[])), "\0\0");
    }

    #[test]
    fn programs_are_found_in_the_jobs_path_and_the_system_directory() {
        let cmd = find_program(OsStr::new("cmd"), &[], Path::new(r"C:\")).expect("cmd.exe");
        assert!(cmd.to_string_lossy().to_lowercase().ends_with("cmd.exe"), "{cmd:?}");
        let missing = find_program(OsStr::new("nss-no-such-program"), &[], Path::new(r"C:\"));
        assert_eq!(missing.map_err(|e| e.kind()).err(), Some(io::ErrorKind::NotFound));
        assert!(find_program(OsStr::new(""), &[], Path::new(r"C:\")).is_err());
    }
}
