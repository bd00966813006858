// Which containment holds the jobs, and that it is reported truthfully:
// the service's `containment`, each job's, and the kernel's own word (the job's cgroup in
// /proc/<pid>/cgroup) agree; where no cgroup can be had, a session bus that never
// answers costs a bounded wait once, then the process tree, never a hang.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { containment } from './capabilities';
import { type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

describe('the containment mode', () => {
  it('is the same for the service, its jobs and the kernel', async () => {
    const mode = s.service.containment;
    expect(['cgroup', 'process-tree']).toContain(mode);
    const r = await s.service.run('cat /proc/self/cgroup; echo ready; sleep 1000', { callbackPattern: 'ready', mode: 'pipes' });
    const info = s.service.getActiveProcesses().find((p) => p.handle === r.handle);
    expect(info?.containment).toBe(mode);
    // The kernel's own word: the job's first process sits in a cgroup of its own.
    const own = readFileSync(`/proc/${r.pid}/cgroup`, 'utf8');
    expect(/^0::.*\/native-shell-\d+-\d+\/job-\d+$/m.test(own), own).toBe(mode === 'cgroup');
    await s.service.kill(r.handle);
    s.service.removeProcess(r.handle);
  });

  it("is 'process-tree' with NATIVE_SHELL_CONTAINMENT=off, and each job's shell then adopts its orphans", () => {
    const tag = `1000.${process.pid}7`;
    const script = `
      const { readdirSync, readFileSync } = require('node:fs');
      const { ShellExecutionService } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
      const s = new ShellExecutionService({ persistOutput: false });
      const parentOfTagged = () => {
        for (const pid of readdirSync('/proc').filter((n) => /^[0-9]+$/.test(n))) {
          try {
            if (readFileSync('/proc/' + pid + '/cmdline', 'latin1') !== 'sleep\\x00${tag}\\x00') continue;
            const stat = readFileSync('/proc/' + pid + '/stat', 'utf8');
            return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          } catch {}
        }
        return null;
      };
      s.run('setsid -f sleep ${tag} </dev/null >/dev/null 2>&1; echo ready; sleep 1000', { mode: 'pipes', callbackPattern: 'ready' })
        .then(async (r) => {
          let parent = null;
          // setsid's own fork exits a moment after its child runs: then the shell adopts it.
          for (let i = 0; i < 600 && parent !== r.pid; i += 1) { parent = parentOfTagged(); await new Promise((d) => setTimeout(d, 50)); }
          process.stdout.write(JSON.stringify({ mode: s.containment, job: s.getActiveProcesses()[0]?.containment, shell: r.pid, parent }));
          await s.shutdown();
          process.stdout.write(JSON.stringify({ left: parentOfTagged() }));
        });`;
    const r = spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      env: { ...process.env, NATIVE_SHELL_CONTAINMENT: 'off' },
      timeout: 120_000,
    });
    const [first, second] = r.stdout.split('}{').map((part, i) => JSON.parse(i === 0 ? `${part}}` : `{${part}`));
    expect([first.mode, first.job]).toEqual(['process-tree', 'process-tree']);
    // The orphan of `setsid -f` was handed to the job's shell, not to init...
    expect(first.parent, r.stdout + r.stderr).toBe(first.shell);
    // ...so shutdown found it and ended it.
    expect(second.left).toBeNull();
  });
});

describe('no writable cgroup and a session bus that never answers', () => {
  let bus: Server;
  const held: Socket[] = [];
  const path = join(tmpdir(), `nss-silent-bus-${process.pid}.sock`);
  beforeAll(async () => {
    // Accepts connections and never says a word: a D-Bus daemon that hangs.
    bus = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => bus.listen(path, resolve));
  });
  afterAll(() => {
    for (const socket of held) socket.destroy();
    bus.close();
    rmSync(path, { force: true });
  });

  // Only where this user's own cgroup is not writable does the service ask systemd.
  const noCgroup = process.platform === 'linux' && containment() === 'process-tree';
  (noCgroup ? it : it.skip)('falls back to the process tree within a bounded time, and the job runs', async () => {
    const script = `
      const { ShellExecutionService } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))});
      const s = new ShellExecutionService({ persistOutput: false });
      s.run('echo ran').then(async (r) => {
        process.stdout.write(JSON.stringify({ mode: s.containment, output: r.output.trim() }));
        await s.shutdown();
      });`;
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${path}` },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((resolve) => child.on('exit', resolve));
    const result = JSON.parse(out) as { mode: string; output: string };
    expect(held.length, 'the service never asked the bus').toBeGreaterThan(0);
    // It fell back instead of hanging on the bus (the wait's bound, 3 s, is the
    // service's: systemd_scope.rs), and the job ran.
    expect([result.mode, result.output]).toEqual(['process-tree', 'ran']);
  });
});
