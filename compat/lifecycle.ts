// The execution lifecycle the adapter reports to: result promises, event listeners,
// backgrounding and exit bookkeeping, keyed by pid. Upstream keeps this in the static
// `ExecutionLifecycleService` of gemini-cli-core, which the Gemini CLI's UI also calls
// directly; `ShellExecutionService.useLifecycle(ExecutionLifecycleService)` makes the
// adapter report to that one. Without it, this local implementation (same contract)
// is used.
import type { ExecutionHandle, ExecutionMethod, ExecutionOutputEvent, ExecutionResult } from './types.js';

export type CompletionBehavior = 'inject' | 'notify' | 'silent';
export type FormatInjection = (output: string, error: Error | null) => string | null;

/** What an execution tells the lifecycle about itself (upstream `ExternalExecutionRegistration`). */
export interface ExecutionRegistration {
  executionMethod: ExecutionMethod;
  label?: string;
  initialOutput?: string;
  getBackgroundOutput?: () => string;
  getSubscriptionSnapshot?: () => string | ExecutionResult['ansiOutput'] | undefined;
  writeInput?: (input: string) => void;
  kill?: () => void;
  isActive?: () => boolean;
  formatInjection?: FormatInjection;
  completionBehavior?: CompletionBehavior;
}

export interface BackgroundStartInfo {
  executionId: number;
  executionMethod: ExecutionMethod;
  label: string;
  output: string;
  completionBehavior: CompletionBehavior;
}

export interface BackgroundCompletionInfo {
  executionId: number;
  executionMethod: ExecutionMethod;
  output: string;
  error: Error | null;
  injectionText: string | null;
  completionBehavior: CompletionBehavior;
}

/** The methods of upstream's `ExecutionLifecycleService` the adapter calls. */
export interface Lifecycle {
  attachExecution(executionId: number, registration: ExecutionRegistration): ExecutionHandle;
  emitEvent(executionId: number, event: ExecutionOutputEvent): void;
  completeWithResult(executionId: number, result: ExecutionResult): void;
  background(executionId: number): void;
  subscribe(executionId: number, listener: (event: ExecutionOutputEvent) => void): () => void;
  onExit(executionId: number, callback: (exitCode: number, signal?: number) => void): () => void;
  kill(executionId: number): void;
  isActive(executionId: number): boolean;
  writeInput(executionId: number, input: string): void;
}

interface Execution {
  registration: ExecutionRegistration;
  backgrounded: boolean;
}

const EXIT_INFO_TTL_MS = 5 * 60 * 1000;

function output(registration: ExecutionRegistration): string {
  return registration.getBackgroundOutput?.() ?? registration.initialOutput ?? '';
}

/** The adapter's own lifecycle, with upstream's contract, for callers that bring none. */
export class LocalLifecycle implements Lifecycle {
  private executions = new Map<number, Execution>();
  private pending = new Map<number, (result: ExecutionResult) => void>();
  private listeners = new Map<number, Set<(event: ExecutionOutputEvent) => void>>();
  private exited = new Map<number, { exitCode: number; signal: number | undefined }>();
  private startListeners = new Set<(info: BackgroundStartInfo) => void>();
  private completionListeners = new Set<(info: BackgroundCompletionInfo) => void>();

  onBackground(listener: (info: BackgroundStartInfo) => void): void {
    this.startListeners.add(listener);
  }
  offBackground(listener: (info: BackgroundStartInfo) => void): void {
    this.startListeners.delete(listener);
  }
  onBackgroundComplete(listener: (info: BackgroundCompletionInfo) => void): void {
    this.completionListeners.add(listener);
  }
  offBackgroundComplete(listener: (info: BackgroundCompletionInfo) => void): void {
    this.completionListeners.delete(listener);
  }

  attachExecution(executionId: number, registration: ExecutionRegistration): ExecutionHandle {
    if (this.executions.has(executionId) || this.pending.has(executionId)) {
      throw new Error(`Execution ${executionId} is already attached.`);
    }
    this.exited.delete(executionId);
    this.executions.set(executionId, { registration, backgrounded: false });
    const result = new Promise<ExecutionResult>((resolve) => this.pending.set(executionId, resolve));
    return { pid: executionId, result };
  }

  emitEvent(executionId: number, event: ExecutionOutputEvent): void {
    for (const listener of [...(this.listeners.get(executionId) ?? [])]) listener(event);
  }

