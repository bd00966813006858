// The tools say what the job's files lack (`persistError`) and never name a file that
// does not hold the whole output. The fault here: an ioDir where no folder can be made
// (a regular file stands at its path), so every job's files are missing.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { field, handleOf, type ToolScratch, toolScratch } from '../tools/setup';

let base: string;
let text: ToolScratch;
let json: ToolScratch;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-faults-')));
  const ioDir = join(base, 'not-a-folder');
  writeFileSync(ioDir, 'a file where ioDir should be\n');
  text = toolScratch({ onAsk: 'allow' }, { ioDir });
  json = toolScratch({ onAsk: 'allow', format: 'json' }, { ioDir });
});

afterAll(async () => {
  await text.cleanup();
  await json.cleanup();
  rmSync(base, { recursive: true, force: true });
});

describe('the tools when the job has no files', () => {
  it('run_shell_command says why and names no file', async () => {
    const r = await text.call('run_shell_command', { command: 'seq 1 5000', max_output_size: 400 });
    expect(field(r.llmContent, 'Status')).toBe('exited successfully (exit code 0)');
    expect(field(r.llmContent, 'Output files incomplete')).toMatch(/^the job's folder could not be made in .*not-a-folder/);
    expect(r.llmContent).toMatch(/Output truncated: \d+ bytes in total; the middle was left out above\. The output files do not hold all of it/);
    expect(r.llmContent).not.toMatch(/The whole output is in/);
    expect(r.llmContent).not.toMatch(/the full output is in/);
    // The MCP structured result carries the same field (the tool result's data).
    expect((r.data as { persistError?: string }).persistError).toMatch(/could not be made/);
  });

  it('its JSON has persistError and no outputFile', async () => {
    const r = await json.call('run_shell_command', { command: 'seq 1 5000', max_output_size: 400 });
    const out = JSON.parse(r.llmContent) as Record<string, unknown>;
    expect(out.persistError).toMatch(/could not be made/);
    expect(out.outputFile).toBeUndefined();
  });

  it('shell_cmd and jobs say it too', async () => {
    const r = await text.call('shell_cmd', { command: 'seq', parameters: ['1', '3'] });
    expect(r.llmContent).toMatch(/\nOutput files incomplete: the job's folder could not be made/);
    expect(r.llmContent).not.toMatch(/The whole output is in/);

    const started = await text.call('run_shell_command', { command: 'echo up; sleep 30', ai_callback_pattern: 'up' });
    const handle = handleOf(started);
    const jobs = await text.call('jobs', {});
    expect(jobs.llmContent).toMatch(/Output files incomplete: the job's folder could not be made/);
    await text.call('kill', { handle });
  });
});
