// The stamp of the committed envd messages (src/daemon/envd/generated/): the SHA-256 of
// each proto/envd/*.proto they were generated from, one `<digest>  <path>` line each.
// scripts/gen-envd-proto.mjs writes it with the messages; scripts/check-generated.mjs
// (run by `npm test`) fails when the .proto files no longer match it, so a .proto changed
// without generating the messages again is caught without compiling the generator.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP = 'src/daemon/envd/generated/SOURCES.sha256';

/** The stamp's text for the .proto files as they are now under `root`. */
export function protoStamp(root) {
  const dir = join(root, 'proto', 'envd');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.proto'))
    .sort()
    .map((name) => `${createHash('sha256').update(readFileSync(join(dir, name))).digest('hex')}  proto/envd/${name}\n`)
    .join('');
}
