// The e2b PyPI SDK against the daemon's envd face: the script
// (fixtures/e2b_python_client.py) runs the basics and prints what it saw. Python is
// $PYTHON (CI: .ci/run's .venv, where it installs e2b), else python3; without the SDK
// there, one is installed into a cache venv, as the MCP suite does for `mcp`.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { stopDaemons } from '../daemon/setup';
import { ensurePythonPackage } from './python';
import { startFace, type Face } from './sdk-setup';

type Json = Record<string, any>;
let face: Face;
let seen: Json;
let workdir: string;

beforeAll(async () => {
  const python = ensurePythonPackage('e2b', 'e2b');
  face = await startFace();
  workdir = join(face.project, 'py-work');
  mkdirSync(workdir);
  const out = execFileSync(python, [join(__dirname, 'fixtures', 'e2b_python_client.py'), workdir], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, E2B_SANDBOX_URL: face.url, E2B_DEBUG: 'true' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  seen = JSON.parse(out) as Json;
}, 300_000);
afterAll(async () => {
  await stopDaemons();
});

describe('the e2b Python SDK', () => {
  it('runs commands: output, exit code, CommandExitException, cwd and envs', () => {
    expect(seen.run).toEqual({ exit_code: 0, stdout: 'out\n', stderr: 'err\n' });
    expect(seen.failed).toEqual({ exit_code: 3, stdout: 'partial\n' });
    expect(seen.cwd_envs).toBe(`${workdir}\nhi\n`);
  });

  it('lists, attaches to, feeds and kills a background command', () => {
    expect(seen.listed).toBe(1);
    expect(seen.stdin_echo).toBe(true);
    expect(seen.killed).toBe(true);
    expect(seen.gone).toBe(true);
    expect(seen.kill_again).toBe(false);
  });

  it('drives a PTY: input, resize, kill', () => {
    expect(seen.pty_size).toBe(true);
    expect(seen.pty_resized).toBe(true);
    expect(seen.pty_killed).toBe(true);
  });

  it('writes, reads and lists files; a missing file is FileNotFoundException', () => {
    expect(seen.write).toEqual({ name: 'f.txt', path: join(workdir, 'py', 'f.txt') });
    expect(seen.read).toBe('from python\n');
    expect(seen.list).toEqual([['f.txt', 'file']]);
    expect(seen.missing).toBe('FileNotFoundException');
  });

  it('as envd answers: gzip uploads, metadata kept, remove of nothing, a polled watcher that sees the change made before the poll', () => {
    expect(seen.gzip).toBe(true);
    expect(seen.metadata).toEqual([{ owner: 'py' }, { owner: 'py' }]);
    expect(seen.removed_nothing).toBe(true);
    expect(seen.watch).toEqual([
      ['create', 'w.txt'],
      ['chmod', 'w.txt'],
      ['write', 'w.txt'],
    ]);
  });
});
