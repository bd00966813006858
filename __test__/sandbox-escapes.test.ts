// Escapes from the per-job sandbox through the kernel rather than the file system
// (docs/sandbox.md, "Threats beyond files"): capabilities a root job would keep,
// other processes' limits and priorities, socket families, the agent's secrets in the
// environment, git hooks planted in a writable project. Linux.
//
// Each case runs unconfined first, the control, which must succeed (it shows the check
// can fail); then sandboxed, where it must not. What is judged is the state the
// escape would change — the file, the process's limit, the kernel object — read by the
// test itself, not a program's message; where the only safe control is one that
// changes nothing (setting the host name to itself, `reboot` with a bad command), the
// answer of the kernel's permission check is what is judged, and the test says so. A
// control that cannot succeed here (it needs root, or the kernel lacks the feature) is
// skipped with the reason: run the file as root and as an ordinary user
// (`setpriv --reuid=65534 --regid=65534 --clear-groups npx vitest run ...`).
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { arch, getPriority, hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxFromFlags } from '../tools/sandbox-flags';
import { eventually, type Scratch, scratch, ShellExecutionService } from './helpers';

const linux = process.platform === 'linux';
const root = linux && process.getuid?.() === 0;
const PY = '/usr/bin/python3';
const NEEDS_ROOT = 'needs root: an ordinary user has no capability to lose';

