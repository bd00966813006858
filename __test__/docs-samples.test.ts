// Every command and code sample in README.md and docs/*.md (fenced `ts`, `js`, `sh`,
// `bash`, `console` blocks) runs here as a reader would paste it, or is in NOT_RUN with
// the reason it cannot run on this machine. A new sample fails the first test until it
// is one or the other; an entry of NOT_RUN whose sample is gone fails it too.
//
// How a sample runs: TypeScript is stripped of its types (esbuild, no type check) and run
// by Node as a module, in a fresh project directory (a git repository) with a scratch
// HOME; `native-shell-service` resolves to this checkout, built. Before that, all of them
// are compiled by tsc (strict, as a user's `nodenext` project would): a missing import or
// a wrong name fails there even in a branch the run does not take. Shell samples run in
// bash with `set -e`. One substitution, because the package is not installed from the
// registry here: `npx [-y] native-shell-service ...` runs this checkout's own command
// (bin/native-shell-service.js, what the published package's bin is). And two checks of
// what a sample says besides running it: a `console.log(...); // "text"` comment must be
// in what it printed, and a trailing `// { ... }` comment block is the value of the
// sample's last statement.
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, ensureBuilt, ROOT } from './mcp/setup';

interface Sample {
  /** `README.md` or `docs/x.md`. */
  file: string;
  line: number;
  lang: string;
  code: string;
  /** What NOT_RUN knows it by: the file and the sample's first line. */
  key: string;
}

const LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'sh', 'bash', 'shell', 'console']);
/** Configuration samples: not run, but each must parse. */
const CONFIG_LANGS = new Set(['json', 'toml']);

/** The fenced blocks of the languages given, list items' indented ones included. */
function samplesOf(file: string, langs = LANGS): Sample[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const out: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[i] as string);
    if (!open) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j] as string).trimStart().startsWith(fence); j++) {
      body.push((lines[j] as string).startsWith(indent) ? (lines[j] as string).slice(indent.length) : (lines[j] as string));
    }
    if (langs.has(lang)) {
      const code = body.join('\n');
      out.push({ file, line: i + 1, lang, code, key: `${file}: ${body.find((l) => l.trim() !== '')?.trim() ?? ''}` });
    }
    i = j;
  }
  return out;
}

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const SAMPLES = DOCS.flatMap((f) => samplesOf(f));
const CONFIGS = DOCS.flatMap((f) => samplesOf(f, CONFIG_LANGS));

/** Samples that cannot run here, by file and first line, with why. */
const NOT_RUN: Record<string, string> = {
  'README.md: npm install && npm run build && npm run demo':
    'the set-up this suite itself stands on (it tests the built checkout); `npm run demo` rebuilds dist/ under the other test files, and the demo itself runs here as docs/mcp.md\'s `npx native-shell-service demo`',
  'README.md: npm install && npm test': 'the whole suite, of which this file is a part',
  'README.md: npm run test:stress                     # reduced size, about 3 minutes':
    'the torture suite: minutes of both cores; `.ci/run` runs it',
  'README.md: cargo install cargo-fuzz': 'fuzzing: installs cargo-fuzz and runs each target for 10 minutes',
  'docs/policy.md: cargo install cargo-fuzz': 'fuzzing: installs cargo-fuzz and runs the target for 10 minutes',
  'docs/reliability.md: cargo install cargo-fuzz': 'fuzzing: installs cargo-fuzz and runs the target for 10 minutes',
  'docs/macos.md: rustup target add aarch64-apple-darwin x86_64-apple-darwin':
    'cross builds for macOS (rustup targets, zig from PyPI), minutes of both cores; `.ci/run` runs the same clippy and builds (npm run build:all)',
  'docs/windows.md: npm run test:windows              # everything above':
    'the Windows build under Wine (installs MinGW and Wine; many minutes); `.ci/run` runs it',
  'docs/mcp.md: # a release: the archive for your platform, from the GitHub release':
    'installs into the user\'s Gemini CLI from GitHub; __test__/mcp/gemini-extension.test.ts runs `gemini extensions link` and __test__/mcp/extension-archive.test.ts `gemini extensions install <dir>` of a built archive, each in a scratch HOME',
  'docs/mcp.md: claude mcp add shell -- npx -y native-shell-service mcp':
    'Claude Code is not installed here, and the command changes the user\'s Claude Code settings',
  "docs/tools.md: import * as core from '@google/gemini-cli-core';":
    'a fragment of the Gemini CLI\'s own start-up (`config`, `toolRegistry` are the CLI\'s); __test__/tools/gemini-cli.test.ts registers the tools with the real 0.61 classes',
  'docs/releasing.md: npm run build && npm run artifacts':
    'a build of this checkout (minutes) that changes its npm/; __test__/scripts/platform-pack.test.ts runs the same flow and `npm pack --dry-run` on a copy',
  'docs/gemini-compat.md: ShellExecutionService.configure({ daemon: false }); // every job in process; `true`: every job in the daemon':
    'a line of the Gemini CLI\'s own start-up; __test__/compat/daemon.test.ts runs the drop-in in each placement (daemon, in process, the default)',
  "docs/gemini-compat.md: // before": 'an edit to the Gemini CLI\'s own source files (the import it replaces is theirs)',
  'docs/mcp.md: head -c 32 /dev/urandom | base64 > ~/.config/shell.token && chmod 600 ~/.config/shell.token':
    'a daemon on a fixed port serving in the foreground until stopped; __test__/remote/mcp-http.test.ts runs the same command (its own port, socket and token) and drives /mcp with the SDK client',
  "docs/daemon.md: import { ShellExecutionService } from 'native-shell-service';":
    'needs a daemon listening on port 49983 with that token; __test__/remote/tcp-client.test.ts starts one and runs this client against it',
  "docs/remote.md: # As a sandbox pod's process server (deploy/): every address, a token required.":
    'daemons serving in the foreground until stopped, on fixed ports; __test__/remote/ starts the same commands on their own ports, sockets and tokens (and deploy.test.ts checks the image runs the first)',
  "docs/remote.md: import { Sandbox, CommandExitError } from 'e2b';":
    'needs a daemon listening on 127.0.0.1:49983; __test__/remote/e2b-sdk.test.ts runs these calls with the real SDK against one on a port of its own',
  "docs/remote.md: import { Sandbox } from 'e2b';":
    'needs the pod\'s daemon on 127.0.0.1:49983 and its token; __test__/remote/e2b-sdk.test.ts makes the same constructor call with the real SDK against a token-protected daemon of its own, and scripts/test-pod.sh against the image',
  "docs/remote.md: const service = new ShellExecutionService({ daemon: { url: 'http://127.0.0.1:49983', token } });":
    'needs a daemon listening on port 49983 and its token; __test__/remote/tcp-client.test.ts runs this client against one',
};

