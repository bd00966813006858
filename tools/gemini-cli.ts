// The five tools as real Gemini CLI tools: subclasses of @google/gemini-cli-core's
// BaseDeclarativeTool / BaseToolInvocation, ready for its ToolRegistry. The core module is
// passed in (the Gemini CLI has it; this package does not depend on it).
import type { AnyShellExecutionService as ShellExecutionService } from '../contract/addon.js';
import type { ShellTool, ShellToolInvocation, ShellToolsConfig } from './base.js';
import { createShellTools } from './create.js';
import { ConfirmationOutcome, ToolErrorType } from './types.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the core's classes are typed by the caller's copy */

/** The parts of `@google/gemini-cli-core` the adapter uses. */
export interface GeminiCliCore {
  BaseDeclarativeTool: abstract new (...args: any[]) => any;
  BaseToolInvocation: abstract new (...args: any[]) => any;
  Kind: { Execute: string; Read: string };
  ToolErrorType: Record<string, string>;
}

/** Our error types in the Gemini CLI's vocabulary (the message keeps the detail). */
function geminiErrorType(core: GeminiCliCore, type: ToolErrorType): string {
  const t = core.ToolErrorType;
  const map: Record<ToolErrorType, string | undefined> = {
    [ToolErrorType.INVALID_PARAMS]: t.INVALID_TOOL_PARAMS,
    [ToolErrorType.INVALID_PATTERN]: t.INVALID_TOOL_PARAMS,
    [ToolErrorType.INVALID_DIRECTORY]: t.PATH_NOT_IN_WORKSPACE,
    [ToolErrorType.COMMAND_BLOCKED]: t.POLICY_VIOLATION,
    [ToolErrorType.SPAWN_FAILED]: t.SHELL_EXECUTE_ERROR,
    [ToolErrorType.PROCESS_NOT_FOUND]: t.EXECUTION_FAILED,
    [ToolErrorType.KILL_FAILED]: t.EXECUTION_FAILED,
    [ToolErrorType.LIMIT_REACHED]: t.EXECUTION_FAILED,
    [ToolErrorType.EXECUTION_FAILED]: t.EXECUTION_FAILED,
  };
  return map[type] ?? type;
}

function ourOutcome(outcome: string): ConfirmationOutcome {
  if (outcome === 'cancel') return ConfirmationOutcome.Cancel;
  if (outcome === 'proceed_once' || outcome === 'modify_with_editor') return ConfirmationOutcome.ProceedOnce;
  return ConfirmationOutcome.ProceedAlways;
}

/**
 * Builds the five tools as Gemini CLI tools over `service`:
 *
 * ```ts
 * import * as core from '@google/gemini-cli-core';
 * for (const tool of createGeminiCliTools(core, service, config.getMessageBus())) registry.registerTool(tool);
 * ```
 *
 * The Gemini CLI's policy engine decides first (allow / deny / ask); when it would ask,
 * this package's policy (`config.policy`, `checkCommand`) may still allow without asking,
 * and command substitution is refused at execution whatever was decided.
 */
export function createGeminiCliTools(
  core: GeminiCliCore,
  service: ShellExecutionService,
  messageBus: unknown,
  config: ShellToolsConfig = {},
): any[] {
  // A sandboxed Gemini CLI session may ask to run a command outside; the CLI confirms.
  const ours = createShellTools(service, { allowUnsandboxedRequests: config.sandbox ? true : undefined, ...config });
  const BaseTool = core.BaseDeclarativeTool as new (...args: any[]) => any;
  const BaseInvocation = core.BaseToolInvocation as new (...args: any[]) => any;

  class Invocation extends BaseInvocation {
    constructor(
      private readonly inner: ShellToolInvocation<object>,
      params: object,
      bus: unknown,
      toolName: string,
      displayName: string,
    ) {
      super(params, bus, toolName, displayName);
    }

    getDescription(): string {
      return this.inner.getDescription();
    }

    async getConfirmationDetails(signal: AbortSignal): Promise<object | false> {
      const details = await this.inner.shouldConfirmExecute(signal);
      if (!details) return false;
      return {
        ...details,
        onConfirm: async (outcome: string) => details.onConfirm(ourOutcome(outcome)),
      };
    }

    async execute(options: { abortSignal: AbortSignal; updateOutput?: (output: string) => void }): Promise<object> {
      const result = await this.inner.execute(options.abortSignal, options.updateOutput);
      return {
        llmContent: result.llmContent,
        returnDisplay: result.returnDisplay,
        ...(result.error ? { error: { message: result.error.message, type: geminiErrorType(core, result.error.type) } } : {}),
      };
    }
  }

  return Object.values(ours).map((tool: ShellTool<object>) => {
    class GeminiTool extends BaseTool {
      constructor(bus: unknown) {
        super(
          tool.name,
          tool.displayName,
          tool.description,
          tool.kind === 'read' ? core.Kind.Read : core.Kind.Execute,
          tool.declaration.parametersJsonSchema,
          bus,
          false, // isOutputMarkdown
          tool.canUpdateOutput, // the scheduler passes updateOutput only when this is true
        );
      }

      validateToolParamValues(params: object): string | null {
        return tool.validate(params);
      }

      createInvocation(params: object, bus: unknown, toolName?: string, displayName?: string): Invocation {
        return new Invocation(tool.build(params), params, bus, toolName ?? tool.name, displayName ?? tool.displayName);
      }
    }
    return new GeminiTool(messageBus);
  });
}
