// Runs a stdio MCP server (argv[3..]) between a client and itself, unchanged, and writes
// every line the client sends to the file argv[2]: what a real client (Claude Code) asks
// of the server, for __test__/e2e/model-clients.test.ts to assert on.
const { spawn } = require('node:child_process');
const { appendFileSync } = require('node:fs');

const [log, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
let pending = '';
process.stdin.on('data', (chunk) => {
  child.stdin.write(chunk);
  pending += chunk.toString('utf8');
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    appendFileSync(log, `${pending.slice(0, nl)}\n`);
    pending = pending.slice(nl + 1);
  }
});
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
