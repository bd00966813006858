#!/usr/bin/env node
// The `native-shell-service` command. The logic is the bundled tools and MCP server
// (`npm run build:ts` makes dist/native-shell-service.cjs from tools/*.ts: scripts/bundle.mjs).
'use strict';

// `native-shell-service daemon [--socket PATH] [--idle-exit-ms N] [--stop | --restart]`: the per-user
// daemon (issue 32) in the foreground. It is a binary of its own, not Node: found here and
// run with this process's stdio; its exit status is this command's.
if (process.argv[2] === 'daemon') {
  const { spawn } = require('node:child_process');
  const { existsSync } = require('node:fs');
  const { dirname, join } = require('node:path');
  const file = process.platform === 'win32' ? 'native-shell-daemon.exe' : 'native-shell-daemon';
  const candidates = [process.env.NATIVE_SHELL_DAEMON_BIN, join(__dirname, '..', file)];
  // An installed package: the binary ships in this platform's package (npm/<platform>/).
  for (const abi of ['gnu', 'msvc', '']) {
    const name = `native-shell-service-${process.platform}-${process.arch}${abi ? `-${abi}` : ''}`;
    try {
      candidates.push(join(dirname(require.resolve(`${name}/package.json`)), file));
    } catch {
      // Not installed: the next name.
    }
  }
  const bin = candidates.find((c) => c && existsSync(c));
  if (!bin) {
    process.stderr.write(`native-shell-service daemon: no ${file} here (run \`npm run build\`, or set NATIVE_SHELL_DAEMON_BIN)\n`);
    process.exit(2);
  }
  const args = process.argv.slice(3);
  // With an HTTP port, the MCP Streamable HTTP server its `/mcp` forwards to runs in
  // this process, and the two end together (tools/daemon-front.ts).
  if (args.some((a) => a === '--listen' || a.startsWith('--listen=')) && !args.includes('--stop') && !args.includes('--restart')) {
    loadBundle().startDaemonWithMcp(bin, args);
    return;
  }
  const child = spawn(bin, args, { stdio: 'inherit' });
  // Signals to this process reach the daemon, which ends its jobs and exits.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (e) => {
    process.stderr.write(`native-shell-service daemon: ${e.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else if (process.argv[2] === 'mcp-upstream') {
  // The MCP server a daemon started with `--mcp-server` runs as its child (a container:
  // the daemon is PID 1 and Node below it; tools/mcp-upstream.ts).
  loadBundle().startMcpUpstream(process.argv.slice(3));
} else {
  start();
}

/** Every other command: the bundled tools and MCP server. */
function start() {
  loadBundle().start(process.argv.slice(2));
}

function loadBundle() {
  try {
    return require('../dist/native-shell-service.cjs');
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND' && /dist[\\/]native-shell-service\.cjs/.test(String(e.message))) {
      process.stderr.write('native-shell-service: dist/native-shell-service.cjs is missing; run `npm run build:ts` first.\n');
      process.exit(1);
    }
    throw e;
  }
}
