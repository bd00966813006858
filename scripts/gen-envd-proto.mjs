// `node scripts/gen-envd-proto.mjs`: generates envd's messages again from
// proto/envd/*.proto into src/daemon/envd/generated/ (proto/gen/: protox, prost-build,
// pbjson-build, in a target folder of their own) and stamps the sources they came from
// (scripts/envd-proto-stamp.mjs). Run it after changing a .proto and commit what it
// writes; the core's build does not compile protox, the generator's .proto parser.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { STAMP, protoStamp } from './envd-proto-stamp.mjs';
import { splitSerde } from './split-envd-serde.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(ROOT, 'proto', 'gen', 'Cargo.toml');
// The generator's lockfile is committed (the messages depend on prost-build's version);
// a checkout without one starts from the core's, whose prost it must match.
const lock = join(ROOT, 'proto', 'gen', 'Cargo.lock');
if (!existsSync(lock)) copyFileSync(join(ROOT, 'Cargo.lock'), lock);
const r = spawnSync('cargo', ['run', '--quiet', '--manifest-path', manifest, '--target-dir', join(ROOT, 'target', 'protogen'), '--', ROOT], {
  stdio: 'inherit',
});
if (r.error || r.status !== 0) {
  console.error(`gen-envd-proto: the generator failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`})`);
  process.exit(1);
}
const generated = join(ROOT, 'src', 'daemon', 'envd', 'generated');
for (const name of ['process', 'filesystem']) splitSerde(generated, name);
writeFileSync(join(ROOT, STAMP), protoStamp(ROOT));
console.log(`gen-envd-proto: src/daemon/envd/generated/ written from proto/envd/, stamped in ${STAMP}`);
