// The `structuredContent` of a tool result: the facts behind the text (`ToolResult.data`,
// see tools/types.ts), in the shapes of tools/mcp/output-schemas.ts.
import type { AnyShellExecutionService as ShellExecutionService } from '../../contract/addon.js';
import { type FinishedJob, liveBackgroundPids, sharedState } from '../base.js';
import type { ToolName, ToolResult } from '../types.js';

export type Structured = Record<string, unknown>;

/**
 * What `jobs` will report as finished, taken before it runs: it reports (and forgets)
 * the jobs that finished unseen, plus those it finds finished itself, which it adds to
 * the shared state (tools/base.ts `settle`) during the call.
 */
export interface JobsSnapshot {
  unreported: number[];
  known: Set<number>;
}

export function snapshotJobs(service: ShellExecutionService): JobsSnapshot {
  const state = sharedState(service);
  return { unreported: [...state.unreported], known: new Set(state.finished.keys()) };
}

async function jobsStructured(service: ShellExecutionService, result: ToolResult, before: JobsSnapshot): Promise<Structured> {
  const handles = new Set((result.data?.running as number[] | undefined) ?? []);
  const running = (await service.getActiveProcesses())
    .filter((job) => handles.has(job.handle))
    .map((job) => ({ ...job, liveBackgroundPids: liveBackgroundPids(job) }));
  const { finished } = sharedState(service);
  const settledNow = [...finished.keys()].filter((h) => !before.known.has(h));
  const reported = [...new Set([...before.unreported, ...settledNow])]
    .map((h) => finished.get(h))
    .filter((f): f is FinishedJob => f !== undefined)
    .map(({ handle, command, status, exitCode, signal }) => ({ handle, command, status, exitCode, signal }));
  return { running, finished: reported };
}

/**
 * The structured result, or undefined for a failure that carries no facts (invalid
 * parameters, a blocked command, an unknown handle): those are `isError` results, which
 * MCP clients accept without `structuredContent`.
 */
export async function structuredResult(
  name: ToolName,
  result: ToolResult,
  service: ShellExecutionService,
  jobsBefore: JobsSnapshot | null,
): Promise<Structured | undefined> {
  if (name === 'jobs' && jobsBefore && !result.error) return jobsStructured(service, result, jobsBefore);
  return result.data ? { ...result.data } : undefined;
}
