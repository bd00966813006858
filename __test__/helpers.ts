// Shared set-up for the suites: a service over a scratch project, torn down after.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type * as Addon from '../index.js';

const require = createRequire(import.meta.url);
export const addon: typeof Addon = require('../index.js');
export const { ShellExecutionService } = addon;
export type Service = InstanceType<typeof ShellExecutionService>;

export interface Scratch {
  root: string;
  ioDir: string;
  service: Service;
  cleanup(): Promise<void>;
}

export function scratch(options: Partial<ConstructorParameters<typeof ShellExecutionService>[0]> = {}): Scratch {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nss-test-')));
  const root = join(base, 'project');
  const ioDir = join(base, 'io');
  require('node:fs').mkdirSync(root);
  const service = new ShellExecutionService({ projectRoot: root, ioDir, sessionId: 'test', ...options });
  return {
    root,
    ioDir,
    service,
    async cleanup() {
      await service.shutdown();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** True while a process with this pid exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8') as string;
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Resolves when `predicate` holds, checking every 20 ms. The bound only ends a wait for
 * something that never happens, so it is never under 30 s whatever a caller asks: a
 * machine whose cores are both busy must not fail a test that would pass.
 */
export async function eventually(predicate: () => boolean, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + Math.max(timeoutMs, 30_000);
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return predicate();
}

export async function expectCode(promise: Promise<unknown> | (() => unknown), code: string): Promise<Error> {
  try {
    if (typeof promise === 'function') promise();
    else await promise;
  } catch (e) {
    const err = e as Error & { code?: string };
    if (err.code !== code) throw new Error(`expected code ${code}, got ${err.code}: ${err.message}`);
    return err;
  }
  throw new Error(`expected an error with code ${code}, got none`);
}

/** Descriptors of this process open on a PTY master. */
export function ptyMasters(): number {
  return ptyMasterIndexes().length;
}

/** The terminal numbers (`/dev/pts/<n>`) of the PTY masters this process holds open,
 * one per descriptor (each descriptor's `tty-index` in `/proc/self/fdinfo`). Linux. */
export function ptyMasterIndexes(): number[] {
  const indexes: number[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let info: string;
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== '/dev/ptmx') continue;
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue; // closed while listed
    }
    const index = /^tty-index:\s*(\d+)/m.exec(info);
    indexes.push(index ? Number(index[1]) : -1);
  }
  return indexes;
}
