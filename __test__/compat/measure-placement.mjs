// Measures what the drop-in's placement costs a command: `echo hi` in pipes mode, from
// `execute` to its result, 31 in a row, in process or in a daemon of its own (a fresh one,
// so the first execution includes the daemon's start). Not a test (no assertions).
//   npm run build:compat && node __test__/compat/measure-placement.mjs process|daemon
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const where = process.argv[2] === 'daemon' ? 'daemon' : 'process';
const { ShellExecutionService: Service } = require('../../dist/compat/gemini-compat.js');
const { NoopSandboxManager } = await import('@google/gemini-cli-core/dist/src/services/sandboxManager.js');
const config = {
  sessionId: 'measure',
  sanitizationConfig: { allowedEnvironmentVariables: [], blockedEnvironmentVariables: [], enableEnvironmentVariableRedaction: false },
  sandboxManager: new NoopSandboxManager(),
};
const base = mkdtempSync(join(tmpdir(), 'nss-measure-placement-'));
mkdirSync(join(base, 'run'), { mode: 0o700 });
// The daemon exits a second after its last client and job are gone.
const daemon = where === 'daemon' ? { socket: join(base, 'run', 'daemon.sock'), idleExitMs: 1000 } : false;
Service.configure({ daemon, ioDir: join(base, 'io') });
const times = [];
for (let i = 0; i < 31; i++) {
  const started = performance.now();
  const { result } = await Service.execute('echo hi', tmpdir(), () => {}, new AbortController().signal, false, config);
  const r = await result;
  if (r.output !== 'hi') throw new Error(`unexpected result: ${JSON.stringify(r)}`);
  times.push(performance.now() - started);
}
await Service.shutdown();
const rest = times.slice(1).sort((a, b) => a - b);
console.log(`${where}: first ${times[0].toFixed(1)} ms; the next 30: median ${rest[15].toFixed(1)} ms, p90 ${rest[27].toFixed(1)} ms`);
rmSync(base, { recursive: true, force: true });