/** Samples that continue an earlier one: what they take from it, put before them. */
const CONTINUES: Record<string, string> = {
  // Step 3 of "Switching the Gemini CLI over" uses the import step 2 made.
  "docs/gemini-compat.md: import { ExecutionLifecycleService } from '@google/gemini-cli-core';":
    "import { ShellExecutionService } from 'native-shell-service/gemini-compat';\n",
};

/**
 * The value a trailing `// { ... }` comment documents, and the code with its last
 * statement (the last line that starts a statement at column 0) captured.
 */
function documentedValue(code: string): { code: string; value: unknown } | null {
  const lines = code.trimEnd().split('\n');
  let end = lines.length - 1;
  if (lines[end] !== '// }') return null;
  let start = end;
  while (start > 0 && lines[start] !== '// {') start--;
  if (lines[start] !== '// {') return null;
  const literal = lines.slice(start, end + 1).map((l) => l.replace(/^\/\/ ?/, '')).join('\n');
  const value = new Function(`return (${literal});`)() as unknown;
  let last = start - 1;
  while (last >= 0 && !/^[A-Za-z_$]/.test(lines[last] as string)) last--;
  if (last < 0 || /^(import|const|let|var|await)\b/.test(lines[last] as string)) return null;
  lines[last] = `globalThis.__documented = ${lines[last]}`;
  end = start;
  return { code: `${lines.slice(0, end).join('\n')}\nconsole.log('\\n__DOCUMENTED__' + JSON.stringify(globalThis.__documented));\n`, value };
}

let base: string;
let env: Record<string, string>;
let n = 0;

