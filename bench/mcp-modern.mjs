// What MCP 2026-07-28 costs beside 2025-11-25 on the same stdio server: the time of a
// request answered through the 2026 layer (tools/mcp/modern-wire.ts) and of the same
// request from a 2025 client, a `tasks/get` of a running task, and how long after
// `tasks/update` a task's next prompt is asked (python3 reading two lines), found by
// polling `tasks/get` and told by a task notification (`subscriptions/listen`). Drives the
// built server (dist/: `npx tsc` + scripts/bundle.mjs, or any vitest run of __test__/mcp)
// over stdio with raw JSON-RPC; prints medians and 90th percentiles in milliseconds.
//   node bench/mcp-modern.mjs [rounds]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const rounds = Number(process.argv[2] ?? 200);
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-modern-bench-')));
const project = join(base, 'project');
mkdirSync(project);
const child = spawn(process.execPath, [join(root, 'bin', 'native-shell-service.js'), 'mcp', '--project-root', project, '--io-dir', join(base, 'io')], {
  cwd: project,
  stdio: ['pipe', 'pipe', 'ignore'],
});
const waiting = new Map();
let buffer = '';
child.stdout.on('data', (d) => {
  buffer += d;
  let nl;
  while ((nl = buffer.indexOf('\n')) >= 0) {
    const m = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    if (m.id !== undefined && !m.method) waiting.get(m.id)?.(m);
    else if (m.method) for (const listener of listeners) listener(m);
  }
});
const listeners = new Set();
let next = 1;
const request = (method, params = {}) =>
  new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};
const modern = (method, params = {}) => request(method, { ...params, _meta: envelope });

async function timed(label, fn) {
  const ms = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2);
  console.log(`${label.padEnd(44)} median ${at(0.5).padStart(7)}  p90 ${at(0.9).padStart(7)}`);
}

await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
await timed('tools/list, 2025-11-25', () => request('tools/list'));
await timed('tools/list, 2026-07-28 (through the layer)', () => modern('tools/list'));
await timed('server/discover', () => request('server/discover'));
const task = (await modern('tools/call', { name: 'run_shell_command', arguments: { command: 'sleep 600' } })).result;
await timed('tasks/get, a running task', () => modern('tasks/get', { taskId: task.taskId }));
await modern('tasks/cancel', { taskId: task.taskId });

// Prompt to prompt: answer one input(), wait for the next to be asked.
const asks = [];
for (let i = 0; i < Math.min(rounds, 20); i++) {
  const created = (await modern('tools/call', { name: 'run_shell_command', arguments: { command: `python3 -c "input('a? '); input('b? ')"` } })).result;
  let t;
  do t = (await modern('tasks/get', { taskId: created.taskId })).result;
  while (t.status !== 'input_required');
  const key = Object.keys(t.inputRequests)[0];
  const start = performance.now();
  await modern('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept', content: { input: 'x' } } } });
  do t = (await modern('tasks/get', { taskId: created.taskId })).result;
  while (!(t.status === 'input_required' && !(key in t.inputRequests)));
  asks.push(performance.now() - start);
  await modern('tasks/cancel', { taskId: created.taskId });
}
asks.sort((a, b) => a - b);
console.log(`${'tasks/update to the next prompt asked'.padEnd(44)} median ${asks[Math.floor(asks.length / 2)].toFixed(2).padStart(7)}  p90 ${asks[Math.floor(asks.length * 0.9)].toFixed(2).padStart(7)}  (${asks.length} runs)`);

// The same, told: a subscription's notification of the next prompt (the server reads its
// tasks every 250 ms), without polling.
const told = [];
for (let i = 0; i < Math.min(rounds, 20); i++) {
  const created = (await modern('tools/call', { name: 'run_shell_command', arguments: { command: `python3 -c "input('a? '); input('b? ')"` } })).result;
  const listenId = `listen-${i}`;
  let seen = () => {};
  const notes = [];
  const listener = (m) => {
    if (m.method === 'notifications/tasks' && m.params._meta['io.modelcontextprotocol/subscriptionId'] === listenId) {
      notes.push({ at: performance.now(), task: m.params });
      seen();
    }
  };
  listeners.add(listener);
  const wait = (test) =>
    new Promise((resolve) => {
      seen = () => {
        const found = notes.find((n) => test(n.task));
        if (found) resolve(found);
      };
      seen();
    });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: listenId, method: 'subscriptions/listen', params: { notifications: { taskIds: [created.taskId] }, _meta: envelope } })}\n`);
  const first = await wait((t) => t.status === 'input_required');
  const key = Object.keys(first.task.inputRequests)[0];
  const start = performance.now();
  await modern('tasks/update', { taskId: created.taskId, inputResponses: { [key]: { action: 'accept', content: { input: 'x' } } } });
  const nextAsked = await wait((t) => t.status === 'input_required' && !(key in t.inputRequests));
  told.push(nextAsked.at - start);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: listenId } })}\n`);
  listeners.delete(listener);
  await modern('tasks/cancel', { taskId: created.taskId });
}
told.sort((a, b) => a - b);
console.log(`${'tasks/update to the next prompt notified'.padEnd(44)} median ${told[Math.floor(told.length / 2)].toFixed(2).padStart(7)}  p90 ${told[Math.floor(told.length * 0.9)].toFixed(2).padStart(7)}  (${told.length} runs)`);

child.stdin.end();
await new Promise((r) => child.once('exit', r));
rmSync(base, { recursive: true, force: true });
