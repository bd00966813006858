// Measures what a background log costs the host: one command through the adapter in
// PTY mode, backgrounded at once (`bg`) or not (`fg`), with its JS thread's and its
// process's CPU, wall time and event-loop delay. Not a test (no assertions).
//   npm run build:compat && HOME=$(mktemp -d) node __test__/compat/measure-background.mjs bg|fg '<command>'
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const [how = 'bg', command = 'seq 1 200000'] = process.argv.slice(2);
const { ShellExecutionService: Service } = require('../../dist/compat/gemini-compat.js');
const { NoopSandboxManager } = await import('@google/gemini-cli-core/dist/src/services/sandboxManager.js');
const config = {
  sanitizationConfig: { allowedEnvironmentVariables: [], blockedEnvironmentVariables: [], enableEnvironmentVariableRedaction: false },
  sandboxManager: new NoopSandboxManager(),
  sessionId: 'measure',
};
const threadCpuMs = () =>
  existsSync('/proc/thread-self/schedstat') ? Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6 : NaN;
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const cpu0 = process.cpuUsage();
const thread0 = threadCpuMs();
const t0 = Date.now();
const { pid } = await Service.execute(command, process.cwd(), () => undefined, new AbortController().signal, true, config);
if (how === 'bg') Service.background(pid, 'measure');
const exit = await new Promise((r) => Service.onExit(pid, (code) => r(code)));
const cpu = process.cpuUsage(cpu0);
await new Promise((r) => setTimeout(r, 20));
const log = Service.getLogFilePath(pid);
console.log(JSON.stringify({
  how,
  exit,
  wallMs: Date.now() - t0,
  processCpuMs: Math.round((cpu.user + cpu.system) / 1000),
  jsThreadCpuMs: Math.round(threadCpuMs() - thread0),
  delayP99Ms: +(delay.percentile(99) / 1e6).toFixed(1),
  logBytes: existsSync(log) ? readFileSync(log).length : 0,
}));
await Service.shutdown();
process.exit(0);
