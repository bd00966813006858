// __test__/capabilities.ts names real files, and leaves out only what this machine lacks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { containment, met, type Need, NEEDS, unmet, why } from '../capabilities';
import { ShellExecutionService } from '../helpers';

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
    if (process.platform === 'linux' && met('program:gdb') && met('landlock:1')) expect(left.filter((l) => !l.file.includes('stress/'))).toEqual([]);
  });

  it('says why for every need a single test is gated on', () => {
    for (const need of ['root', 'userns', 'escapes-held', 'sandbox', 'landlock:99'] as Need[]) expect(why(need).length, need).toBeGreaterThan(40);
    expect(why('landlock:99')).toContain('ABI 99');
    expect(why('escapes-held')).toContain(`'${containment()}'`);
  });

  // The probe decides which tests run: it must say what a job's processes get. 'cgroup'
  // exactly when a job's process is in a cgroup the service made for it.
  it.skipIf(process.platform !== 'linux')("the containment probe agrees with a job's /proc/<pid>/cgroup", async () => {
    const s = new ShellExecutionService({ persistOutput: false });
    try {
      const r = await s.run('sleep 60', { mode: 'pipes', callbackDelayMs: 0 });
      const own = readFileSync(`/proc/${r.pid}/cgroup`, 'utf8');
      expect(/^0::.*\/native-shell-/m.test(own), own).toBe(containment() === 'cgroup');
    } finally {
      await s.shutdown();
    }
  });
});
