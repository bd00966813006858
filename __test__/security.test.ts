// Security: private output files, paths that cannot be steered out of ioDir or the
// project root (absolute, `..`, symlinks, a symlink swapped in after the check), the
// environment marker, isolation between service instances, and no interpolation of
// anything from the caller into a shell command by the service itself.
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually, expectCode, type Scratch, scratch, ShellExecutionService } from './helpers';

let s: Scratch;
let outside: string;
beforeAll(() => {
  s = scratch();
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'nss-outside-')));
});
afterAll(async () => {
  await s.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

const mode = (p: string) => statSync(p).mode & 0o777;

describe('output files', () => {
  it('are 0600 in 0700 directories, even under umask 000', async () => {
    const old = process.umask(0);
    try {
      const ioDir = join(outside, 'fresh-io');
      const svc = new ShellExecutionService({ projectRoot: s.root, ioDir, sessionId: 'modes' });
      const pty = await svc.run('echo secret');
      const pipes = await svc.run('echo out; echo err >&2', { mode: 'pipes' });
      await svc.shutdown();
      expect(mode(ioDir)).toBe(0o700);
      expect(mode(join(ioDir, 'modes'))).toBe(0o700);
      for (const r of [pty, pipes]) {
        expect(mode(r.outputDir!)).toBe(0o700);
        for (const f of readdirSync(r.outputDir!)) expect([f, mode(join(r.outputDir!, f))]).toEqual([f, 0o600]);
      }
      expect(readdirSync(pipes.outputDir!).sort()).toEqual(['info.json', 'stderr.txt', 'stdout.txt']);
    } finally {
      process.umask(old);
    }
  });
});

describe('sessionId and handles cannot steer a path outside ioDir', () => {
  for (const bad of ['../x', '..', '.', 'a/b', '/abs', 'x\\y', 'a\0b', '~', 'a b', '']) {
    it(`sessionId ${JSON.stringify(bad)} is refused`, async () => {
      await expectCode(() => new ShellExecutionService({ projectRoot: s.root, ioDir: s.ioDir, sessionId: bad }), 'INVALID_ARGUMENT');
    });
  }

  it('every job directory is <ioDir>/<sessionId>/<handle>, inside ioDir', async () => {
    const results = await Promise.all([s.service.run('true'), s.service.run('true', { mode: 'pipes' })]);
    for (const r of results) {
      expect(r.outputDir).toBe(join(s.ioDir, 'test', String(r.handle)));
      expect(relative(s.ioDir, realpathSync(r.outputDir!)).startsWith('..')).toBe(false);
    }
    // Handles are numbers checked at the boundary: nothing else reaches a path.
    await expectCode(() => s.service.getProcessOutput(-1), 'INVALID_ARGUMENT');
    await expectCode(() => s.service.getProcessOutput(1.5), 'INVALID_ARGUMENT');
    await expectCode(() => s.service.getProcessOutput('../1' as unknown as number), 'NumberExpected');
  });

  // Handles are predictable (1, 2, ...): whoever can write in the session directory
  // could plant a symlink where the next job's output (possibly secrets) would go. Job
  // directories are made with an exclusive mkdir, so a planted name is skipped.
  it('a symlink planted where the next job directory will be is not followed', async () => {
    // Planted before the service exists: a new service's start-up sweep removes empty
    // session folders without a live service, which raced with planting after it.
    mkdirSync(join(outside, 'planted-io', 'victim'), { recursive: true });
    const target = join(outside, 'stolen');
    mkdirSync(target);
    symlinkSync(target, join(outside, 'planted-io', 'victim', '1'));
    const svc = new ShellExecutionService({ projectRoot: s.root, ioDir: join(outside, 'planted-io'), sessionId: 'victim' });
    const r = await svc.run('echo the-secret');
    await svc.shutdown();
    expect(r.output).toBe('the-secret\n');
    expect(readdirSync(target)).toEqual([]);
  });
});

describe('directory cannot leave the project root', () => {
  beforeAll(() => {
    mkdirSync(join(s.root, 'sub', 'inner'), { recursive: true });
    symlinkSync('/tmp', join(s.root, 'to-tmp'));
    symlinkSync('../..', join(s.root, 'sub', 'up-two'));
    symlinkSync('inner', join(s.root, 'sub', 'to-inner'));
    symlinkSync(join(s.root, 'to-tmp'), join(s.root, 'chain'));
  });

  for (const bad of ['/tmp', '/', '..', '../', 'sub/../..', './../project/../..', 'to-tmp', 'to-tmp/', 'sub/up-two', 'chain', 'sub/up-two/project/..']) {
    it(`${JSON.stringify(bad)} is refused`, async () => {
      await expectCode(s.service.run('pwd -P', { directory: bad }), 'INVALID_DIRECTORY');
      await expectCode(s.service.run('/bin/pwd', { directory: bad, args: [] }), 'INVALID_DIRECTORY');
    });
  }

  it('symlinks that stay inside are followed to their real place', async () => {
    const r = await s.service.run('pwd -P', { directory: 'sub/to-inner' });
    expect(r.output.trim()).toBe(join(s.root, 'sub', 'inner'));
    expect(r.directory).toBe('sub/to-inner');
  });

  it('a symlink swapped in after the check never lets a job run outside the root', async () => {
    // The truth is the kernel's: the cwd link and getcwd(). (bash's builtin `pwd -P` and
    // `$PWD` re-resolve the *name* the shell started in, so once the racer has swapped
    // the symlink under that name they can print the outside directory while the
    // process itself is inside: a report about a name, not where the job runs.)
    // A racer atomically exchanges (renameat2 RENAME_EXCHANGE) a real directory and a
    // symlink to outside the root under one name, as fast as it can, while many jobs
    // ask to run there: `arena/d` always exists, and is one or the other.
    const arena = join(s.root, 'arena');
    mkdirSync(join(arena, 'd'), { recursive: true });
    symlinkSync(outside, join(arena, 'other'));
    const racer = spawn(
      'python3',
      [
        '-c',
        `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(${JSON.stringify(arena)})
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, b'd', AT_FDCWD, b'other', RENAME_EXCHANGE) != 0:
    sys.exit('renameat2: errno %d' % ctypes.get_errno())
print('go', flush=True)
while True:
    libc.renameat2(AT_FDCWD, b'd', AT_FDCWD, b'other', RENAME_EXCHANGE)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve, reject) => {
      racer.stdout!.once('data', resolve);
      racer.once('exit', (code) => reject(new Error(`racer exited ${code}`)));
    });
    const runs = Number(process.env.SECURITY_RACE_RUNS ?? 600);
    const seen = { inside: 0, refused: 0, other: 0 };
    const escapes: string[] = [];
    try {
      // At least `runs`, then on until the race has gone both ways (how often a start
      // lands between two swaps depends on how the racer is scheduled: 0 of 600 was
      // seen once, as uid 65534 on a loaded machine), at most ten times as many.
      const bothWays = () => seen.inside > 0 && seen.refused > 0;
      for (let batch = 0; batch < (runs * 10) / 12 && (batch < runs / 12 || !bothWays()); batch += 1) {
        await Promise.all(
          Array.from({ length: 12 }, async (_, i) => {
            try {
              const r =
                i % 2 === 0
                  ? await s.service.run('readlink /proc/$$/cwd; /bin/pwd -P', { directory: 'arena/d', mode: i % 4 === 0 ? 'pty' : 'pipes' })
                  : await s.service.run('/bin/pwd', { directory: 'arena/d', args: [], mode: 'pipes' });
              const lines = r.output.trim().split('\n');
              if (r.status !== 'exited') seen.other += 1;
              else if (lines.every((l) => l === join(arena, 'd') || l === join(arena, 'other'))) seen.inside += 1;
              else escapes.push(r.output);
              s.service.removeProcess(r.handle);
            } catch (e) {
              if ((e as { code?: string }).code === 'INVALID_DIRECTORY') seen.refused += 1;
              else throw e;
            }
          }),
        );
      }
    } finally {
      racer.kill('SIGKILL');
    }
    // eslint-disable-next-line no-console
    console.log(`[security] symlink race: ${JSON.stringify({ runs, ...seen, escapes: escapes.length })}`);
    expect(escapes.map((e) => JSON.stringify(e))).toEqual([]);
    expect(seen.other).toBe(0);
    // The race did happen both ways.
    expect(seen.inside).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });
});

describe('environment marker', () => {
  it('every job carries NATIVE_SHELL_JOB=<token>.<handle> and NATIVE_SHELL_OWNER, which callers cannot override', async () => {
    const spoof = { NATIVE_SHELL_JOB: 'spoofed', NATIVE_SHELL_OWNER: 'spoofed', GEMINI_CLI: '0', PAGER: 'less' };
    const a = await s.service.run('printenv NATIVE_SHELL_JOB NATIVE_SHELL_OWNER GEMINI_CLI PAGER GIT_PAGER GIT_TERMINAL_PROMPT', {
      mode: 'pipes',
      env: spoof,
    });
    const b = await s.service.run('printenv', { args: ['NATIVE_SHELL_JOB', 'NATIVE_SHELL_OWNER'], mode: 'pty' });
    const [jobA, ownerA, gemini, pager, gitPager, prompt] = a.stdout.trim().split('\n');
    const [jobB, ownerB] = b.output.trim().split('\n');
    expect(jobA).toMatch(new RegExp(`^[0-9a-f]+-\\d+\\.${a.handle}$`));
    expect(jobB).toMatch(new RegExp(`^[0-9a-f]+-\\d+\\.${b.handle}$`));
    expect(jobA.split('.')[0]).toBe(jobB.split('.')[0]);
    expect(ownerA).toMatch(/^[0-9a-f]{16}$/);
    expect(ownerB).toBe(ownerA);
    expect(jobA.startsWith(`${ownerA}-`)).toBe(true);
    expect([gemini, pager, gitPager, prompt]).toEqual(['1', 'cat', 'cat', '0']);
  });
});

describe('service instances are isolated', () => {
  it("one service cannot see, wait on, write to, resize, kill or remove another's jobs", async () => {
    const a = scratch({ sessionId: 'iso-a' });
    const b = scratch({ sessionId: 'iso-b' });
    try {
      const ja = await a.service.run('echo a-ready; cat', { callbackPattern: 'a-ready', mode: 'pipes' });
      // b has no job yet: a's handle means nothing to it.
      await expectCode(b.service.kill(ja.handle), 'PROCESS_NOT_FOUND');
      await expectCode(b.service.sendInput(ja.handle, 'x'), 'PROCESS_NOT_FOUND');
      await expectCode(b.service.waitFor(ja.handle, { timeoutMs: 100 }), 'PROCESS_NOT_FOUND');
      await expectCode(() => b.service.writeToPty(ja.handle, 'x'), 'PROCESS_NOT_FOUND');
      await expectCode(() => b.service.getProcessOutput(ja.handle), 'PROCESS_NOT_FOUND');
      await expectCode(() => b.service.resizePty(ja.handle, 10, 10), 'PROCESS_NOT_FOUND');
      await expectCode(() => b.service.removeProcess(ja.handle), 'PROCESS_NOT_FOUND');
      expect(b.service.isPtyActive(ja.handle)).toBe(false);
      // Now b has a job with the same number: b's calls reach b's job only.
      const jb = await b.service.run('echo b-ready; cat', { callbackPattern: 'b-ready', mode: 'pipes' });
      expect(jb.handle).toBe(ja.handle);
      expect(b.service.getProcessOutput(jb.handle)).toBe('b-ready\n');
      expect(b.service.getActiveProcesses().map((p) => p.pid)).toEqual([jb.pid]);
      await b.service.kill(jb.handle);
      await b.service.shutdown();
      expect(alive(ja.pid!)).toBe(true);
      const answer = await a.service.sendInput(ja.handle, 'still-a', { pattern: 'still-a\\n' });
      expect(answer.status).toBe('matched');
      expect(a.service.getActiveProcesses().map((p) => p.pid)).toEqual([ja.pid]);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  });

  it("a kill in one service never touches another service's processes, even in the same Node", async () => {
    const a = scratch({ sessionId: 'tree-a' });
    const b = scratch({ sessionId: 'tree-b' });
    try {
      const ja = await a.service.run('setsid sleep 1000 & echo "p $!"; echo ready; wait', { callbackPattern: 'ready' });
      const jb = await b.service.run('setsid sleep 1000 & echo "p $!"; echo ready; wait', { callbackPattern: 'ready' });
      const aPids = [ja.pid!, ...[...ja.output.matchAll(/p (\d+)/g)].map((m) => Number(m[1]))];
      const bPids = [jb.pid!, ...[...jb.output.matchAll(/p (\d+)/g)].map((m) => Number(m[1]))];
      await b.service.kill(jb.handle);
      expect(await eventually(() => bPids.every((p) => !alive(p)))).toBe(true);
      expect(aPids.every(alive)).toBe(true);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  });

  // Two services given the same ioDir and sessionId (two windows of one agent session,
  // a restart with a fixed sessionId) both number their jobs 1, 2, ...: the second
  // takes the next free directory name (`1-2`) instead of overwriting the first's.
  it("two services sharing ioDir and sessionId do not overwrite each other's files", async () => {
    const ioDir = join(outside, 'shared-io');
    const a = new ShellExecutionService({ projectRoot: s.root, ioDir, sessionId: 'same' });
    const b = new ShellExecutionService({ projectRoot: s.root, ioDir, sessionId: 'same' });
    try {
      const ra = await a.run('echo from-a');
      const rb = await b.run('echo from-b');
      expect(readFileSync(join(ra.outputDir!, 'stdout.txt'), 'utf8')).toBe('from-a\n');
      expect(readFileSync(join(rb.outputDir!, 'stdout.txt'), 'utf8')).toBe('from-b\n');
    } finally {
      await a.shutdown();
      await b.shutdown();
    }
  });
});

describe('nothing from the caller is interpolated into a shell command by the service', () => {
  const hostile = ['$(touch pwned1)', '`touch pwned2`', '; touch pwned3', '| touch pwned4', "' ; touch pwned5 '", '" ; touch pwned6 "', '\n touch pwned7'];

  it('argv mode passes every argument literally', async () => {
    const r = await s.service.run('printf', { args: ['%s\\n', ...hostile], mode: 'pipes' });
    expect(r.stdout).toBe(`${hostile.join('\n')}\n`);
    expect(readdirSync(s.root).filter((f) => f.startsWith('pwned'))).toEqual([]);
  });

  it('the job runs `bash -c <command>` exactly, with nothing wrapped around it', async () => {
    // (`; true` keeps bash from exec-ing the last command in its own place.)
    const command = "echo ready; sleep 1000; true # $(touch pwned8) 'quoted'";
    for (const mode of ['pty', 'pipes'] as const) {
      const r = await s.service.run(command, { mode, callbackPattern: 'ready' });
      expect(readFileSync(`/proc/${r.pid}/cmdline`, 'utf8').split('\0').slice(0, -1)).toEqual(['bash', '-c', command]);
      await s.service.kill(r.handle);
    }
    // cat reads its stdin (the terminal) first, so it waits there with its argv intact;
    // `run` returns once it waits (awaiting_input), past its exec on a loaded machine too.
    const argv = await s.service.run('cat', { args: ['-', '$(touch pwned9)'] });
    expect(argv.status).toBe('awaiting_input');
    expect(readFileSync(`/proc/${argv.pid}/cmdline`, 'utf8').split('\0').slice(0, -1)).toEqual(['cat', '-', '$(touch pwned9)']);
    await s.service.kill(argv.handle);
    expect(readdirSync(s.root).filter((f) => f.startsWith('pwned'))).toEqual([]);
  });

  it('hostile directory names, env values, descriptions, patterns and inputs stay data', async () => {
    const dirName = '$(touch pwned10); `touch pwned11` && x';
    mkdirSync(join(s.root, dirName));
    const r = await s.service.run('pwd -P; printf "%s\\n" "$HOSTILE"', {
      directory: dirName,
      env: { HOSTILE: '$(touch pwned12)' },
      description: '$(touch pwned13)',
      callbackPattern: '\\$\\(touch pwned14\\)',
      mode: 'pipes',
    });
    expect(r.stdout).toBe(`${join(s.root, dirName)}\n$(touch pwned12)\n`);
    const cat = await s.service.run('cat', { callbackDelayMs: 0, mode: 'pipes' });
    const echoed = await s.service.sendInput(cat.handle, '$(touch pwned15)', { pattern: 'pwned15\\)' });
    expect(echoed.output).toBe('$(touch pwned15)\n');
    await s.service.kill(cat.handle);
    expect(readdirSync(s.root).filter((f) => f.startsWith('pwned'))).toEqual([]);
    expect(readdirSync(join(s.root, dirName))).toEqual([]);
  });

  it("the watchdog is a fixed script; the owner token reaches it as an argument", async () => {
    const watchdogs = readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map((n) => {
        try {
          return readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0');
        } catch {
          return [];
        }
      })
      .filter((argv) => argv.includes('native-shell-watchdog'));
    expect(watchdogs.length).toBeGreaterThan(0);
    for (const argv of watchdogs) {
      expect(argv[0]).toBe('bash');
      expect(argv[1]).toBe('-c');
      expect(argv[3]).toBe('native-shell-watchdog');
      expect(argv[4]).toMatch(/^NATIVE_SHELL_OWNER=[0-9a-f]{16}$/);
      expect(argv[2]).not.toContain(argv[4].split('=')[1]);
    }
  });

  it('a project root whose path holds shell syntax works as a plain path', async () => {
    const root = join(outside, 'proj $(touch pwned16) `x`; y');
    mkdirSync(root);
    const svc = new ShellExecutionService({ projectRoot: root, ioDir: join(outside, 'io $(x)'), sessionId: 'odd' });
    const r = await svc.run('pwd -P');
    await svc.shutdown();
    expect(r.output).toBe(`${root}\n`);
    expect(existsSync(join(outside, 'pwned16'))).toBe(false);
    expect(lstatSync(join(outside, 'io $(x)', 'odd')).isDirectory()).toBe(true);
    writeFileSync(join(outside, 'marker'), '');
  });
});
