// Fails when a generated file no longer matches what it is generated from:
// - a fresh `napi build` changed the committed index.js / index.d.ts (the generated
//   loader and typings are part of the package and must be committed);
// - a proto/envd/*.proto changed without envd's messages generated again
//   (src/daemon/envd/generated/, stamped with the sources' digests:
//   scripts/envd-proto-stamp.mjs; `node scripts/gen-envd-proto.mjs` makes them).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { STAMP, protoStamp } from './envd-proto-stamp.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let failed = false;

const files = ['index.js', 'index.d.ts'];
const status = execFileSync('git', ['status', '--porcelain', '--', ...files], { cwd: ROOT, encoding: 'utf8' }).trim();
if (status) {
  const diff = execFileSync('git', ['diff', '--stat', '--', ...files], { cwd: ROOT, encoding: 'utf8' });
  console.error(`The build changed generated files; commit them:\n${status}\n${diff}`);
  failed = true;
} else {
  console.log('generated index.js and index.d.ts match the committed ones');
}

const stampFile = join(ROOT, STAMP);
const stamped = existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : '';
if (stamped !== protoStamp(ROOT)) {
  console.error(`proto/envd/*.proto differ from the ones envd's messages were generated from (${STAMP}): run \`node scripts/gen-envd-proto.mjs\` and commit src/daemon/envd/generated/`);
  failed = true;
} else {
  console.log("envd's generated messages match proto/envd/*.proto");
}
if (failed) process.exit(1);
