// __test__/capabilities.ts names real files, and leaves out only what this machine lacks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { met, NEEDS, unmet } from '../capabilities';

const TESTS = join(__dirname, '..');

describe('test capabilities', () => {
  it('lists only files that exist', () => {
    for (const file of Object.keys(NEEDS)) expect(existsSync(join(TESTS, file)), file).toBe(true);
  });

  it('lists every file that starts jobs', () => {
    const files = (readdirSync(TESTS, { recursive: true, encoding: 'utf8' }) as string[]).map((f) => f.split('\\').join('/')).filter((f) => f.endsWith('.test.ts'));
    // A file that runs a command through the service needs at least a POSIX shell.
    const running = files.filter((f) => f !== 'scripts/capabilities.test.ts' && /\.(run|start)\(|buildAndExecute|connect\(\)|geminiProject\(/.test(readFileSync(join(TESTS, f), 'utf8')));
    expect(running.filter((f) => !NEEDS[f]), 'add these to NEEDS in __test__/capabilities.ts').toEqual([]);
  });

  it('leaves out what this machine lacks, with a reason', () => {
    const left = unmet();
    for (const { file, reason } of left) {
      expect(reason.length, file).toBeGreaterThan(20);
    }
    if (process.platform === 'linux' && met('program:gdb')) expect(left.filter((l) => !l.file.includes('stress/'))).toEqual([]);
  });
});
