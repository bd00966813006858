// pbjson-build writes each proto package's JSON mapping as one file of
// `impl serde::Serialize` / `impl serde::Deserialize` pairs, one pair per message
// (3,000 lines for envd.process). The repository keeps files under 600 lines, so
// scripts/gen-envd-proto.mjs splits each such file after generating it: every message's
// pair stays whole and in order, the pairs are grouped into parts of at most `LIMIT`
// lines (`NAME.serde.N.rs`), and `NAME.serde.rs` becomes the list of them that
// src/daemon/envd/proto.rs includes (an `include!` inside an included file is
// resolved beside that file).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LIMIT = 600;
const START = /^impl serde::Serialize for /;

/** Splits `dir/NAME.serde.rs` (as pbjson wrote it) into parts and an index. */
export function splitSerde(dir, name) {
  const file = join(dir, `${name}.serde.rs`);
  const lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
  if (lines[0]?.startsWith('// The parts of')) return; // split already
  // One unit per message: from its Serialize impl to the next one's.
  const units = [];
  for (const line of lines) {
    if (START.test(line) || units.length === 0) units.push([]);
    units[units.length - 1].push(line);
  }
  const parts = [];
  for (const unit of units) {
    const last = parts[parts.length - 1];
    if (last && last.length + unit.length <= LIMIT) last.push(...unit);
    else parts.push([...unit]);
  }
  for (const old of readdirSync(dir).filter((f) => f.startsWith(`${name}.serde.`) && f !== `${name}.serde.rs`)) {
    rmSync(join(dir, old));
  }
  const names = parts.map((part, i) => {
    const partName = `${name}.serde.${i + 1}.rs`;
    writeFileSync(join(dir, partName), `${part.join('\n')}\n`);
    return partName;
  });
  const index = [
    `// The parts of ${name}'s JSON mapping (pbjson-build), split by scripts/split-envd-serde.mjs.`,
    ...names.map((n) => `include!("${n}");`),
  ];
  writeFileSync(file, `${index.join('\n')}\n`);
}
