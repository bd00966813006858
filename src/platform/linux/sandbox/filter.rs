//! The seccomp half of a Linux sandbox: what Landlock cannot see.
//!
//! One classic BPF program per network mode, written here once for the process (the
//! program is the same for every job of that mode) from the checks of `super::refusals`
//! (which holds every rule and says which attack it stops), and installed in the spawn
//! child with one `seccomp(SECCOMP_SET_MODE_FILTER)` (`super::apply`). It answers
//! `ENOSYS` for calls callers are ready to find missing, `EPERM` for refusals, allows
//! the rest; on x86_64, `ENOSYS` for every x32 system call (numbers with bit 30 set:
//! they share x86_64's audit architecture, so checks matching exact numbers would not
//! see them). A program of another architecture (an i386 binary run by an x86_64 job,
//! through `int 0x80`) is killed: confined or nothing.
//!
//! Written by hand, and short, because installing a filter is paid on every sandboxed
//! spawn, in proportion to the program's length: the kernel checks the program,
//! converts it to eBPF and compiles it to machine code, then runs it once per system
//! call number of each architecture to find the numbers it allows whatever the
//! arguments (its action cache: those then skip the filter altogether). A program
//! made by `seccompiler` from the same rules was 290 instructions (an architecture
//! check and a 64-bit comparison per condition, a linear walk per rule) and its
//! install took 75-85 µs in a forked child here; this one is 65 (80 with TCP ports,
//! 74 with the network on), gives the same answer for every call (checked against
//! the old program on a million inputs when it was written), and installs in 33 µs
//! (docs/sandbox.md, "What it costs"). Layout:
//!
//! ```text
//! architecture check (else kill) · load the number · x32 check (x86_64)
//! binary search over the numbers with checks; a miss is "allow"
//! one block per distinct argument check
//! allow · EPERM · ENOSYS · kill
//! ```
//!
//! A number without a check is allowed after about ten instructions, so the kernel's
//! action cache marks it allowed; a number refused whatever its arguments jumps
//! straight to its answer.

use std::io;
use std::sync::OnceLock;

use super::refusals::{checks, Check, Sockets, NETLINK_ROUTE, RAW_INET_TYPES, REFUSED_INET_TYPES};

use crate::sandbox::Network;

/// The compiled program for one network mode.
pub struct Program {
    pub code: Vec<libc::sock_filter>,
}

/// The audit architecture of the program's target (linux/audit.h).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: Option<u32> = Some(0xC000_00F3);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
const AUDIT_ARCH: Option<u32> = None;

/// Whether a filter can be built for this architecture at all (each of them is
/// little-endian: an argument's low 32 bits come first in `seccomp_data`).
pub fn available() -> bool {
    AUDIT_ARCH.is_some()
}

/// The program for `network` (`TcpPorts` lists are alike: the ports are Landlock's),
/// `sysv_ipc` (System V IPC allowed: `refusals::sysv_ipc`) and `supervised` (it hands
/// the calls that can name a unix socket to the service: `refusals::supervised_calls`).
pub fn program(network: &Network, sysv_ipc: bool, supervised: bool) -> io::Result<&'static Program> {
    type Cell = OnceLock<Result<Program, String>>;
    static CELLS: [[[Cell; 2]; 2]; 3] = [const { [const { [const { OnceLock::new() }; 2] }; 2] }; 3];
    let (mode, sockets) = match network {
        Network::Off => (0, Sockets::UnixOnly),
        Network::TcpPorts(_) => (1, Sockets::UnixAndTcp),
        Network::On => (2, Sockets::Any),
    };
    CELLS[mode][usize::from(sysv_ipc)][usize::from(supervised)]
        .get_or_init(|| build(sockets, sysv_ipc, supervised))
        .as_ref()
        .map_err(|e| io::Error::other(format!("the seccomp filter cannot be built: {e}")))
}

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
const LD_W_ABS: u16 = 0x20;
const ALU_AND_K: u16 = 0x54;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

/// Offsets in `struct seccomp_data`: the number, the architecture, the arguments (eight
/// bytes each; the low half first on these little-endian targets).
const NR: u32 = 0;
const ARCH: u32 = 4;
fn low(arg: u8) -> u32 {
    16 + 8 * u32::from(arg)
}
fn high(arg: u8) -> u32 {
    low(arg) + 4
}

/// Where a jump goes: the next instruction, or a label bound somewhere after it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Label {
    Next,
    At(usize),
}

/// A program being written: instructions whose jumps name labels, resolved to offsets
/// once every label is bound (`finish`). Classic BPF jumps forward only, by at most
/// 255 instructions: `finish` refuses anything else.
#[derive(Default)]
struct Asm {
    code: Vec<(u16, u32, Label, Label)>,
    labels: Vec<Option<usize>>,
}

