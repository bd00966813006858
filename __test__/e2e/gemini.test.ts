// End to end: the real Gemini CLI (0.61.0), offline with scripted model turns, driving
// `native-shell-service mcp`. The scripted model ignores tool results, so the checks are
// on effects: files, ports, processes, and each tool_result's status and text.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { alive, eventually } from '../helpers';
import { type GeminiProject, type GeminiRun, geminiProject, portOpen } from './gemini';

let g: GeminiProject;
const timings: string[] = [];
beforeAll(() => {
  g = geminiProject();
});
afterAll(() => {
  g.cleanup();
  // The run times, for the record (the suite asserts no wall-clock limits).
  process.stdout.write(`\n[e2e timings]\n${timings.join('\n')}\n`);
});

function record(name: string, run: GeminiRun): void {
  timings.push(`${name}: ${(run.durationMs / 1000).toFixed(1)}s (${run.calls.length} tool calls)`);
  if (run.calls.length === 0) throw new Error(`no tool calls; stderr:\n${run.stderr}`);
}

describe('Gemini CLI end to end', () => {
  it('edits a file with ed through send_input', async () => {
    writeFileSync(join(g.root, 'config.txt'), 'name = demo\ncolor = red\n');
    const run = await g.run(
      [
        { call: 'run_shell_command', args: { command: "ed -p 'ED> ' config.txt", ai_callback_pattern: 'ED> ' } },
        { call: 'send_input', args: { handle: 1, input: '2s/red/blue/', ai_callback_pattern: 'ED> ' } },
        { call: 'send_input', args: { handle: 1, input: '$a', ai_callback_delay: 0.3 } },
        { call: 'send_input', args: { handle: 1, input: 'size = 3', ai_callback_delay: 0.3 } },
        { call: 'send_input', args: { handle: 1, input: '.', ai_callback_pattern: 'ED> ' } },
        { call: 'send_input', args: { handle: 1, input: 'w', ai_callback_pattern: 'ED> ' } },
        { call: 'send_input', args: { handle: 1, input: 'q' } },
        { text: 'I changed the color to blue and added a size.' },
      ],
      'In config.txt, change the color to blue and add size = 3, using ed.',
    );
    record('ed edit', run);
    expect(run.calls.map((c) => c.name)).toEqual(['run_shell_command', ...Array(6).fill('send_input')]);
    expect(run.calls.every((c) => c.status === 'success')).toBe(true);
    expect(run.calls[0]!.output).toContain('Status: running (ai_callback_pattern "ED> " matched "ED> ")');
    expect(run.calls[5]!.output).toContain('Output: w\n34\nED> ');
    expect(run.calls[6]!.output).toContain('Status: the process exited with code 0');
    expect(readFileSync(join(g.root, 'config.txt'), 'utf8')).toBe('name = demo\ncolor = blue\nsize = 3\n');
  });

  it('computes fib(10) in a Python REPL', async () => {
    const run = await g.run(
      [
        { call: 'run_shell_command', args: { command: 'python3 -q', ai_callback_pattern: '>>> ' } },
        { call: 'send_input', args: { handle: 1, input: 'fib = lambda n: n if n <= 1 else fib(n-1) + fib(n-2)', ai_callback_pattern: '>>> ' } },
        { call: 'send_input', args: { handle: 1, input: 'print(fib(10))', ai_callback_pattern: '>>> ' } },
        { call: 'send_input', args: { handle: 1, input: "open('fib.txt', 'w').write(str(fib(10)))", ai_callback_pattern: '>>> ' } },
        { call: 'send_input', args: { handle: 1, input: 'exit()' } },
        { text: 'fib(10) is 55.' },
      ],
      'Calculate fibonacci(10) in Python.',
    );
    record('python REPL', run);
    expect(run.calls.every((c) => c.status === 'success')).toBe(true);
    expect(run.calls[2]!.output).toContain('Output: print(fib(10))\n55\n>>> ');
    expect(run.calls[4]!.output).toContain('Status: the process exited with code 0');
    expect(readFileSync(join(g.root, 'fib.txt'), 'utf8')).toBe('55');
  });

  it('starts servers in the background (foreground job and `&`), lists them with jobs, and kills them', async () => {
    const run = await g.run(
      [
        {
          call: 'run_shell_command',
          args: {
            command: 'python3 -m http.server 0 --bind 127.0.0.1',
            description: 'dev server',
            ai_callback_pattern: 'Serving HTTP on \\S+ port \\d+ \\(',
          },
        },
        { call: 'run_shell_command', args: { command: 'echo checking the server' } },
        // The seed's form: a trailing & (handle 3).
        { call: 'run_shell_command', args: { command: 'python3 -m http.server 0 --bind 127.0.0.1 &', ai_callback_delay: 1 } },
        { call: 'jobs', args: {} },
        { call: 'kill', args: { handle: 1 } },
        { call: 'kill', args: { handle: 3 } },
        { call: 'jobs', args: {} },
        { text: 'The servers ran and are stopped now.' },
      ],
      'Start a dev server, check it is running, then stop it.',
    );
    record('server + jobs + kill', run);
    expect(run.calls.map((c) => [c.name, c.status])).toEqual([
      ['run_shell_command', 'success'],
      ['run_shell_command', 'success'],
      ['run_shell_command', 'success'],
      ['jobs', 'success'],
      ['kill', 'success'],
      ['kill', 'success'],
      ['jobs', 'success'],
    ]);
    const background = Number(/^Background PIDs: (\d+)$/m.exec(run.calls[2]!.output)?.[1]);
    expect(background).toBeGreaterThan(0);
    expect(run.calls[3]!.output).toContain(`Handle: 3\n`);
    expect(run.calls[3]!.output).toContain(`Background PIDs: ${background}`);
    expect(run.calls[5]!.output).toContain(`Its background processes were terminated: PIDs ${background}.`);
    expect(await eventually(() => !alive(background), 10_000)).toBe(true);
    const port = Number(/port (\d+)/.exec(run.calls[0]!.output)?.[1]);
    expect(port).toBeGreaterThan(0);
    const jobs = run.calls[3]!.output;
    expect(jobs).toContain('Handle: 1\n');
    expect(jobs).toContain('Command: python3 -m http.server 0 --bind 127.0.0.1');
    expect(jobs).toContain('Description: dev server');
    expect(jobs).toContain('Status: running');
    const pid = Number(/^PID: (\d+)$/m.exec(jobs)?.[1]);
    expect(run.calls[4]!.output).toMatch(/^Process 1 \(python3 -m http\.server 0 --bind 127\.0\.0\.1\) terminated successfully/);
    expect(run.calls[6]!.output).toBe('No running background processes.');
    expect(await eventually(() => !alive(pid), 10_000)).toBe(true);
    expect(await portOpen(port)).toBe(false);
  });

  it('blocks command substitution before anything runs', async () => {
    const run = await g.run(
      [
        { call: 'run_shell_command', args: { command: 'echo $(touch pwned.txt)' } },
        { call: 'run_shell_command', args: { command: 'echo `touch pwned2.txt`' } },
        { text: 'The command was blocked.' },
      ],
      'Run echo with a command substitution.',
    );
    record('blocked substitution', run);
    expect(run.calls.map((c) => c.status)).toEqual(['error', 'error']);
    // stream-json carries the CLI's generic error line; the transcript has what the model read.
    expect(run.calls[0]!.output).toMatch(/reported an error/);
    const transcript = g.transcript();
    expect(transcript).toContain('Command blocked, nothing was run: command substitution');
    expect(transcript).toContain('Command: echo $(touch pwned.txt)');
    expect(existsSync(join(g.root, 'pwned.txt'))).toBe(false);
    expect(existsSync(join(g.root, 'pwned2.txt'))).toBe(false);
  });

  it('jobs left running die when the CLI exits', async () => {
    const run = await g.run(
      [
        { call: 'run_shell_command', args: { command: 'echo "pid=$$ ok"; exec sleep 300', ai_callback_pattern: 'pid=\\d+ ok' } },
        { call: 'run_shell_command', args: { command: 'sleep 301 &' } },
        { text: 'Started.' },
      ],
      'Start two sleepers and leave them.',
    );
    record('cleanup at exit', run);
    const pids = [
      Number(/pid=(\d+)/.exec(run.calls[0]!.output)?.[1]),
      Number(/^Background PIDs: (\d+)$/m.exec(run.calls[1]!.output)?.[1]),
    ];
    expect(pids.every((p) => p > 0)).toBe(true);
    for (const pid of pids) expect(await eventually(() => !alive(pid), 15_000)).toBe(true);
  });

  it('with the documented settings, the built-in shell is hidden and this server is used (wait_for_previous accepted)', async () => {
    const documented = geminiProject([], { tools: { exclude: ['ShellTool'] } });
    try {
      const run = await documented.run(
        [
          { call: 'run_shell_command', args: { command: 'echo builtin > builtin.txt' }, builtin: true },
          // The CLI adds wait_for_previous to every declaration and forwards it to MCP servers.
          { call: 'run_shell_command', args: { command: 'echo ours > ours.txt', wait_for_previous: true } },
          { text: 'Done.' },
        ],
        'Write two files.',
      );
      record('documented settings', run);
      expect(run.calls.map((c) => c.status)).toEqual(['error', 'success']);
      expect(existsSync(join(documented.root, 'builtin.txt'))).toBe(false);
      expect(readFileSync(join(documented.root, 'ours.txt'), 'utf8')).toBe('ours\n');
    } finally {
      documented.cleanup();
    }
  });
});
