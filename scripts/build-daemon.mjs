// `node scripts/build-daemon.mjs [--debug]`
//
// Builds the per-user daemon (`src/bin/native-shell-daemon.rs`) for this
// machine and puts it at the package root as `native-shell-daemon` (`.exe` on Windows),
// where clients find it next to the addon. `npm run build` runs this after the addon.
//
// The daemon links no Node-API: it is the core's binary, in a cargo run of its own (the
// addon is the crate in src/binding/, which a binary could not link without Node's
// symbols). `scripts/build-all.mjs` cross-builds it for the platform packages with
// `daemonFileName` and `buildDaemon`.
//
// It is built for this machine's triple named with `--target`, as `napi build` names it
// for the addon: cargo then puts both in target/<triple>/ and the daemon's build reuses
// the core and every dependency the addon's compiled (Cargo.toml keeps their features
// the same in both builds): only the binary's own crate is compiled. Without `--target`
// cargo would use target/release/ and compile all of them a second time.
import { spawnSync } from 'node:child_process';
import { copyFileSync, chmodSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DAEMON = 'native-shell-daemon';

/** The daemon's file name for a platform (`win32` gets `.exe`). */
export function daemonFileName(platform = process.platform) {
  return platform === 'win32' ? `${DAEMON}.exe` : DAEMON;
}

/**
 * Runs cargo for the daemon and returns the built file. `cargo` is the subcommand list
 * (`['build']`, or `['zigbuild']` for a cross build), `triple` a target or null for this
 * machine's (named all the same, see above), `env` the environment (a build-all's own target folder).
 */
export function buildDaemon({ cargo = ['build'], triple = null, release = true, env = process.env, targetDir = join(ROOT, 'target'), windows = false } = {}) {
  const target = triple ?? hostTriple(env);
  const args = [...cargo, '--bin', DAEMON, '--target', target];
  if (release) args.push('--release');
  const r = spawnSync('cargo', args, { stdio: 'inherit', cwd: ROOT, env });
  if (r.error) throw new Error(`cargo: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`cargo ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  // zigbuild's `<triple>.<glibc>` names a folder by the triple alone.
  const folder = join(targetDir, target.replace(/\.[0-9.]+$/, ''));
  return join(folder, release ? 'release' : 'debug', windows ? `${DAEMON}.exe` : DAEMON);
}

/**
 * The triple cargo builds for when given none (`rustc -vV`'s `host:`), or CARGO_BUILD_TARGET
 * when set, as `napi build` picks the addon's.
 */
export function hostTriple(env = process.env) {
  if (env.CARGO_BUILD_TARGET) return env.CARGO_BUILD_TARGET;
  const r = spawnSync(env.RUSTC ?? 'rustc', ['-vV'], { encoding: 'utf8', env });
  if (r.error) throw new Error(`rustc -vV: ${r.error.message}`);
  const host = /^host: (\S+)$/m.exec(r.stdout ?? '');
  if (r.status !== 0 || !host) throw new Error(`rustc -vV gave no host triple (exit ${r.status ?? r.signal})`);
  return host[1];
}

function main() {
  const release = !process.argv.includes('--debug');
  const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(ROOT, 'target');
  const built = buildDaemon({ release, targetDir, windows: process.platform === 'win32' });
  const dest = join(ROOT, daemonFileName());
  copyFileSync(built, dest);
  chmodSync(dest, 0o755);
  console.log(`${DAEMON}: ${dest}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (e) {
    console.error(`build-daemon: ${e.message}`);
    process.exit(1);
  }
}
