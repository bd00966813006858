// `native-shell-service mcp --daemon` (docs/daemon.md): a job started in one MCP session
// outlives it; the next session of the same project lists it with `jobs` (saying an
// earlier session started it), talks to it and kills it. Real servers, real daemon.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';

import { BIN, ensureBuilt } from '../mcp/setup';
import { place, stopDaemons } from './setup';

afterAll(stopDaemons, 120_000);

async function session(project: string, socket: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--project-root', project, '--daemon-socket', socket, '--daemon-idle-exit-ms', '3000'],
    cwd: project,
    env: { ...process.env } as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'nss-daemon-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    async call(name: string, args: Record<string, unknown> = {}) {
      const r = await client.callTool({ name, arguments: args });
      const content = r.content as Array<{ type: string; text: string }>;
      return { text: content.map((c) => c.text).join('\n'), isError: r.isError === true };
    },
  };
}

describe('mcp --daemon', () => {
  it('a job of one session is listed, driven and killed by the next session of the project', async () => {
    ensureBuilt();
    const p = place();
    const first = await session(p.project, p.socket);
    const started = await first.call('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
    expect(started.isError).toBe(false);
    const handle = Number(/^Handle: (\d+)$/m.exec(started.text)?.[1]);
    expect(handle).toBeGreaterThan(0);
    const set = await first.call('send_input', { handle, input: 'x = 41', ai_callback_pattern: '>>> ' });
    expect(set.isError).toBe(false);
    await first.client.close();
    // Not an error: said to the client as MCP logging, so stderr stays empty (__test__/mcp/logging.test.ts).
    expect(first.stderr()).toBe('');

    const second = await session(p.project, p.socket);
    try {
      const jobs = await second.call('jobs');
      expect(jobs.text).toContain(`Handle: ${handle}\n`);
      expect(jobs.text).toContain('Started by: an earlier session');
      const asked = await second.call('send_input', { handle, input: 'print(x + 1)', ai_callback_pattern: '>>> ' });
      expect(asked.isError).toBe(false);
      expect(asked.text).toContain('42');
      // The job's files, as resources under the daemon's handle (the first session's folder).
      const { resources } = await second.client.listResources();
      expect(resources.map((r) => r.uri)).toContain(`shell-job://${handle}/stdout.txt`);
      const read = await second.client.readResource({ uri: `shell-job://${handle}/info.json` });
      expect((read.contents[0] as { text: string }).text).toContain('python3 -q');
      // Running, started by the first session: its output as it stands now (through the
      // daemon, with the lines a terminal has not committed to the file yet).
      const live = await second.client.readResource({ uri: `shell-job://${handle}/stdout.txt` });
      expect(live.contents.map((c) => (c as { text: string }).text).join('\n')).toContain('42');
      const killed = await second.call('kill', { handle });
      expect(killed.text).toMatch(new RegExp(`^Process ${handle} \\(python3 -q\\) terminated`));
      expect((await second.call('jobs')).text).not.toContain(`Handle: ${handle}\n`);
      // Killed, and so forgotten by the daemon: its output is still a resource of this session.
      const output = await second.client.readResource({ uri: `shell-job://${handle}/stdout.txt` });
      expect((output.contents[0] as { text: string }).text).toContain('>>>');
    } finally {
      await second.client.close();
    }
  }, 180_000);

  it("a finished job's files are read by URI from a new session, listed, with the template; the daemon's record of it is the one read", async () => {
    ensureBuilt();
    const p = place();
    const first = await session(p.project, p.socket);
    // Finished and seen: the tools remove it from the daemon at once.
    const done = await first.client.callTool({ name: 'run_shell_command', arguments: { command: 'seq 1 5000; echo first-session-done' } });
    const { handle, files } = done.structuredContent as { handle: number; files: { stdout: string; info: string } };
    expect(files.stdout).toBe(`shell-job://${handle}/stdout.txt`);
    await first.client.close();

    const second = await session(p.project, p.socket);
    try {
      // Not the daemon's job any more (the first session removed it): no job lists it.
      expect((await second.call('jobs')).text).not.toContain(`Handle: ${handle}\n`);
      const { resources } = await second.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining([files.stdout, `shell-job://${handle}/info.json`]));
      const { resourceTemplates } = await second.client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('shell-job://{job}/{file}{?offset,length}');
      let uri: string | undefined = files.stdout;
      let text = '';
      while (uri) {
        const page = (await second.client.readResource({ uri })).contents[0] as { text: string; _meta: { next?: string } };
        text += page.text;
        uri = page._meta.next;
      }
      expect(text.replace(/\r\n/g, '\n')).toBe(`${Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join('')}first-session-done\n`);
      const info = await second.client.readResource({ uri: `shell-job://${handle}/info.json` });
      expect(JSON.parse((info.contents[0] as { text: string }).text)).toMatchObject({ command: 'seq 1 5000; echo first-session-done', status: 'exited' });
      // A handle the daemon never gave is still not found.
      await expect(second.client.readResource({ uri: `shell-job://${handle + 1000}/stdout.txt` })).rejects.toThrow(/-32002/);
    } finally {
      await second.client.close();
    }
  }, 180_000);
});
