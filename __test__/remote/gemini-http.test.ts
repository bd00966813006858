// The real Gemini CLI (0.61.0, offline, scripted model turns: __test__/e2e/gemini.ts)
// driving the daemon's `/mcp` over HTTP with the settings docs/mcp.md gives: `url` with
// `"type": "http"`, and the token in `headers` as `$SHELL_TOKEN`, which the CLI expands
// from its environment. The scripted model ignores results: the checks are on effects.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { stopDaemons } from '../daemon/setup';
import { geminiProject } from '../e2e/gemini';
import { listen, stopAll } from './listen';

afterAll(async () => {
  await stopAll();
  await stopDaemons();
}, 120_000);

describe('a remote Gemini CLI over /mcp', () => {
  it('runs a command and sees the job in the daemon, with the documented settings', async () => {
    const d = await listen();
    const g = geminiProject([], {}, {
      url: `${d.url}/mcp`,
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
    } finally {
      delete process.env.SHELL_TOKEN;
      g.cleanup();
    }
  }, 300_000);
});