let s: Scratch;
/** Owned by the test's user, outside every writable path (`/tmp` is writable). */
let outside: string;
beforeAll(() => {
  if (!linux) return;
  s = scratch({ env: { NSS_TEST_API_KEY: 'secret-from-the-service' } });
  outside = realpathSync(mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : s.root, 'nss-escapes-')));
  chmodSync(outside, 0o755);
});
afterAll(async () => {
  if (!linux) return;
  await s.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

type Options = NonNullable<Parameters<Scratch['service']['run']>[1]>;
const run = (command: string, sandbox: Options['sandbox'], extra: Options = {}) =>
  s.service.run(command, { timeoutMs: 60_000, ...extra, sandbox });

/** A Python program as a job's command (`/usr/bin/python3`: readable with `read: []`). */
const py = (code: string) => `${PY} - <<'PYEOF'\n${code}\nPYEOF`;

/** `errno` names the kernel answered with, through ctypes. */
const C = `import ctypes, os, errno, platform
libc = ctypes.CDLL(None, use_errno=True)
def answer(r):
    print('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()])`;

/** The job's output line for `key=` (set by the snippets below). */
function field(output: string, key: string): string | undefined {
  return output.split('\n').find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1).trim();
}

describe.skipIf(!linux)('capabilities: a sandboxed job keeps none', () => {
  it('every set is empty inside; a root job has them outside', async () => {
    const show = 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status';
    const plain = await run(show, false);
    const boxed = await run(show, true);
    const sets = (out: string) => Object.fromEntries(out.trim().split('\n').map((l) => l.split(/:\s+/)));
    if (root) expect(BigInt(`0x${sets(plain.output).CapEff}`)).not.toBe(0n);
    const inside = sets(boxed.output);
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb']) expect(BigInt(`0x${inside[set]}`), set).toBe(0n);
    // The bounding set is left as it is (caps.rs says why: an exec under NO_NEW_PRIVS
    // cannot gain anything from it; the next case checks that).
  });

  it.skipIf(!root)(
    "exec of a set-user-ID-root program or one with file capabilities gains nothing (needs root to make them)",
    async () => {
      // Copies of cat that print their own /proc/self/status. The control runs each as
      // uid 65534 unconfined, where the set-user-ID bit and the file capabilities do
      // grant capabilities (so the programs can); sandboxed, the root job that runs
      // them must end with every set empty, its bounding set full notwithstanding.
      const suid = join(outside, 'cat-suid');
      const fcap = join(outside, 'cat-fcap');
      for (const copy of [suid, fcap]) expect(spawnSync('cp', ['/bin/cat', copy]).status).toBe(0);
      chmodSync(suid, 0o4755);
      expect(spawnSync('setcap', ['cap_net_raw,cap_sys_admin,cap_dac_override+eip', fcap]).status).toBe(0);
      const sets = (out: string) =>
        Object.fromEntries([...out.matchAll(/^(Cap(?:Inh|Prm|Eff|Amb)):\s*([0-9a-f]+)$/gm)].map((m) => [m[1], BigInt(`0x${m[2]}`)]));
      try {
        for (const program of [suid, fcap]) {
          const control = await run(
            `setpriv --reuid=65534 --regid=65534 --clear-groups ${program} /proc/self/status`,
            false,
          );
          const unconfined = sets(control.output);
          expect(unconfined.CapPrm, `${program} unconfined:\n${control.output}`).toBeGreaterThan(0n);
          expect(unconfined.CapEff, program).toBeGreaterThan(0n);
          const boxed = await run(`${program} /proc/self/status`, true);
          const inside = sets(boxed.output);
          for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb']) {
            expect(inside[set], `${set} of ${program} sandboxed:\n${boxed.output}`).toBe(0n);
          }
        }
      } finally {
        rmSync(suid, { force: true });
        rmSync(fcap, { force: true });
      }
    },
  );

  it.skipIf(!root)(`mknod of a block device in the project makes nothing (${NEEDS_ROOT})`, async () => {
    const cmd = (tag: string) => `mknod ./loop-${tag} b 7 0`;
    await run(cmd('plain'), false);
    expect(statSync(join(s.root, 'loop-plain')).isBlockDevice()).toBe(true);
    rmSync(join(s.root, 'loop-plain'));
    await run(cmd('boxed'), true);
    expect(existsSync(join(s.root, 'loop-boxed'))).toBe(false);
  });

  it.skipIf(!root)("a device node in the project takes no ioctl (needs root to make the node)", async () => {
    // A node made outside the sandbox (a job cannot make one): the project's rule grants
    // no device ioctls, so the call stops at Landlock (EACCES) before the driver, which
    // answers ENOTTY for /dev/null's device. Nothing else is safe to ask of a device.
    expect(spawnSync('mknod', [join(s.root, 'nulldev'), 'c', '1', '3']).status).toBe(0);
    try {
      const code = py(
        "import os, fcntl, termios, errno\nfd = os.open('nulldev', os.O_RDONLY)\ntry:\n" +
          "    fcntl.ioctl(fd, termios.TIOCGWINSZ, bytes(8)); print('ioctl=ok')\n" +
          "except OSError as e:\n    print('ioctl=' + errno.errorcode[e.errno])",
      );
      expect(field((await run(code, false)).output, 'ioctl')).toBe('ENOTTY');
      const boxed = await run(code, true);
      expect(field(boxed.output, 'ioctl'), boxed.output).toBe('EACCES');
    } finally {
      rmSync(join(s.root, 'nulldev'));
    }
  });

  it.skipIf(!root)(`chown, setcap and chattr +i of a file outside leave it as it was (${NEEDS_ROOT})`, async () => {
    const file = join(outside, 'owned');
    writeFileSync(file, 'x');
    const attrs = () => spawnSync('lsattr', [file], { encoding: 'utf8' }).stdout.split(' ')[0] ?? '';
    const caps = () => spawnSync('getcap', [file], { encoding: 'utf8' }).stdout.trim();
    const cmd = `chown 65534 ${file}; setcap cap_net_raw+ep ${file}; chattr +i ${file}`;
    await run(cmd, false);
    try {
      expect(statSync(file).uid).toBe(65534);
      expect(caps()).toContain('cap_net_raw');
      expect(attrs()).toContain('i');
    } finally {
      spawnSync('chattr', ['-i', file]);
      spawnSync('setcap', ['-r', file]);
      spawnSync('chown', ['0', file]);
    }
    const boxed = await run(cmd, true);
    try {
      expect(statSync(file).uid, boxed.output).toBe(0);
      expect(caps()).toBe('');
      expect(attrs()).not.toContain('i');
    } finally {
      spawnSync('chattr', ['-i', file]);
    }
  });

  it.skipIf(!root)(`setuid to another user is refused (${NEEDS_ROOT})`, async () => {
    const cmd = py('import os\nos.setuid(65534)\nprint("uid=%d" % os.getuid())');
    expect(field((await run(cmd, false)).output, 'uid')).toBe('65534');
    const boxed = await run(cmd, true);
    expect(field(boxed.output, 'uid')).toBeUndefined();
    expect(boxed.output).toContain('PermissionError');
  });

  it.skipIf(!root)(`the host name stays (${NEEDS_ROOT}; the control sets it to itself)`, async () => {
    const before = hostname();
    // Setting the name to what it is changes nothing and passes the same check.
    const plain = await run(py(`import socket\nsocket.sethostname(${JSON.stringify(before)})\nprint("set=1")`), false);
    expect(field(plain.output, 'set')).toBe('1');
    try {
      await run('hostname nss-escape-test', true);
      expect(hostname()).toBe(before);
    } finally {
      if (hostname() !== before) spawnSync('hostname', [before]);
    }
  });

  it.skipIf(!root)(
    `reboot(2), adjtimex, syslog(2), bpf, perf_event_open, fanotify on / fail the permission check (${NEEDS_ROOT})`,
    async (ctx) => {
      // Each call is made so that passing the capability check changes nothing: reboot
      // with an unknown command (EINVAL after the check, EPERM before it), adjtimex
      // setting the tick to its own value, a one-entry BPF map and a software counter
      // closed at exit, a mount mark dropped with its descriptor.
      const machine = arch();
      if (machine !== 'x64' && machine !== 'arm64') ctx.skip(`system call numbers written for x86_64 and arm64, not ${machine}`);
      const [bpf, perf] = machine === 'x64' ? [321, 298] : [280, 241];
      const code = `${C}
libc.syscall.restype = ctypes.c_long
r = libc.reboot(0x12345678); print('reboot=' + ('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]))
t = ctypes.create_string_buffer(208); libc.adjtimex(t)
ctypes.memmove(t, (0x4000).to_bytes(4, 'little'), 4)
r = libc.adjtimex(t); print('adjtimex=' + ('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]))
b = ctypes.create_string_buffer(4096)
r = libc.klogctl(3, b, 4096); print('syslog=' + ('ok' if r > 0 else errno.errorcode.get(ctypes.get_errno(), 'empty')))
a = ctypes.create_string_buffer(128); ctypes.memmove(a, (2).to_bytes(4, 'little') + (4).to_bytes(4, 'little') + (4).to_bytes(4, 'little') + (1).to_bytes(4, 'little'), 16)
r = libc.syscall(${bpf}, 0, a, 128); print('bpf=' + ('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]))
p = ctypes.create_string_buffer(128); ctypes.memmove(p, (1).to_bytes(4, 'little') + (128).to_bytes(4, 'little'), 8)
r = libc.syscall(${perf}, p, -1, 0, -1, 0); print('perf=' + ('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]))
f = libc.fanotify_init(0, 0)
r = libc.fanotify_mark(f, 0x11, ctypes.c_uint64(0x20), -100, b'/') if f >= 0 else -1
print('fanotify=' + ('ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]))`;
      const plain = (await run(py(code), false)).output;
      const boxed = (await run(py(code), true)).output;
      // The control: each passed the check (reboot then refuses the bad command).
      expect(field(plain, 'reboot')).toBe('EINVAL');
      for (const call of ['adjtimex', 'syslog', 'bpf', 'perf', 'fanotify']) {
        expect(field(plain, call), `${call} unconfined:\n${plain}`).toBe('ok');
      }
      // EACCES is perf_event_open's refusal (perf_event_paranoid), EPERM the others'.
      for (const call of ['reboot', 'adjtimex', 'syslog', 'bpf', 'perf', 'fanotify']) {
        expect(['EPERM', 'EACCES'], `${call} sandboxed:\n${boxed}`).toContain(field(boxed, call));
      }
    },
  );

  it.skipIf(!root)(`/etc/shadow is unreadable with read: [] (${NEEDS_ROOT}: others may not read it anyway)`, async () => {
    // What the job reads: the byte count of each file (0: nothing, refused).
    const cmd = 'for f in /etc/shadow /etc/gshadow /etc/hostname; do echo "$f=$(cat $f 2>/dev/null | wc -c || echo -1)"; done';
    const count = (out: string, f: string) => Number(field(out, f));
    const plain = (await run(cmd, false)).output;
    expect(count(plain, '/etc/shadow')).toBeGreaterThan(0);
    const boxed = (await run(cmd, { read: [] })).output;
    expect(count(boxed, '/etc/shadow'), boxed).toBe(0);
    expect(count(boxed, '/etc/gshadow'), boxed).toBe(0);
    // The rest of /etc stays readable.
    expect(count(boxed, '/etc/hostname')).toBe(count(plain, '/etc/hostname'));
    expect(count(boxed, '/etc/hostname')).toBeGreaterThan(0);
  });
});

