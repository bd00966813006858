//! Which system calls the sandbox's seccomp program refuses, and on which arguments:
//! the checks `super::filter` writes into one program (its module says how, and why
//! seccomp at all). Each check says which attack it stops.
//!
//! An argument is compared by its low 32 bits (every one below is an `int`, a mode or
//! a set of flags that fits in them) unless the check says otherwise, as the kernel
//! itself reads those arguments.

/// Which sockets a job may make (`socket(domain, type, protocol)`), by the network
/// mode. Landlock (ABI 4 to 9) filters TCP only: UDP, raw and packet sockets, SCTP and every other family are refused here. Unix sockets stay
/// (pipes between a job's processes, `socketpair`, local servers); abstract ones are
/// scoped by Landlock (ABI 6). Even with the network allowed, only unix, internet and
/// routing-netlink sockets are made: raw and packet sockets (sniffing and forging
/// traffic; they also need `CAP_NET_RAW`, dropped), `AF_VSOCK` (the hypervisor or the
/// host of a VM), `AF_ALG` (the kernel's crypto, attack surface), netlink but
/// `NETLINK_ROUTE` (audit, uevents, `sock_diag`'s list of every socket of the host),
/// Bluetooth, CAN and the rest are refused. `NETLINK_ROUTE` stays there because glibc's
/// `getaddrinfo` (with `AI_ADDRCONFIG`) and `ip addr` read interfaces through it;
/// changing them needs `CAP_NET_ADMIN`, dropped.
///
/// Per mode, what is allowed (everything else is `EPERM`; the type is compared by its
/// low four bits, the rest being `SOCK_NONBLOCK` and `SOCK_CLOEXEC`):
/// - `UnixOnly`: `AF_UNIX`.
/// - `UnixAndTcp`: also `AF_INET`/`AF_INET6` of a type not in `REFUSED_INET_TYPES`,
///   and for a stream socket only the protocols 0 and `IPPROTO_TCP` (not SCTP or
///   MPTCP: Landlock's port rules cover TCP only).
/// - `Any`: also `AF_NETLINK` with `NETLINK_ROUTE`, and `AF_INET`/`AF_INET6` of a
///   type but `SOCK_RAW` and `SOCK_PACKET`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Sockets {
    UnixOnly,
    UnixAndTcp,
    Any,
}

/// What the program does with a call of one number; anything it does not refuse is
/// allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Check {
    /// `ENOSYS` whatever the arguments: callers are ready to find the call missing and
    /// fall back.
    Missing,
    /// `EPERM` whatever the arguments.
    Refused,
    /// `EPERM` when argument `arg` has any bit of `mask`.
    AnyBit { arg: u8, mask: u32 },
    /// `EPERM` when argument `arg` is one of `values`.
    OneOf { arg: u8, values: Vec<u32> },
    /// `EPERM` when the process argument `who` is not 0 (the caller), or when the
    /// argument `which` (the kind of `who`) is `user` (every process of the user).
    OtherProcess { who: u8, which: Option<(u8, u32)> },
    /// `prlimit64(pid, resource, new_limit, old_limit)`: `EPERM` when `pid` is not 0
    /// and a new limit is given (`new_limit`, a pointer: all 64 bits not null).
    OtherProcessLimit,
    /// `socket(domain, type, protocol)`, by the network mode (`Sockets`).
    Socket(Sockets),
    /// Handed to the service's supervisor whatever the arguments (`supervised`).
    Notify,
    /// Handed to the supervisor when the pointer argument `arg` is not null (all 64
    /// bits), else allowed.
    NotifyIfSet { arg: u8 },
}

