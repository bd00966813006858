//! The seccomp half of a Linux sandbox: what Landlock cannot see.
//!
//! Compiled with `seccompiler` in the parent, once per network mode (the program is the
//! same for every job of that mode), and installed in the spawn child with one
//! `seccomp(SECCOMP_SET_MODE_FILTER)` (`super::apply`). Three parts, because seccompiler
//! gives one action per program and the refusals differ, chained into one program
//! (`chain`): the kernel compiles every filter it is given to machine code, and each
//! install cost a fraction of a millisecond here, more than the rest of the sandbox.
//! The parts:
//! - `ENOSYS` for system calls libc and runtimes are ready to find missing, so they
//!   fall back: `io_uring_*` (it opens and connects sockets inside the kernel, past
//!   the `socket` rule below; libuv then uses its thread pool) and `clone3` (its flags
//!   are in memory a filter cannot read; glibc then uses `clone`, whose flags it can).
//! - `EPERM` for refusals: internet sockets (unless the network is allowed), and
//!   whatever the network mode, raw, packet, vsock, crypto and non-routing netlink
//!   sockets (`socket_rules`); new namespaces; the terminal ioctls that type into a
//!   terminal (`TIOCSTI`) or drive the console (`TIOCLINUX`); `bpf`; changing the
//!   limits, priority or scheduling of any process but the caller
//!   (`other_processes`); setting a set-user-ID or set-group-ID bit (`set_id_bits`).
//! - on x86_64, `ENOSYS` for every x32 system call (numbers with bit 30 set): they
//!   share the x86_64 audit architecture, so without this `socket` by its x32 number
//!   would pass the rules above, which match exact numbers. In `front`, written here
//!   (seccompiler matches numbers only exactly), with the early "allow" of every call
//!   the parts have no rule for.
//!
//! A program of another architecture (an i386 binary run by an x86_64 job, through
//! `int 0x80`) is killed by seccompiler's architecture check: confined or nothing.

use std::collections::BTreeMap;
use std::io;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::sandbox::Network;

/// The compiled program(s) for one network mode, in the order they are installed.
pub struct Programs {
    pub programs: Vec<BpfProgram>,
}

/// `first`, then `then`: every "allow" of `first` becomes a jump to the start of `then`,
/// so a call is allowed only if both parts allow it, and the first refusal met is the
/// answer. (Classic BPF jumps only forward, and `then` follows `first`: the offsets fit.)
fn chain(first: BpfProgram, then: BpfProgram) -> BpfProgram {
    const BPF_RET_K: u16 = 0x06;
    const BPF_JMP_JA: u16 = 0x05;
    let len = first.len();
    let mut out = Vec::with_capacity(len + then.len());
    for (i, mut insn) in first.into_iter().enumerate() {
        if insn.code == BPF_RET_K && insn.k == libc::SECCOMP_RET_ALLOW {
            insn = seccompiler::sock_filter {
                code: BPF_JMP_JA,
                jt: 0,
                jf: 0,
                k: (len - i - 1) as u32,
            };
        }
        out.push(insn);
    }
    out.extend(then);
    out
}

