// The MCP server's data beside the text, through the official TypeScript SDK client:
// output schemas and structured results, annotations, job files as resources, progress.
import { readdirSync, readFileSync } from 'node:fs';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually } from '../helpers';
import { connect, type McpSession } from './setup';

let m: McpSession;
let listChanged = 0;
beforeAll(async () => {
  m = await connect();
  m.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanged += 1;
  });
});
afterAll(() => m.cleanup());

type Structured = Record<string, unknown>;

async function structured(name: string, args: Record<string, unknown> = {}): Promise<Structured> {
  const r = await m.client.callTool({ name, arguments: args });
  expect(r.isError ?? false, JSON.stringify(r.content)).toBe(false);
  expect(r.structuredContent, name).toBeDefined();
  return r.structuredContent as Structured;
}

describe('mcp structured results', () => {
  it('every tool declares an outputSchema and all four hints', async () => {
    const { tools } = await m.client.listTools();
    const ajv = new Ajv({ strict: false });
    for (const t of tools) {
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(ajv.validateSchema(t.outputSchema!), t.name).toBe(true);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof t.annotations?.[hint], `${t.name}.${hint}`).toBe('boolean');
      }
    }
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.jobs).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(hints.kill).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(hints.run_shell_command).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
  });

  it('run_shell_command, send_input, jobs, kill and shell_cmd return their facts', async () => {
    const done = await structured('run_shell_command', { command: 'echo structured; exit 3' });
    expect(done).toEqual({
      handle: done.handle,
      status: 'exited',
      exitCode: 3,
      signal: null,
      next: [],
      files: { stdout: `shell-job://${done.handle}/stdout.txt`, info: `shell-job://${done.handle}/info.json` },
      command: 'echo structured; exit 3',
      durationMs: done.durationMs,
      output: 'structured\n',
    });

    const py = await structured('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
    expect(py).toMatchObject({ status: 'running', matched: '>>> ' });
    const h = py.handle as number;
    expect(py.next).toEqual([expect.stringContaining(`use send_input(handle=${h}, input="...")`)]);
    const answer = await structured('send_input', { handle: h, input: 'print(6 * 7)', ai_callback_pattern: '>>> ' });
    expect(answer).toMatchObject({ handle: h, status: 'matched', running: true, files: { stdout: `shell-job://${h}/stdout.txt` } });
    expect(answer.next).toEqual([expect.stringContaining(`kill(handle=${h})`)]);
    expect(answer.output).toContain('42');

    const jobs = await structured('jobs');
    const running = jobs.running as Array<Structured>;
    expect(running.map((j) => j.handle)).toContain(h);
    expect(running.find((j) => j.handle === h)).toMatchObject({ command: 'python3 -q', status: 'running', mode: 'pty', attached: 'this' });
    expect((jobs.next as string[])[0]).toContain('send_input(handle=H');

    const killed = await structured('kill', { handle: h });
    expect(killed).toMatchObject({ handle: h, status: 'killed', wasRunning: true });
    expect(await structured('kill', { handle: h })).toMatchObject({ handle: h, alreadyFinished: true });

    const late = await structured('run_shell_command', { command: 'sleep 0.3; echo late', ai_callback_delay: 0 });
    await new Promise((r) => setTimeout(r, 800));
    const after = await structured('jobs');
    expect(after.running).toEqual([]);
    expect(after.finished).toEqual([
      { handle: late.handle, command: 'sleep 0.3; echo late', status: 'exited', exitCode: 0, signal: null, files: expect.any(Object) },
    ]);
    expect((await structured('jobs')).finished).toEqual([]);

    const argv = await structured('shell_cmd', { command: 'printf', parameters: ['%s', 'argv'] });
    expect(argv).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'argv' });
    expect(argv).not.toHaveProperty('output');
    const both = await structured('shell_cmd', { command: 'ls', parameters: ['/nonexistent-nss'] });
    expect(both.stderr).toContain('nonexistent-nss');
    expect((both.files as Structured).stderr).toBe(`shell-job://${both.handle}/stderr.txt`);
  });

  it('holds the output once, the hints and where to read on, within the declared schema', async () => {
    const { tools } = await m.client.listTools();
    const ajv = new Ajv({ strict: false });
    const validate = Object.fromEntries(tools.map((t) => [t.name, ajv.compile(t.outputSchema!)]));
    const checked = async (name: string, args: Record<string, unknown>) => {
      const s = await structured(name, args);
      expect(validate[name]!(s), `${name}: ${ajv.errorsText(validate[name]!.errors)}`).toBe(true);
      return s;
    };
    const run = await checked('run_shell_command', { command: 'seq 1 100000' });
    // One copy of the output: no stdout beside output, and the hints before it.
    expect(run).not.toHaveProperty('stdout');
    expect(Object.keys(run).at(-1)).toBe('output');
    expect(JSON.stringify(run).length).toBeLessThan(1.5 * (run.output as string).length + 2000);
    expect(run.truncated).toBe(true);
    const readOn = run.readOn as { uri: string; offset: number; omittedBytes: number };
    expect(readOn.uri).toBe(`shell-job://${run.handle as number}/stdout.txt?offset=${readOn.offset}`);
    expect((run.next as string[]).join('\n')).toContain(readOn.uri);
    // The head ends where the read goes on: the next line after the head's last one.
    const head = (run.output as string).slice(0, (run.output as string).indexOf('[...'));
    const lastHeadLine = Number(head.trimEnd().split('\n').at(-1));
    const page = await m.client.readResource({ uri: readOn.uri });
    expect((page.contents[0] as { text: string }).text.startsWith(`${lastHeadLine + 1}\n`)).toBe(true);
    // Paging said in the contents themselves (a client may drop _meta).
    expect(page.contents).toHaveLength(2);
    const more = page.contents[1] as { uri: string; text: string };
    const next = (page.contents[0]!._meta as { next: string }).next;
    expect(more).toMatchObject({ uri: next, text: expect.stringContaining(`continues: read ${next}`) });

    const repl = await checked('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
    await checked('send_input', { handle: repl.handle, input: 'print(6 * 7)', ai_callback_pattern: '>>> ' });
    const long = await checked('send_input', { handle: repl.handle, input: 'print("\\n".join(str(i) for i in range(100000)))', ai_callback_pattern: '>>> ' });
    expect(long.truncated).toBe(true);
    expect(long).not.toHaveProperty('readOn');
    expect((long.next as string[]).join('\n')).toContain(`whole output: shell-job://${repl.handle as number}/stdout.txt`);
    await checked('jobs', {});
    await checked('kill', { handle: repl.handle });
    await checked('kill', { handle: repl.handle });
    await checked('shell_cmd', { command: 'ls', parameters: ['/nonexistent-nss'] });
  });

  it('jobs names what a running job started that detached, in the text and in detachedPids', async () => {
    const tag = `1000.${process.pid}${Date.now() % 100000}`;
    const daemons = () =>
      readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .map(Number)
        .filter((pid) => {
          try {
            const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
            return (argv[0] ?? '').endsWith('sleep') && argv[1] === tag;
          } catch {
            return false;
          }
        });
    const started = await structured('run_shell_command', {
      command: `setsid -f sleep ${tag} </dev/null >/dev/null 2>&1; echo mcp-detach-ready; sleep 30; echo done`,
      ai_callback_pattern: 'mcp-detach-ready',
    });
    const h = started.handle as number;
    expect(await eventually(() => daemons().length === 1)).toBe(true);
    const [daemon] = daemons();
    const r = await m.client.callTool({ name: 'jobs', arguments: {} });
    const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
    expect(text).toContain(`Handle: ${h}\n`);
    expect(text).toContain(`Detached PIDs: ${daemon} (`);
    const running = (r.structuredContent as Structured).running as Array<Structured>;
    expect(running.find((j) => j.handle === h)).toMatchObject({ status: 'running', detachedPids: [daemon] });
    await structured('kill', { handle: h });
    expect(await eventually(() => daemons().length === 0)).toBe(true);
  });

  it('a failure with no facts is an isError result without structuredContent', async () => {
    const r = await m.client.callTool({ name: 'send_input', arguments: { handle: 999, input: 'x' } });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
  });
});

