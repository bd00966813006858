#!/usr/bin/env node
// The `native-shell-service` command. The logic lives in the compiled tools
// (`npm run build:ts` makes dist/tools from tools/*.ts).
'use strict';

let cli;
try {
  cli = require('../dist/tools/cli.js');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && /dist[\\/]tools[\\/]cli\.js/.test(String(e.message))) {
    process.stderr.write('native-shell-service: dist/tools is missing; run `npm run build:ts` first.\n');
    process.exit(1);
  }
  throw e;
}

cli.main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`native-shell-service: ${e && e.stack ? e.stack : e}\n`);
    process.exitCode = 1;
  },
);
