//! Linux: a job confined by Landlock and seccomp, applied in the spawn child between
//! clone and exec (`crate::platform::unix::launch`), so no helper program runs and no
//! namespace is made. Inherited by everything the job starts, however it detaches: a
//! Landlock domain, a seccomp filter and `NO_NEW_PRIVS` pass through fork and exec and
//! cannot be removed, only narrowed.
//!
//! The child is vfork-style (it runs in the parent's memory until exec), so everything
//! that allocates is done here in the parent (`Prepared::new`): the ruleset and its
//! rules (`rules.rs`), the compiled filter (`filter.rs`). The child makes four kinds
//! of system call on what was prepared (`apply`): dropping every capability
//! (`caps.rs`), `prctl(PR_SET_NO_NEW_PRIVS)`,
//! `landlock_restrict_self`, `seccomp(SECCOMP_SET_MODE_FILTER)` (with a listener
//! where no cgroup holds the job, `watch.rs`, and below Landlock ABI 9 always: the
//! service answers the job's calls to unix sockets through it, `supervise/`). Any of them failing fails the launch:
//! the job never runs unconfined.

mod caps;
#[cfg(test)]
mod confined_child;
mod filter;
mod hidden;
mod landlock_absence;
mod path_rule;
mod refusals;
mod root_reads;
mod rules;
mod supervise;
mod watch;

pub use supervise::handover as supervisor_handover;
pub use watch::nothing_left;

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use crate::sandbox::{JobSandbox, Mechanism, Resolved, Support};

/// `LANDLOCK_CREATE_RULESET_VERSION` (linux/landlock.h).
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;

/// What this kernel offers, probed once: the Landlock ABI and whether seccomp filters
/// can be installed. No Landlock (or a seccomp the kernel lacks) is an error: the
/// sandbox is refused, never half given.
pub fn support() -> Result<Support, String> {
    static SUPPORT: OnceLock<Result<Support, String>> = OnceLock::new();
    SUPPORT.get_or_init(probe).clone()
}

fn probe() -> Result<Support, String> {
    // SAFETY: the documented probe: no attribute, size 0, the VERSION flag.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi < 1 {
        return Err(landlock_absence::explain(&io::Error::last_os_error()));
    }
    // PR_GET_SECCOMP answers 0 (not filtered) or 2 (filtered); EINVAL without seccomp.
    // SAFETY: a query without pointers.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    if !seccomp || !filter::available() {
        return Err("seccomp filters are not available on this kernel or architecture".to_string());
    }
    // Below ABI 9 pathname unix sockets are confined only by the supervisor, which
    // needs the job's filter to have a listener: where the host's own filter holds
    // one (the kernel allows one per chain), no job could be confined there, so no
    // sandbox is given (fail closed) rather than one that lets every socket through.
    if (abi as u32) < crate::sandbox::ABI_UNIX && !(watch::available() && supervise::listener_available()) {
        return Err(format!(
            "Landlock ABI {abi} does not confine pathname unix sockets (needs {}), and the seccomp \
             supervisor that does cannot run here: a seccomp filter of the host already has a \
             listener, or close_range is refused",
            crate::sandbox::ABI_UNIX
        ));
    }
    Ok(Support {
        mechanism: Mechanism::Landlock,
        abi: abi as u32,
        seccomp,
    })
}

/// A job's sandbox, ready for the spawn child: the ruleset's descriptor and the
/// filter, written once for the process (`filter::program`). Dropped after the launch:
/// the ruleset then goes to the TMPDIR helper thread, which frees it and builds the
/// next job's (`rules::after_launch`).
pub struct Prepared {
    /// `None` only once dropped.
    ruleset: Option<OwnedFd>,
    filter: &'static filter::Program,
    /// A second Landlock layer for a root job with limited reads (`root_reads.rs`).
    root_reads: Option<&'static OwnedFd>,
    /// The layer that hides the credential stores and output folders (`hidden.rs`):
    /// its descriptor, owned by `resolved`, which this holds.
    hidden: Option<c_int>,
    resolved: Arc<Resolved>,
    support: Support,
    /// The job's filter is to get a listener (`watch.rs`): no cgroup will hold it.
    watch: bool,
    /// Below Landlock ABI 9: the job's listener carries its calls to unix sockets to
    /// the supervisor (`supervise`), with what they may reach.
    supervised: Option<Arc<supervise::Policy>>,
    /// Written by the spawn child, which shares our memory and, when it makes one, our
    /// descriptor table: the listener's number in that table, or -1. Ours from then
    /// on: taken after the launch (`take_watch`), else closed when this is dropped.
    listener: AtomicI32,
}

