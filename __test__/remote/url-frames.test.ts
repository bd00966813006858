// A daemon reached by `daemon.url` may be anyone that answers the URL: a frame it
// announces over `daemon.maxFrameBytes` (16 MiB by default) ends the link with
// DAEMON_FRAME_TOO_LARGE as soon as its header is in, and none of it is kept (a fake
// daemon announcing 448 MiB and sending it: the client's peak RSS stays small).
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ShellExecutionService } from '../daemon/setup';
import { expectCode } from '../helpers';

/** What the fake announces: the old limit of every link (client/envelope.ts MAX_REPLY). */
const ANNOUNCED = 448 << 20;

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

/**
 * A fake daemon: takes the Upgrade, waits for the client's first frame (`hello`), then
 * announces a frame of ANNOUNCED bytes and sends it, 1 MiB at a time, for as long as
 * the client reads.
 */
async function fakeDaemon(): Promise<string> {
  const server = createServer((socket: Socket) => {
    socket.on('error', () => {});
    let upgraded = false;
    let request = '';
    socket.on('data', (chunk) => {
      if (!upgraded) {
        request += chunk.toString('latin1');
        if (!request.includes('\r\n\r\n')) return;
        upgraded = true;
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: native-shell-service/1\r\n\r\n');
        return;
      }
      if (socket.listenerCount('drain') > 0) return;
      const head = Buffer.alloc(5);
      head.writeUInt32BE(ANNOUNCED, 1);
      socket.write(head);
      const piece = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < ANNOUNCED && !socket.destroyed) {
          sent += piece.length;
          if (!socket.write(piece)) return;
        }
      };
      socket.on('drain', pump);
      pump();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

/** Runs fixtures/url-client.cjs against `url`: its one JSON line. */
function urlClient(url: string, maxFrameBytes?: number): Promise<{ code: string; ms: number; maxRss: number }> {
  return new Promise((resolve, reject) => {
    const args = [join(__dirname, 'fixtures', 'url-client.cjs'), url];
    if (maxFrameBytes !== undefined) args.push(String(maxFrameBytes));
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`url-client exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim()));
    });
  });
}

describe('frames from a daemon reached by URL', () => {
  it('a frame announced over the default limit ends the link before it is held', async () => {
    const url = await fakeDaemon();
    const got = await urlClient(url);
    console.log(`a fake daemon announcing ${ANNOUNCED} bytes: ${got.code} after ${got.ms} ms; the client's peak RSS ${(got.maxRss / 2 ** 20).toFixed(0)} MiB`);
    expect(got.code).toBe('DAEMON_FRAME_TOO_LARGE');
    // Node and the addon alone take some tens of MiB; holding the frame would be 448 more.
    expect(got.maxRss).toBeLessThan(256 << 20);
  }, 120_000);

  it('maxFrameBytes is checked: a whole number from 64 KiB to 448 MiB, with url only', async () => {
    const make = (daemon: Record<string, unknown>) => () => new ShellExecutionService({ daemon: daemon as never });
    await expectCode(make({ url: 'http://127.0.0.1:1', maxFrameBytes: 1024 }), 'INVALID_ARGUMENT');
    await expectCode(make({ url: 'http://127.0.0.1:1', maxFrameBytes: 1.5e6 + 0.5 }), 'INVALID_ARGUMENT');
    await expectCode(make({ url: 'http://127.0.0.1:1', maxFrameBytes: ANNOUNCED + 1 }), 'INVALID_ARGUMENT');
    await expectCode(make({ url: 'http://127.0.0.1:1', maxFrameBytes: '16' }), 'INVALID_ARGUMENT');
    await expectCode(make({ maxFrameBytes: 1 << 20 }), 'INVALID_ARGUMENT');
    expect(make({ url: 'http://127.0.0.1:1', maxFrameBytes: ANNOUNCED })).not.toThrow();
  });
});
