//! Which system calls the sandbox's seccomp program refuses, and on which arguments:
//! the rules `super::filter` compiles into one program (its module says how, and why
//! seccomp at all). `missing_rules` answer `ENOSYS` (callers fall back), `refused_rules`
//! `EPERM`; each rule says which attack it stops.

use std::collections::BTreeMap;

use seccompiler::{SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompRule};

/// The rules of one part: a system call number → its argument rules (none: every call).
pub(super) type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// Which sockets a job may make, by the network mode.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sockets {
    UnixOnly,
    UnixAndTcp,
    Any,
}

/// An argument condition (`Dword` compares the low 32 bits: an `int` argument).
fn arg(index: u8, len: Len, op: Op, value: u64) -> Result<Cond, seccompiler::Error> {
    Cond::new(index, len, op, value).map_err(seccompiler::Error::Backend)
}

fn rule(conditions: Vec<Cond>) -> Result<SeccompRule, seccompiler::Error> {
    SeccompRule::new(conditions).map_err(seccompiler::Error::Backend)
}

/// Refused whatever their arguments (an empty rule list matches every call).
pub(super) fn missing_rules() -> Result<Rules, seccompiler::Error> {
    let mut rules = Rules::new();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_clone3,
    ] {
        rules.insert(nr, Vec::new());
    }
    Ok(rules)
}

/// Namespaces a job could make with `clone` (`unshare` and `setns` are refused whole).
const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

pub(super) fn refused_rules(sockets: Sockets) -> Result<Rules, seccompiler::Error> {
    let mut rules = Rules::new();
    // New namespaces: a user namespace makes its creator root inside it, with every
    // kernel interface that opens up. Landlock still holds inside (a domain is kept
    // across namespaces and refuses mounts), so this narrows the kernel a job can
    // reach; bwrap, `unshare -r` and Chromium's sandbox fail inside ours.
    rules.insert(libc::SYS_unshare, Vec::new());
    rules.insert(libc::SYS_setns, Vec::new());
    let clone_flags_arg = 0;
    rules.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|&flag| {
                rule(vec![arg(
                    clone_flags_arg,
                    Len::Qword,
                    Op::MaskedEq(flag as u64),
                    flag as u64,
                )?])
            })
            .collect::<Result<_, _>>()?,
    );
    // TIOCSTI pushes bytes into a terminal's input queue: through a terminal device
    // it can open (its own, or one whose path it can read), a job would type commands
    // into the shell reading it. TIOCLINUX can do the same on a virtual console.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![arg(1, Len::Dword, Op::Eq, request(libc::TIOCSTI))?])?,
            rule(vec![arg(1, Len::Dword, Op::Eq, request(libc::TIOCLINUX))?])?,
        ],
    );
    rules.insert(libc::SYS_socket, socket_rules(sockets)?);
    other_processes(&mut rules)?;
    // bpf(2): loading programs into the kernel. Root's `CAP_BPF`/`CAP_SYS_ADMIN` are
    // dropped (`caps.rs`), but a kernel with `kernel.unprivileged_bpf_disabled=0` still
    // takes socket filters from anyone, and no build or test needs it: kernel attack
    // surface only.
    rules.insert(libc::SYS_bpf, Vec::new());
    set_id_bits(&mut rules)?;
    Ok(rules)
}

/// `fchmodat2` (Linux 6.6; the same number on every architecture).
pub(super) const SYS_FCHMODAT2: i64 = 452;

