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
//!   sockets (`super::refusals`, which holds every rule); new namespaces; the terminal ioctls that type into a
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

use std::io;
use std::sync::OnceLock;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};

use super::refusals::{missing_rules, refused_rules, Rules, Sockets};

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

fn compile(rules: Rules, errno: i32, arch: TargetArch) -> Result<BpfProgram, seccompiler::Error> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)?;
    BpfProgram::try_from(filter).map_err(seccompiler::Error::Backend)
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
    use super::super::refusals::{request, SYS_FCHMODAT2};
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
