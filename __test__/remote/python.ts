// A Python that can import a PyPI package for the remote suites: $PYTHON (CI: .ci/run's
// .venv, which installs the package), else python3, else a venv of our own in the user's
// cache with the package installed (as __test__/mcp/setup.ts does for `mcp`).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function ensurePythonPackage(module: string, pkg: string): string {
  const python = process.env.PYTHON ?? 'python3';
  const canImport = (py: string) => spawnSync(py, ['-c', `import ${module}`], { encoding: 'utf8' }).status === 0;
  if (canImport(python)) return python;
  const venv = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'native-shell-service', `python-${pkg}`);
  const venvPython = join(venv, 'bin', 'python');
  if (existsSync(venvPython) && canImport(venvPython)) return venvPython;
  const steps: Array<[string, string[]]> = [
    [python, ['-m', 'venv', '--clear', venv]],
    [venvPython, ['-m', 'pip', 'install', '--quiet', pkg]],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0) {
      throw new Error(`the Python package ${pkg} is missing and \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}`);
    }
  }
  if (!canImport(venvPython)) throw new Error(`pip installed ${pkg} in ${venv} but ${venvPython} cannot import it`);
  return venvPython;
}