#[cfg(target_arch = "x86_64")]
const ARCH: Option<TargetArch> = Some(TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<TargetArch> = Some(TargetArch::aarch64);
#[cfg(target_arch = "riscv64")]
const ARCH: Option<TargetArch> = Some(TargetArch::riscv64);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
const ARCH: Option<TargetArch> = None;

/// Whether a filter can be built for this architecture at all.
pub fn available() -> bool {
    ARCH.is_some()
}

/// The programs for `network` (`TcpPorts` lists are alike: the ports are Landlock's).
pub fn programs(network: &Network) -> io::Result<&'static Programs> {
    static OFF: OnceLock<Result<Programs, String>> = OnceLock::new();
    static TCP: OnceLock<Result<Programs, String>> = OnceLock::new();
    static ON: OnceLock<Result<Programs, String>> = OnceLock::new();
    let (cell, sockets) = match network {
        Network::Off => (&OFF, Sockets::UnixOnly),
        Network::TcpPorts(_) => (&TCP, Sockets::UnixAndTcp),
        Network::On => (&ON, Sockets::Any),
    };
    cell.get_or_init(|| build(sockets).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(format!("the seccomp filter cannot be built: {e}")))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sockets {
    UnixOnly,
    UnixAndTcp,
    Any,
}

fn build(sockets: Sockets) -> Result<Programs, seccompiler::Error> {
    let arch = ARCH.ok_or_else(|| {
        seccompiler::Error::Backend(seccompiler::BackendError::InvalidTargetArch(
            std::env::consts::ARCH.to_string(),
        ))
    })?;
    let (missing, refused) = (missing_rules()?, refused_rules(sockets)?);
    let filtered: Vec<i64> = missing.keys().chain(refused.keys()).copied().collect();
    let body = chain(
        compile(missing, libc::ENOSYS, arch)?,
        compile(refused, libc::EPERM, arch)?,
    );
    let program = [front(&filtered), body].concat();
    Ok(Programs {
        programs: vec![program],
    })
}

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

fn compile(rules: Rules, errno: i32, arch: TargetArch) -> Result<BpfProgram, seccompiler::Error> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)?;
    BpfProgram::try_from(filter).map_err(seccompiler::Error::Backend)
}

/// An argument condition (`Dword` compares the low 32 bits: an `int` argument).
fn arg(index: u8, len: Len, op: Op, value: u64) -> Result<Cond, seccompiler::Error> {
    Cond::new(index, len, op, value).map_err(seccompiler::Error::Backend)
}

fn rule(conditions: Vec<Cond>) -> Result<SeccompRule, seccompiler::Error> {
    SeccompRule::new(conditions).map_err(seccompiler::Error::Backend)
}

