// `node scripts/bundle.mjs` (run by `npm run build:ts`): the command, its MCP server and
// everything they import, the MCP SDK included, as one CommonJS file,
// dist/native-shell-service.cjs, made by esbuild. The package's bin and the Gemini CLI
// extension run that file, so the published package has no runtime dependency but its
// platform binary (docs/releasing.md says why this over an optional peer dependency).
//
// The addon is not in the bundle: contract/addon.ts loads the package's index.js (the
// generated loader) at run time, from the folder holding the package.json.
//
// Beside it, dist/THIRD_PARTY_LICENSES.txt: the license of every package the bundle holds
// code of, as their licenses ask when their code is redistributed.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = join(ROOT, 'dist', 'native-shell-service.cjs');
const NOTICES = join(ROOT, 'dist', 'THIRD_PARTY_LICENSES.txt');

/** The package folders (under node_modules) that the bundle's inputs come from. */
function bundledPackages(metafile) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const m = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
    if (m) dirs.add(m[1]);
  }
  return [...dirs].sort();
}

function notices(dirs) {
  const parts = [];
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
    const file = readdirSync(join(ROOT, dir)).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    if (!file) throw new Error(`${pkg.name}@${pkg.version} is bundled but ships no license file`);
    const text = readFileSync(join(ROOT, dir, file), 'utf8').trim();
    parts.push(`${pkg.name}@${pkg.version} (${pkg.license})\n${'='.repeat(60)}\n${text}\n`);
  }
  return `dist/native-shell-service.cjs holds code of these packages, under their licenses:\n\n${parts.join('\n')}`;
}

async function main() {
  if (!existsSync(join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk'))) {
    throw new Error('the MCP SDK is missing: run `npm install` (it is a devDependency, bundled here)');
  }
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['tools/main.ts'],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // Readable: stack traces of a bug report point at real names and lines.
    minify: false,
    legalComments: 'inline',
    metafile: true,
    logLevel: 'warning',
    banner: { js: '// native-shell-service: the command and its MCP server, bundled (scripts/bundle.mjs).' },
  });
  writeFileSync(NOTICES, notices(bundledPackages(result.metafile)));
}

main().catch((e) => {
  console.error(`bundle: ${e.message}`);
  process.exit(1);
});
