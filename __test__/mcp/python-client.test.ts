// The server driven by a client this project did not write: the Python `mcp` SDK's
// ClientSession over stdio (__test__/mcp/python_client.py), installed from PyPI if missing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, ensureBuilt, ensurePythonMcp } from './setup';

// The client prints plain JSON; the checks below say what shape they expect.
type Json = Record<string, any>;
let seen: Json;
let base: string;

beforeAll(() => {
  ensureBuilt();
  const python = ensurePythonMcp();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-py-')));
  mkdirSync(join(base, 'project'));
  const out = execFileSync(
    python,
    [join(__dirname, 'python_client.py'), process.execPath, BIN, join(base, 'project'), join(base, 'io')],
    { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  seen = JSON.parse(out) as Json;
}, 180_000);
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('the Python mcp SDK client', () => {
  it('sees the five tools with output schemas (and validated every structured result against them)', () => {
    expect(seen.server).toBe('native-shell-service');
    expect(seen.tools.map((t: Json) => t.name)).toEqual(['run_shell_command', 'send_input', 'jobs', 'kill', 'shell_cmd']);
    for (const t of seen.tools) expect(t.outputSchema?.type, t.name).toBe('object');
  });

  it('gets progress with the latest lines during a 2 s command', () => {
    expect(seen.loop.structuredContent).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(seen.progress.length).toBeGreaterThanOrEqual(2);
    expect(seen.progress.at(-1).message).toBe(Array.from({ length: 8 }, (_, i) => `step ${i + 1}`).join('\n'));
  });

  it('drives a Python REPL: run, send_input, jobs, kill, with structured results', () => {
    const handle = seen.repl.structuredContent.handle;
    expect(seen.repl.structuredContent).toMatchObject({ status: 'running', matched: '>>> ' });
    expect(seen.answer.structuredContent).toMatchObject({ handle, status: 'matched', running: true });
    expect(seen.answer.structuredContent.output).toContain('42');
    expect(seen.jobs.structuredContent.running.map((j: Json) => j.handle)).toEqual([handle]);
    expect(seen.kill.structuredContent).toMatchObject({ handle, status: 'killed', wasRunning: true });
    expect(seen.kill.content[0].text).toMatch(new RegExp(`^Process ${handle} \\(python3 -q\\) terminated successfully`));
  });

  it('lists and pages job resources, and hears list_changed', () => {
    const h = seen.seq_handle;
    expect(seen.resources.map((r: Json) => r.uri)).toContain(`shell-job://${h}/stdout.txt`);
    expect(seen.templates.map((t: Json) => t.uriTemplate)).toEqual(['shell-job://{job}/{file}{?offset,length}']);
    // 168894 bytes in pages of 8 KiB (the default; docs/mcp.md says why so small).
    expect(seen.pages.length).toBe(Math.ceil(168894 / 8192));
    const text = (seen.pages as string[]).join('').replace(/\r\n/g, '\n');
    expect(text).toBe(Array.from({ length: 30000 }, (_, i) => `${i + 1}\n`).join(''));
    const changes = seen.notifications.filter((m: string) => m === 'notifications/resources/list_changed');
    expect(changes.length).toBeGreaterThanOrEqual(6); // three jobs started and ended
  });
});
