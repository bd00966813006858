//! `--exit-with-stdin`: the daemon ends when its standard input reaches its end. The
//! package's `daemon --listen` command (tools/daemon-front.ts) runs the daemon with a
//! pipe from itself as stdin and the MCP server in its own process: when that process
//! ends, however (even SIGKILL), the kernel closes the pipe and the daemon follows,
//! ending its jobs, so neither outlives the other.

use std::io::Read;

/// Resolves when stdin is at its end (or unreadable); never when `watch` is false.
pub async fn stdin_closed(watch: bool) {
    if !watch {
        return std::future::pending().await;
    }
    let (done, ended) = tokio::sync::oneshot::channel::<()>();
    // A plain thread blocked in read(2): the runtime's threads stay free, and it dies
    // with the process.
    let spawned = std::thread::Builder::new().name("stdin-watch".into()).spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 256];
        loop {
            match stdin.read(&mut buf) {
                // Anything written is ignored: only the end counts.
                Ok(n) if n > 0 => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        let _ = done.send(());
    });
    if let Err(e) = spawned {
        // Fails closed: a daemon that cannot watch its parent does not serve unwatched.
        eprintln!("native-shell-daemon: cannot watch stdin: {e}");
        return;
    }
    let _ = ended.await;
}