beforeAll(() => {
  ensureBuilt();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-docs-samples-')));
  // Samples import `native-shell-service` (this checkout, its exports as published) and
  // the MCP SDK, as an installed package's user would.
  mkdirSync(join(base, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  symlinkSync(ROOT, join(base, 'node_modules', 'native-shell-service'));
  symlinkSync(join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk'), join(base, 'node_modules', '@modelcontextprotocol', 'sdk'));
  mkdirSync(join(base, 'node_modules', '@google'));
  symlinkSync(join(ROOT, 'node_modules', '@google', 'gemini-cli-core'), join(base, 'node_modules', '@google', 'gemini-cli-core'));
  symlinkSync(join(ROOT, 'node_modules', '@types'), join(base, 'node_modules', '@types'));
  mkdirSync(join(base, 'home'));
  env = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^npm_/i.test(k)) env[k] = v;
  env.HOME = join(base, 'home');
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

/** A project of its own for one sample: a git repository with a README. */
function project(): string {
  const dir = join(base, `project-${++n}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'README.md'), '# demo\n');
  return dir;
}

function run(file: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Generous: the demo and the MCP sample start servers; both cores may be busy.
    execFile(file, args, { cwd, env, timeout: 240_000, maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: unknown }).code as number | null) ?? 1 : 0, stdout, stderr });
    });
  });
}

/** `npx [-y] native-shell-service` → this checkout's command (see the top). */
const NPX_SHELL = `npx() {
  [ "\${1:-}" = -y ] && shift
  if [ "\${1:-}" = native-shell-service ]; then shift; node ${JSON.stringify(BIN)} "$@"; else command npx "$@"; fi
}
`;
const npxInTs = (code: string) =>
  code.replace(/command: 'npx', args: \['-y', 'native-shell-service', /g, `command: process.execPath, args: [${JSON.stringify(BIN)}, `);

async function runSample(s: Sample): Promise<{ stdout: string; documented?: unknown }> {
  const cwd = project();
  await run('git', ['init', '-q'], cwd);
  if (s.lang === 'sh' || s.lang === 'bash' || s.lang === 'shell' || s.lang === 'console') {
    const script = `set -e\n${NPX_SHELL}${s.code.replace(/^\$ /gm, '')}\n`;
    const r = await run('bash', ['-c', script], cwd);
    expect(r.code, `${s.file}:${s.line} exited ${r.code}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return { stdout: r.stdout };
  }
  const documented = documentedValue(s.code);
  const source = (CONTINUES[s.key] ?? '') + npxInTs(documented?.code ?? s.code);
  const js = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20' }).code;
  const file = join(base, `sample-${++n}.mjs`);
  writeFileSync(file, js);
  const r = await run(process.execPath, [file], cwd);
  expect(r.code, `${s.file}:${s.line} exited ${r.code}\n${r.stdout}\n${r.stderr}`).toBe(0);
  if (!documented) return { stdout: r.stdout };
  const line = r.stdout.split('\n').find((l) => l.startsWith('__DOCUMENTED__'));
  return { stdout: r.stdout, documented: JSON.parse((line ?? '__DOCUMENTED__null').slice('__DOCUMENTED__'.length)) };
}

const posix = process.platform !== 'win32';
const isTs = (s: Sample) => s.lang === 'ts' || s.lang === 'typescript';

describe('the docs’ samples', () => {
  it('each runs below or is listed as not runnable here, with why', () => {
    expect(SAMPLES.length).toBeGreaterThan(10);
    const keys = new Set(SAMPLES.map((s) => s.key));
    // Two samples with one key would hide one behind the other's entry.
    expect(SAMPLES.filter((s, i) => SAMPLES.findIndex((t) => t.key === s.key) !== i).map((s) => s.key)).toEqual([]);
    expect(Object.keys(NOT_RUN).filter((k) => !keys.has(k)), 'NOT_RUN entries whose sample is gone').toEqual([]);
  });

  const runnable = SAMPLES.filter((s) => !(s.key in NOT_RUN));

  it('the JSON and TOML configuration samples parse', () => {
    expect(CONFIGS.length).toBeGreaterThan(3);
    for (const s of CONFIGS) {
      if (s.lang === 'json') {
        expect(() => JSON.parse(s.code), `${s.file}:${s.line}`).not.toThrow();
        continue;
      }
      // Python 3.11's tomllib: no TOML parser among this package's dependencies.
      const r = spawnSync('python3', ['-c', 'import sys, tomllib; tomllib.loads(sys.stdin.read())'], { input: s.code, encoding: 'utf8' });
      if (r.error || /No module named 'tomllib'/.test(r.stderr)) {
        console.log(`${s.file}:${s.line} not parsed: no Python 3.11 (tomllib) here`);
        continue;
      }
      expect(r.status, `${s.file}:${s.line}: ${r.stderr}`).toBe(0);
    }
  });

  it('the TypeScript samples compile (tsc, strict, nodenext)', () => {
    const dir = join(base, 'typecheck');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.mts'] }));
    const ts = runnable.filter(isTs);
    expect(ts.length).toBeGreaterThan(3);
    // Named after where each sample is, so an error points at the doc; `export {}` makes
    // each a module of its own (top-level await, no names shared between samples).
    for (const s of ts) writeFileSync(join(dir, `${s.file.replace(/\W/g, '_')}-line-${s.line}.mts`), `${CONTINUES[s.key] ?? ''}${s.code}\nexport {};\n`);
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', timeout: 240_000 });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  }, 300_000);
  it.skipIf(!posix).each(runnable.map((s) => [`${s.file}:${s.line} (${s.lang})`, s] as const))('%s runs', async (_name, s) => {
    const { stdout, documented } = await runSample(s);
    // `console.log(...); // "text"`: the text printed.
    for (const m of s.code.matchAll(/console\.log\(.*\);\s*\/\/\s*("(?:[^"\\]|\\.)*")/g)) {
      expect(stdout).toContain(JSON.parse(m[1] as string));
    }
    const doc = documentedValue(s.code);
    if (doc) expect(documented).toEqual(doc.value);
  }, 300_000);
});
