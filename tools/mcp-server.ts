// `native-shell-service mcp`: the five tools over MCP stdio, with the declarations'
// schemas and the tools' texts. Tool failures are `isError` results; the server's jobs
// die with the client's connection.
import type { Readable, Writable } from 'node:stream';

import { loadAddon, requireOwn, type ShellExecutionService } from './addon.js';
import type { ShellToolsConfig } from './base.js';
import { DECLARATIONS } from './declarations.js';
import { createShellTools, type ShellTools } from './index.js';
import type { ToolName } from './types.js';

export interface McpServerOptions {
  /** Commands run here (default: the working directory). */
  projectRoot?: string;
  /** Where job output is persisted (default: the service's). */
  ioDir?: string;
  sessionId?: string;
  /** `coreTools` entries, e.g. `run_shell_command(git)`. When set, only these commands run. */
  allow?: string[];
  /** `excludeTools` entries, e.g. `run_shell_command(rm)`. */
  deny?: string[];
  /** run_shell_command's text (default) or seed 000's JSON. */
  format?: 'text' | 'json';
  /**
   * What a policy `ask` means without a person to ask: `allow` (the MCP client confirms
   * tool calls itself) unless `allow` entries are given, then `deny`.
   */
  onAsk?: 'allow' | 'deny';
  stdin?: Readable;
  stdout?: Writable;
  /** Where diagnostics go (never stdout: it carries the protocol). */
  log?: (line: string) => void;
}

export interface RunningMcpServer {
  service: ShellExecutionService;
  tools: ShellTools;
  /** Resolves once the connection is gone and every job is killed. */
  closed: Promise<void>;
  close(): Promise<void>;
}

const TITLES: Record<ToolName, { title: string; readOnlyHint?: boolean; destructiveHint?: boolean }> = {
  run_shell_command: { title: 'Run shell command', destructiveHint: true },
  send_input: { title: 'Send input to a process', destructiveHint: true },
  jobs: { title: 'List background processes', readOnlyHint: true },
  kill: { title: 'Kill a process', destructiveHint: true },
  shell_cmd: { title: 'Run a program (no shell)', destructiveHint: true },
};

export function packageVersion(): string {
  try {
    return (requireOwn('native-shell-service/package.json') as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export async function startMcpServer(options: McpServerOptions = {}): Promise<RunningMcpServer> {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const { ShellExecutionService } = loadAddon();
  const projectRoot = options.projectRoot ?? process.cwd();
  const service = new ShellExecutionService({
    projectRoot,
    ...(options.ioDir ? { ioDir: options.ioDir } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  const allow = options.allow ?? [];
  const config: ShellToolsConfig = {
    projectRoot,
    format: options.format ?? 'text',
    policy: { coreTools: allow, excludeTools: options.deny ?? [] },
    onAsk: options.onAsk ?? (allow.length > 0 ? 'deny' : 'allow'),
  };
  const tools = createShellTools(service, config);

  const server = new Server(
    { name: 'native-shell-service', version: packageVersion() },
    {
      capabilities: { tools: {} },
      instructions:
        'Shell tools with process handles. run_shell_command returns a Handle; a command still running stays alive: use send_input to talk to it (interactive programs: pass their prompt as ai_callback_pattern), jobs to list, kill to stop. shell_cmd runs one program without a shell.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: DECLARATIONS.map((d) => ({
      name: d.name,
      description: d.description,
      inputSchema: d.parametersJsonSchema as { type: 'object'; [key: string]: unknown },
      annotations: { ...TITLES[d.name], openWorldHint: d.name !== 'jobs' },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const tool = (tools as unknown as Record<string, ShellTools[keyof ShellTools] | undefined>)[name];
    if (!tool || !Object.hasOwn(tools, name)) {
      return {
        content: [{ type: 'text' as const, text: `Unknown tool '${name}'. The tools are: ${DECLARATIONS.map((d) => d.name).join(', ')}.` }],
        isError: true,
      };
    }
    try {
      const result = await tool.buildAndExecute(request.params.arguments ?? {}, extra.signal);
      return {
        content: [{ type: 'text' as const, text: result.llmContent }],
        ...(result.error ? { isError: true } : {}),
      };
    } catch (e) {
      // buildAndExecute does not reject; this guards the server against the unexpected.
      return { content: [{ type: 'text' as const, text: `Error (EXECUTION_FAILED): ${(e as Error).message}` }], isError: true };
    }
  });

  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(stdin, stdout);

  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | null = null;
  const close = (why: string): Promise<void> => {
    closing ??= (async () => {
      log(`native-shell-service mcp: ${why}; stopping every job`);
      try {
        await service.shutdown();
      } catch (e) {
        log(`native-shell-service mcp: shutdown failed: ${(e as Error).message}`);
      }
      try {
        await server.close();
      } catch {
        // the transport is gone already
      }
      resolveClosed();
    })();
    return closing;
  };
  server.onerror = (e) => log(`native-shell-service mcp: protocol error: ${e.message}`);
  transport.onclose = () => void close('the client disconnected');
  stdin.once('end', () => void close('the client closed stdin'));
  stdin.once('close', () => void close('stdin closed'));
  await server.connect(transport);
  log(`native-shell-service mcp: serving ${DECLARATIONS.length} tools for ${projectRoot}`);
  return { service, tools, closed, close: () => close('asked to stop') };
}