impl Asm {
    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label::At(self.labels.len() - 1)
    }

    /// Binds `label` to the next instruction written.
    fn bind(&mut self, label: Label) {
        if let Label::At(i) = label {
            self.labels[i] = Some(self.code.len());
        }
    }

    fn load(&mut self, offset: u32) {
        self.code.push((LD_W_ABS, offset, Label::Next, Label::Next));
    }

    fn and(&mut self, mask: u32) {
        self.code.push((ALU_AND_K, mask, Label::Next, Label::Next));
    }

    /// A conditional jump: `op` compares the loaded word with `k`.
    fn jump(&mut self, op: u16, k: u32, yes: Label, no: Label) {
        self.code.push((op, k, yes, no));
    }

    /// Always to `to` (a comparison that always holds: its offset is resolved as
    /// every other jump's).
    fn goto(&mut self, to: Label) {
        self.jump(JGE_K, 0, to, to);
    }

    fn ret(&mut self, action: u32) {
        self.code.push((RET_K, action, Label::Next, Label::Next));
    }

    fn finish(self) -> Result<Vec<libc::sock_filter>, String> {
        let mut out = Vec::with_capacity(self.code.len());
        for (at, &(code, k, yes, no)) in self.code.iter().enumerate() {
            let offset = |label: Label| -> Result<u8, String> {
                let to = match label {
                    Label::Next => return Ok(0),
                    Label::At(i) => self.labels[i].ok_or("a label never bound")?,
                };
                to.checked_sub(at + 1)
                    .and_then(|d| u8::try_from(d).ok())
                    .ok_or_else(|| format!("a jump from {at} to {to} does not fit"))
            };
            let (jt, jf) = if code == RET_K || code == LD_W_ABS || code == ALU_AND_K {
                (0, 0)
            } else {
                (offset(yes)?, offset(no)?)
            };
            out.push(libc::sock_filter { code, jt, jf, k });
        }
        if out.is_empty() || out.len() > 4096 {
            return Err(format!("{} instructions", out.len()));
        }
        Ok(out)
    }
}

/// The program's answers, at its end.
struct Ends {
    allow: Label,
    eperm: Label,
    enosys: Label,
    kill: Label,
    notify: Label,
}

fn build(sockets: Sockets, sysv_ipc: bool, supervised: bool) -> Result<Program, String> {
    let arch = AUDIT_ARCH.ok_or_else(|| format!("no seccomp filter for {}", std::env::consts::ARCH))?;
    let mut checks = checks(sockets, sysv_ipc, supervised);
    checks.sort_by_key(|(nr, _)| *nr);
    if checks.is_empty() || checks.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return Err("no checks, or two for one system call".to_string());
    }
    let mut asm = Asm::default();
    let ends = Ends {
        allow: asm.label(),
        eperm: asm.label(),
        enosys: asm.label(),
        kill: asm.label(),
        notify: asm.label(),
    };
    asm.load(ARCH);
    asm.jump(JEQ_K, arch, Label::Next, ends.kill);
    asm.load(NR);
    if cfg!(target_arch = "x86_64") {
        asm.jump(JGE_K, 0x4000_0000, ends.enosys, Label::Next);
    }
    // Where the search sends each number: straight to the answer when the arguments do
    // not matter, else to a block for its check, one per distinct check (the four
    // `sched_set*` calls share theirs, as do the `chmod` calls with the mode at the
    // same place).
    let mut blocks: Vec<(&Check, Label)> = Vec::new();
    let targets: Vec<(u32, Label)> = checks
        .iter()
        .map(|(nr, check)| {
            let to = match check {
                Check::Missing => ends.enosys,
                Check::Refused => ends.eperm,
                Check::Notify => ends.notify,
                _ => match blocks.iter().find(|(c, _)| *c == check) {
                    Some(&(_, label)) => label,
                    None => {
                        let label = asm.label();
                        blocks.push((check, label));
                        label
                    }
                },
            };
            (*nr as u32, to)
        })
        .collect();
    search(&mut asm, &targets, ends.allow);
    for (check, to) in blocks {
        asm.bind(to);
        block(&mut asm, check, &ends);
    }
    asm.bind(ends.allow);
    asm.ret(libc::SECCOMP_RET_ALLOW);
    asm.bind(ends.eperm);
    asm.ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
    asm.bind(ends.enosys);
    asm.ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
    asm.bind(ends.kill);
    asm.ret(libc::SECCOMP_RET_KILL_PROCESS);
    if supervised {
        asm.bind(ends.notify);
        asm.ret(libc::SECCOMP_RET_USER_NOTIF);
    }
    Ok(Program { code: asm.finish()? })
}

