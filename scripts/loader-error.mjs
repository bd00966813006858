// `node scripts/loader-error.mjs` (run by `npm run build` after `napi build`): gives the
// generated loader (index.js) an error that says what is wrong when no binary loads.
//
// napi's loader says "Cannot find native binding. npm has a bug related to optional
// dependencies..." and its cause chain lists a WASI build this package does not make.
// napi has no option for that message, so this replaces that one statement: the error
// names this system, the platforms that have a prebuilt package (package.json's
// napi.targets) and what to do, and its causes leave out the WASI attempts. It fails when
// the statement is not found once, so a napi upgrade that changes it is noticed.
// scripts/check-generated.mjs then checks that the committed index.js is this output.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LOADER = join(ROOT, 'index.js');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

// The package suffixes of the Rust targets napi builds (as the loader asks for them).
const SUFFIX = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'x86_64-apple-darwin': 'darwin-x64',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
};

const NAPI_STATEMENT = `    const error = new Error(
      \`Cannot find native binding. \` +
        \`npm has a bug related to optional dependencies (https://github.com/npm/cli/issues/4828). \` +
        'Please try \`npm i\` again after removing both package-lock.json and node_modules directory.',
    )
    // assign instead of the \`new Error(message, { cause })\` options form,
    // which Node < 16.9 silently ignores
    error.cause = createLoadErrorChain(loadErrors)`;

const CONTRIBUTING = `${pkg.homepage.replace(/#.*$/, '')}/blob/main/CONTRIBUTING.md`;

function replacement(suffixes) {
  const list = JSON.stringify(suffixes);
  return `    // (scripts/loader-error.mjs) What is wrong and what to do; no WASI build exists.
    const supported = ${list}
    const system = process.platform + '-' + process.arch + (process.platform === 'linux' ? (isMusl() ? '-musl' : '-gnu') : process.platform === 'win32' ? '-msvc' : '')
    const error = new Error(
      supported.includes(system)
        ? \`${pkg.name}: the binary for this system (\${system}) did not load: its package ${pkg.name}-\${system} is missing or broken. It is an optional dependency: reinstall without --omit=optional (or --no-optional) and see the causes below.\`
        : \`${pkg.name}: no binary for this system (\${system}). Prebuilt packages exist for: \${supported.join(', ')}. Elsewhere, build it from source: ${CONTRIBUTING}.\`,
    )
    error.code = 'ERR_NATIVE_BINDING_NOT_FOUND'
    error.cause = createLoadErrorChain(loadErrors.filter((e) => !/wasi|wasm32/i.test(String(e && e.message))))`;
}

const suffixes = pkg.napi.targets.map((t) => {
  const s = SUFFIX[t];
  if (!s) throw new Error(`loader-error: no package suffix known for the target ${t}; add it to SUFFIX`);
  return s;
});
const text = readFileSync(LOADER, 'utf8');
const count = text.split(NAPI_STATEMENT).length - 1;
if (count !== 1) {
  if (text.includes('(scripts/loader-error.mjs)')) process.exit(0); // already replaced
  console.error(`loader-error: napi's load-failure statement occurs ${count} times in index.js, not once; update NAPI_STATEMENT`);
  process.exit(1);
}
writeFileSync(LOADER, text.replace(NAPI_STATEMENT, replacement(suffixes)));
