// Fails when a fresh `napi build` changed the committed index.js / index.d.ts:
// the generated loader and typings are part of the package and must be committed.
import { execFileSync } from 'node:child_process';

const files = ['index.js', 'index.d.ts'];
const status = execFileSync('git', ['status', '--porcelain', '--', ...files], { encoding: 'utf8' }).trim();
if (status) {
  const diff = execFileSync('git', ['diff', '--stat', '--', ...files], { encoding: 'utf8' });
  console.error(`The build changed generated files; commit them:\n${status}\n${diff}`);
  process.exit(1);
}
console.log('generated index.js and index.d.ts match the committed ones');
