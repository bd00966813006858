// `node scripts/run-measured.mjs <cpu-file> <command> [args...]`: runs the command with
// this process's standard streams, then writes the CPU seconds (user + system) it and
// everything it ran used to <cpu-file> and exits with its status. scripts/test.mjs
// runs the steps it runs at the same time through this: a process's own counters
// (/proc/self/stat) add up all its waited-for children, so two steps running at once
// are told apart only by each having a parent of its own.
import { spawnSync, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** CPU seconds (user + system) of this process's waited-for children so far, or null. */
export function childrenCpuSeconds() {
  try {
    // Fields after the command's `(...)`: state is field 3, cutime 16 and cstime 17.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / clockTicks();
  } catch {
    return null;
  }
}

let ticks;
function clockTicks() {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

function main() {
  const [cpuFile, command, ...args] = process.argv.slice(2);
  if (!cpuFile || !command) {
    console.error('usage: node scripts/run-measured.mjs <cpu-file> <command> [args...]');
    process.exit(2);
  }
  const r = spawnSync(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
  const cpu = childrenCpuSeconds();
  writeFileSync(cpuFile, JSON.stringify({ cpu }));
  if (r.error) {
    console.error(`${command}: ${r.error.message}`);
    process.exit(1);
  }
  process.exit(r.status ?? 1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
