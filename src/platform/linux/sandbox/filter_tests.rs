//! filter.rs's tests: the program run by a small BPF interpreter against every rule, and
//! its shape.

use super::super::refusals::{request, SYS_FCHMODAT2};
use super::*;

/// Short, because the kernel's work at install grows with the length (the module
/// says why): the seccompiler program of the same rules was 290 instructions.
#[test]
fn every_mode_compiles_to_a_short_program() {
    for network in [Network::Off, Network::TcpPorts(vec![1]), Network::On] {
        let program = program(&network, false, false).expect("compiles");
        assert!(
            !program.code.is_empty() && program.code.len() <= 100,
            "{}",
            program.code.len()
        );
    }
}

/// Runs a classic BPF seccomp program over one call, as the kernel would: the
/// instructions `build` emits (loads of `seccomp_data`, ALU AND, jumps, returns).
/// A jump past the end or a missing return panics.
pub(super) fn run(program: &[libc::sock_filter], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
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
    let off = &program(&Network::Off, false, false).expect("off").code;
    let ports = &program(&Network::TcpPorts(vec![1]), false, false).expect("ports").code;
    let on = &program(&Network::On, false, false).expect("on").code;
    let native = AUDIT_ARCH.expect("a supported architecture");
    let call = |p: &[libc::sock_filter], nr: i64, args: [u64; 6]| run(p, native, nr, args);
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
        assert_eq!(
            call(p, libc::SYS_ioctl, [0, u64::from(request(libc::TIOCSTI)), 0, 0, 0, 0]),
            eperm
        );
        assert_eq!(
            call(
                p,
                libc::SYS_ioctl,
                [0, u64::from(request(libc::TIOCGWINSZ)), 0, 0, 0, 0]
            ),
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

/// Every number without a check is allowed whatever its arguments (so the kernel's
/// action cache can skip the filter for it), every number with one reaches it.
#[test]
fn only_the_checked_numbers_reach_a_check() {
    let native = AUDIT_ARCH.expect("a supported architecture");
    for (network, sockets, sysv_ipc) in [
        (Network::Off, Sockets::UnixOnly, false),
        (Network::Off, Sockets::UnixOnly, true),
        (Network::TcpPorts(vec![1]), Sockets::UnixAndTcp, false),
        (Network::On, Sockets::Any, false),
        (Network::On, Sockets::Any, true),
    ] {
        let code = &program(&network, sysv_ipc, false).expect("compiles").code;
        let checks = checks(sockets, sysv_ipc, false);
        for nr in 0..1024i64 {
            let check = checks.iter().find(|(n, _)| *n == nr).map(|(_, c)| c);
            for args in [[0; 6], [u64::MAX; 6], [0x0000_0001_0000_0001; 6]] {
                let answer = run(code, native, nr, args);
                match check {
                    None => assert_eq!(answer, libc::SECCOMP_RET_ALLOW, "system call {nr}"),
                    Some(Check::Missing) => {
                        assert_eq!(answer, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32, "{nr}")
                    }
                    Some(Check::Refused) => {
                        assert_eq!(answer, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32, "{nr}")
                    }
                    Some(_) => {}
                }
            }
        }
    }
}

/// The supervised programs answer as the others for every number but the four
/// calls that can name a unix socket: `connect`, `sendmsg` and `sendmmsg` go to the
/// supervisor, `sendto` only with an address (either half of the pointer set).
#[test]
fn the_supervised_program_hands_over_only_the_calls_with_an_address() {
    let native = AUDIT_ARCH.expect("a supported architecture");
    let notify = libc::SECCOMP_RET_USER_NOTIF;
    let handed = [
        libc::SYS_connect,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
    ];
    for network in [Network::Off, Network::TcpPorts(vec![1]), Network::On] {
        let plain = &program(&network, false, false).expect("compiles").code;
        let supervised = &program(&network, false, true).expect("compiles").code;
        assert!(
            supervised.len() <= plain.len() + 12,
            "{} against {}",
            supervised.len(),
            plain.len()
        );
        for nr in (0..1024i64).filter(|nr| !handed.contains(nr)) {
            for args in [[0; 6], [u64::MAX; 6], [0x0000_0001_0000_0001; 6]] {
                assert_eq!(run(supervised, native, nr, args), run(plain, native, nr, args), "{nr}");
            }
        }
        let call = |nr: i64, args: [u64; 6]| run(supervised, native, nr, args);
        assert_eq!(call(libc::SYS_connect, [3, 0x1000, 110, 0, 0, 0]), notify);
        assert_eq!(call(libc::SYS_connect, [0; 6]), notify);
        assert_eq!(call(libc::SYS_sendmsg, [3, 0x1000, 0, 0, 0, 0]), notify);
        assert_eq!(call(libc::SYS_sendto, [3, 0x1000, 5, 0, 0, 0]), libc::SECCOMP_RET_ALLOW);
        assert_eq!(call(libc::SYS_sendto, [3, 0x1000, 5, 0, 0x1000, 110]), notify);
        assert_eq!(call(libc::SYS_sendto, [3, 0x1000, 5, 0, 0x7fff_0000_0000, 110]), notify);
        assert_eq!(call(libc::SYS_sendmmsg, [3, 0x1000, 2, 0, 0, 0]), notify);
        // Not handed over in the plain program.
        assert_eq!(run(plain, native, libc::SYS_connect, [0; 6]), libc::SECCOMP_RET_ALLOW);
    }
}

#[test]
fn a_jump_backwards_or_too_far_is_refused() {
    let mut asm = Asm::default();
    let back = asm.label();
    asm.bind(back);
    asm.load(NR);
    asm.jump(JEQ_K, 1, back, Label::Next);
    asm.ret(0);
    assert!(asm.finish().is_err(), "backwards");
    let mut asm = Asm::default();
    let far = asm.label();
    asm.jump(JEQ_K, 1, far, Label::Next);
    for _ in 0..256 {
        asm.load(NR);
    }
    asm.bind(far);
    asm.ret(0);
    assert!(asm.finish().is_err(), "256 ahead");
    let mut asm = Asm::default();
    let unbound = asm.label();
    asm.jump(JEQ_K, 1, unbound, Label::Next);
    asm.ret(0);
    assert!(asm.finish().is_err(), "never bound");
}