/// Every call the program looks at, by number, with its check. `sysv_ipc`: System V
/// IPC is allowed (`sysv_ipc`). `supervised`: the calls that can name a unix socket's
/// path go to the service (`supervised_calls`).
pub(super) fn checks(sockets: Sockets, sysv_ipc: bool, supervised: bool) -> Vec<(i64, Check)> {
    let mut checks = Vec::new();
    if supervised {
        supervised_calls(&mut checks);
    }
    // `io_uring_*`: it opens and connects sockets inside the kernel, past the `socket`
    // rule below (libuv then uses its thread pool); `clone3`: its flags are in memory a
    // filter cannot read (glibc then uses `clone`, whose flags it can).
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_clone3,
    ] {
        checks.push((nr, Check::Missing));
    }
    // New namespaces: a user namespace makes its creator root inside it, with every
    // kernel interface that opens up. Landlock still holds inside (a domain is kept
    // across namespaces and refuses mounts), so this narrows the kernel a job can
    // reach; bwrap, `unshare -r` and Chromium's sandbox fail inside ours. `unshare`
    // and `setns` are refused whole, `clone` with any `CLONE_NEW*` flag (all in the low
    // 32 bits of its first argument).
    checks.push((libc::SYS_unshare, Check::Refused));
    checks.push((libc::SYS_setns, Check::Refused));
    checks.push((
        libc::SYS_clone,
        Check::AnyBit {
            arg: 0,
            mask: NAMESPACE_FLAGS.iter().fold(0, |all, &flag| all | flag as u32),
        },
    ));
    // TIOCSTI pushes bytes into a terminal's input queue: through a terminal device
    // it can open (its own, or one whose path it can read), a job would type commands
    // into the shell reading it. TIOCLINUX can do the same on a virtual console.
    checks.push((
        libc::SYS_ioctl,
        Check::OneOf {
            arg: 1,
            values: vec![request(libc::TIOCSTI), request(libc::TIOCLINUX)],
        },
    ));
    checks.push((libc::SYS_socket, Check::Socket(sockets)));
    other_processes(&mut checks);
    // bpf(2): loading programs into the kernel. Root's `CAP_BPF`/`CAP_SYS_ADMIN` are
    // dropped (`caps.rs`), but a kernel with `kernel.unprivileged_bpf_disabled=0` still
    // takes socket filters from anyone, and no build or test needs it: kernel attack
    // surface only.
    checks.push((libc::SYS_bpf, Check::Refused));
    set_id_bits(&mut checks);
    if !sysv_ipc {
        sysv_ipc_calls(&mut checks);
    }
    checks
}

/// System V IPC: shared memory segments, semaphore sets and message queues are named
/// by a key or id anyone may guess (`ipcs` lists them all), and the kernel lets any
/// process of the owning user (and often everyone: mode 0666 is common) attach, read,
/// write, remove or change them. Landlock does not cover them (its IPC scoping is for
/// signals and abstract unix sockets), so a job could read or corrupt what another
/// program of the user (a database's shared buffers, an X server's MIT-SHM images, a
/// build tool's lock semaphore) keeps there, or remove it. Builds and tests rarely use
/// them (POSIX shared memory is files in `/dev/shm`, not this; PostgreSQL's `initdb`
/// tests still do): `sandbox.sysvIpc` allows them. `EPERM`, as the kernel answers a
/// caller without the rights. x86_64, aarch64 and riscv64 (the architectures the
/// filter exists for) have a system call each; the old `ipc` multiplexer exists only
/// on architectures without a filter here, where no sandbox is given at all.
fn sysv_ipc_calls(checks: &mut Vec<(i64, Check)>) {
    for nr in [
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmdt,
        libc::SYS_shmctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
    ] {
        checks.push((nr, Check::Refused));
    }
}

/// Below Landlock ABI 9 nothing in the kernel confines connecting to a pathname unix
/// socket: a job would reach the D-Bus session bus (`systemd-run --user` runs anything
/// unconfined), ssh-agent (signs with the user's keys), the docker socket, the
/// service's own daemon. A filter cannot read the address (it is in the job's memory),
/// so every call that can carry one is handed to the service's supervisor
/// (`super::supervise`), which reads the address, decides, and makes the call itself on
/// a duplicate of the job's socket: `connect` always, `sendto` with an address (its
/// fifth argument; without one it goes to the connected peer, as `send`), `sendmsg` and
/// `sendmmsg` always (the address is inside each `msghdr`, in memory).
///
/// Only a datagram socket's send can name a new peer (a unix stream socket refuses an
/// address, a seqpacket one ignores it, TCP ignores it but with `MSG_FASTOPEN`), so a
/// `sendmsg` on a connected stream costs a round trip it would not need. The filter
/// cannot tell: it sees the descriptor's number, not its socket's type, and the
/// `msghdr`'s address, not what is in it. Letting the call go on once the supervisor
/// has looked (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`) would have the kernel read the
/// `msghdr` and the descriptor table again, after another thread of the job put an
/// address there or a datagram socket at that number (`dup2`): a path would get
/// through. Numbers reserved for datagram sockets would not hold either (`dup2`, or
/// the socket sent to the job itself with `SCM_RIGHTS`, lands anywhere). So every
/// `sendmsg` and `sendmmsg` is supervised; `write`, `writev`, `send` and `sendto`
/// without an address never are.
fn supervised_calls(checks: &mut Vec<(i64, Check)>) {
    checks.push((libc::SYS_connect, Check::Notify));
    checks.push((libc::SYS_sendto, Check::NotifyIfSet { arg: 4 }));
    checks.push((libc::SYS_sendmsg, Check::Notify));
    checks.push((libc::SYS_sendmmsg, Check::Notify));
}

