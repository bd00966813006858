// Awaiting-input detection: a PTY job whose foreground program is blocked reading its
// terminal ends run/sendInput/waitFor early with status 'awaiting_input' — and nothing
// else does (sleeping, computing, writing, reading a pipe or a file, a busy REPL).
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch({ maxJobs: 64 });
});
afterAll(() => s.cleanup());

/** Generous: detection takes about 50 ms; a missed detection waits out this delay. */
const DELAY = 8000;

async function runUntilInput(command: string, env: Record<string, string> = {}) {
  const t0 = Date.now();
  const r = await s.service.run(command, { callbackDelayMs: DELAY, env });
  const ms = Date.now() - t0;
  if (r.status === 'awaiting_input') {
    // The listing looks again now (a program may stir briefly, e.g. gdb's event loop).
    const listed = () => s.service.getActiveProcesses().find((p) => p.handle === r.handle)?.awaitingInput === true;
    expect(await eventually(listed)).toBe(true);
    await s.service.kill(r.handle, { graceMs: 50 });
  }
  return { ...r, ms };
}

describe('programs waiting at their prompt are detected', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['bash read', 'read -p "Password: " x', /Password: $/],
    ['python3 REPL', 'python3 -q', />>> $/],
    ['sqlite3', 'sqlite3', /sqlite> $/],
    ['ed', 'ed -p "ed> "', /ed> $/],
    ['bc', 'bc -q', /^$/],
    ['gdb', 'gdb -q -nx', /\(gdb\) $/],
    ['node REPL', 'node -i', /> $/],
    ['ssh-keygen passphrase', 'ssh-keygen -q -t ed25519 -f key', /passphrase.*: $/i],
  ];
  for (const [name, command, prompt] of cases) {
    it(name, async () => {
      const r = await runUntilInput(command);
      expect(r.status).toBe('awaiting_input');
      expect(r.awaitingInput).toBe(true);
      expect(r.output).toMatch(prompt);
      // Well under the delay: the early return, not the delay, ended the wait.
      expect(r.ms).toBeLessThan(DELAY / 2);
    });
  }

  it('git asking for a password through an askpass program that reads the terminal', async () => {
    const askpass = join(s.root, 'askpass.sh');
    writeFileSync(askpass, '#!/bin/sh\nprintf "%s" "$1" > /dev/tty\nread -r answer < /dev/tty\necho "$answer"\n');
    chmodSync(askpass, 0o755);
    const r = await runUntilInput("printf 'protocol=https\\nhost=example.invalid\\n\\n' | git credential fill", {
      GIT_ASKPASS: askpass,
    });
    expect(r.status).toBe('awaiting_input');
    expect(r.output).toMatch(/Username for 'https:\/\/example\.invalid': $/);
  });
});

describe('no false alarms', () => {
  const quiet: Array<[string, string]> = [
    ['sleeping', 'sleep 1.5'],
    ['computing', 'python3 -c "import time\nt = time.time()\nwhile time.time() - t < 1.5: pass"'],
    ['blocked writing a full pipe', 'yes | sleep 1.5'],
    ['reading a pipe', 'sleep 1.5 | cat'],
    ['reading a file', 'head -c 300000000 /dev/zero | cat > /dev/null; sleep 0.5'],
    ['a server waiting on its socket', 'timeout 1.5 python3 -m http.server 0 --bind 127.0.0.1 > /dev/null 2>&1; true'],
    ['a background reader of the terminal is not the foreground', 'sleep 1.5'],
  ];
  for (const [name, command] of quiet) {
    it(name, async () => {
      const r = await s.service.run(command, { callbackDelayMs: DELAY });
      expect(r.status).toBe('exited');
    });
  }

  it('a REPL busy running a command (time.sleep) is not waiting; it is once the prompt is back', async () => {
    const py = await s.service.run('python3 -q', { callbackPattern: '>>> $' });
    const t0 = Date.now();
    const busy = await s.service.sendInput(py.handle, 'import time; time.sleep(1.5); print("done")');
    expect(busy.status).toBe('awaiting_input');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(busy.output).toMatch(/done\n>>> $/);
    const quick = await s.service.sendInput(py.handle, 'print(6 * 7)');
    expect(quick.status).toBe('awaiting_input');
    expect(quick.output).toBe('print(6 * 7)\n42\n>>> ');
    await s.service.kill(py.handle);
  });

  it('pipes jobs are never reported (they have no terminal)', async () => {
    // `read` blocks on the stdin pipe: waiting for input, but not at a terminal.
    const r = await s.service.run('read x', { mode: 'pipes', callbackDelayMs: 300 });
    expect(r.status).toBe('running');
    expect(r.awaitingInput).toBe(false);
    await s.service.kill(r.handle);
  });
});

describe('the option and the other waits', () => {
  it('detectInput: false waits for the delay as before', async () => {
    const r = await s.service.run('read -p "Name: " x', { callbackDelayMs: 400, detectInput: false });
    expect(r.status).toBe('running');
    expect(r.awaitingInput).toBe(false);
    await s.service.kill(r.handle);
  });

  it('a pattern that matches first still wins', async () => {
    const r = await s.service.run("printf '>>> '; sleep 30; read x", { callbackPattern: '>>> $' });
    expect(r.status).toBe('running');
    expect(r.matched).toBe('>>> ');
    await s.service.kill(r.handle);
  });

  it('a prompt printed just before the read is seen before the program counts as waiting', async () => {
    // python3 -q prints its prompt and reads at once. The prompt may still be on its
    // way through the kernel's tty worker, or read but not yet in the job, when the
    // program is found blocked reading: neither counts as all output seen (once, under
    // load in .ci/run, python counted as waiting before the pattern saw its prompt).
    for (let i = 0; i < 5; i++) {
      const r = await s.service.run('python3 -q', { callbackPattern: '>>> $' });
      expect(r.status).toBe('running');
      expect(r.matched).toBe('>>> ');
      await s.service.kill(r.handle);
    }
  });

  it('input that nothing answered (no echo, no output) never counts as waited for', async () => {
    // The kernel hands typed input to the program later, on a worker of its own: until
    // output shows it arrived, a program still asleep in its read may not have seen it.
    const r = await s.service.run('stty -echo; while read -r line; do :; done', { callbackDelayMs: DELAY });
    expect(r.status).toBe('awaiting_input');
    const typed = await s.service.sendInput(r.handle, 'silent', { delayMs: 600 });
    expect(typed.status).toBe('delay_elapsed');
    await s.service.kill(r.handle);
  });

  it('waitFor ends when the job waits for input again', async () => {
    const { handle } = s.service.start('sleep 0.5; read -p "Continue? " x; echo got $x');
    const w = await s.service.waitFor(handle, { timeoutMs: DELAY });
    expect(w.status).toBe('awaiting_input');
    expect(w.output).toBe('Continue? ');
    const answered = await s.service.sendInput(handle, 'yes');
    expect(answered.status).toBe('exited');
    expect(answered.output).toContain('got yes');
  });
});