describe('mcp job resources', () => {
  it('lists each job\'s files and the template, and pages a large output', async () => {
    const { resourceTemplates } = await m.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['shell-job://{job}/{file}{?offset,length}']);

    const run = await structured('run_shell_command', { command: 'seq 1 100000' });
    const h = run.handle as number;
    expect(run.truncated).toBe(true);
    const { resources } = await m.client.listResources();
    const mine = resources.filter((r) => r.uri.startsWith(`shell-job://${h}/`));
    expect(mine.map((r) => r.uri).sort()).toEqual([`shell-job://${h}/info.json`, `shell-job://${h}/stdout.txt`]);
    expect(mine.find((r) => r.uri.endsWith('stdout.txt'))).toMatchObject({ mimeType: 'text/plain', title: `Job ${h} output: seq 1 100000` });

    const info = await m.client.readResource({ uri: `shell-job://${h}/info.json` });
    expect(JSON.parse((info.contents[0] as { text: string }).text)).toMatchObject({ handle: h, command: 'seq 1 100000', status: 'exited' });

    let uri: string | undefined = `shell-job://${h}/stdout.txt`;
    let text = '';
    let pages = 0;
    while (uri) {
      const page = (await m.client.readResource({ uri })).contents[0] as { text: string; _meta: { next?: string } };
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(8 * 1024);
      text += page.text;
      pages += 1;
      uri = page._meta.next;
    }
    const expected = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('');
    expect(text.replace(/\r\n/g, '\n')).toBe(expected);
    expect(pages).toBeGreaterThan(64);
    // A program takes bigger pages with ?length= (at most 1 MiB).
    const big = (await m.client.readResource({ uri: `shell-job://${h}/stdout.txt?length=1048576` })).contents[0] as { text: string; _meta: { next?: string } };
    expect(big.text).toBe(expected);
    expect(big._meta.next).toBeUndefined();
    const mid = (await m.client.readResource({ uri: `shell-job://${h}/stdout.txt?offset=6&length=100000` })).contents[0] as { text: string; _meta: { next?: string } };
    expect(mid._meta.next).toBe(`shell-job://${h}/stdout.txt?offset=100006&length=100000`);
    await expect(m.client.readResource({ uri: `shell-job://${h}/stdout.txt?length=2` })).rejects.toThrow(/-32002.*length must be/);
  });

  it("reads a running job's output as it stands when the call returns, and a finished job's after the tools forgot it", async () => {
    const started = await structured('run_shell_command', { command: 'echo mcp-banner-ready; sleep 30', ai_callback_pattern: 'mcp-banner-ready' });
    const uri = (started.files as Structured).stdout as string;
    const read = await m.client.readResource({ uri });
    // The terminal's lines are committed to stdout.txt only once they scroll off or the
    // job ends: the read comes through the service, with the lines not final yet beside it.
    const all = read.contents.map((c) => (c as { text: string }).text).join('\n');
    expect(all).toContain('mcp-banner-ready');
    expect(all).toContain('still running');
    expect(read.contents.at(-1)).toMatchObject({ _meta: { note: true } });
    await structured('kill', { handle: started.handle });
    const after = await m.client.readResource({ uri });
    expect((after.contents[0] as { text: string }).text).toContain('mcp-banner-ready');
    const { resources } = await m.client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
  });

  it("a running job's pages and its lines not final yet are its whole output, each line once", async () => {
    const started = await structured('run_shell_command', { command: 'seq 1 50000; printf "READY> "; sleep 30', ai_callback_pattern: 'READY> ' });
    let uri: string | undefined = (started.files as Structured).stdout as string;
    let committed = '';
    let note = '';
    while (uri) {
      const read = await m.client.readResource({ uri });
      const page = read.contents[0] as { text: string; _meta: { next?: string } };
      committed += page.text;
      note = (read.contents[1] as { text?: string } | undefined)?.text ?? '';
      uri = page._meta.next;
    }
    const pending = /not final yet \(a terminal may still redraw them\):\n([\s\S]*)\n… read on later from /.exec(note)?.[1] ?? '';
    expect(committed + pending).toBe(`${Array.from({ length: 50000 }, (_, i) => `${i + 1}\n`).join('')}READY> `);
    await structured('kill', { handle: started.handle });
  });

  it('cuts pages between characters, never inside one', async () => {
    // 3-byte characters: an 8 KiB page boundary falls inside one.
    const run = await structured('run_shell_command', { command: `python3 -c "print('€' * 30000)"` });
    let uri: string | undefined = `shell-job://${run.handle as number}/stdout.txt`;
    let text = '';
    while (uri) {
      const page = (await m.client.readResource({ uri })).contents[0] as { text: string; _meta: { next?: string } };
      expect(page.text).not.toContain('\uFFFD');
      text += page.text;
      uri = page._meta.next;
    }
    expect(text.trimEnd()).toBe('€'.repeat(30000));
  });

  it('refuses URIs that are not job files', async () => {
    for (const uri of ['shell-job://1/../../etc/passwd', 'shell-job://x/stdout.txt', 'file:///etc/passwd', 'shell-job://1/other.txt', 'shell-job://4242/stdout.txt']) {
      await expect(m.client.readResource({ uri }), uri).rejects.toThrow(/-32002|not a job file|has no/);
    }
  });

  it('announces list changes when a job starts and when it ends', async () => {
    const before = listChanged;
    await structured('run_shell_command', { command: 'sleep 0.5', ai_callback_delay: 0 });
    expect(await eventually(() => listChanged >= before + 1, 5_000)).toBe(true);
    expect(await eventually(() => listChanged >= before + 2, 5_000)).toBe(true);
  });
});

describe('mcp progress', () => {
  it('sends the latest lines while a 2 s command runs, before the result', async () => {
    const seen: Array<{ progress: number; message?: string }> = [];
    const r = await m.client.callTool(
      { name: 'run_shell_command', arguments: { command: 'for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 0.25; done', ai_callback_delay: 30 } },
      undefined,
      { onprogress: (p) => void seen.push(p) },
    );
    expect((r.structuredContent as Structured).status).toBe('exited');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i + 1));
    expect(seen[0]!.message).toMatch(/^line 1/);
    // Each message is the latest lines as they stood: line 1 up to some line N. The final
    // update (all 8 lines) is written just before the result, but the TypeScript SDK
    // client handles a notification a microtask later and a response at once: when both
    // arrive in one read (a loaded machine), the result removes the progress handler
    // first and that update is dropped on the client's side. So only the shape is
    // asserted here, and the result holds every line.
    const last = seen.at(-1)!.message ?? '';
    const count = last.split('\n').length;
    expect(count).toBeGreaterThanOrEqual(2);
    expect(last).toBe(Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n'));
    expect((r.content as Array<{ text: string }>)[0]!.text).toContain('line 8');
  });

});