describe.skipIf(!linux)('metadata', () => {
  it('a set-user-ID or set-group-ID bit is not set, other mode changes are', async () => {
    const cmd = (tag: string) => `cp /bin/true ./setid-${tag} && chmod 755 ./setid-${tag} && chmod u+s,g+s ./setid-${tag}`;
    const mode = (tag: string) => statSync(join(s.root, `setid-${tag}`)).mode & 0o7777;
    await run(cmd('plain'), false);
    expect(mode('plain')).toBe(0o6755);
    const boxed = await run(cmd('boxed'), true);
    expect(mode('boxed'), boxed.output).toBe(0o755);
  });
});

describe.skipIf(!linux)('other processes: the agent and the watchdog cannot be reached', () => {
  const node = process.pid;
  const cpuLimit = (pid: number) => /^Max cpu time\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1];

  /** This process's watchdog (its child, `native-shell-watchdog` in its command line). */
  function watchdog(): number | undefined {
    for (const entry of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try {
        const status = readFileSync(`/proc/${entry}/status`, 'utf8');
        const parent = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
        if (parent === node && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('native-shell-watchdog')) {
          return Number(entry);
        }
      } catch {
        // Gone in between.
      }
    }
    return undefined;
  }

  it("prlimit on the agent's Node process and on its watchdog leaves their limits as they were", async () => {
    await run('true', false);
    let guard: number | undefined;
    expect(await eventually(() => (guard = watchdog()) !== undefined)).toBe(true);
    for (const pid of [node, guard!]) {
      expect(cpuLimit(pid)).toBe('unlimited');
      // The control sets only the soft limit (high, harmless) and raises it back after.
      try {
        await run(`prlimit --pid ${pid} --cpu=99999:`, false);
        expect(cpuLimit(pid)).toBe('99999');
      } finally {
        spawnSync('prlimit', ['--pid', String(pid), '--cpu=unlimited:']);
      }
      expect(cpuLimit(pid)).toBe('unlimited');
      // What the attack would do: RLIMIT_CPU of 1 s kills a process that has used more.
      const boxed = await run(`prlimit --pid ${pid} --cpu=1:`, true);
      try {
        expect(cpuLimit(pid), boxed.output).toBe('unlimited');
      } finally {
        spawnSync('prlimit', ['--pid', String(pid), '--cpu=unlimited:']);
      }
    }
    // Its own limits a job still sets (pid 0: `ulimit`, `prlimit` on a command).
    const own = await run('ulimit -t 500 && ulimit -t && prlimit --cpu=400 sh -c "ulimit -t"', true);
    expect(own.output.trim().split('\n')).toEqual(['500', '400']);
  });

  it("renice, ionice, taskset and chrt on the agent leave it as it was", async () => {
    const ionice = () => spawnSync('ionice', ['-p', String(node)], { encoding: 'utf8' }).stdout.trim();
    const affinity = () => spawnSync('taskset', ['-p', String(node)], { encoding: 'utf8' }).stdout.split(':').pop()?.trim();
    const policy = () => spawnSync('chrt', ['-p', String(node)], { encoding: 'utf8' }).stdout.split('\n')[0];
    const before = { nice: getPriority(node), io: ionice(), cpus: affinity(), policy: policy() };
    // Controls that change nothing: each set to what it is (the nice value cannot be
    // lowered back without CAP_SYS_NICE), ionice to best-effort and back.
    const plain = await run(
      `renice -n ${before.nice} -p ${node} && ionice -c 2 -n 7 -p ${node} && ionice -p ${node} && ionice -c 0 -p ${node} ` +
        `&& taskset -p ${before.cpus} ${node} && chrt -o -p 0 ${node} && echo done`,
      false,
    );
    expect(plain.output).toContain('best-effort: prio 7');
    expect(plain.output).toContain('done');
    expect({ nice: getPriority(node), io: ionice(), cpus: affinity(), policy: policy() }).toEqual(before);
    const boxed = await run(
      `renice -n 10 -p ${node}; ionice -c 3 -p ${node}; taskset -p 1 ${node}; chrt -b -p 0 ${node}; ` +
        `nice -n 3 sh -c 'echo own=$(nice)'`,
      true,
    );
    try {
      expect({ nice: getPriority(node), io: ionice(), cpus: affinity(), policy: policy() }, boxed.output).toEqual(before);
      // The job's own priority (pid 0) it still sets.
      expect(field(boxed.output, 'own')).toBe('3');
    } finally {
      spawnSync('ionice', ['-c', '0', '-p', String(node)]);
      if (before.cpus) spawnSync('taskset', ['-p', before.cpus, String(node)]);
    }
  });

  it("/proc/<agent>/environ is unreadable", async () => {
    const cmd = `tr '\\0' '\\n' < /proc/${node}/environ | grep -c =`;
    expect(Number((await run(cmd, false)).output.trim())).toBeGreaterThan(0);
    const boxed = await run(cmd, true);
    expect(boxed.output.trim().split('\n').pop()).toBe('0');
    expect(boxed.output).toContain('Permission denied');
  });
});

