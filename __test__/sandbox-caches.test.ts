// The Gemini extension's default sandbox (its manifest's `mcp` arguments: --sandbox
// --sandbox-network --sandbox-caches; docs/sandbox.md, "What the extension's default
// opens"): `npm install` and `cargo build` with a registry dependency work, and nothing
// that runs later outside the sandbox (~/.cargo/bin, ~/.cargo/env, shell profiles,
// ~/.local/bin, the user's own package caches) can be written. Each escape runs in an
// unconfined server too — the control, which shows the check can fail — and is judged by
// the files, never by a program's message. Every server gets a home of the test's own,
// so the real one is untouched.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxCaches, sandboxFromFlags } from '../tools/sandbox-flags';
import { ShellExecutionService } from './helpers';
import { BIN, connect, ensureBuilt, ROOT } from './mcp/setup';

const manifest = JSON.parse(readFileSync(join(ROOT, 'gemini-extension.json'), 'utf8')) as {
  mcpServers: { shell: { args: string[] } };
};
const manifestArgs = manifest.mcpServers.shell.args;
/**
 * What the extension passes after `mcp`, but `--daemon`: these servers run their jobs in
 * process, so no daemon outlives the test (the extension with its daemon is
 * __test__/mcp/gemini-extension.test.ts's, in a home of its own).
 */
const EXTENSION_FLAGS = manifestArgs.slice(manifestArgs.indexOf('mcp') + 1).filter((f) => f !== '--daemon');

const linux = process.platform === 'linux';

/** Why the sandbox cannot be had here (no Landlock), or null. */
function noSandbox(): string | null {
  if (!linux) return 'not Linux';
  const io = mkdtempSync(join(tmpdir(), 'nss-caches-probe-'));
  try {
    new ShellExecutionService({ projectRoot: io, ioDir: io, sandbox: true, persistOutput: false }).shutdown().catch(() => {});
    return null;
  } catch (e) {
    return `no sandbox here (${(e as { code?: string }).code}: ${(e as Error).message})`;
  } finally {
    rmSync(io, { recursive: true, force: true });
  }
}
const unavailable = noSandbox();
if (unavailable) console.log(`skipped __test__/sandbox-caches.test.ts: ${unavailable}`);

const onPath = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
/** Why the build half cannot run here, or null: it needs the tools and the registries. */
function noBuild(): string | null {
  const missing = ['npm', 'cargo', 'python3'].filter((p) => !onPath(p));
  if (missing.length) return `${missing.join(', ')} not on the PATH`;
  const r = spawnSync('npm', ['view', 'is-number@7.0.0', 'version'], { encoding: 'utf8', timeout: 60_000 });
  if (r.stdout?.trim() !== '7.0.0') return 'registry.npmjs.org is not reachable';
  // crates.io's index and PyPI (pip may find its wheel locally, but not everywhere).
  const probe = `Promise.all(['https://index.crates.io/config.json', 'https://pypi.org/simple/six/'].map((u) =>
    fetch(u, { signal: AbortSignal.timeout(30000) }).then((x) => { if (!x.ok) throw new Error(u + ' ' + x.status); })))
    .catch((e) => { console.log(e.message); process.exitCode = 1; })`;
  const reach = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', timeout: 60_000 });
  return reach.status === 0 ? null : `a registry is not reachable (${reach.stdout.trim() || reach.error?.message})`;
}
const cannotBuild = unavailable ? unavailable : noBuild();
if (!unavailable && cannotBuild) console.log(`skipped npm install / cargo build / pip install: ${cannotBuild}`);

/** A home like a Rust and npm user's: cargo's env sourced by .profile, the usual caches. */
function makeHome(base: string): string {
  const home = join(base, 'home');
  for (const d of ['.cargo/bin', '.cargo/registry/src', '.local/bin', '.npm/_cacache', '.npm/_npx', '.cache/pip', '.config/systemd/user']) {
    mkdirSync(join(home, d), { recursive: true });
  }
  writeFileSync(join(home, '.cargo', 'env'), 'export PATH="$HOME/.cargo/bin:$PATH"\n');
  writeFileSync(join(home, '.profile'), '. "$HOME/.cargo/env"\n');
  writeFileSync(join(home, '.bashrc'), '# bashrc\n');
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = t\n');
  writeFileSync(join(home, '.npmrc'), 'fund=false\n');
  return home;
}

/**
 * The server's environment: this one with HOME moved, and nothing pointing back at the
 * real home (npm's `npm_config_*` when run by `npm test`, XDG or cargo variables).
 * rustup's toolchains are read where they are (reading is allowed in the sandbox).
 */
function envFor(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^npm_/i.test(k) || /^XDG_/.test(k) || k === 'CARGO_HOME') continue;
    env[k] = v;
  }
  env.HOME = home;
  env.RUSTUP_HOME = process.env.RUSTUP_HOME ?? join(homedir(), '.rustup');
  return env;
}

