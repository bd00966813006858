// jobs: what is still running (including background children of finished shells), and
// what finished since it was last seen.
import { liveBackgroundPids, settle, ShellTool, ShellToolInvocation } from './base.js';
import { JOBS } from './declarations.js';
import { endText, formatJob } from './format.js';
import type { FunctionDeclaration, ToolResult } from './types.js';

export type JobsParams = Record<string, never>;

export class JobsTool extends ShellTool<JobsParams> {
  static readonly Name = 'jobs';
  readonly displayName = 'Jobs';
  readonly kind = 'read' as const;
  readonly declaration: FunctionDeclaration = JOBS;

  protected createInvocation(params: JobsParams): JobsInvocation {
    return new JobsInvocation(this, params);
  }
}

export class JobsInvocation extends ShellToolInvocation<JobsParams> {
  getDescription(): string {
    return 'list background processes';
  }

  async execute(_signal: AbortSignal): Promise<ToolResult> {
    const now = Date.now();
    const running: string[] = [];
    const handles: number[] = [];
    for (const job of await this.service.getActiveProcesses()) {
      const live = liveBackgroundPids(job);
      if (job.status === 'running' || live.length > 0) {
        running.push(formatJob(job, live, now));
        handles.push(job.handle);
      } else if (job.attached === 'this') {
        // Another client's finished jobs are its to report and forget.
        await settle(this, job.handle, false);
      }
    }
    const finished = [...this.state.unreported]
      .map((h) => this.state.finished.get(h))
      .filter((f) => f !== undefined)
      .map((f) => {
        return `Handle ${f.handle}: ${f.command} — ${endText(f).replace(/^was /, '')}`;
      });
    this.state.unreported.clear();

    const parts: string[] = [];
    parts.push(running.length === 0 ? 'No running background processes.' : ['Running Processes:', ...running].join('\n\n'));
    if (finished.length > 0) parts.push(['Finished since last checked:', ...finished].join('\n'));
    const returnDisplay = running.length === 0 ? 'No jobs' : `${running.length} process(es) running`;
    return { llmContent: parts.join('\n\n'), returnDisplay, data: { running: handles, finished: finished.length } };
  }
}
