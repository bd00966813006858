// The generated loader (index.js, its message from scripts/loader-error.mjs) when no
// binary loads: it names this system and the platforms that have a package, says what to
// do, and lists no WASI build (there is none).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
// The loader alone in a folder: no addon beside it, no platform package to find.
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nss-loader-')));
copyFileSync(join(ROOT, 'index.js'), join(dir, 'index.js'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error loading the lone loader throws, with `prelude` run first; its causes too. */
function loadError(prelude = ''): { message: string; code: string; causes: string[] } {
  const script = `${prelude}
    try { require(${JSON.stringify(join(dir, 'index.js'))}); console.log('{}') } catch (e) {
      const causes = []; for (let c = e.cause; c; c = c.cause) causes.push(c.message);
      console.log(JSON.stringify({ message: e.message, code: e.code, causes }));
    }`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  return JSON.parse(r.stdout);
}

const supported = ['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc'];

describe('the loader without a binary', () => {
  it('on a supported system: names its package and the fix; no WASI', () => {
    const e = loadError("Object.defineProperty(process, 'platform', { value: 'darwin' }); Object.defineProperty(process, 'arch', { value: 'arm64' });");
    expect(e.code).toBe('ERR_NATIVE_BINDING_NOT_FOUND');
    expect(e.message).toContain('(darwin-arm64)');
    expect(e.message).toContain(`${pkg.name}-darwin-arm64 is missing`);
    expect(e.message).toContain('--omit=optional');
    expect([e.message, ...e.causes].join('\n')).not.toMatch(/wasi|wasm|npm has a bug/i);
    expect(e.causes.join('\n')).toContain(`${pkg.name}-darwin-arm64`);
  });

  it('on another system: names the supported platforms', () => {
    const e = loadError("Object.defineProperty(process, 'platform', { value: 'freebsd' }); Object.defineProperty(process, 'arch', { value: 'riscv64' });");
    expect(e.code).toBe('ERR_NATIVE_BINDING_NOT_FOUND');
    expect(e.message).toContain('no binary for this system (freebsd-riscv64)');
    expect(e.message).toContain(`Prebuilt packages exist for: ${supported.join(', ')}`);
    expect(e.message).not.toMatch(/wasi|npm has a bug/i);
  });

  it('lists the targets package.json builds', () => {
    expect(pkg.napi.targets).toHaveLength(supported.length);
    for (const name of supported) expect(Object.keys(pkg.optionalDependencies)).toContain(`${pkg.name}-${name}`);
  });
});
