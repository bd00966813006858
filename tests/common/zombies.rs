//! This process's zombie children, for the exit tests (tests/exit_burst.rs,
//! tests/exit_at_hang_up.rs): each runs alone in its binary, so its children are its
//! jobs' processes.

/// This process's children that have exited and are not reaped.
pub fn zombie_children() -> Vec<i32> {
    let me = std::process::id().to_string();
    let mut zombies = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        for pid in children.split_whitespace() {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid ...: after the last ')'.
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            let mut fields = rest.split_whitespace();
            let (state, ppid) = (fields.next(), fields.next());
            if state == Some("Z") && ppid == Some(me.as_str()) {
                zombies.push(pid.parse().unwrap_or(0));
            }
        }
    }
    zombies
}

/// This process's zombie children once they are gone, or those still there after 30 s:
/// a job's background process is reaped when it ends, which on a loaded machine can be
/// long after the time it was meant to take.
pub async fn zombies_left() -> Vec<i32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let zombies = zombie_children();
        if zombies.is_empty() || std::time::Instant::now() > deadline {
            return zombies;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