/// Setting the set-user-ID or set-group-ID bit: a root job (which owns the system's
/// programs even without capabilities, `caps.rs`) would make `/usr/bin/python3`
/// set-user-ID root for every local user; an ordinary user's job would leave a program
/// that runs as that user for anyone who can reach it. Landlock has no right for
/// modes, so the bits are refused in the calls that change a mode (the mode argument:
/// `chmod(path, mode)`, `fchmod(fd, mode)`, `fchmodat(dir, path, mode)`,
/// `fchmodat2(dir, path, mode, flags)`): `chmod u+s`, `install -m 4755`, `cp -p` of a
/// set-ID program. A new file created with the bits (`open` with `O_CREAT` and such a
/// mode) is not refused: `open` is on every program's hot path, where a rule on its
/// arguments would run the filter on every call (docs/sandbox.md).
fn set_id_bits(rules: &mut Rules) -> Result<(), seccompiler::Error> {
    // Either bit set: one rule per bit.
    let with_bits = |mode_arg: u8| -> Result<Vec<SeccompRule>, seccompiler::Error> {
        [libc::S_ISUID, libc::S_ISGID]
            .into_iter()
            .map(|bit| {
                rule(vec![arg(
                    mode_arg,
                    Len::Dword,
                    Op::MaskedEq(u64::from(bit)),
                    u64::from(bit),
                )?])
            })
            .collect()
    };
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_chmod, with_bits(1)?);
    rules.insert(libc::SYS_fchmod, with_bits(1)?);
    rules.insert(libc::SYS_fchmodat, with_bits(2)?);
    rules.insert(SYS_FCHMODAT2, with_bits(2)?);
    Ok(())
}

/// `NETLINK_ROUTE` (linux/netlink.h).
const NETLINK_ROUTE: u64 = 0;

/// `IOPRIO_WHO_USER` and `PRIO_USER`: every process of the user, the agent included.
const WHO_USER_IOPRIO: u64 = 3;
const WHO_USER_PRIO: u64 = 2;

/// Calls that change another process's limits, priority or scheduling, which need no
/// capability for a process of the same user and which neither Landlock (its ptrace
/// and signal scoping do not cover them) nor the capabilities stop: `prlimit` of the
/// agent's Node process (`RLIMIT_CPU` kills it, `RLIMIT_NOFILE` stops its next job,
/// `RLIMIT_FSIZE=0` kills it at its next write), the same on the watchdog (a job's
/// detached processes then outlive the agent), `setpriority`/`ioprio_set`/`sched_*` on
/// outside pids. Allowed on the caller only (pid 0, as libc's `setrlimit`, `nice`,
/// `ionice -c3 cmd`, `taskset -c 0 cmd`, `chrt` with a command pass it); refused on
/// any pid, even the job's own children (the filter is compiled once for every job and
/// cannot know which pids are the job's), so `renice -p <pid>`, `prlimit --pid <pid>`
/// and the pthread calls that pass a thread's id fail with `EPERM`. Reading a limit
/// (`prlimit64` without a new one) stays allowed.
fn other_processes(rules: &mut Rules) -> Result<(), seccompiler::Error> {
    let not_self =
        |index: u8| -> Result<SeccompRule, seccompiler::Error> { rule(vec![arg(index, Len::Dword, Op::Ne, 0)?]) };
    // prlimit64(pid, resource, new_limit, old_limit): refused when it sets a limit of
    // another process.
    rules.insert(
        libc::SYS_prlimit64,
        vec![rule(vec![
            arg(0, Len::Dword, Op::Ne, 0)?,
            arg(2, Len::Qword, Op::Ne, 0)?,
        ])?],
    );
    // setpriority(which, who, prio) and ioprio_set(which, who, ioprio): `who` 0 is the
    // caller (or its process group: the job's own, as a job is its own session); a
    // user-wide change reaches the agent whatever `who` says.
    rules.insert(
        libc::SYS_setpriority,
        vec![not_self(1)?, rule(vec![arg(0, Len::Dword, Op::Eq, WHO_USER_PRIO)?])?],
    );
    rules.insert(
        libc::SYS_ioprio_set,
        vec![not_self(1)?, rule(vec![arg(0, Len::Dword, Op::Eq, WHO_USER_IOPRIO)?])?],
    );
    for nr in [
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setattr,
    ] {
        rules.insert(nr, vec![not_self(0)?]);
    }
    Ok(())
}

/// An ioctl request number as a filter compares it (libc's type differs between libcs).
#[allow(clippy::unnecessary_cast)]
pub(super) fn request(number: libc::Ioctl) -> u64 {
    number as u64
}

