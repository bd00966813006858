// Compile-time proof that the adapter's public static API and types match upstream's:
// checked by `tsc` from methods.test.ts. Never imported at run time.
import type {
  ShellExecutionConfig as UpstreamConfig,
  ShellExecutionService as UpstreamService,
  ShellExecutionResult as UpstreamResult,
  ShellOutputEvent as UpstreamEvent,
  BackgroundProcess as UpstreamBackgroundProcess,
} from '@google/gemini-cli-core/dist/src/services/shellExecutionService.js';
import type { ExecutionLifecycleService } from '@google/gemini-cli-core/dist/src/services/executionLifecycleService.js';

import type {
  BackgroundProcess,
  Lifecycle,
  ShellExecutionConfig,
  ShellExecutionResult,
  ShellExecutionService,
  ShellOutputEvent,
} from '../../compat/gemini-compat';

type PublicStatics =
  | 'execute'
  | 'writeToPty'
  | 'isPtyActive'
  | 'onExit'
  | 'kill'
  | 'background'
  | 'subscribe'
  | 'resizePty'
  | 'scrollPty'
  | 'listBackgroundProcesses'
  | 'resetForTest'
  | 'getLogDir'
  | 'getLogFilePath';

// The adapter can stand where upstream's class is expected...
export const asUpstream: Pick<typeof UpstreamService, PublicStatics> = null as unknown as typeof ShellExecutionService;
// ...and upstream's where the adapter's is (same parameter and result types).
export const asAdapter: Pick<typeof ShellExecutionService, PublicStatics> = null as unknown as typeof UpstreamService;

// Values flow both ways between the two sets of types.
export const config1: ShellExecutionConfig = null as unknown as UpstreamConfig;
export const config2: UpstreamConfig = null as unknown as ShellExecutionConfig & UpstreamConfig;
export const result1: ShellExecutionResult = null as unknown as UpstreamResult;
export const result2: UpstreamResult = null as unknown as ShellExecutionResult;
export const event1: ShellOutputEvent = null as unknown as UpstreamEvent;
export const event2: UpstreamEvent = null as unknown as ShellOutputEvent;
export const bg1: BackgroundProcess = null as unknown as UpstreamBackgroundProcess;
export const bg2: UpstreamBackgroundProcess = null as unknown as BackgroundProcess;

// gemini-cli-core's lifecycle service is accepted by useLifecycle.
export const lifecycle: Lifecycle = null as unknown as typeof ExecutionLifecycleService;