const exitCode = (text: string) => Number(/^Exit Code: (\S+)/m.exec(text)?.[1]);

/** Each write a job could leave for later, and how to tell it happened. */
const PLANTS: Array<{ name: string; command: string; planted: (home: string) => boolean }> = [
  {
    name: 'an executable in ~/.cargo/bin (on the PATH)',
    command: `printf '#!/bin/sh\\necho planted\\n' > ~/.cargo/bin/x && chmod +x ~/.cargo/bin/x`,
    planted: (h) => existsSync(join(h, '.cargo/bin/x')),
  },
  {
    name: 'a line appended to ~/.cargo/env (sourced by .profile)',
    command: `echo 'echo planted' >> ~/.cargo/env`,
    planted: (h) => readFileSync(join(h, '.cargo/env'), 'utf8').includes('planted'),
  },
  {
    name: 'a line appended to ~/.profile',
    command: `echo 'echo planted' >> ~/.profile`,
    planted: (h) => readFileSync(join(h, '.profile'), 'utf8').includes('planted'),
  },
  {
    name: 'a line appended to ~/.bashrc',
    command: `echo 'echo planted' >> ~/.bashrc`,
    planted: (h) => readFileSync(join(h, '.bashrc'), 'utf8').includes('planted'),
  },
  {
    name: 'an executable in ~/.local/bin',
    command: `echo 'echo planted' > ~/.local/bin/x`,
    planted: (h) => existsSync(join(h, '.local/bin/x')),
  },
  {
    name: "a crate's source in the user's ~/.cargo/registry (compiled by the next unconfined build)",
    command: `mkdir -p ~/.cargo/registry/src/x && echo 'compile_error!("planted");' > ~/.cargo/registry/src/x/lib.rs`,
    planted: (h) => existsSync(join(h, '.cargo/registry/src/x')),
  },
  {
    name: "a package in the user's ~/.npm/_npx (run by npx)",
    command: `mkdir -p ~/.npm/_npx/x`,
    planted: (h) => existsSync(join(h, '.npm/_npx/x')),
  },
  {
    name: "an entry in the user's ~/.npm/_cacache",
    command: `echo x > ~/.npm/_cacache/x`,
    planted: (h) => existsSync(join(h, '.npm/_cacache/x')),
  },
  {
    name: "a file in the user's ~/.cache (pip's wheels)",
    command: `echo x > ~/.cache/pip/x`,
    planted: (h) => existsSync(join(h, '.cache/pip/x')),
  },
  {
    name: 'a git alias in ~/.gitconfig (run by git)',
    command: `printf '[alias]\\n\\tst = !echo planted\\n' >> ~/.gitconfig`,
    planted: (h) => readFileSync(join(h, '.gitconfig'), 'utf8').includes('planted'),
  },
  {
    name: 'a node option in ~/.npmrc (run by every npm script)',
    command: `echo 'node-options=--require=/x/planted.js' >> ~/.npmrc`,
    planted: (h) => readFileSync(join(h, '.npmrc'), 'utf8').includes('planted'),
  },
  {
    name: 'a systemd user unit',
    command: `printf '[Service]\\nExecStart=/bin/echo planted\\n' > ~/.config/systemd/user/x.service`,
    planted: (h) => existsSync(join(h, '.config/systemd/user/x.service')),
  },
];