/// Namespaces a job could make with `clone`.
const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

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
/// mode) is not refused: `open` is on every program's hot path, where a check of its
/// arguments would run the filter on every call (docs/sandbox.md).
fn set_id_bits(checks: &mut Vec<(i64, Check)>) {
    let mask = libc::S_ISUID | libc::S_ISGID;
    #[cfg(target_arch = "x86_64")]
    checks.push((libc::SYS_chmod, Check::AnyBit { arg: 1, mask }));
    checks.push((libc::SYS_fchmod, Check::AnyBit { arg: 1, mask }));
    checks.push((libc::SYS_fchmodat, Check::AnyBit { arg: 2, mask }));
    checks.push((SYS_FCHMODAT2, Check::AnyBit { arg: 2, mask }));
}

/// `NETLINK_ROUTE` (linux/netlink.h).
pub(super) const NETLINK_ROUTE: u32 = 0;

/// `IOPRIO_WHO_USER` and `PRIO_USER`: every process of the user, the agent included.
const WHO_USER_IOPRIO: u32 = 3;
const WHO_USER_PRIO: u32 = 2;

/// Calls that change another process's limits, priority or scheduling, which need no
/// capability for a process of the same user and which neither Landlock (its ptrace
/// and signal scoping do not cover them) nor the capabilities stop: `prlimit` of the
/// agent's Node process (`RLIMIT_CPU` kills it, `RLIMIT_NOFILE` stops its next job,
/// `RLIMIT_FSIZE=0` kills it at its next write), the same on the watchdog (a job's
/// detached processes then outlive the agent), `setpriority`/`ioprio_set`/`sched_*` on
/// outside pids. Allowed on the caller only (pid 0, as libc's `setrlimit`, `nice`,
/// `ionice -c3 cmd`, `taskset -c 0 cmd`, `chrt` with a command pass it); refused on
/// any pid, even the job's own children (the filter is made once for every job and
/// cannot know which pids are the job's), so `renice -p <pid>`, `prlimit --pid <pid>`
/// and the pthread calls that pass a thread's id fail with `EPERM`. Reading a limit
/// (`prlimit64` without a new one) stays allowed.
fn other_processes(checks: &mut Vec<(i64, Check)>) {
    checks.push((libc::SYS_prlimit64, Check::OtherProcessLimit));
    // setpriority(which, who, prio) and ioprio_set(which, who, ioprio): `who` 0 is the
    // caller (or its process group: the job's own, as a job is its own session); a
    // user-wide change reaches the agent whatever `who` says.
    checks.push((
        libc::SYS_setpriority,
        Check::OtherProcess {
            who: 1,
            which: Some((0, WHO_USER_PRIO)),
        },
    ));
    checks.push((
        libc::SYS_ioprio_set,
        Check::OtherProcess {
            who: 1,
            which: Some((0, WHO_USER_IOPRIO)),
        },
    ));
    for nr in [
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setattr,
    ] {
        checks.push((nr, Check::OtherProcess { who: 0, which: None }));
    }
}

/// An ioctl request number as a filter compares it: its low 32 bits (libc's type
/// differs between libcs; the kernel takes the request as an `unsigned int`).
#[allow(clippy::unnecessary_cast)]
pub(super) fn request(number: libc::Ioctl) -> u32 {
    number as u32
}

/// `SOCK_PACKET` (deprecated in libc's names, still taken by the kernel).
pub(super) const SOCK_PACKET: u32 = 10;

/// Internet socket types refused with the network limited to TCP ports.
pub(super) const REFUSED_INET_TYPES: [u32; 6] = [
    libc::SOCK_DGRAM as u32,
    libc::SOCK_RAW as u32,
    libc::SOCK_RDM as u32,
    libc::SOCK_SEQPACKET as u32,
    libc::SOCK_DCCP as u32,
    SOCK_PACKET,
];

/// Internet socket types refused even with the network allowed.
pub(super) const RAW_INET_TYPES: [u32; 2] = [libc::SOCK_RAW as u32, SOCK_PACKET];