  completeWithResult(executionId: number, result: ExecutionResult): void {
    const execution = this.executions.get(executionId);
    if (!execution) return;
    const { registration } = execution;
    if (execution.backgrounded && !result.aborted) {
      const behavior = registration.completionBehavior ?? (registration.formatInjection ? 'inject' : 'silent');
      const injectionText =
        behavior !== 'silent' && registration.formatInjection
          ? registration.formatInjection(result.output, result.error)
          : null;
      const info: BackgroundCompletionInfo = {
        executionId,
        executionMethod: registration.executionMethod,
        output: result.output,
        error: result.error,
        injectionText,
        completionBehavior: behavior,
      };
      for (const listener of this.completionListeners) {
        try {
          listener(info);
        } catch {
          // one failing listener must not stop the others
        }
      }
    }
    this.pending.get(executionId)?.(result);
    this.pending.delete(executionId);
    this.emitEvent(executionId, { type: 'exit', exitCode: result.exitCode, signal: result.signal });
    this.listeners.delete(executionId);
    this.executions.delete(executionId);
    this.exited.set(executionId, { exitCode: result.exitCode ?? 0, signal: result.signal ?? undefined });
    setTimeout(() => this.exited.delete(executionId), EXIT_INFO_TTL_MS).unref();
  }

  background(executionId: number): void {
    const resolve = this.pending.get(executionId);
    const execution = this.executions.get(executionId);
    if (!resolve || !execution) return;
    const { registration } = execution;
    const text = output(registration);
    resolve({
      rawOutput: Buffer.from(''),
      output: text,
      exitCode: null,
      signal: null,
      error: null,
      aborted: false,
      pid: executionId,
      executionMethod: registration.executionMethod,
      backgrounded: true,
    });
    this.pending.delete(executionId);
    execution.backgrounded = true;
    const info: BackgroundStartInfo = {
      executionId,
      executionMethod: registration.executionMethod,
      label: registration.label ?? `${registration.executionMethod} (ID: ${executionId})`,
      output: text,
      completionBehavior: registration.completionBehavior ?? (registration.formatInjection ? 'inject' : 'silent'),
    };
    for (const listener of this.startListeners) listener(info);
  }

  subscribe(executionId: number, listener: (event: ExecutionOutputEvent) => void): () => void {
    const execution = this.executions.get(executionId);
    if (!execution) return () => undefined;
    const set = this.listeners.get(executionId) ?? new Set();
    set.add(listener);
    this.listeners.set(executionId, set);
    const snapshot = execution.registration.getSubscriptionSnapshot?.() ?? execution.registration.initialOutput;
    if (snapshot && snapshot.length > 0) listener({ type: 'data', chunk: snapshot });
    return () => {
      set.delete(listener);
    };
  }

  onExit(executionId: number, callback: (exitCode: number, signal?: number) => void): () => void {
    if (this.executions.has(executionId)) {
      const off = this.subscribe(executionId, (event) => {
        if (event.type === 'exit') {
          off();
          callback(event.exitCode ?? 0, event.signal ?? undefined);
        }
      });
      return off;
    }
    const info = this.exited.get(executionId);
    if (info) callback(info.exitCode, info.signal);
    return () => undefined;
  }

  kill(executionId: number): void {
    const execution = this.executions.get(executionId);
    if (!execution) return;
    execution.registration.kill?.();
    const text = output(execution.registration);
    this.completeWithResult(executionId, {
      rawOutput: Buffer.from(text, 'utf8'),
      output: text,
      exitCode: 130,
      signal: null,
      error: new Error('Operation cancelled by user.'),
      aborted: true,
      pid: executionId,
      executionMethod: execution.registration.executionMethod,
    });
  }

  isActive(executionId: number): boolean {
    const execution = this.executions.get(executionId);
    if (!execution) return false;
    try {
      return execution.registration.isActive?.() ?? true;
    } catch {
      return false;
    }
  }

  writeInput(executionId: number, input: string): void {
    this.executions.get(executionId)?.registration.writeInput?.(input);
  }

  reset(): void {
    this.executions.clear();
    this.pending.clear();
    this.listeners.clear();
    this.exited.clear();
    this.startListeners.clear();
    this.completionListeners.clear();
  }
}
