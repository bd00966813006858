//! Ending a daemon a test started, shared by the daemon tests (loaded once, by
//! tests/daemon/main.rs, and used by the harnesses too): SIGTERM, up to 10 s for it to
//! exit (its jobs are killed on the way out), then SIGKILL, and the child reaped either
//! way.

use std::process::Child;
use std::time::{Duration, Instant};

/// Whether the child has not exited yet.
pub fn running(child: &mut Child) -> bool {
    child.try_wait().ok().flatten().is_none()
}

pub fn stop(child: &mut Child) {
    if !running(child) {
        return;
    }
    // SAFETY: a signal to our own child, not yet reaped, so its pid is still its own.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
