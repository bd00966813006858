// index.d.ts as a TypeScript user meets it: the status enums are values too
// (`JobStatus.TimedOut`), declared by src/binding/typings-header.d.ts and checked here
// against the generated unions and the loader's objects; and a strict consumer compiles
// against the package under each module resolution a project may use (node16, bundler,
// and node10, which reads `typesVersions` instead of `exports`).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureBuilt } from './mcp/setup';
import { addon } from './helpers';

const ROOT = resolve(__dirname, '..');
const dts = readFileSync(join(ROOT, 'index.d.ts'), 'utf8');
const ENUMS = ['JobStatus', 'RunStatus', 'WaitStatus', 'JobMode', 'CommandDecision'];

/** The object `export declare const <name>: { readonly K: 'v' ... }` declares. */
function declaredObject(name: string): Record<string, string> | null {
  const m = dts.match(new RegExp(`^export declare const ${name}: \\{\\n([^}]*)\\}`, 'm'));
  if (!m) return null;
  return Object.fromEntries([...(m[1] as string).matchAll(/readonly (\w+): '([^']*)'/g)].map((e) => [e[1], e[2]]));
}

/** The members of `export type <name> = 'a' | 'b'`. */
function union(name: string): string[] {
  const m = dts.match(new RegExp(`^export type ${name} = ([^\\n]*)$`, 'm'));
  return m ? [...(m[1] as string).matchAll(/'([^']*)'/g)].map((e) => e[1] as string) : [];
}

describe('the status enums as values', () => {
  for (const name of ENUMS) {
    it(`${name}: declared as the object the loader exports, with the union's values`, () => {
      const runtime = (addon as unknown as Record<string, Record<string, string>>)[name];
      expect(declaredObject(name)).toEqual({ ...runtime });
      expect(Object.values(runtime).sort()).toEqual(union(name).sort());
    });
  }
});

const CONSUMER = `
import { CommandDecision, JobMode, JobStatus, RunStatus, ShellExecutionService, WaitStatus, type RunResult } from 'native-shell-service';
import { createShellTools, DECLARATIONS } from 'native-shell-service/tools';
import { GEMINI_CLI_IDENTIFICATION_ENV_VAR } from 'native-shell-service/gemini-compat';

export function ended(r: RunResult): boolean {
  // Both forms: the object's member and the literal.
  return r.status === RunStatus.TimedOut || r.status === 'exited' || r.status === RunStatus.Killed;
}
const job: JobStatus = JobStatus.TimedOut;
const wait: WaitStatus = WaitStatus.AwaitingInput;
const mode: JobMode = JobMode.Pipes;
const decision: CommandDecision = CommandDecision.Ask;
const literal: JobStatus = 'timed_out';
// @ts-expect-error: not a JobStatus
const wrong: JobStatus = 'timedout';
export const all = [job, wait, mode, decision, literal, wrong, DECLARATIONS.length, GEMINI_CLI_IDENTIFICATION_ENV_VAR] as const;
export type Tools = ReturnType<typeof createShellTools>;
export const make = (projectRoot: string) => new ShellExecutionService({ projectRoot });
`;

const RESOLUTIONS: Array<[string, Record<string, string>]> = [
  ['node16', { module: 'node16', moduleResolution: 'node16' }],
  ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ['node10', { module: 'commonjs', moduleResolution: 'node10' }],
];

describe('a strict TypeScript consumer', () => {
  let base: string;
  beforeAll(() => {
    ensureBuilt();
    base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-typings-')));
    mkdirSync(join(base, 'node_modules'));
    symlinkSync(ROOT, join(base, 'node_modules', 'native-shell-service'), process.platform === 'win32' ? 'junction' : 'dir');
    writeFileSync(join(base, 'consumer.ts'), CONSUMER);
  }, 120_000);
  afterAll(() => base && rmSync(base, { recursive: true, force: true }));

  for (const [name, options] of RESOLUTIONS) {
    it(`compiles under moduleResolution ${name}`, () => {
      const config = {
        compilerOptions: {
          ...options,
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          // The package seen where it is installed, inside node_modules (not this checkout):
          // under node10 its own declarations find it there by name.
          preserveSymlinks: true,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['consumer.ts'],
      };
      writeFileSync(join(base, `tsconfig.${name}.json`), JSON.stringify(config));
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      let out = '';
      try {
        execFileSync(process.execPath, [tsc, '-p', join(base, `tsconfig.${name}.json`)], { cwd: base, encoding: 'utf8' });
      } catch (e) {
        out = `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`;
      }
      expect(out).toBe('');
    }, 120_000);
  }
});
