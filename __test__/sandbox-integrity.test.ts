// Sandbox integrity, Linux (docs/sandbox.md, "Between jobs"): nothing one job writes
// decides what a later job may reach, and no job reaches the service's own files. Each
// attack is made the way a job told to get out would make it, and its effect tried
// twice: unconfined (`sandbox: false`), where it must work — the control, which shows
// the attack is real and the check can fail — and sandboxed, where it must not. Judged
// by the state it would change (the file in the stand-in home, the output served),
// never by a program's message.
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { landlockAbi } from './capabilities';
import { eventually, type Service, ShellExecutionService } from './helpers';

const linux = process.platform === 'linux';

// Everything outside /tmp, which every sandboxed job may write.
let outside: string;
/** Stands in for $HOME: what an escape would write into. */
let home: string;
/** Stands in for ~/.ssh: what an escape would read. */
let secret: string;
const services: Service[] = [];

beforeAll(() => {
  if (!linux) return;
  const base = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  outside = realpathSync(mkdtempSync(join(base, 'nss-integrity-')));
  home = join(outside, 'home');
  secret = join(outside, 'secret');
  mkdirSync(home);
  mkdirSync(secret);
  writeFileSync(join(secret, 'key'), 'PRIVATE-KEY\n');
});
afterAll(async () => {
  if (!linux) return;
  for (const svc of services) await svc.shutdown();
  rmSync(outside, { recursive: true, force: true });
});

/** A project outside /tmp with `out/` and `docs/`, and a service over it. */
function service(name: string, options: Partial<ConstructorParameters<typeof ShellExecutionService>[0]> = {}) {
  const root = join(outside, name);
  mkdirSync(join(root, 'out'), { recursive: true });
  mkdirSync(join(root, 'docs'));
  const svc = new ShellExecutionService({ projectRoot: root, persistOutput: false, ...options });
  services.push(svc);
  return { root, svc };
}

