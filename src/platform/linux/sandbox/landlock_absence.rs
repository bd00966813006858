//! Why Landlock's probe failed, in words that name the true cause: a seccomp filter
//! of this process (a container runtime's profile, which answers `ENOSYS` or `EPERM`
//! for a call it does not list) is told apart from a kernel without Landlock, so an
//! operator fixes the profile rather than looking for another kernel.

use std::io;

/// The reason no Landlock ruleset can be made, from the probe's error.
pub fn explain(probe: &io::Error) -> String {
    let filters = seccomp_filters();
    let kernel_has_it = lsm_list().map(|lsms| lsms.split(',').any(|l| l.trim() == "landlock"));
    match (probe.raw_os_error(), filters) {
        (Some(libc::ENOSYS | libc::EPERM), Some(n)) if n > 0 && kernel_has_it != Some(false) => format!(
            "landlock_create_ruleset is refused ({probe}) by a seccomp filter on this process ({n} filter(s) in \
             force: a container runtime's seccomp profile, most likely); the kernel's LSM list {}. Allow \
             landlock_create_ruleset, landlock_add_rule and landlock_restrict_self in that profile (docs/remote.md, \
             \"The container\")",
            match kernel_has_it {
                Some(true) => "has landlock".to_string(),
                _ => "cannot be read here".to_string(),
            }
        ),
        _ => format!(
            "Landlock is not available on this kernel ({probe}); it needs Linux 5.13 or later with landlock in \
             the lsm= boot list"
        ),
    }
}

/// `Seccomp_filters:` of /proc/self/status: how many seccomp filters this process has.
fn seccomp_filters() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Seccomp_filters:"))
        .and_then(|n| n.trim().parse().ok())
}

/// The kernel's active LSMs, where securityfs is mounted (often not in a container).
fn lsm_list() -> Option<String> {
    std::fs::read_to_string("/sys/kernel/security/lsm").ok()
}
