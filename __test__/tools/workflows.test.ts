// The three workflows of docs/tools.md ("The seed workflows"), driven through the tools only.
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually } from '../helpers';
import { field, handleOf, type ToolScratch, toolScratch } from './setup';

let s: ToolScratch;
beforeAll(() => {
  s = toolScratch({ onAsk: 'allow' });
});
afterAll(() => s.cleanup());

function httpStatus(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    req.end();
  });
}

describe('seed workflows through the tools', () => {
  it('edits a file with ed', async () => {
    writeFileSync(join(s.root, 'config.txt'), 'alpha\nold value\ngamma\n');
    const start = await s.call('run_shell_command', { command: "ed -p 'ED> ' config.txt", ai_callback_pattern: 'ED> ' });
    const h = handleOf(start);
    expect(start.llmContent).toContain('Stdout: 22\nED> ');
    const print = await s.call('send_input', { handle: h, input: '1,3p', ai_callback_pattern: 'ED> ' });
    expect(print.llmContent).toContain('alpha\nold value\ngamma\nED> ');
    const sub = await s.call('send_input', { handle: h, input: '2s/old/new/', ai_callback_pattern: 'ED> ' });
    expect(field(sub.llmContent, 'Status')).toMatch(/matched/);
    // In append mode ed prints no prompt: lines go without a pattern.
    await s.call('send_input', { handle: h, input: '$a', ai_callback_delay: 0.2 });
    await s.call('send_input', { handle: h, input: 'Hello, world!', ai_callback_delay: 0.2 });
    await s.call('send_input', { handle: h, input: '.', ai_callback_pattern: 'ED> ' });
    const w = await s.call('send_input', { handle: h, input: 'w', ai_callback_pattern: 'ED> ' });
    expect(w.llmContent).toContain('Output: w\n36\nED> ');
    const q = await s.call('send_input', { handle: h, input: 'q' });
    expect(field(q.llmContent, 'Status')).toBe('the process exited with code 0');
    expect(readFileSync(join(s.root, 'config.txt'), 'utf8')).toBe('alpha\nnew value\ngamma\nHello, world!\n');
    expect((await s.call('jobs', {})).llmContent).toBe('No running background processes.');
  });

  it('computes fib(10) = 55 in a Python REPL', async () => {
    const start = await s.call('run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
    const h = handleOf(start);
    expect(field(start.llmContent, 'Status')).toMatch(/^running/);
    const def = await s.call('send_input', {
      handle: h,
      input: 'def fib(n): return n if n <= 1 else fib(n-1) + fib(n-2)',
      ai_callback_pattern: '\\.\\.\\. ',
    });
    expect(field(def.llmContent, 'Status')).toMatch(/matched/);
    await s.call('send_input', { handle: h, input: '', ai_callback_pattern: '>>> ' });
    const r = await s.call('send_input', { handle: h, input: 'print(fib(10))', ai_callback_pattern: '>>> ' });
    expect(r.llmContent).toContain('Output: print(fib(10))\n55\n>>> ');
    const exit = await s.call('send_input', { handle: h, input: 'exit()' });
    expect(field(exit.llmContent, 'Status')).toBe('the process exited with code 0');
  });

  it('starts a server, lists it with jobs, kills it, and the port is freed', async () => {
    const start = await s.call('run_shell_command', {
      command: 'python3 -m http.server 0 --bind 127.0.0.1',
      ai_callback_pattern: 'Serving HTTP on \\S+ port \\d+ \\(',
      description: 'static file server',
    });
    const h = handleOf(start);
    const port = Number(/port (\d+)/.exec(start.llmContent)![1]);
    expect(await httpStatus(port)).toBe(200);
    const check = await s.call('run_shell_command', { command: `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/` });
    expect(check.llmContent).toContain('Stdout: 200');

    const jobs = await s.call('jobs', {});
    expect(jobs.llmContent).toContain(`Handle: ${h}\n`);
    expect(jobs.llmContent).toContain('Command: python3 -m http.server 0 --bind 127.0.0.1');
    expect(jobs.llmContent).toContain('Description: static file server');
    expect(jobs.llmContent).toContain('Status: running');

    const pid = (start.data as { pid: number }).pid;
    const kill = await s.call('kill', { handle: h });
    expect(kill.llmContent).toMatch(new RegExp(`^Process ${h} \\(python3 -m http.server 0 --bind 127.0.0.1\\) terminated successfully`));
    expect(await eventually(() => !alive(pid))).toBe(true);
    expect(await httpStatus(port)).toBe('ECONNREFUSED');
    expect((await s.call('jobs', {})).llmContent).toBe('No running background processes.');
  });

  it('the seed form `server &`: background PID reported, jobs lists it, kill frees it', async () => {
    const start = await s.call('run_shell_command', { command: 'python3 -m http.server 0 --bind 127.0.0.1 &', ai_callback_delay: 1 });
    const h = handleOf(start);
    const bg = Number(field(start.llmContent, 'Background PIDs'));
    expect(alive(bg)).toBe(true);
    const jobs = await s.call('jobs', {});
    expect(jobs.llmContent).toContain(`Background PIDs: ${bg}`);
    const kill = await s.call('kill', { handle: h });
    expect(kill.llmContent).toContain(`Its background processes were terminated: PIDs ${bg}.`);
    expect(await eventually(() => !alive(bg))).toBe(true);
  });
});
