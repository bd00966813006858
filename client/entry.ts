// The package entry's `ShellExecutionService` (service.js, and contract/addon.ts for the
// tools): the generated in-process class, unchanged, unless `daemon` is asked for; then
// a daemon client (client/service.ts). One function, so the published entry and the
// bundled command build the same constructor.
import type { CommandCheck, CommandPolicy, DaemonOptions, ServiceOptions } from 'native-shell-service';

import { DaemonShellExecutionService } from './service.js';

/** The part of the generated loader's exports this wraps. */
export interface NativeExports {
  ShellExecutionService: new (options?: ServiceOptions | null) => object;
  checkCommand(command: string, policy?: CommandPolicy | null): CommandCheck;
}

export interface PackageInfo {
  packageRoot: string;
  version: string;
}

const wrapped = new WeakMap<object, object>();

/** True when `options.daemon` asks for a daemon (`true` or an object). */
export function wantsDaemon(options: unknown): options is ServiceOptions & { daemon: true | DaemonOptions } {
  const d = (options as { daemon?: unknown } | null | undefined)?.daemon;
  return d === true || (typeof d === 'object' && d !== null);
}

/**
 * The loader's exports with `ShellExecutionService` replaced by a constructor that
 * gives the in-process service (exactly the generated class's instance, `daemon: null`)
 * or, with `daemon`, a daemon client. `instanceof ShellExecutionService` holds for both.
 */
export function withDaemon<T extends NativeExports>(native: T, pkg: PackageInfo): T {
  const cached = wrapped.get(native);
  if (cached) return cached as T;
  const Native = native.ShellExecutionService;
  if (!Object.getOwnPropertyDescriptor(Native.prototype, 'daemon')) {
    // In process there is no daemon: `service.daemon` is null, as documented.
    Object.defineProperty(Native.prototype, 'daemon', { get: () => null, configurable: true, enumerable: false });
  }
  const context = { packageRoot: pkg.packageRoot, version: pkg.version, checkCommand: native.checkCommand };
  function ShellExecutionService(this: unknown, options?: ServiceOptions | null): object {
    if (!new.target) throw new TypeError("Class constructor ShellExecutionService cannot be invoked without 'new'");
    if (wantsDaemon(options)) return new DaemonShellExecutionService(options, context);
    return new Native(options);
  }
  ShellExecutionService.prototype = Native.prototype;
  Object.defineProperty(ShellExecutionService, Symbol.hasInstance, {
    value: (x: unknown) => x instanceof Native || x instanceof DaemonShellExecutionService,
  });
  const out = { ...native, ShellExecutionService, JsShellExecutionService: ShellExecutionService } as T;
  wrapped.set(native, out);
  return out;
}

/** True for a daemon client (its methods return promises), false for the in-process service. */
export function isDaemonClient(service: unknown): service is DaemonShellExecutionService {
  return service instanceof DaemonShellExecutionService;
}
