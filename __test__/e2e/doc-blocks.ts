// The configurations docs/mcp.md gives each client, read from the page itself: a test
// that runs a client with them checks the page as a reader copies it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../mcp/setup';

/**
 * The fenced code blocks in `lang` of docs/mcp.md's section `heading` (a whole heading
 * line, e.g. `## Claude Code`), up to the next heading of the same or a higher level.
 */
export function docBlocks(heading: string, lang: string): string[] {
  const lines = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8').split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`docs/mcp.md has no heading ${JSON.stringify(heading)}`);
  const level = /^#+/.exec(heading)?.[0].length ?? 1;
  const blocks: string[] = [];
  // Inside a fence: its language and lines so far (a `# comment` there is no heading).
  let fence: { lang: string; lines: string[] } | null = null;
  for (const line of lines.slice(start + 1)) {
    if (fence === null) {
      if (new RegExp(`^#{1,${level}} `).test(line)) break;
      if (line.startsWith('```')) fence = { lang: line.slice(3).trim(), lines: [] };
    } else if (line === '```') {
      if (fence.lang === lang) blocks.push(fence.lines.join('\n'));
      fence = null;
    } else {
      fence.lines.push(line);
    }
  }
  return blocks;
}

/** The one block in `lang` of the section, checked to be the only one. */
export function docBlock(heading: string, lang: string, index = 0): string {
  const blocks = docBlocks(heading, lang);
  const block = blocks[index];
  if (block === undefined) throw new Error(`docs/mcp.md ${heading} has no ${lang} block ${index}`);
  return block;
}