describe.skipIf(!linux)('socket families', () => {
  const make = (family: string, type: string, proto = 0) =>
    py(`import socket\ntry:\n    socket.socket(${family}, ${type}, ${proto}); print('made=1')\nexcept OSError as e:\n    print('made=0'); print(e)`);

  it.for([
    ['netlink sock_diag (every socket of the host)', 'socket.AF_NETLINK', 'socket.SOCK_RAW', 4, false],
    ['netlink uevents', 'socket.AF_NETLINK', 'socket.SOCK_RAW', 15, false],
    ['AF_ALG (the kernel crypto API)', '38', 'socket.SOCK_SEQPACKET', 0, false],
    ['AF_VSOCK (the hypervisor)', '40', 'socket.SOCK_STREAM', 0, false],
    ['AF_PACKET (sniffing)', 'socket.AF_PACKET', 'socket.SOCK_RAW', 0, true],
    ['a raw IP socket', 'socket.AF_INET', 'socket.SOCK_RAW', 1, true],
  ] as const)('%s: made unconfined, refused sandboxed even with the network on', async ([, family, type, proto, rootOnly], ctx) => {
    if (rootOnly && !root) ctx.skip(`${NEEDS_ROOT} (CAP_NET_RAW)`);
    const plain = await run(make(family, type, proto), false);
    if (field(plain.output, 'made') !== '1') ctx.skip(`this kernel cannot make it unconfined either: ${plain.output.trim()}`);
    for (const sandbox of [true, { network: true }] as const) {
      expect(field((await run(make(family, type, proto), sandbox)).output, 'made')).toBe('0');
    }
  });

  it('routing netlink stays with the network on (getaddrinfo, ip addr), not without', async () => {
    const cmd = make('socket.AF_NETLINK', 'socket.SOCK_RAW', 0);
    expect(field((await run(cmd, false)).output, 'made')).toBe('1');
    expect(field((await run(cmd, { network: true })).output, 'made')).toBe('1');
    expect(field((await run(cmd, true)).output, 'made')).toBe('0');
  });
});

