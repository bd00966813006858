// The daemon client over the HTTP port (`daemon: { url, token }`): the
// daemon's own protocol after an HTTP/1.1 Upgrade (src/daemon/http/upgrade.rs), every
// method as over the socket: run, a wait for a pattern, reads from an offset, output
// events, the jobs of the socket's clients; a missing or wrong token is a coded error.
import { realpathSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { expectCode } from '../helpers';
import { ShellExecutionService, seen, stopDaemons } from '../daemon/setup';
import { listen, stopAll } from './listen';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

describe('daemon client over TCP (daemon.url)', () => {
  it('runs, waits for a pattern, reads from an offset, gets output events and sees the socket client\'s job', async () => {
    const d = await listen();
    const remote = new ShellExecutionService({ projectRoot: d.place.project, daemon: { url: d.url, token: d.token! } });
    const local = new ShellExecutionService({ projectRoot: d.place.project, daemon: { socket: d.place.socket } });
    try {
      const ran = await remote.run('echo over-tcp; echo err >&2; exit 3', { mode: 'pipes' });
      expect(ran.stdout.trim()).toBe('over-tcp');
      expect(ran.stderr.trim()).toBe('err');
      expect(ran.exitCode).toBe(3);
      expect(remote.daemon?.socket).toBe(d.url);
      seen(remote.daemon?.pid);

      const { handle } = await remote.start('for i in 1 2 3; do echo tick $i; sleep 0.2; done; exec sleep 60', { mode: 'pipes' });
      const events: number[] = [];
      const stop = await remote.onOutput(handle, (e) => events.push(e.textLength));
      const waited = await remote.waitFor(handle, { pattern: 'tick 3', fromStart: true, timeoutMs: 60_000 });
      expect(waited.matched).toBe('tick 3');
      const all = await remote.readOutput(handle);
      expect(all.text).toContain('tick 1');
      const offset = all.text.indexOf('tick 2');
      const rest = await remote.readOutput(handle, { since: Buffer.byteLength(all.text.slice(0, offset)) });
      expect(rest.text.startsWith('tick 2')).toBe(true);
      expect(rest.text).not.toContain('tick 1');
      expect(events.length).toBeGreaterThan(0);
      stop();

      // A job of a client of the unix socket, same project: listed over TCP, and driven.
      const other = await local.start('echo from-socket; exec cat', { mode: 'pipes' });
      const jobs = await remote.getActiveProcesses();
      const listed = jobs.find((j) => j.handle === other.handle);
      expect(listed?.attached).toBe('other');
      await remote.sendInput(other.handle, 'typed over tcp\n');
      const echoed = await remote.waitFor(other.handle, { pattern: 'typed over tcp', fromStart: true, timeoutMs: 60_000 });
      expect(echoed.matched).toBe('typed over tcp');
      expect((await remote.kill(other.handle)).status).not.toBe('running');
      await remote.kill(handle);
    } finally {
      await remote.shutdown();
      await local.shutdown();
    }
  }, 180_000);

  it("a client naming no projectRoot works in the daemon's --project-root", async () => {
    const d = await listen();
    const remote = new ShellExecutionService({ daemon: { url: d.url, token: d.token! } });
    try {
      const ran = await remote.run('pwd', { mode: 'pipes' });
      expect(ran.stdout.trim()).toBe(realpathSync(d.place.project));
    } finally {
      await remote.shutdown();
    }
  }, 120_000);

  it('a wrong or missing token: DAEMON_UNAUTHORIZED; a port with nothing there: DAEMON_UNAVAILABLE', async () => {
    const d = await listen();
    const wrong = new ShellExecutionService({ projectRoot: d.place.project, daemon: { url: d.url, token: 'not-the-token' } });
    const err = await expectCode(wrong.getActiveProcesses(), 'DAEMON_UNAUTHORIZED');
    expect(err.message).toContain('401');
    const none = new ShellExecutionService({ projectRoot: d.place.project, daemon: { url: d.url } });
    await expectCode(none.run('true'), 'DAEMON_UNAUTHORIZED');
    // Port 9 (discard) on loopback: nothing listens in this test machine's namespace.
    const nobody = new ShellExecutionService({ daemon: { url: 'http://127.0.0.1:9' } });
    await expectCode(nobody.getActiveProcesses(), 'DAEMON_UNAVAILABLE');
    expect(() => new ShellExecutionService({ daemon: { url: 'ftp://x' } })).toThrow(/http: or https:/);
  }, 120_000);
});
