// deploy/ as far as it can be checked without Docker or a cluster (neither exists where the
// suite runs): the manifests parse and carry the port, probes, user and token docs/remote.md
// promise, and the Dockerfile parses and starts the daemon with flags the daemon accepts.
// With agent-sandbox's CRD files at $NSS_AGENT_SANDBOX_CRDS the manifests are validated
// against the published schemas too (scripts/check-deploy.mjs); CI cannot fetch them.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');

interface Report {
  passed: string[];
  failures: string[];
  entrypoint: string[];
}

function checkDeploy(): Report {
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'check-deploy.mjs'), '--json'], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as Report;
}

describe('deploy/', () => {
  it('passes every offline check of the manifests and the Dockerfile', () => {
    const report = checkDeploy();
    expect(report.failures).toEqual([]);
    expect(report.passed.length).toBeGreaterThan(20);
  });

  it("starts the daemon with flags the daemon's --help names", () => {
    const { entrypoint } = checkDeploy();
    const help = spawnSync(join(root, 'native-shell-daemon'), ['--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const flag of entrypoint.filter((a) => a.startsWith('--'))) expect(help.stdout).toContain(flag);
  });
});
