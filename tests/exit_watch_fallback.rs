//! Where io_uring is refused (as container runtimes' default seccomp profiles refuse
//! it), jobs' exits are still seen: each job gets a pidfd, and `exit_watch` says so and
//! why (src/platform/linux/exit_ring.rs). Alone in its file: the refusal is a seccomp
//! filter on this whole process, put before anything made the ring.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::time::Duration;

use native_shell_service::job::spawn::Mode;
use native_shell_service::service::request::{RunRequest, ServiceConfig};
use native_shell_service::service::Service;

/// `AUDIT_ARCH_X86_64` (linux/audit.h).
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;

/// A filter on every thread of this process that refuses `io_uring_setup` with EPERM,
/// as Docker's default profile does, and allows everything else.
fn refuse_io_uring() {
    let stmt = |code: u16, k: u32| libc::sock_filter { code, jt: 0, jf: 0, k };
    let jump = |code: u16, k: u32, jt: u8, jf: u8| libc::sock_filter { code, jt, jf, k };
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jeq = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let mut program = [
        stmt(ld, 4), // seccomp_data.arch
        jump(jeq, AUDIT_ARCH_X86_64, 0, 2),
        stmt(ld, 0), // seccomp_data.nr
        jump(jeq, libc::SYS_io_uring_setup as u32, 1, 0),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ret, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
    ];
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: prctl and seccomp with a filter program that outlives the calls.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        let rc = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &prog as *const libc::sock_fprog,
        );
        assert_eq!(rc, 0, "seccomp: {}", std::io::Error::last_os_error());
    }
}

#[test]
fn with_io_uring_refused_exits_are_seen_through_pidfds_and_the_reason_is_told() {
    refuse_io_uring();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let tmp = tempfile::tempdir().unwrap();
        let svc = Service::new(
            ServiceConfig {
                project_root: Some(tmp.path().canonicalize().unwrap()),
                persist_output: Some(false),
                ..Default::default()
            },
            tokio::runtime::Handle::current(),
        )
        .unwrap();
        for mode in [Mode::Pty, Mode::Pipes] {
            let mut req = RunRequest::new("exit 3");
            req.mode = mode;
            let result = svc.run(req).await.unwrap();
            assert_eq!(result.exit_code, Some(3), "{mode:?}: {result:?}");
        }
        let mut req = RunRequest::new("exec sleep 600");
        req.mode = Mode::Pty;
        let (handle, _) = svc.start(req).unwrap();
        let killed = svc.kill(handle, Duration::from_millis(100)).await.unwrap();
        println!("killed: {killed:?}");
        assert!(!svc.is_active(handle));
    });
    let watch = native_shell_service::platform::exit_watch();
    println!("exit watch: {watch:?}");
    assert_eq!(watch.mechanism, "pidfd");
    let reason = watch.fallback_reason.unwrap_or_default();
    assert!(reason.contains("io_uring_setup refused"), "{reason}");
}
