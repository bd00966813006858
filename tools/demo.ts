// `native-shell-service demo`: the seed's three workflows, for real, through the tools,
// printing every call and its result. Resolves true only if all three worked.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadAddon } from '../contract/addon.js';
import { createShellTools, type ShellTools } from './create.js';
import type { ToolResult } from './types.js';

export interface DemoOptions {
  /** Where to print (default: stdout). */
  write?: (text: string) => void;
  /** Keep the scratch project afterwards. */
  keep?: boolean;
}

interface Step {
  tools: ShellTools;
  write: (text: string) => void;
}

async function call(step: Step, name: keyof ShellTools, params: Record<string, unknown>): Promise<ToolResult> {
  step.write(`\n▶ ${name}(${JSON.stringify(params)})\n`);
  const result = await step.tools[name].buildAndExecute(params);
  const body = result.llmContent.split('\n').map((l) => `  │ ${l}`).join('\n');
  step.write(`${body}\n`);
  if (result.error) step.write(`  └ error: ${result.error.type}\n`);
  return result;
}

function handleOf(result: ToolResult): number {
  const m = /^Handle: (\d+)$/m.exec(result.llmContent);
  if (!m) throw new Error(`no handle in the result:\n${result.llmContent}`);
  return Number(m[1]);
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function editWithEd(step: Step, root: string): Promise<string> {
  const start = await call(step, 'run_shell_command', { command: "ed -p 'ED> ' hello.txt", ai_callback_pattern: 'ED> ' });
  const h = handleOf(start);
  await call(step, 'send_input', { handle: h, input: 'a', ai_callback_delay: 0.3 });
  await call(step, 'send_input', { handle: h, input: 'Hello, world!', ai_callback_delay: 0.3 });
  await call(step, 'send_input', { handle: h, input: '.', ai_callback_pattern: 'ED> ' });
  await call(step, 'send_input', { handle: h, input: 'w', ai_callback_pattern: 'ED> ' });
  await call(step, 'send_input', { handle: h, input: 'q' });
  await call(step, 'shell_cmd', { command: 'cat', parameters: ['hello.txt'] });
  const content = readFileSync(join(root, 'hello.txt'), 'utf8');
  if (content !== 'Hello, world!\n') throw new Error(`hello.txt holds ${JSON.stringify(content)}`);
  return 'hello.txt was written by ed and reads "Hello, world!"';
}

async function pythonRepl(step: Step): Promise<string> {
  const start = await call(step, 'run_shell_command', { command: 'python3 -q', ai_callback_pattern: '>>> ' });
  const h = handleOf(start);
  await call(step, 'send_input', {
    handle: h,
    input: 'def fib(n): return n if n <= 1 else fib(n-1) + fib(n-2)',
    ai_callback_pattern: '\\.\\.\\. ',
  });
  await call(step, 'send_input', { handle: h, input: '', ai_callback_pattern: '>>> ' });
  const r = await call(step, 'send_input', { handle: h, input: 'print(fib(10))', ai_callback_pattern: '>>> ' });
  await call(step, 'send_input', { handle: h, input: 'exit()' });
  if (!/\n55\n/.test(r.llmContent)) throw new Error('python did not print 55');
  return 'python printed fib(10) = 55';
}

async function serverJobsKill(step: Step): Promise<string> {
  const start = await call(step, 'run_shell_command', {
    command: 'python3 -m http.server 0 --bind 127.0.0.1',
    description: 'static file server',
    ai_callback_pattern: 'Serving HTTP on \\S+ port \\d+ \\(',
  });
  const h = handleOf(start);
  const port = Number(/port (\d+)/.exec(start.llmContent)?.[1]);
  if (!port) throw new Error('the server did not report its port');
  const fetch = await call(step, 'run_shell_command', {
    command: `python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:${port}/').status)"`,
  });
  if (!/Stdout: 200/.test(fetch.llmContent)) throw new Error('the server did not answer 200');
  const jobs = await call(step, 'jobs', {});
  if (!jobs.llmContent.includes(`Handle: ${h}\n`)) throw new Error('jobs did not list the server');
  const kill = await call(step, 'kill', { handle: h });
  if (kill.error) throw new Error(`kill failed: ${kill.error.message}`);
  await call(step, 'jobs', {});
  for (let i = 0; i < 50 && (await portOpen(port)); i++) await new Promise((r) => setTimeout(r, 100));
  if (await portOpen(port)) throw new Error(`port ${port} is still open after kill`);
  return `the server answered on port ${port}, was listed by jobs, and kill freed the port`;
}

export async function runDemo(options: DemoOptions = {}): Promise<boolean> {
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-demo-')));
  const root = join(base, 'project');
  mkdirSync(root);
  const { ShellExecutionService } = loadAddon();
  const service = new ShellExecutionService({ projectRoot: root, ioDir: join(base, 'io'), sessionId: 'demo' });
  // The demo plays a model whose user approved its commands.
  const step: Step = { tools: createShellTools(service, { projectRoot: root, onAsk: 'allow' }), write };
  write(`native-shell-service demo: the seed's three workflows through the tools, for real.\nProject folder: ${root}\n`);

  const workflows: Array<[string, (step: Step) => Promise<string>]> = [
    ['Edit a file with ed', (st) => editWithEd(st, root)],
    ['Compute fib(10) in a Python REPL', pythonRepl],
    ['Start a server, list jobs, kill it', serverJobsKill],
  ];
  const outcomes: Array<[string, boolean, string]> = [];
  for (const [i, [title, run]] of workflows.entries()) {
    write(`\n━━ ${i + 1}/${workflows.length} ${title} ━━\n`);
    try {
      const what = await run(step);
      write(`\n✔ ${what}\n`);
      outcomes.push([title, true, what]);
    } catch (e) {
      write(`\n✘ ${(e as Error).message}\n`);
      outcomes.push([title, false, (e as Error).message]);
    }
  }
  await service.shutdown();
  if (!options.keep) rmSync(base, { recursive: true, force: true });

  const ok = outcomes.every(([, passed]) => passed);
  write(`\n${outcomes.filter(([, p]) => p).length}/${outcomes.length} workflows worked${ok ? '.' : ':'}\n`);
  for (const [title, passed, what] of outcomes) if (!passed) write(`  ✘ ${title}: ${what}\n`);
  return ok;
}
