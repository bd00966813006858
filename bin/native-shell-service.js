#!/usr/bin/env node
// The `native-shell-service` command. The logic is the bundled tools and MCP server
// (`npm run build:ts` makes dist/native-shell-service.cjs from tools/*.ts: scripts/bundle.mjs).
'use strict';

let cli;
try {
  cli = require('../dist/native-shell-service.cjs');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && /dist[\\/]native-shell-service\.cjs/.test(String(e.message))) {
    process.stderr.write('native-shell-service: dist/native-shell-service.cjs is missing; run `npm run build:ts` first.\n');
    process.exit(1);
  }
  throw e;
}

cli.start(process.argv.slice(2));
