// The real Gemini CLI (0.61.0, offline, scripted model turns: __test__/e2e/gemini.ts)
// driving the daemon's `/mcp` over HTTP with the settings docs/mcp.md gives: `url` with
// `"type": "http"`, and the token in `headers` as `$SHELL_TOKEN`, which the CLI expands
// from its environment. The scripted model ignores results: the checks are on effects.
// A tap between the CLI and the port (e2e/http-tap.ts) records what it asked: it speaks
// 2025-06-18 with a session, and leaves without DELETE; its session then ends when
// idle, and the job it left running shows as from an ended session.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';

import { eventuallyAsync, stopDaemons } from '../daemon/setup';
import { geminiProject } from '../e2e/gemini';
import { httpTap } from '../e2e/http-tap';
import { listen, stopAll } from './listen';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

describe('a remote Gemini CLI over /mcp', () => {
  it('runs a command and sees the job in the daemon, with the documented settings', async () => {
    const d = await listen({ args: ['--mcp-session-idle-ms', '1500'] });
    const tap = await httpTap(d.url);
    const g = geminiProject([], {}, {
      url: `${tap.url}/mcp`,
      type: 'http',
      headers: { Authorization: 'Bearer $SHELL_TOKEN' },
      trust: true,
    });
    process.env.SHELL_TOKEN = d.token!;
    try {
      const run = await g.run(
        [
          { call: 'run_shell_command', args: { command: 'echo over-http > marker.txt; echo written' } },
          { call: 'run_shell_command', args: { command: 'exec sleep 120', ai_callback_delay: 0.2 } },
          { call: 'jobs', args: {} },
          { text: 'Done.' },
        ],
        'Write marker.txt, start a sleeper, list the jobs.',
      );
      if (run.calls.length === 0) throw new Error(`no tool calls; stderr:\n${run.stderr}`);
      expect(run.calls.map((c) => c.name)).toEqual(['run_shell_command', 'run_shell_command', 'jobs']);
      expect(run.calls.every((c) => c.status === 'success')).toBe(true);
      // The commands ran in the daemon's project (--project-root), not the CLI's folder.
      expect(readFileSync(join(d.place.project, 'marker.txt'), 'utf8')).toBe('over-http\n');
      expect(run.calls[2]!.output).toContain('exec sleep 120');

      const wire = tap.wire();
      const init = wire.find((m) => m.method === 'initialize');
      const methods = tap.httpMethods();
      console.log(`Gemini CLI over HTTP: MCP ${String(init?.params?.protocolVersion)}; sent ${[...new Set(methods)].join(', ')}; DELETE ${methods.includes('DELETE') ? 'sent' : 'never sent'}`);
      expect(init?.params?.protocolVersion).toBe('2025-06-18');
      expect(methods).not.toContain('DELETE');
      expect(wire.map((m) => m.method)).not.toContain('server/discover');
      // The CLI has exited: once its session has been idle past --mcp-session-idle-ms
      // (ended by DELETE or not), the sleeper it left is from an ended session.
      const later = new Client({ name: 'nss-after-gemini', version: '0.0.0' });
      await later.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${d.token}` } } }));
      try {
        const sleeper = async () => {
          const r = await later.callTool({ name: 'jobs', arguments: {} });
          const running = (r.structuredContent as { running?: Array<{ command: string; attached: string; handle: number }> }).running ?? [];
          return running.find((j) => j.command === 'exec sleep 120');
        };
        expect(await eventuallyAsync(async () => (await sleeper())?.attached === 'none', 30_000)).toBe(true);
        await later.callTool({ name: 'kill', arguments: { handle: (await sleeper())!.handle } });
      } finally {
        await later.close();
      }
    } finally {
      delete process.env.SHELL_TOKEN;
      await tap.close();
      g.cleanup();
    }
  }, 300_000);
});
