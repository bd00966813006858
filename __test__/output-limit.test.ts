// `maxOutputSize` bounds what a result returns, its marker included: every text of a
// result (`output`, `stdout`, `stderr`, `sendInput`'s `output`) fits in it, in bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Scratch, scratch } from './helpers';

let s: Scratch;
beforeAll(() => {
  s = scratch();
});
afterAll(() => s.cleanup());

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
// 30,000 numbered lines, and some multi-byte characters.
const FLOOD = `python3 -c "import sys\nfor i in range(30000): sys.stdout.write('line %06d é€\\n' % i)"`;

describe('maxOutputSize', () => {
  for (const mode of ['pty', 'pipes'] as const) {
    it(`holds the excerpt and its marker (${mode})`, async () => {
      for (const max of [16384, 4096, 300, 64]) {
        const r = await s.service.run(FLOOD, { mode, maxOutputSize: max });
        expect(r.exitCode).toBe(0);
        expect(r.truncated).toBe(true);
        for (const text of [r.output, r.stdout, r.stderr]) expect(bytes(text), `${max}: ${text.slice(0, 200)}`).toBeLessThanOrEqual(max);
        if (max < 300) continue; // too small for a whole line beside the marker
        expect(r.output).toMatch(/\[\.\.\. \d+ bytes omitted; the full output is in .*stdout\.txt \.\.\.\]\n/);
        expect(r.output.endsWith('line 029999 é€\n'), r.output.slice(-100)).toBe(true);
      }
    }, 120_000);
  }

  it('holds for a wait and for getResult', async () => {
    const job = await s.service.run('python3 -q', { callbackPattern: '>>> ' });
    const answer = await s.service.sendInput(job.handle, "print('x' * 50000)", { pattern: '>>> ', maxOutputSize: 1000 });
    expect(answer.truncated).toBe(true);
    expect(bytes(answer.output)).toBeLessThanOrEqual(1000);
    expect(bytes(s.service.getResult(job.handle, { maxOutputSize: 500 }).output)).toBeLessThanOrEqual(500);
    await s.service.kill(job.handle);
  }, 60_000);
});