/// `socket(domain, type, protocol)`. Landlock (ABI 4 to 9) filters TCP only: UDP, raw
/// and packet sockets, SCTP and every other family are refused here. Unix sockets stay
/// (pipes between a job's processes, `socketpair`, local servers); abstract ones are
/// scoped by Landlock (ABI 6). Even with the network allowed, only unix, internet and
/// routing-netlink sockets are made: raw and packet sockets (sniffing and forging
/// traffic; they also need `CAP_NET_RAW`, dropped), `AF_VSOCK` (the hypervisor or the
/// host of a VM), `AF_ALG` (the kernel's crypto, attack surface), netlink but
/// `NETLINK_ROUTE` (audit, uevents, `sock_diag`'s list of every socket of the host),
/// Bluetooth, CAN and the rest are refused. `NETLINK_ROUTE` stays there because glibc's
/// `getaddrinfo` (with `AI_ADDRCONFIG`) and `ip addr` read interfaces through it;
/// changing them needs `CAP_NET_ADMIN`, dropped.
fn socket_rules(sockets: Sockets) -> Result<Vec<SeccompRule>, seccompiler::Error> {
    let (domain, kind, protocol) = (0, 1, 2);
    let unix = libc::AF_UNIX as u64;
    let (inet, inet6) = (libc::AF_INET as u64, libc::AF_INET6 as u64);
    // SOCK_PACKET (deprecated in libc's names, still taken by the kernel).
    let sock_packet = 10;
    match sockets {
        Sockets::Any => {
            let netlink = libc::AF_NETLINK as u64;
            let mut rules = vec![
                rule(vec![
                    arg(domain, Len::Dword, Op::Ne, unix)?,
                    arg(domain, Len::Dword, Op::Ne, inet)?,
                    arg(domain, Len::Dword, Op::Ne, inet6)?,
                    arg(domain, Len::Dword, Op::Ne, netlink)?,
                ])?,
                rule(vec![
                    arg(domain, Len::Dword, Op::Eq, netlink)?,
                    arg(protocol, Len::Dword, Op::Ne, NETLINK_ROUTE)?,
                ])?,
            ];
            for family in [inet, inet6] {
                for raw in [libc::SOCK_RAW as u64, sock_packet] {
                    rules.push(rule(vec![
                        arg(domain, Len::Dword, Op::Eq, family)?,
                        arg(kind, Len::Dword, Op::MaskedEq(0xf), raw)?,
                    ])?);
                }
            }
            Ok(rules)
        }
        Sockets::UnixOnly => Ok(vec![rule(vec![arg(domain, Len::Dword, Op::Ne, unix)?])?]),
        Sockets::UnixAndTcp => {
            let mut rules = vec![rule(vec![
                arg(domain, Len::Dword, Op::Ne, unix)?,
                arg(domain, Len::Dword, Op::Ne, inet)?,
                arg(domain, Len::Dword, Op::Ne, inet6)?,
            ])?];
            for family in [inet, inet6] {
                // Anything but a stream socket (the type's low bits; the high ones are
                // SOCK_NONBLOCK and SOCK_CLOEXEC)...
                rules.push(rule(vec![
                    arg(domain, Len::Dword, Op::Eq, family)?,
                    arg(kind, Len::Dword, Op::MaskedEq(0xf), libc::SOCK_STREAM as u64)?,
                    arg(protocol, Len::Dword, Op::Ne, 0)?,
                    arg(protocol, Len::Dword, Op::Ne, libc::IPPROTO_TCP as u64)?,
                ])?);
                for other in [
                    libc::SOCK_DGRAM as u64,
                    libc::SOCK_RAW as u64,
                    libc::SOCK_RDM as u64,
                    libc::SOCK_SEQPACKET as u64,
                    libc::SOCK_DCCP as u64,
                    sock_packet,
                ] {
                    rules.push(rule(vec![
                        arg(domain, Len::Dword, Op::Eq, family)?,
                        arg(kind, Len::Dword, Op::MaskedEq(0xf), other)?,
                    ])?);
                }
            }
            // ...and a stream socket of another protocol (SCTP, MPTCP): Landlock's
            // port rules cover TCP only.
            Ok(rules)
        }
    }
}