describe.skipIf(!linux)("the agent's secrets", () => {
  it('credential-like variables are left out unless the sandbox names them, and the report says which', async () => {
    const cmd = 'echo "svc=$NSS_TEST_API_KEY call=$GITHUB_TOKEN path=${PATH:+set} author=$GIT_AUTHOR_NAME"';
    const env = { GITHUB_TOKEN: 'ghp_from_the_call', GIT_AUTHOR_NAME: 'A' };
    const plain = await run(cmd, false, { env });
    expect(plain.output.trim()).toBe('svc=secret-from-the-service call=ghp_from_the_call path=set author=A');
    const boxed = await run(cmd, true, { env });
    expect(boxed.output.trim()).toBe('svc= call= path=set author=A');
    expect(boxed.sandbox!.envDropped).toEqual(expect.arrayContaining(['GITHUB_TOKEN', 'NSS_TEST_API_KEY']));
    expect(boxed.sandbox!.envDropped).not.toContain('PATH');
    const allowed = await run(cmd, { env: ['NSS_TEST_API_KEY'] }, { env });
    expect(allowed.output.trim()).toBe('svc=secret-from-the-service call= path=set author=A');
    expect(allowed.sandbox!.envDropped).not.toContain('NSS_TEST_API_KEY');
    expect(s.service.getResult(boxed.handle).sandbox!.envDropped).toEqual(boxed.sandbox!.envDropped);
    // The MCP server's flag for it.
    expect(sandboxFromFlags(new Map([['sandbox-env', ['NPM_TOKEN', 'MY_KEY']]]))).toEqual({ env: ['NPM_TOKEN', 'MY_KEY'] });
  });
});

