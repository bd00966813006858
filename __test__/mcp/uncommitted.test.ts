// `uncommitted`: which of a running terminal job's latest lines are not in its committed
// text yet (tools/mcp/job-files.ts); the real reads are in data.test.ts.
import { describe, expect, it } from 'vitest';

import { uncommitted } from '../../tools/mcp/job-files';

describe('uncommitted', () => {
  it('is what follows the committed end', () => {
    expect(uncommitted('a\nb\nc\nprompt> ', 'x\na\nb\n')).toBe('c\nprompt> ');
    expect(uncommitted('b\nc\n', 'a\nb\nc\n')).toBe('');
    expect(uncommitted('banner\n', '')).toBe('banner\n');
  });
  it('takes all of it when nothing matches, and ends on a newline at the start', () => {
    expect(uncommitted('new\nlines\n', 'old\n')).toBe('new\nlines\n');
    expect(uncommitted('\nz', '\n')).toBe('z');
  });
  it('keeps the longest match for repeated lines (the repeats are final already)', () => {
    expect(uncommitted('y\ny\ny\n', 'y\ny\ny\ny\n')).toBe('');
  });
});
