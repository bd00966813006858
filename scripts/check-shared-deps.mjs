// `node scripts/check-shared-deps.mjs` (run by `npm test`): fails when a crate that both
// the addon (`--features node`) and the daemon (no features) depend on is compiled with
// different features in the two builds.
//
// `npm run build` builds the addon, then the daemon, into one target folder
// (scripts/build-daemon.mjs). Cargo reuses a compiled crate only when its features are
// the same; one crate whose features differ (napi turned `memchr`'s `default` on) makes
// cargo compile it again, and every crate above it, for the daemon: about half of the
// build's CPU time. Cargo.toml's feature-unifying block asks for napi's features in the
// plain build too; this keeps that block complete when napi or another crate changes.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hostTriple } from './build-daemon.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SELF = 'native-shell-service';

/** Each crate of a build (name and version) and the features it is compiled with. */
function featuresOf(extraArgs) {
  const out = execFileSync(
    'cargo',
    ['tree', '--quiet', '--edges', 'normal,build', '--format', '{p}|{f}', '--prefix', 'none', '--target', hostTriple(), ...extraArgs],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const crates = new Map();
  for (const line of out.split('\n')) {
    const [pkg, features = ''] = line.replace(/ \(\*\)$/, '').split('|');
    // `{p}` is `name vX.Y.Z` and, for a path crate or a proc macro, more after it.
    const [name, version] = (pkg ?? '').trim().split(' ');
    if (!name || !version || name === SELF) continue;
    const key = `${name} ${version}${pkg.includes('(proc-macro)') ? ' (proc-macro)' : ''}`;
    const set = crates.get(key) ?? new Set();
    for (const f of features.split(',').filter(Boolean)) set.add(f);
    crates.set(key, set);
  }
  return crates;
}

const addon = featuresOf(['--features', 'node']);
const daemon = featuresOf([]);
// napi-build runs only in the crate's own build script, which both builds compile anew
// (its features are the crate's): a difference there costs one small crate, not a tree.
const ignored = new Set(['napi-build']);
const differing = [];
for (const [key, features] of daemon) {
  const other = addon.get(key);
  if (!other || ignored.has(key.split(' ')[0])) continue;
  const a = [...other].sort().join(',');
  const d = [...features].sort().join(',');
  if (a !== d) differing.push(`  ${key}\n    addon:  ${a || '(none)'}\n    daemon: ${d || '(none)'}`);
}
if (differing.length > 0) {
  console.error(
    `These crates are compiled with other features for the daemon than for the addon, so \`npm run build\` compiles them (and every crate above them) twice.\nAsk for the addon's features in Cargo.toml's feature-unifying block (next to memchr and futures-channel):\n${differing.join('\n')}`,
  );
  process.exit(1);
}
console.log(`the addon's and the daemon's builds share their ${daemon.size} dependencies' features`);