describe.skipIf(!linux)('git hooks and configuration in a writable project', () => {
  const git = (cwd: string, ...args: string[]) =>
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });

  it('a planted pre-commit hook and an edited config are put back before the user commits', async () => {
    const repo = join(s.root, 'repo-guard');
    mkdirSync(repo);
    const service = new ShellExecutionService({ projectRoot: repo, ioDir: s.ioDir, sessionId: 'git' });
    try {
      expect(git(repo, 'init', '-q').status).toBe(0);
      const config = readFileSync(join(repo, '.git/config'), 'utf8');
      const marker = join(outside, 'hook-ran');
      const plant =
        `printf '#!/bin/sh\\necho ran > ${marker}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && ` +
        `printf '[alias]\\n\\tst = !touch ${marker}\\n' >> .git/config`;
      // The control: unconfined, the hook runs at the next commit.
      await service.run(plant, { sandbox: false, timeoutMs: 60_000 });
      expect(git(repo, 'commit', '-q', '--allow-empty', '-m', 'one').status).toBe(0);
      expect(existsSync(marker)).toBe(true);
      rmSync(marker);
      rmSync(join(repo, '.git/hooks/pre-commit'));
      writeFileSync(join(repo, '.git/config'), config);
      // Sandboxed: the job may write the project, and did; both are put back at its end.
      const boxed = await service.run(`${plant} && echo planted`, { sandbox: true, timeoutMs: 60_000 });
      expect(boxed.output).toContain('planted');
      expect(boxed.sandbox!.restored).toEqual(expect.arrayContaining(['.git/config', '.git/hooks/pre-commit']));
      expect(existsSync(join(repo, '.git/hooks/pre-commit'))).toBe(false);
      expect(readFileSync(join(repo, '.git/config'), 'utf8')).toBe(config);
      expect(git(repo, 'commit', '-q', '--allow-empty', '-m', 'two').status).toBe(0);
      expect(existsSync(marker)).toBe(false);
      // Other writes in the project stay, and so does a change the user makes between jobs.
      writeFileSync(join(repo, '.git/hooks/post-commit'), '#!/bin/sh\n');
      const other = await service.run('echo kept > file.txt', { sandbox: true, timeoutMs: 60_000 });
      expect(other.sandbox!.restored).toEqual([]);
      expect(readFileSync(join(repo, 'file.txt'), 'utf8')).toBe('kept\n');
      expect(existsSync(join(repo, '.git/hooks/post-commit'))).toBe(true);
    } finally {
      await service.shutdown();
    }
  });
});
