// A daemon client keeps Node alive as the in-process service does: while a call waits
// for its reply (nothing else holds the process: a pending in-process promise holds it
// through the addon), and no longer once nothing waits — an idle open connection lets
// the process exit. The link refs and unrefs its socket itself (client/link.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { place, ROOT, seen, stopDaemons } from './setup';

afterAll(stopDaemons);

describe('daemon client and the event loop', () => {
  it('holds Node while a call waits and lets it exit once nothing waits', () => {
    const p = place();
    // Nothing but the pending `run` can keep this script's process alive for the half
    // second the job sleeps; once answered, the connection stays open and idle.
    const script = `
      const { ShellExecutionService } = require(${JSON.stringify(join(ROOT, 'service.js'))});
      const svc = new ShellExecutionService({ projectRoot: ${JSON.stringify(p.project)}, ioDir: ${JSON.stringify(p.ioDir)}, daemon: ${JSON.stringify(p.daemon)} });
      svc.run('sleep 0.5; echo answered').then((r) => console.log(svc.daemon.pid, r.status, r.output.trim()));
    `;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
    const [pid, status, output] = child.stdout.trim().split(' ');
    seen(Number(pid));
    expect(child.stderr).toBe('');
    expect([status, output]).toEqual(['exited', 'answered']);
    // Exited on its own (not ended by the timeout's signal) with the connection open.
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
  });
});
