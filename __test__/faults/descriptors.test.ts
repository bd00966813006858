// Out of file descriptors: a start that cannot get them is SPAWN_FAILED, never a crash,
// and the service works again once jobs are freed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('ulimit -n 64', () => {
  it('starts until SPAWN_FAILED, then recovers once the jobs are killed', () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-fds-')));
    try {
      const script = resolve(__dirname, 'fixtures/few-descriptors.cjs');
      const addon = resolve(__dirname, '../../index.js');
      const out = execFileSync('bash', ['-c', 'ulimit -n 64 && exec "$0" "$@"', process.execPath, script, addon, base], {
        encoding: 'utf8',
        timeout: 300_000,
      });
      const report = JSON.parse(out) as { started: number; refusal: string; after: string; output: string };
      expect(report.started).toBeGreaterThan(0);
      expect(report.refusal).toBe('SPAWN_FAILED');
      expect(report).toMatchObject({ after: 'exited', output: 'recovered' });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