/// A binary search for the loaded number among `targets` (sorted by number, at least
/// one): a match jumps to its target, a miss to `miss`. Groups of three or fewer are
/// compared one by one. The walk grows with the logarithm of the count (22 numbers:
/// three splits, then at most three comparisons).
fn search(asm: &mut Asm, targets: &[(u32, Label)], miss: Label) {
    if targets.len() <= 3 {
        for (i, &(nr, to)) in targets.iter().enumerate() {
            let otherwise = if i + 1 == targets.len() { miss } else { Label::Next };
            asm.jump(JEQ_K, nr, to, otherwise);
        }
        return;
    }
    let mid = targets.len() / 2;
    let upper = asm.label();
    asm.jump(JGE_K, targets[mid].0, upper, Label::Next);
    search(asm, &targets[..mid], miss);
    asm.bind(upper);
    search(asm, &targets[mid..], miss);
}

/// The instructions for one number whose arguments decide (`Check` says what each
/// does); the number is no longer needed, so the accumulator is free.
fn block(asm: &mut Asm, check: &Check, ends: &Ends) {
    let (allow, eperm) = (ends.allow, ends.eperm);
    match check {
        Check::Missing => asm.goto(ends.enosys),
        Check::Refused => asm.goto(eperm),
        Check::AnyBit { arg, mask } => {
            asm.load(low(*arg));
            asm.jump(JSET_K, *mask, eperm, allow);
        }
        Check::OneOf { arg, values } => {
            asm.load(low(*arg));
            for &value in values {
                asm.jump(JEQ_K, value, eperm, Label::Next);
            }
            asm.goto(allow);
        }
        Check::OtherProcess { who, which } => {
            asm.load(low(*who));
            match which {
                None => asm.jump(JEQ_K, 0, allow, eperm),
                Some((which, user)) => {
                    asm.jump(JEQ_K, 0, Label::Next, eperm);
                    asm.load(low(*which));
                    asm.jump(JEQ_K, *user, eperm, allow);
                }
            }
        }
        Check::OtherProcessLimit => {
            let (pid, new_limit) = (0, 2);
            asm.load(low(pid));
            asm.jump(JEQ_K, 0, allow, Label::Next);
            asm.load(low(new_limit));
            asm.jump(JEQ_K, 0, Label::Next, eperm);
            asm.load(high(new_limit));
            asm.jump(JEQ_K, 0, allow, eperm);
        }
        Check::Socket(sockets) => socket(asm, *sockets, ends),
        Check::Notify => asm.goto(ends.notify),
        Check::NotifyIfSet { arg } => {
            asm.load(low(*arg));
            asm.jump(JEQ_K, 0, Label::Next, ends.notify);
            asm.load(high(*arg));
            asm.jump(JEQ_K, 0, allow, ends.notify);
        }
    }
}

/// `socket(domain, type, protocol)`, as `Sockets` describes per mode.
fn socket(asm: &mut Asm, sockets: Sockets, ends: &Ends) {
    let (domain, kind, protocol) = (0, 1, 2);
    let (allow, eperm) = (ends.allow, ends.eperm);
    asm.load(low(domain));
    asm.jump(JEQ_K, libc::AF_UNIX as u32, allow, Label::Next);
    if sockets == Sockets::UnixOnly {
        asm.goto(eperm);
        return;
    }
    let inet = asm.label();
    asm.jump(JEQ_K, libc::AF_INET as u32, inet, Label::Next);
    asm.jump(JEQ_K, libc::AF_INET6 as u32, inet, Label::Next);
    if sockets == Sockets::Any {
        asm.jump(JEQ_K, libc::AF_NETLINK as u32, Label::Next, eperm);
        asm.load(low(protocol));
        asm.jump(JEQ_K, NETLINK_ROUTE, allow, eperm);
        asm.bind(inet);
        asm.load(low(kind));
        asm.and(0xf);
        for raw in RAW_INET_TYPES {
            asm.jump(JEQ_K, raw, eperm, Label::Next);
        }
        asm.goto(allow);
        return;
    }
    asm.goto(eperm);
    asm.bind(inet);
    asm.load(low(kind));
    asm.and(0xf);
    let stream = asm.label();
    asm.jump(JEQ_K, libc::SOCK_STREAM as u32, stream, Label::Next);
    for refused in REFUSED_INET_TYPES {
        asm.jump(JEQ_K, refused, eperm, Label::Next);
    }
    asm.goto(allow);
    asm.bind(stream);
    asm.load(low(protocol));
    asm.jump(JEQ_K, 0, allow, Label::Next);
    asm.jump(JEQ_K, libc::IPPROTO_TCP as u32, allow, eperm);
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