/** Runs `program` in `cwd` with containment off (as for a user without a cgroup); its output. */
async function withoutCgroup(cwd: string, program: string, args: string[]) {
  const child = spawn(program, args, { cwd, env: { ...process.env, NATIVE_SHELL_CONTAINMENT: 'off' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  await new Promise((resolve) => child.on('close', resolve));
  return { out, err };
}

type Options = NonNullable<Parameters<Service['run']>[1]>;
const runIn = (svc: Service, command: string, sandbox?: Options['sandbox']) =>
  svc.run(command, { timeoutMs: 30_000, ...(sandbox === undefined ? {} : { sandbox }) });

describe.skipIf(!linux)('the sandbox\'s paths are held from when they were resolved', () => {
  it('a write path a job replaced by a symlink to home: a later job cannot write home', async () => {
    const { root, svc } = service('write-swap', { sandbox: { write: ['out'] } });
    // Job A, sandboxed (it may write the project): `out` becomes a symlink to home.
    const a = await runIn(svc, `rm -rf out && ln -s ${home} out && echo swapped`);
    expect(a.output).toContain('swapped');
    expect(lstatSync(join(root, 'out')).isSymbolicLink()).toBe(true);
    // Control: unconfined, a write through `out` lands in home.
    await runIn(svc, 'echo plain > out/x-plain', false);
    expect(existsSync(join(home, 'x-plain'))).toBe(true);
    // Job B, under the service's sandbox resolved before the swap: refused.
    const b = await runIn(svc, 'echo boxed > out/x-boxed');
    expect(existsSync(join(home, 'x-boxed'))).toBe(false);
    // What was granted is the directory that was removed, and the result says so.
    expect(b.sandbox!.write).toContain(`${root}/out (deleted)`);
    expect(b.sandbox!.write.some((p) => p.startsWith(home))).toBe(false);
    // A run naming `out` now is refused: a symlink inside the project is never followed.
    await expect(runIn(svc, 'echo run > out/x-run', { write: ['out'] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('symbolic link'),
    });
    expect(existsSync(join(home, 'x-run'))).toBe(false);
  });

  it('a run naming a directory inside the service\'s write path, which a job replaced by a symlink: refused', async () => {
    const shared = join(outside, 'shared-write');
    mkdirSync(join(shared, 'out'), { recursive: true });
    const { svc } = service('shared-swap', { sandbox: { write: [shared] } });
    // Job A, under the service's sandbox, may write `shared`: `shared/out` becomes a symlink.
    await runIn(svc, `rm -rf ${shared}/out && ln -s ${home} ${shared}/out`);
    expect(lstatSync(join(shared, 'out')).isSymbolicLink()).toBe(true);
    await runIn(svc, `echo plain > ${shared}/out/s-plain`, false);
    expect(existsSync(join(home, 's-plain'))).toBe(true);
    // A later run's own sandbox naming that path by its absolute name.
    await expect(runIn(svc, `echo boxed > ${shared}/out/s-boxed`, { write: [join(shared, 'out')] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('symbolic link'),
    });
    expect(existsSync(join(home, 's-boxed'))).toBe(false);
  });

  it('a read path a job replaced by a symlink to a secret: a later job cannot read it', async () => {
    const { svc } = service('read-swap', { sandbox: { read: ['docs'] } });
    await runIn(svc, `rm -rf docs && ln -s ${secret} docs`);
    const plain = await runIn(svc, 'cat docs/key', false);
    expect(plain.output).toContain('PRIVATE-KEY');
    const boxed = await runIn(svc, 'cat docs/key; echo done');
    expect(boxed.output).toContain('done');
    expect(boxed.output).not.toContain('PRIVATE-KEY');
  });

  it('a renamed directory keeps its rule, the result names where it went, what took its name gets nothing', async () => {
    const { root, svc } = service('rename', { sandbox: { readOnly: true, write: ['out'] } });
    // The project is read-only to jobs, so the rename is done unconfined.
    await runIn(svc, `mv out out-moved && ln -s ${home} out`, false);
    await runIn(svc, 'echo plain > out/r-plain', false);
    expect(existsSync(join(home, 'r-plain'))).toBe(true);
    const boxed = await runIn(svc, 'echo kept > out-moved/kept; echo boxed > out/r-boxed');
    expect(readFileSync(join(root, 'out-moved', 'kept'), 'utf8')).toBe('kept\n');
    expect(existsSync(join(home, 'r-boxed'))).toBe(false);
    expect(boxed.sandbox!.write).toContain(join(root, 'out-moved'));
    expect(boxed.sandbox!.write).not.toContain(join(root, 'out'));
  });
});

describe.skipIf(!linux)('the jobs\' TMPDIRs', () => {
  it('lie in a private directory outside /tmp that no sandboxed job can write', async () => {
    const { svc } = service('tmp-private', { sandbox: true });
    const first = await runIn(svc, 'true');
    const base = dirname(first.sandbox!.tmpdir);
    expect(base.startsWith('/tmp/')).toBe(false);
    const attack = (tag: string) => `ln -s ${home} ${base}/planted-${tag}; mkdir ${base}/made-${tag}; true`;
    await runIn(svc, attack('plain'), false);
    await runIn(svc, attack('boxed'));
    expect(lstatSync(join(base, 'planted-plain')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(base, 'made-plain'))).toBe(true);
    expect(existsSync(join(base, 'planted-boxed'))).toBe(false);
    expect(existsSync(join(base, 'made-boxed'))).toBe(false);
    rmSync(join(base, 'planted-plain'));
    rmSync(join(base, 'made-plain'), { recursive: true });
  });

  it('a spare replaced by a symlink to home since it was made is not handed out', async () => {
    const { svc } = service('tmp-spare', { sandbox: true });
    const first = await runIn(svc, 'true');
    const base = dirname(first.sandbox!.tmpdir);
    // The helper thread makes spares ahead: waited for, not assumed.
    const spares = () => readdirSync(base).filter((n) => n.startsWith('job-') && join(base, n) !== first.sandbox!.tmpdir);
    expect(await eventually(() => spares().length > 0)).toBe(true);
    // Unconfined (no sandboxed job can: the test above), every spare becomes a symlink.
    const swap = await runIn(
      svc,
      `for d in ${base}/job-*; do rmdir "$d" 2>/dev/null && ln -s ${home} "$d" && echo "swapped $d"; done; true`,
      false,
    );
    const swapped = [...swap.output.matchAll(/swapped (\S+)/g)].map((m) => m[1]);
    expect(swapped.length).toBeGreaterThan(0);
    for (const path of swapped) expect(lstatSync(path).isSymbolicLink()).toBe(true);
    const boxed = await runIn(svc, 'echo boxed > "$TMPDIR/spare-boxed"');
    expect(swapped).not.toContain(boxed.sandbox!.tmpdir);
    expect(existsSync(join(home, 'spare-boxed'))).toBe(false);
    for (const path of swapped) rmSync(path);
  });

  it('a process a finished job left behind cannot reach a later job\'s TMPDIR', async () => {
    const { root, svc } = service('tmp-survivor', { sandbox: true });
    const base = dirname((await runIn(svc, 'true')).sandbox!.tmpdir);
    // Left behind, detached. Unconfined (the control) it writes into every job's
    // directory it finds; sandboxed it can only try its own TMPDIR, which it holds as
    // its working directory: once that is handed to a later job (if it were), whatever
    // its name by then, it writes there. Bounded (about 10 s); its pid where the test
    // can end it.
    const survivor = (tag: string, where: string) =>
      `setsid -f sh -c 'echo $$ > ${root}/survivor-${tag}; cd "$TMPDIR"; sleep 0.5; for i in $(seq 500); do for d in ${where}; do echo x > "$d/from-${tag}" 2>/dev/null; done; sleep 0.02; done' </dev/null >/dev/null 2>&1`;
    const end = (tag: string) => {
      const file = join(root, `survivor-${tag}`);
      if (existsSync(file)) {
        try {
          process.kill(Number(readFileSync(file, 'utf8')), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    };
    /**
     * What `n` later jobs find in their TMPDIRs, each waiting for the survivor's loop to
     * come round. Ten: more than the spares kept ahead of a directory a job gave back.
     */
    const look = async (n: number) => {
      const listed: string[] = [];
      for (let i = 0; i < n; i++) listed.push((await runIn(svc, 'sleep 0.2; ls -a "$TMPDIR"')).output);
      return listed.join('\n');
    };
    try {
      await runIn(svc, survivor('plain', `${base}/job-*`), false);
      let seen = '';
      for (let i = 0; i < 20 && !seen.includes('from-plain'); i++) seen = await look(1);
      expect(seen).toContain('from-plain');
      end('plain');
      // What it wrote into the spares would keep them from being handed out again.
      await new Promise((r) => setTimeout(r, 100));
      for (const name of readdirSync(base)) rmSync(join(base, name, 'from-plain'), { force: true });
      await runIn(svc, survivor('boxed', '.'));
      expect(await eventually(() => existsSync(join(root, 'survivor-boxed')))).toBe(true);
      expect(await look(10)).not.toContain('from-boxed');
    } finally {
      end('plain');
      end('boxed');
    }
  });

  it('without a cgroup, a finished job\'s TMPDIR goes to a later job only once no process of it is left', async () => {
    // Containment off (a user without a writable cgroup): what says that nothing of a
    // job is left is its seccomp filter's listener. A directory is known by its inode
    // and birth time (a new one may get a freed inode).
    const root = join(outside, 'tmp-no-cgroup');
    mkdirSync(root);
    const script = `
      const { existsSync } = require('node:fs');
      const { ShellExecutionService } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
      const root = ${JSON.stringify(root)};
      const s = new ShellExecutionService({ projectRoot: root, persistOutput: false, sandbox: true });
      const id = 'stat -c "%i %w" "$TMPDIR"';
      const last = (r) => r.output.trim().split('\\n').pop();
      (async () => {
        // Left behind with its TMPDIR as its working directory, empty for 3 s (so the
        // directory could be kept for a later job), then writing into it.
        const survivor = last(await s.run(\`setsid -f sh -c 'echo $$ > survivor; cd "$TMPDIR"; sleep 3; while :; do echo x > from-survivor; sleep 0.02; done' </dev/null >/dev/null 2>&1; \${id}\`, { timeoutMs: 30000 }));
        while (!existsSync(root + '/survivor')) await new Promise((r) => setTimeout(r, 20));
        const started = Date.now();
        const later = [];
        const seen = [];
        for (let i = 0; i < 20; i++) later.push(last(await s.run(id, { timeoutMs: 30000 })));
        while (Date.now() - started < 3500) await new Promise((r) => setTimeout(r, 50));
        for (let i = 0; i < 10; i++) {
          const r = await s.run('sleep 0.1; ls -A "$TMPDIR"; ' + id, { timeoutMs: 30000 });
          seen.push(r.output);
          later.push(last(r));
        }
        process.stdout.write(JSON.stringify({ mode: s.containment, survivor, later, seen }));
        await s.shutdown();
      })();`;
    const { out, err } = await withoutCgroup(root, process.execPath, ['-e', script]);
    const survivorPid = existsSync(join(root, 'survivor')) ? Number(readFileSync(join(root, 'survivor'), 'utf8')) : 0;
    try {
      if (survivorPid > 0) process.kill(survivorPid, 'SIGKILL');
    } catch {
      // Ended by the shutdown already.
    }
    const r = JSON.parse(out || '{}') as { mode: string; survivor: string; later: string[]; seen: string[] };
    expect(r.mode, out + err).toBe('process-tree');
    expect(r.survivor).toMatch(/^\d+ \d{4}-/);
    // The survivor's directory went to no later job, and no later job saw its writes...
    expect(r.later).not.toContain(r.survivor);
    expect(r.seen.join('\n')).not.toContain('from-survivor');
    // ...while the directories of jobs that left nothing were kept and handed out again.
    expect(new Set(r.later).size).toBeLessThan(r.later.length);
  });

  it('a host already under a seccomp filter with a listener gets no sandbox below Landlock ABI 9 (SANDBOX_UNAVAILABLE), or confined jobs whose TMPDIRs are not reused', async () => {
    // The kernel allows one listener per chain of filters; a host inside such a chain
    // (some container runtimes) makes the job's own listener EBUSY. Below Landlock ABI 9
    // the job's unix sockets are confined only through that listener
    // (src/platform/linux/sandbox/supervise/), so no sandbox is given there: refused,
    // never one that lets every socket through. From ABI 9 the jobs run confined, their
    // TMPDIRs never reused (nothing says their processes are gone). Python's ctypes
    // installs an allow-all filter with a listener and keeps the listener open across
    // the exec of Node, as such a runtime would.
    const root = join(outside, 'tmp-host-listener');
    mkdirSync(root);
    const wrapper = [
      'import ctypes, os, platform, sys',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'class Insn(ctypes.Structure): _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]',
      'class Prog(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]',
      'allow = (Insn * 1)(Insn(0x06, 0, 0, 0x7fff0000))',
      'prog = Prog(1, allow)',
      'nr = {"x86_64": 317, "aarch64": 277, "riscv64": 277}[platform.machine()]',
      'libc.prctl(38, 1, 0, 0, 0)',
      'fd = libc.syscall(nr, 1, 8, ctypes.byref(prog))',
      'if fd < 0: sys.exit("no listener: errno %d" % ctypes.get_errno())',
      'os.set_inheritable(fd, True)',
      'os.execv(sys.argv[1], sys.argv[1:])',
    ].join('\n');
    const script = `
      const { ShellExecutionService } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
      (async () => {
        let s;
        try {
          s = new ShellExecutionService({ projectRoot: ${JSON.stringify(root)}, persistOutput: false, sandbox: true });
          await s.run('true', { timeoutMs: 30000 });
        } catch (e) {
          const plain = new ShellExecutionService({ projectRoot: ${JSON.stringify(root)}, persistOutput: false });
          const ran = await plain.run('echo unconfined', { timeoutMs: 30000 });
          process.stdout.write(JSON.stringify({ refused: { code: e.code, message: e.message }, plain: ran.output }));
          await plain.shutdown();
          return;
        }
        const ids = [];
        for (let i = 0; i < 12; i++) ids.push((await s.run('stat -c "%i %w" "$TMPDIR"', { timeoutMs: 30000 })).output.trim());
        const escape = await s.run('echo x > ${home}/host-listener; echo done', { timeoutMs: 30000 });
        process.stdout.write(JSON.stringify({ mode: s.containment, ids, escape: escape.output, sandboxed: !!escape.sandbox }));
        await s.shutdown();
      })();`;
    const { out, err } = await withoutCgroup(root, 'python3', ['-c', wrapper, process.execPath, '-e', script]);
    const r = JSON.parse(out || '{}') as {
      mode: string;
      ids: string[];
      escape: string;
      sandboxed: boolean;
      refused?: { code: string; message: string };
      plain?: string;
    };
    if (landlockAbi() < 9) {
      expect(r.refused?.code, out + err).toBe('SANDBOX_UNAVAILABLE');
      expect(r.refused?.message).toContain('listener');
      // The host itself still runs jobs, unconfined when asked so.
      expect(r.plain).toContain('unconfined');
      expect(existsSync(join(home, 'host-listener'))).toBe(false);
      return;
    }
    expect(r.mode, out + err).toBe('process-tree');
    // Confined as ever: the job ran, and could not write outside.
    expect(r.sandboxed).toBe(true);
    expect(r.escape).toContain('done');
    expect(existsSync(join(home, 'host-listener'))).toBe(false);
    // No listener of its own, so nothing says its processes are gone: never reused.
    expect(r.ids.every((id) => /^\d+ \d{4}-/.test(id))).toBe(true);
    expect(new Set(r.ids).size).toBe(r.ids.length);
  });

  it('a write path naming another job\'s TMPDIR is refused', async () => {
    const { svc } = service('tmp-named', { sandbox: true });
    const running = await svc.run('echo ready; sleep 60', { callbackPattern: 'ready', timeoutMs: 30_000 });
    const victim = running.sandbox!.tmpdir;
    await expect(runIn(svc, `echo x > ${victim}/named`, { write: [victim] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('private TMPDIR directory'),
    });
    expect(existsSync(join(victim, 'named'))).toBe(false);
    await svc.kill(running.handle);
  });

  it('a running job\'s TMPDIR is not writable by another job', async () => {
    const { svc } = service('tmp-running', { sandbox: true });
    const running = await svc.run('echo ready; sleep 60', { callbackPattern: 'ready', timeoutMs: 30_000 });
    const victim = running.sandbox!.tmpdir;
    await runIn(svc, `echo x > ${victim}/from-plain`, false);
    await runIn(svc, `echo x > ${victim}/from-boxed`);
    expect(existsSync(join(victim, 'from-plain'))).toBe(true);
    expect(existsSync(join(victim, 'from-boxed'))).toBe(false);
    await svc.kill(running.handle);
  });
});

describe.skipIf(!linux)('the service\'s output files', () => {
  it('ioDir under /tmp: /tmp is not writable for jobs, and no job forges output that readOutput serves', async () => {
    const io = realpathSync(mkdtempSync(join(tmpdir(), 'nss-integrity-io-')));
    try {
      const { svc } = service('io-tmp', { persistOutput: true, ioDir: io, sessionId: 's', sandbox: true });
      // 1.2 MB: the middle is no longer in memory, so readOutput reads it from the file.
      const victim = await runIn(svc, 'yes aaaaaaaaa | head -n 120000', false);
      const file = join(victim.outputDir!, 'stdout.txt');
      expect(existsSync(file)).toBe(true);
      const forge = (tag: string, at: number) =>
        `printf FORGED-${tag} | dd of=${file} bs=1 seek=${at} conv=notrunc 2>/dev/null; true`;
      const served = (at: number) => svc.readOutput(victim.handle, { since: at, maxBytes: 64 }).text;
      expect(served(300_000)).not.toContain('FORGED');
      await runIn(svc, forge('plain', 300_000), false);
      expect(served(300_000)).toContain('FORGED-plain');
      const boxed = await runIn(svc, forge('boxed', 400_000));
      expect(served(400_000)).not.toContain('FORGED');
      expect(readFileSync(file, 'utf8')).not.toContain('FORGED-boxed');
      expect(boxed.sandbox!.write).not.toContain('/tmp');
      expect(boxed.sandbox!.notes.join(' ')).toContain('/tmp is not writable');
    } finally {
      rmSync(io, { recursive: true, force: true });
    }
  });

  it('ioDir inside what a sandbox makes writable: that sandbox is refused, nothing runs', async () => {
    const root = join(outside, 'io-inside');
    mkdirSync(root);
    const io = join(root, '.io');
    expect(() => new ShellExecutionService({ projectRoot: root, ioDir: io, sandbox: true })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('ioDir') }),
    );
    const { svc } = service('io-inside-runs', { persistOutput: true, ioDir: join(outside, 'io-inside-runs', '.io'), sessionId: 's' });
    // Control: an unconfined job changes another job's output file.
    const victim = await runIn(svc, 'echo genuine');
    const file = join(victim.outputDir!, 'stdout.txt');
    await runIn(svc, `echo forged-plain > ${file}`, false);
    expect(readFileSync(file, 'utf8')).toBe('forged-plain\n');
    await expect(runIn(svc, `echo forged-boxed > ${file}; echo ran > ran`, true)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(readFileSync(file, 'utf8')).toBe('forged-plain\n');
    expect(existsSync(join(outside, 'io-inside-runs', 'ran'))).toBe(false);
  });

  it('a write path inside ioDir is refused, nothing runs', async () => {
    const io = join(outside, 'io-named');
    const { root, svc } = service('io-named-runs', { persistOutput: true, ioDir: io, sessionId: 's' });
    const victim = await runIn(svc, 'echo genuine');
    const file = join(victim.outputDir!, 'stdout.txt');
    await expect(runIn(svc, `echo forged > ${file}; echo ran > ran`, { write: [victim.outputDir!] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('inside ioDir'),
    });
    expect(readFileSync(file, 'utf8')).toBe('genuine\n');
    expect(existsSync(join(root, 'ran'))).toBe(false);
  });
});
