// Measures one command through upstream's ShellExecutionService or the adapter (or the
// addon itself, `addon`: an `onOutput` listener making one `readOutput` per event, then
// one per turn after the exit): wall time, JS CPU, data events, event-loop delay, RSS.
// Not a test (no assertions).
//   npm run build:compat && node __test__/compat/measure-flood.mjs compat|upstream|addon pty|pipes 'seq 1 1000000'
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const [which = 'compat', mode = 'pty', command = 'seq 1 1000000'] = process.argv.slice(2);
const core = '@google/gemini-cli-core/dist/src/services';
/** The addon's own event path, with upstream's static `execute` shape. */
const Addon = {
  service: undefined,
  async execute(cmd, cwd, onEvent, _signal, pty) {
    const { ShellExecutionService } = require('../../index.js');
    const s = (Addon.service = new ShellExecutionService({ projectRoot: '/', persistOutput: true }));
    const { handle } = s.start(cmd, { mode: pty ? 'pty' : 'pipes', directory: cwd.slice(1) || '.' });
    let since = 0;
    let text = '';
    const read = () => {
      const chunk = s.readOutput(handle, { since });
      const moved = chunk.next > since;
      since = chunk.next;
      if (chunk.text) {
        onEvent(chunk.text);
        text = (text + chunk.text).slice(-1000);
      }
      return moved;
    };
    const result = new Promise((resolve) => {
      s.onOutput(handle, (e) => {
        read();
        if (!e.exited) return;
        const drain = () => (read() ? setImmediate(drain) : resolve({ output: text }));
        drain();
      });
    });
    return { result };
  },
  shutdown: () => Addon.service?.shutdown(),
};
const Service =
  which === 'upstream'
    ? (await import(`${core}/shellExecutionService.js`)).ShellExecutionService
    : which === 'addon'
      ? Addon
      : require('../../dist/compat/gemini-compat.js').ShellExecutionService;
// The drop-in in process (its default puts pipes-mode jobs in the daemon): what it costs
// the host itself; NATIVE_SHELL_GEMINI_DAEMON set to a socket measures the daemon's way.
process.env.NATIVE_SHELL_GEMINI_DAEMON ??= '0';
const { NoopSandboxManager } = await import(`${core}/sandboxManager.js`);
const config = {
  sanitizationConfig: { allowedEnvironmentVariables: [], blockedEnvironmentVariables: [], enableEnvironmentVariableRedaction: false },
  sandboxManager: new NoopSandboxManager(),
  sessionId: 'measure',
};
// The JS thread's own CPU time (Linux), apart from the addon's and libuv's threads.
const threadCpuMs = () =>
  existsSync('/proc/thread-self/schedstat') ? Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6 : NaN;
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const cpu0 = process.cpuUsage();
const thread0 = threadCpuMs();
const t0 = Date.now();
let events = 0;
const handle = await Service.execute(command, process.cwd(), () => events++, new AbortController().signal, mode === 'pty', config);
const result = await handle.result;
const cpu = process.cpuUsage(cpu0);
const threadMs = threadCpuMs() - thread0;
// The turn that resolved the result counts too: the histogram records a late turn when
// its timer fires next.
await new Promise((r) => setTimeout(r, 20));
console.log(JSON.stringify({
  which,
  mode,
  wallMs: Date.now() - t0,
  processCpuMs: Math.round((cpu.user + cpu.system) / 1000),
  jsThreadCpuMs: Math.round(threadMs),
  dataEvents: events - 1,
  outputChars: result.output.length,
  outputTail: result.output.slice(-16),
  delayP99Ms: +(delay.percentile(99) / 1e6).toFixed(1),
  delayMaxMs: +(delay.max / 1e6).toFixed(1),
  rssMB: Math.round(process.memoryUsage().rss / 1e6),
}));
if (Service.shutdown) await Service.shutdown();
process.exit(0);