let base: string;
beforeAll(() => {
  if (unavailable) return;
  ensureBuilt();
  // Not under /tmp, which sandboxed jobs may write (docs/sandbox.md says why).
  const parent = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  base = realpathSync(mkdtempSync(join(parent, 'nss-caches-')));
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe.skipIf(unavailable !== null)("the extension's default sandbox", () => {
  it('--sandbox-caches opens one directory, and points the package managers there', () => {
    const caches = sandboxCaches({ XDG_CACHE_HOME: '/c' }, '/h');
    expect(caches.root).toBe('/c/native-shell-service/sandbox-caches');
    expect(sandboxCaches({}, '/h').root).toBe('/h/.cache/native-shell-service/sandbox-caches');
    const flags = new Map(EXTENSION_FLAGS.map((f) => [f.slice(2), ['true']]));
    expect(sandboxFromFlags(flags, caches)).toEqual({ write: [caches.root], network: true });
    // Every variable points inside that directory.
    for (const dir of Object.values(caches.env)) expect(dir.startsWith(`${caches.root}/`)).toBe(true);
  });

  it('a cache directory that cannot be made stops the server with a message naming the flag', () => {
    const file = join(base, 'a-file');
    writeFileSync(file, '');
    const r = spawnSync(process.execPath, [BIN, 'mcp', '--sandbox-caches'], {
      env: { ...envFor(join(base, 'no-home')), XDG_CACHE_HOME: join(file, 'cache') },
      input: '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`--sandbox-caches: cannot make ${join(file, 'cache')}`);
    expect(r.stderr).toContain('(ENOTDIR)');
  });

  it('the flags tested are the manifest’s', () => {
    expect(EXTENSION_FLAGS).toEqual(['--sandbox', '--sandbox-network', '--sandbox-caches']);
    expect(manifestArgs.slice(manifestArgs.indexOf('mcp') + 1)).toEqual(['--daemon', ...EXTENSION_FLAGS]);
  });

  it('nothing that runs later outside the sandbox can be written (unconfined: all of it can)', async () => {
    const plainHome = makeHome(join(base, 'plain'));
    const boxedHome = makeHome(join(base, 'boxed'));
    const plain = await connect([], envFor(plainHome));
    const boxed = await connect(EXTENSION_FLAGS, envFor(boxedHome));
    try {
      for (const p of PLANTS) {
        const control = await plain.call('run_shell_command', { command: p.command });
        expect(exitCode(control.text), `unconfined: ${p.name}\n${control.text}`).toBe(0);
        expect(p.planted(plainHome), `unconfined: ${p.name}`).toBe(true);

        const refused = await boxed.call('run_shell_command', { command: p.command });
        expect(refused.text).toContain('Sandbox: on');
        expect(exitCode(refused.text), `sandboxed: ${p.name}\n${refused.text}`).not.toBe(0);
        expect(p.planted(boxedHome), `sandboxed: ${p.name}`).toBe(false);
      }
      // The refused home is as it was made.
      expect(readFileSync(join(boxedHome, '.cargo/env'), 'utf8')).toBe('export PATH="$HOME/.cargo/bin:$PATH"\n');
      expect(readdirSync(join(boxedHome, '.cargo/bin'))).toEqual([]);
    } finally {
      await plain.cleanup();
      await boxed.cleanup();
    }
  }, 120_000);

  // Network, a registry package each; minutes when both cores are busy compiling.
  it.skipIf(cannotBuild !== null)('npm install, cargo build and pip install with a registry dependency work, in caches of the sandbox’s own', async () => {
    const home = makeHome(join(base, 'build'));
    const session = await connect(EXTENSION_FLAGS, envFor(home));
    const caches = join(home, '.cache', 'native-shell-service', 'sandbox-caches');
    try {
      const npm = await session.call('run_shell_command', {
        command: `npm init -y >/dev/null && npm install --no-audit --no-fund is-number@7.0.0 && node -p "require('is-number')(5)"`,
        ai_callback_delay: 600,
      });
      expect(npm.text).toContain('Sandbox: on');
      expect(exitCode(npm.text), npm.text).toBe(0);
      expect(npm.text).toContain('true');
      expect(existsSync(join(session.root, 'node_modules', 'is-number', 'package.json'))).toBe(true);

      const app = join(session.root, 'app');
      mkdirSync(join(app, 'src'), { recursive: true });
      writeFileSync(
        join(app, 'Cargo.toml'),
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nitoa = "1"\n',
      );
      writeFileSync(join(app, 'src', 'main.rs'), 'fn main() {\n    println!("itoa says {}", itoa::Buffer::new().format(12345));\n}\n');
      const cargo = await session.call('run_shell_command', {
        command: 'cargo build --quiet && ./target/debug/app',
        directory: 'app',
        ai_callback_delay: 600,
      });
      expect(exitCode(cargo.text), cargo.text).toBe(0);
      expect(cargo.text).toContain('itoa says 12345');

      const pip = await session.call('run_shell_command', {
        command: 'python3 -m venv .venv && .venv/bin/pip install --disable-pip-version-check six==1.17.0 && .venv/bin/python -c "import six; print(six.__version__)" && .venv/bin/pip cache dir',
        ai_callback_delay: 600,
      });
      expect(exitCode(pip.text), pip.text).toBe(0);
      expect(pip.text).toContain('1.17.0');
      // pip may find its wheel without a download (PIP_FIND_LINKS): ask it where its cache is.
      expect(pip.text).toContain(join(caches, 'xdg', 'pip'));

      // What they downloaded is in the sandbox's caches; the user's are as they were.
      expect(readdirSync(join(caches, 'npm', '_cacache')).length).toBeGreaterThan(0);
      expect(readdirSync(join(caches, 'cargo', 'registry')).length).toBeGreaterThan(0);
      expect(readdirSync(join(home, '.cache', 'pip'))).toEqual([]);
      expect(readdirSync(join(home, '.npm', '_cacache'))).toEqual([]);
      expect(readdirSync(join(home, '.cargo', 'registry', 'src'))).toEqual([]);
      expect(readdirSync(join(home, '.cargo', 'bin'))).toEqual([]);
    } finally {
      await session.cleanup();
    }
  }, 900_000);
});
