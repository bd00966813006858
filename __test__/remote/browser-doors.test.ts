// Web pages against a daemon listening on loopback without a token, in a real browser
// (headless Chromium): a page of another origin posts forms and fetches (every content
// type, cors and no-cors) at /files and /process.Process/Start, navigates there and opens
// a WebSocket; a page on a name rebound to 127.0.0.1 asks same-origin. Afterwards
// nothing was written and nothing ran, and the rebound page read only refusals
// (src/daemon/http/browser.rs; the same on raw sockets: tests/daemon/remote_browser.rs).
//
// The attacker's pages come from a server of this test on 127.0.0.1, reached as
// http://localhost:S (another loopback origin: passes the Origin check, so only the
// rule on simple requests stands between it and the disk) and as http://evil.example:S
// (Chromium's --host-resolver-rules maps the name to 127.0.0.1: a foreign origin).
// DNS rebinding is played by a forwarder on its own port R: the page
// (http://evil.example:R/rebind.html) comes from the attacker's server, every other
// request on that name goes to the daemon, as after the name's DNS answer changed.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect as tcpConnect, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventuallyAsync, stopDaemons } from '../daemon/setup';
import { listen, type Listening, stopAll } from './listen';

const CHROMIUM = process.env.CHROMIUM ?? 'chromium';
const SCRIPT = readFileSync(join(__dirname, 'fixtures', 'attacker-page.js'), 'utf8');

let daemon: Listening;
let daemonPort: number;
let attacker: Server;
let attackerPort: number;
let rebinder: TcpServer;
let rebinderPort: number;
let secret: string;
const reports = new Map<string, Record<string, unknown>>();
const browsers: ChildProcess[] = [];
const profiles: string[] = [];

function portOf(server: Server | TcpServer): number {
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The attacker's page: `ATTACK` (what to try), then the script. */
function page(attack: Record<string, string>): string {
  return `<!doctype html><html><body><script>const ATTACK = ${JSON.stringify(attack)};</script><script>${SCRIPT}</script></body></html>`;
}

beforeAll(async () => {
  daemon = await listen({ token: false });
  daemonPort = Number(new URL(daemon.url).port);
  secret = join(daemon.place.project, 'secret');
  writeFileSync(secret, 's3cret', { mode: 0o600 });

  attacker = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://attacker');
    const common = { dir: daemon.place.project, secret, report: `http://127.0.0.1:${portOf(attacker)}/report/${url.searchParams.get('tag')}` };
    if (req.method === 'POST' && url.pathname.startsWith('/report/')) {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        reports.set(url.pathname.slice('/report/'.length), JSON.parse(body) as Record<string, unknown>);
        res.writeHead(204).end();
      });
      return;
    }
    const tag = url.searchParams.get('tag') ?? '';
    let html: string;
    if (url.pathname === '/cross.html') {
      html = page({ kind: 'cross', tag, target: `http://127.0.0.1:${daemonPort}`, ws: `ws://127.0.0.1:${daemonPort}`, ...common });
    } else if (url.pathname === '/rebind.html') {
      html = page({ kind: 'rebind', tag, target: '', ws: '', ...common });
    } else {
      res.writeHead(404, { connection: 'close' }).end();
      return;
    }
    // Closed after the page: the rebound name's next requests open new connections.
    res.writeHead(200, { 'content-type': 'text/html', connection: 'close' }).end(html);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerPort = portOf(attacker);

  // DNS rebinding: the page from the attacker, everything after it from the daemon.
  rebinder = createTcpServer((client) => {
    client.once('data', (first) => {
      const line = first.toString('latin1').split('\r\n', 1)[0] ?? '';
      const toAttacker = /^GET \/(rebind\.html|favicon\.ico)/.test(line);
      const upstream = tcpConnect(toAttacker ? attackerPort : daemonPort, '127.0.0.1');
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.write(first);
      client.pipe(upstream).pipe(client);
    });
  });
  await new Promise<void>((resolve) => rebinder.listen(0, '127.0.0.1', resolve));
  rebinderPort = portOf(rebinder);
}, 120_000);

afterAll(async () => {
  for (const browser of browsers) {
    // Its own process group (detached), so its helpers end with it.
    if (browser.pid && browser.exitCode === null) {
      try {
        process.kill(-browser.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  for (const dir of profiles) rmSync(dir, { recursive: true, force: true });
  rebinder?.close();
  attacker?.close();
  await stopAll();
  await stopDaemons();
}, 120_000);

/** Opens `url` in a fresh headless Chromium and waits for the page's report. */
async function visit(url: string, tag: string): Promise<Record<string, unknown>> {
  const profile = mkdtempSync(join(tmpdir(), 'nss-chromium-'));
  profiles.push(profile);
  chmodSync(profile, 0o700);
  const browser = spawn(
    CHROMIUM,
    [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      `--user-data-dir=${profile}`,
      '--host-resolver-rules=MAP evil.example 127.0.0.1',
      url,
    ],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  browsers.push(browser);
  let log = '';
  browser.stderr?.on('data', (d) => (log += d));
  const reported = await eventuallyAsync(async () => reports.has(tag) || browser.exitCode !== null, 150_000);
  if (browser.pid && browser.exitCode === null) process.kill(-browser.pid, 'SIGKILL');
  if (!reported || !reports.has(tag)) throw new Error(`no report from ${url}; chromium said:\n${log.slice(-4000)}`);
  return reports.get(tag)!;
}

/** What the attacks left in the project directory besides the secret. */
function leftovers(): string[] {
  return readdirSync(daemon.place.project).filter((name) => name !== 'secret');
}

describe('web pages cannot drive a tokenless daemon', () => {
  it(
    'a page of another loopback origin: no fetch, form, navigation or WebSocket writes or runs anything',
    async () => {
      const seen = await visit(`http://localhost:${attackerPort}/cross.html?tag=local`, 'local');
      // The attempts did run (a page that failed to load would report nothing).
      expect(Object.keys(seen).length).toBeGreaterThan(40);
      // No answer was readable (no CORS granted), and the WebSocket never opened.
      expect(Object.values(seen).filter((v) => typeof v === 'string' && v.startsWith('cors:'))).toEqual([]);
      expect(seen.websocket).not.toBe('open');
      expect(leftovers()).toEqual([]);
    },
    180_000,
  );

  it(
    'a page of a foreign origin (evil.example): the same, refused by its Origin',
    async () => {
      const seen = await visit(`http://evil.example:${attackerPort}/cross.html?tag=evil`, 'evil');
      expect(Object.keys(seen).length).toBeGreaterThan(40);
      expect(Object.values(seen).filter((v) => typeof v === 'string' && v.startsWith('cors:'))).toEqual([]);
      expect(leftovers()).toEqual([]);
    },
    180_000,
  );

  it(
    'DNS rebinding: a page whose name now points at the daemon reads only refusals',
    async () => {
      const seen = (await visit(`http://evil.example:${rebinderPort}/rebind.html?tag=rebind`, 'rebind')) as Record<string, [number, string]>;
      const asked = ['read the secret', 'start a command', 'write a file', 'health'];
      expect({ statuses: Object.fromEntries(asked.map((what) => [what, seen[what]?.[0]])), leftovers: leftovers() }).toEqual({
        statuses: Object.fromEntries(asked.map((what) => [what, 403])),
        leftovers: [],
      });
      expect(JSON.parse(seen['read the secret']![1]).error.code).toBe('HOST_REFUSED');
      expect(JSON.stringify(seen)).not.toContain('s3cret');
    },
    180_000,
  );
});