/// Refused whatever their arguments (an empty rule list matches every call).
fn missing_rules() -> Result<Rules, seccompiler::Error> {
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

fn refused_rules(sockets: Sockets) -> Result<Rules, seccompiler::Error> {
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
const SYS_FCHMODAT2: i64 = 452;

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
fn request(number: libc::Ioctl) -> u64 {
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

/// The audit architecture of the programs' target (linux/audit.h).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 0xC000_00F3;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
const AUDIT_ARCH: u32 = 0;

/// What runs before the seccompiler parts: every system call they have no rule for is
/// allowed at once, after a few instructions instead of a walk through both parts.
/// That matters at install time, not only per call: the kernel runs the filter once per
/// system call number (its action cache), and that emulation was most of the cost of a
/// sandboxed spawn. The numbers with rules are found by a binary search (`search`), so
/// the walk grows with the logarithm of their count, not the count (22 of them: five
/// comparisons instead of up to 22). Also, on x86_64, `ENOSYS` for every x32 system
/// call (numbers with bit 30 set): they share x86_64's audit architecture, so rules
/// matching exact numbers would not see them. Another architecture goes to the parts,
/// whose check kills it. Written by hand: seccompiler has no such early exit, nor
/// number ranges.
fn front(filtered: &[i64]) -> BpfProgram {
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JGE_K: u16 = 0x35;
    const RET_K: u16 = 0x06;
    let stmt = |code: u16, k: u32| sock_filter { code, jt: 0, jf: 0, k };
    let x32 = cfg!(target_arch = "x86_64");
    let mut numbers: Vec<u32> = filtered.iter().map(|&nr| nr as u32).collect();
    numbers.sort_unstable();
    numbers.dedup();
    // Laid out as: [arch check] [load nr] [x32 check] [search] [allow] [x32: ENOSYS] |
    // body. Jumps are resolved once every place is known (offsets count from the next
    // instruction).
    let mut code: Vec<(u16, u32, Target, Target)> = Vec::new();
    code.push((LD_W_ABS, 4, Target::Next, Target::Next));
    code.push((JEQ_K, AUDIT_ARCH, Target::Next, Target::Body));
    code.push((LD_W_ABS, 0, Target::Next, Target::Next));
    if x32 {
        code.push((JGE_K, 0x4000_0000, Target::Enosys, Target::Next));
    }
    search(&numbers, &mut code);
    let allow = code.len();
    let enosys = allow + 1;
    let body = enosys + usize::from(x32);
    let offset = |at: usize, target: Target| -> u8 {
        let to = match target {
            Target::Next => at + 1,
            Target::At(i) => i,
            Target::Allow => allow,
            Target::Enosys => enosys,
            Target::Body => body,
        };
        // Forward only, within a byte: the front is some fifty instructions.
        (to - at - 1) as u8
    };
    let mut out: Vec<sock_filter> = code
        .iter()
        .enumerate()
        .map(|(at, &(op, k, jt, jf))| sock_filter {
            code: op,
            jt: offset(at, jt),
            jf: offset(at, jf),
            k,
        })
        .collect();
    out.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
    if x32 {
        out.push(stmt(RET_K, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    }
    debug_assert_eq!(out.len(), body);
    out
}

/// Where a jump of `front` goes.
#[derive(Clone, Copy)]
enum Target {
    Next,
    At(usize),
    Allow,
    Enosys,
    Body,
}

/// A binary search for the loaded number among `numbers` (sorted): a match jumps to the
/// body, a miss to "allow". Small groups are compared one by one.
fn search(numbers: &[u32], code: &mut Vec<(u16, u32, Target, Target)>) {
    const JEQ_K: u16 = 0x15;
    const JGE_K: u16 = 0x35;
    if numbers.len() <= 3 {
        for &nr in numbers {
            code.push((JEQ_K, nr, Target::Body, Target::Next));
        }
        // To "allow": a comparison that always holds, so `front` resolves it as every
        // other jump (an unconditional jump keeps its offset elsewhere, in `k`).
        code.push((JGE_K, 0, Target::Allow, Target::Allow));
        return;
    }
    let mid = numbers.len() / 2;
    let split = code.len();
    code.push((JGE_K, numbers[mid], Target::Next, Target::Next));
    search(&numbers[..mid], code);
    let upper = code.len();
    code[split].2 = Target::At(upper);
    search(&numbers[mid..], code);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_compiles() {
        for network in [Network::Off, Network::TcpPorts(vec![1]), Network::On] {
            let programs = programs(&network).expect("compiles");
            assert_eq!(programs.programs.len(), 1, "one program: one compilation by the kernel");
            assert!(programs.programs.iter().all(|p| !p.is_empty() && p.len() < 4096));
        }
    }

    /// Runs a classic BPF seccomp program over one call, as the kernel would: the
    /// instructions seccompiler and `front` emit (loads of `seccomp_data`, ALU AND,
    /// jumps, returns).
    fn run(program: &[seccompiler::sock_filter], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
        let word = |offset: u32| -> u32 {
            match offset {
                0 => nr as u32,
                4 => arch,
                o if (16..64).contains(&o) => {
                    let arg = args[((o - 16) / 8) as usize];
                    if (o - 16) % 8 == 0 {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
                o => panic!("load at {o}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            pc += 1;
            match i.code {
                0x20 => acc = word(i.k),
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x06 => return i.k,
                0x15 | 0x25 | 0x35 | 0x45 => {
                    let taken = match i.code {
                        0x15 => acc == i.k,
                        0x25 => acc > i.k,
                        0x35 => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                code => panic!("instruction {code:#x} at {}", pc - 1),
            }
        }
    }

    #[test]
    fn the_program_allows_refuses_and_kills_as_documented() {
        let allow = libc::SECCOMP_RET_ALLOW;
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let off = &programs(&Network::Off).expect("off").programs[0];
        let ports = &programs(&Network::TcpPorts(vec![1])).expect("ports").programs[0];
        let on = &programs(&Network::On).expect("on").programs[0];
        let native = AUDIT_ARCH;
        let call = |p: &BpfProgram, nr: i64, args: [u64; 6]| run(p, native, nr, args);
        let (unix, inet) = (libc::AF_UNIX as u64, libc::AF_INET as u64);
        let (stream, dgram) = (libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64);
        for p in [off, ports, on] {
            assert_eq!(call(p, libc::SYS_getpid, [0; 6]), allow);
            assert_eq!(call(p, libc::SYS_io_uring_setup, [0; 6]), enosys);
            assert_eq!(call(p, libc::SYS_clone3, [0; 6]), enosys);
            assert_eq!(call(p, libc::SYS_unshare, [0; 6]), eperm);
            assert_eq!(
                call(p, libc::SYS_clone, [libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0]),
                eperm
            );
            assert_eq!(call(p, libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]), allow);
            assert_eq!(call(p, libc::SYS_ioctl, [0, request(libc::TIOCSTI), 0, 0, 0, 0]), eperm);
            assert_eq!(
                call(p, libc::SYS_ioctl, [0, request(libc::TIOCGWINSZ), 0, 0, 0, 0]),
                allow
            );
            assert_eq!(call(p, libc::SYS_socket, [unix, stream, 0, 0, 0, 0]), allow);
        }
        assert_eq!(call(off, libc::SYS_socket, [inet, stream, 0, 0, 0, 0]), eperm);
        assert_eq!(
            call(
                ports,
                libc::SYS_socket,
                [inet, stream | libc::SOCK_CLOEXEC as u64, 0, 0, 0, 0]
            ),
            allow
        );
        assert_eq!(call(ports, libc::SYS_socket, [inet, dgram, 0, 0, 0, 0]), eperm);
        assert_eq!(
            call(
                ports,
                libc::SYS_socket,
                [inet, stream, libc::IPPROTO_SCTP as u64, 0, 0, 0]
            ),
            eperm
        );
        assert_eq!(
            call(ports, libc::SYS_socket, [libc::AF_PACKET as u64, stream, 0, 0, 0, 0]),
            eperm
        );
        assert_eq!(call(on, libc::SYS_socket, [inet, dgram, 0, 0, 0, 0]), allow);
        // Even with the network allowed: no raw, packet, vsock, crypto or non-routing
        // netlink sockets.
        let (netlink, raw) = (libc::AF_NETLINK as u64, libc::SOCK_RAW as u64);
        assert_eq!(
            call(on, libc::SYS_socket, [netlink, raw, 0, 0, 0, 0]),
            allow,
            "NETLINK_ROUTE"
        );
        for refused in [
            [netlink, raw, 4],
            [netlink, raw, 15],
            [inet, raw, libc::IPPROTO_ICMP as u64],
            [libc::AF_INET6 as u64, raw | libc::SOCK_CLOEXEC as u64, 0],
            [libc::AF_PACKET as u64, raw, 0],
            [libc::AF_VSOCK as u64, stream, 0],
            [libc::AF_ALG as u64, libc::SOCK_SEQPACKET as u64, 0],
        ] {
            for p in [off, ports, on] {
                let [d, t, pr] = refused;
                assert_eq!(call(p, libc::SYS_socket, [d, t, pr, 0, 0, 0]), eperm, "{refused:?}");
            }
        }
        // Other processes' limits, priorities and scheduling: the caller's (pid 0) only.
        let other = 4242u64;
        for p in [off, ports, on] {
            assert_eq!(call(p, libc::SYS_prlimit64, [0, 0, 0x1000, 0, 0, 0]), allow);
            assert_eq!(
                call(p, libc::SYS_prlimit64, [other, 0, 0, 0x1000, 0, 0]),
                allow,
                "a read"
            );
            assert_eq!(call(p, libc::SYS_prlimit64, [other, 0, 0x1000, 0, 0, 0]), eperm);
            assert_eq!(call(p, libc::SYS_setpriority, [0, 0, 5, 0, 0, 0]), allow);
            assert_eq!(call(p, libc::SYS_setpriority, [0, other, 5, 0, 0, 0]), eperm);
            assert_eq!(call(p, libc::SYS_setpriority, [2, 0, 5, 0, 0, 0]), eperm, "PRIO_USER");
            assert_eq!(call(p, libc::SYS_ioprio_set, [1, 0, 0, 0, 0, 0]), allow);
            assert_eq!(call(p, libc::SYS_ioprio_set, [1, other, 0, 0, 0, 0]), eperm);
            assert_eq!(
                call(p, libc::SYS_ioprio_set, [3, 0, 0, 0, 0, 0]),
                eperm,
                "IOPRIO_WHO_USER"
            );
            for nr in [
                libc::SYS_sched_setscheduler,
                libc::SYS_sched_setparam,
                libc::SYS_sched_setaffinity,
                libc::SYS_sched_setattr,
            ] {
                assert_eq!(call(p, nr, [0; 6]), allow);
                assert_eq!(call(p, nr, [other, 0, 0, 0, 0, 0]), eperm);
            }
            assert_eq!(call(p, libc::SYS_bpf, [0; 6]), eperm);
            // Modes, but not the set-ID bits.
            assert_eq!(call(p, libc::SYS_fchmodat, [0, 0, 0o755, 0, 0, 0]), allow);
            assert_eq!(call(p, libc::SYS_fchmodat, [0, 0, 0o4755, 0, 0, 0]), eperm);
            assert_eq!(call(p, libc::SYS_fchmod, [3, 0o2755, 0, 0, 0, 0]), eperm);
            assert_eq!(call(p, libc::SYS_fchmod, [3, 0o6755, 0, 0, 0, 0]), eperm);
            assert_eq!(call(p, SYS_FCHMODAT2, [0, 0, 0o1777, 0, 0, 0]), allow, "sticky");
            assert_eq!(call(p, SYS_FCHMODAT2, [0, 0, 0o4700, 0, 0, 0]), eperm);
        }
        // Another architecture's calls kill; x32 calls are missing.
        assert_eq!(
            run(off, 0x4000_0003, libc::SYS_getpid, [0; 6]),
            libc::SECCOMP_RET_KILL_PROCESS
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(
                call(off, 0x4000_0000 | libc::SYS_socket, [inet, stream, 0, 0, 0, 0]),
                enosys
            );
        }
    }

    #[test]
    fn the_front_sends_exactly_the_filtered_numbers_to_the_body() {
        let filtered: Vec<i64> = vec![1, 7, 41, 42, 43, 100, 101, 202, 303, 304, 305, 306, 307, 452];
        let body = 0xdead;
        let mut program = front(&filtered);
        program.push(seccompiler::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: body,
        });
        for nr in 0..600i64 {
            let want = if filtered.contains(&nr) {
                body
            } else {
                libc::SECCOMP_RET_ALLOW
            };
            assert_eq!(run(&program, AUDIT_ARCH, nr, [0; 6]), want, "system call {nr}");
        }
        assert_eq!(run(&program, 0x4000_0003, 1, [0; 6]), body, "another architecture");
    }

    #[test]
    fn a_chained_allow_jumps_to_the_next_part() {
        use seccompiler::sock_filter;
        let stmt = |code: u16, k: u32| sock_filter { code, jt: 0, jf: 0, k };
        let first = vec![
            stmt(0x20, 0),
            stmt(0x06, libc::SECCOMP_RET_ALLOW),
            stmt(0x06, libc::SECCOMP_RET_ALLOW),
        ];
        let then = vec![stmt(0x06, libc::SECCOMP_RET_ERRNO)];
        let chained = chain(first, then);
        assert_eq!(chained.len(), 4);
        // Each allow jumps to index 3, the start of `then`: a jump's target is pc + 1 + k.
        assert_eq!((chained[1].code, 1 + 1 + chained[1].k), (0x05, 3));
        assert_eq!((chained[2].code, 2 + 1 + chained[2].k), (0x05, 3));
        assert_eq!(chained[3].k, libc::SECCOMP_RET_ERRNO);
    }
}
