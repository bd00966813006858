// A scratch project with a real service and the five tools over it.
import { createShellTools, type ShellTools, type ShellToolsConfig, type ToolResult } from '../../tools/index';
import { type Scratch, scratch } from '../helpers';

export interface ToolScratch extends Scratch {
  tools: ShellTools;
  /** Validates, applies the policy and executes, like a host without a confirmation UI. */
  call(name: keyof ShellTools, params: unknown, signal?: AbortSignal): Promise<ToolResult>;
}

export function toolScratch(
  config: ShellToolsConfig = {},
  options: Parameters<typeof scratch>[0] = {},
): ToolScratch {
  const s = scratch(options);
  const tools = createShellTools(s.service, { projectRoot: s.root, ...config });
  return {
    ...s,
    tools,
    call: (name, params, signal) => tools[name].buildAndExecute(params, signal),
  };
}

/** The value of a `Label: value` line of an llmContent. */
export function field(text: string, label: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${label}: `));
  return line?.slice(label.length + 2);
}

export function handleOf(result: ToolResult): number {
  const h = Number(field(result.llmContent, 'Handle'));
  if (!Number.isInteger(h)) throw new Error(`no handle in:\n${result.llmContent}`);
  return h;
}
