// scripts/check-cycles.mjs: fails naming the cycle, for Rust modules and TypeScript
// files, and passes on this repository.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-cycles.mjs');

let made: string[] = [];
afterEach(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made = [];
});

/** A repository of these files (path → text); returns the script's exit code and output. */
function check(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'nss-cycles-'));
  made.push(dir);
  for (const [path, text] of Object.entries({ 'src/lib.rs': '', ...files })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8' });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('check-cycles', () => {
  it('passes on this repository', () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('names a Rust cycle through `crate::` and `super::` paths, a `use` group included', () => {
    const r = check({
      'src/lib.rs': 'mod a;\nmod b;\n',
      'src/a.rs': 'use crate::{b::{self, Thing as Other}, x};\npub struct A;\n',
      'src/b.rs': '// use crate::nothing;\nfn f() -> super::a::A { todo!() }\npub struct Thing;\n',
    });
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/Rust import cycle among 2 modules: crate::a \(src\/a\.rs\), crate::b \(src\/b\.rs\)/);
    expect(r.output).toContain('(src/a.rs:1)');
    expect(r.output).toContain('(src/b.rs:2)');
  });

  it('follows mod.rs, #[path] and inline modules, and ignores comments, strings and a parent using its child', () => {
    const r = check({
      'src/lib.rs': 'mod job;\n#[path = "other/place.rs"]\nmod placed;\n',
      'src/job/mod.rs': 'mod input;\nuse input::Input;\nconst S: &str = "crate::placed::X";\n/* crate::placed */\n',
      'src/job/input.rs': 'use super::Job;\nuse crate::placed::P;\n',
      'src/other/place.rs': 'pub struct P;\nmod tests {\n    use super::super::job::input::Input;\n}\n',
    });
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/crate::job::input \(src\/job\/input\.rs\), crate::placed \(src\/other\/place\.rs\)/);
    expect(r.output).not.toMatch(/S: &str/);
  });

  it('passes a crate whose arrows point one way', () => {
    const r = check({
      'src/lib.rs': 'mod a;\nmod b;\nmod c;\n',
      'src/a.rs': 'use crate::b::B;\nuse crate::c::C;\n',
      'src/b.rs': 'use crate::c::C;\npub struct B;\n',
      'src/c.rs': "pub struct C;\nfn f<'a>(x: &'a str) -> char { '\"' }\n",
    });
    expect(r.output).toContain('no import cycles');
    expect(r.status).toBe(0);
  });

  it('names a TypeScript cycle across directories, type-only imports and re-exports included', () => {
    const r = check({
      'tools/a.ts': "import type { B } from '../contract/b.js';\nexport type A = B;\n",
      'contract/b.ts': "export { c } from './c';\nexport type B = string;\n",
      'contract/c.ts': "// import './nothing.js';\nconst a = require('../tools/a.js');\nexport const c = a;\n",
    });
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/TypeScript import cycle among 3 modules: contract\/b\.ts, contract\/c\.ts, tools\/a\.ts/);
  });
});
