// `node scripts/check-shared-deps.mjs` (run by `npm test`): fails when a crate that two
// of `npm test`'s Rust builds depend on is compiled with different features in them: the
// addon (the crate in src/binding/), the daemon (the core's binary) and `cargo test
// --release` (the core with its dev-dependencies).
//
// `npm test` builds the addon, the daemon and the tests into one target folder
// (scripts/build-daemon.mjs, scripts/test.mjs). Cargo reuses a compiled crate only when
// its features are the same; one crate whose features differ (napi turned `memchr`'s
// `default` on) makes cargo compile it again, and every crate above it, the core
// included: the core alone is about 100 CPU seconds a compilation. Cargo.toml's feature-unifying block
// asks for the same features in every build; this keeps that block complete when napi,
// a dev-dependency or another crate changes.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hostTriple } from './build-daemon.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OURS = ['native-shell-service', 'native-shell-service-node'];

/**
 * Each crate of a build (name and version) and the features it is compiled with. Normal
 * (and dev) edges only: the build scripts' dependencies are compiled for the host, apart
 * from the target's crates however alike, and the same in every build.
 */
function featuresOf(extraArgs, edges = 'normal') {
  const out = execFileSync(
    'cargo',
    ['tree', '--quiet', '--edges', edges, '--format', '{p}|{f}', '--prefix', 'none', '--target', hostTriple(), ...extraArgs],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const crates = new Map();
  for (const line of out.split('\n')) {
    const [pkg, features = ''] = line.replace(/ \(\*\)$/, '').split('|');
    // `{p}` is `name vX.Y.Z` and, for a path crate or a proc macro, more after it.
    const [name, version] = (pkg ?? '').trim().split(' ');
    if (!name || !version || OURS.includes(name)) continue;
    const key = `${name} ${version}${pkg.includes('(proc-macro)') ? ' (proc-macro)' : ''}`;
    const set = crates.get(key) ?? new Set();
    for (const f of features.split(',').filter(Boolean)) set.add(f);
    crates.set(key, set);
  }
  return crates;
}

const builds = {
  addon: featuresOf(['--package', 'native-shell-service-node']),
  daemon: featuresOf(['--package', 'native-shell-service']),
  tests: featuresOf(['--package', 'native-shell-service'], 'normal,dev'),
};
const differing = [];
const names = Object.keys(builds);
for (let i = 0; i < names.length; i++) {
  for (const other of names.slice(i + 1)) {
    for (const [key, features] of builds[names[i]]) {
      const theirs = builds[other].get(key);
      if (!theirs) continue;
      const a = [...features].sort().join(',');
      const b = [...theirs].sort().join(',');
      if (a !== b) differing.push(`  ${key}\n    ${names[i]}: ${a || '(none)'}\n    ${other}: ${b || '(none)'}`);
    }
  }
}
if (differing.length > 0) {
  console.error(
    `These crates are compiled with other features in one of npm test's builds than in another, so it compiles them (and every crate above them) twice.\nAsk for the missing features in Cargo.toml's feature-unifying block (next to memchr and futures-channel):\n${differing.join('\n')}`,
  );
  process.exit(1);
}
console.log(`the addon's, the daemon's and the tests' builds compile their ${builds.daemon.size} shared dependencies alike`);