impl Prepared {
    /// Builds the ruleset for `job` (with a rule for the job's own terminal, when it
    /// has one) and takes the filter for its network mode. `watch`: the job's filter
    /// gets a listener that tells when no process of the job is left (`take_watch`);
    /// asked for when no cgroup will hold the job, which would tell it instead.
    pub fn new(job: &JobSandbox<'_>, terminal: Option<BorrowedFd<'_>>, watch: bool) -> io::Result<Self> {
        let (ruleset, _built_ahead) = rules::ruleset(job, terminal)?;
        let network = crate::sandbox::effective_network(&job.resolved.network, &job.support);
        let supervised = job.support.supervised_unix();
        let filter = filter::program(&network, job.resolved.sysv_ipc, supervised)?;
        Ok(Self {
            ruleset: Some(ruleset),
            filter,
            root_reads: match job.resolved.read {
                Some(_) => root_reads::layer()?,
                None => None,
            },
            hidden: hidden::layer(job.resolved)?.map(|fd| fd.as_raw_fd()),
            resolved: job.resolved.clone(),
            support: job.support,
            watch: watch && watch::available(),
            supervised: supervised.then(|| Arc::new(supervise::Policy::new(job))),
            listener: AtomicI32::new(-1),
        })
    }

    /// The spawn child is to share our descriptor table until the filter is in place,
    /// so its listener lands here (`watch.rs`).
    pub fn shares_descriptors(&self) -> bool {
        self.watch || self.supervised.is_some()
    }

    /// After the launch: the job's listener goes to the supervisor (below ABI 9) and
    /// to `watched`, the job's TMPDIR, which learns from it when nothing of the job
    /// is left (when no cgroup holds the job). The supervisor not starting fails the
    /// spawn: the job's calls to sockets would wait for an answer that never comes.
    pub fn hand_over(&self, pid: i32, watched: impl FnOnce(OwnedFd)) -> io::Result<()> {
        let Some(listener) = self.take_watch() else {
            return match self.supervised {
                Some(_) => Err(io::Error::other("the job's filter has no listener to supervise")),
                None => Ok(()),
            };
        };
        if self.watch {
            watched(listener.try_clone()?);
        }
        match &self.supervised {
            Some(policy) => supervise::start(listener, policy.clone(), pid),
            None => Ok(()),
        }
    }

    /// After the launch: the listener of the job's filter, which reports a hang-up
    /// once no process of the job is left (`nothing_left`); `None` if none was asked
    /// for or could be made.
    pub fn take_watch(&self) -> Option<OwnedFd> {
        let fd = self.listener.swap(-1, Ordering::AcqRel);
        // SAFETY: a number the child left is a listener it made in our table, which
        // nothing else owns (the child's own copy of the table is separate since
        // `watch::unshare_descriptors`); taken once (the swap).
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // A listener nobody took (the launch failed after the filter): closed.
        drop(self.take_watch());
        if let Some(used) = self.ruleset.take() {
            rules::after_launch(used, &self.resolved, self.support);
        }
    }
}

/// In the spawn child, before it touches its descriptors: confines the calling
/// process. `shared`: the child shares our descriptor table (`shares_descriptors`), so
/// the filter's listener is made there; it then takes a table of its own before
/// returning. Returns false with `errno` set if a step failed (the child then exits:
/// nothing runs).
///
/// # Safety
/// Async-signal-safe, allocation-free: system calls on `prepared` only.
pub unsafe fn apply(prepared: &Prepared, shared: bool) -> bool {
    // A job keeps no capability (`caps.rs` says which attacks each one would open).
    if !caps::drop_all() {
        return false;
    }
    // Required by landlock_restrict_self and seccomp for an unprivileged caller, and
    // what keeps a setuid program or one with file capabilities inside from gaining
    // privileges the rules assume it lacks (with the bounding set and the securebits
    // left as they are, this is what stops an exec from handing capabilities back, to
    // uid 0 too: `caps.rs`).
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) < 0 {
        return false;
    }
    let Some(ruleset) = &prepared.ruleset else {
        return false;
    };
    if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd() as c_int, 0u32) < 0 {
        return false;
    }
    if let Some(layer) = prepared.root_reads {
        if libc::syscall(libc::SYS_landlock_restrict_self, layer.as_raw_fd() as c_int, 0u32) < 0 {
            return false;
        }
    }
    if let Some(layer) = prepared.hidden {
        if libc::syscall(libc::SYS_landlock_restrict_self, layer, 0u32) < 0 {
            return false;
        }
    }
    // On the stack: the child allocates nothing. The program is at most 4096
    // instructions (`filter::Asm::finish`), so its length fits.
    let program = &prepared.filter.code;
    let filter = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    let filter: *const libc::sock_fprog = &filter;
    if !shared {
        return libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0u32, filter) >= 0;
    }
    let Some(listener) = watch::install_reporting(filter, prepared.supervised.is_some()) else {
        return false;
    };
    prepared.listener.store(listener, Ordering::Release);
    // Nothing of ours is touched after this: the stdio set-up and the clean-up of
    // inherited descriptors work on the child's own copy.
    watch::unshare_descriptors()
}
