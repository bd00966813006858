// `native-shell-service mcp`: the five tools over MCP stdio, with the declarations'
// schemas and the tools' texts beside structured results (tools/mcp/), progress while a
// call waits, and every job's files as resources. Tool failures are `isError` results;
// the server's jobs die with the client's connection.
import type { Readable, Writable } from 'node:stream';

import { loadAddon, packageManifest, type SandboxOptions, type ShellExecutionService } from '../contract/addon.js';
import type { ShellToolsConfig } from './base.js';
import { DECLARATIONS } from './declarations.js';
import { createShellTools, type ShellTools } from './create.js';
import { JOB_URI_TEMPLATE, listJobResources, readJobResource, ResourceNotFound, watchJobs } from './mcp/job-resources.js';
import { ANNOTATIONS, OUTPUT_SCHEMAS } from './mcp/output-schemas.js';
import { progressUpdates } from './mcp/progress.js';
import { snapshotJobs, structuredResult } from './mcp/structured.js';
import { MCP_SETTINGS } from './sandbox-text.js';
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
  /** run_shell_command's text (default) or its JSON object (docs/tools.md, run_shell_command). */
  format?: 'text' | 'json';
  /**
   * What a policy `ask` means without a person to ask: `allow` (the MCP client confirms
   * tool calls itself) unless `allow` entries are given, then `deny`.
   */
  onAsk?: 'allow' | 'deny';
  /** Every job's sandbox (docs/sandbox.md); none unless given. */
  sandbox?: boolean | SandboxOptions;
  /** Variables added to every job's environment (`ServiceOptions.env`). */
  env?: Record<string, string>;
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

/**
 * An error the SDK answers a request with as it is: `code`, `message` and `data`. Not the
 * SDK's own McpError, whose message already starts `MCP error <code>: `: the client's
 * McpError adds that prefix again ("MCP error -32002: MCP error -32002: ...").
 */
class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export function packageVersion(): string {
  try {
    return packageManifest().version;
  } catch {
    return '0.0.0';
  }
}

export async function startMcpServer(options: McpServerOptions = {}): Promise<RunningMcpServer> {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const sdk = await import('@modelcontextprotocol/sdk/types.js');
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const { ShellExecutionService } = loadAddon();
  const projectRoot = options.projectRoot ?? process.cwd();
  const native = new ShellExecutionService({
    projectRoot,
    ...(options.ioDir ? { ioDir: options.ioDir } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.env ? { env: options.env } : {}),
    // Refused at once (SANDBOX_UNAVAILABLE) where no sandbox can be given.
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  const allow = options.allow ?? [];
  const config: ShellToolsConfig = {
    projectRoot,
    format: options.format ?? 'text',
    policy: { coreTools: allow, excludeTools: options.deny ?? [] },
    onAsk: options.onAsk ?? (allow.length > 0 ? 'deny' : 'allow'),
    ...(options.sandbox ? { sandbox: options.sandbox, sandboxSettings: MCP_SETTINGS } : {}),
  };
  // Assigned below; jobs start only in tool calls, after the server exists.
  let announceJobs = () => {};
  const service = watchJobs(native, () => announceJobs());
  const tools = createShellTools(service, config);

  const server = new Server(
    { name: 'native-shell-service', version: packageVersion() },
    {
      capabilities: { tools: {}, resources: { listChanged: true } },
      instructions:
        'Shell tools with process handles. run_shell_command returns a Handle; a command still running stays alive: use send_input to talk to it (interactive programs: pass their prompt as ai_callback_pattern), jobs to list, kill to stop. shell_cmd runs one program without a shell. Each job\'s whole output is a resource: shell-job://<handle>/stdout.txt (read in pages: follow _meta.next).',
    },
  );
  announceJobs = () => {
    server.sendResourceListChanged().catch(() => {}); // not connected, or the client is gone
  };

  server.setRequestHandler(sdk.ListToolsRequestSchema, async () => ({
    tools: DECLARATIONS.map((d) => ({
      name: d.name,
      title: ANNOTATIONS[d.name].title,
      description: d.description,
      inputSchema: d.parametersJsonSchema as { type: 'object'; [key: string]: unknown },
      outputSchema: OUTPUT_SCHEMAS[d.name] as { type: 'object'; [key: string]: unknown },
      annotations: ANNOTATIONS[d.name],
    })),
  }));

  server.setRequestHandler(sdk.ListResourcesRequestSchema, async () => ({ resources: listJobResources(service.outputDir) }));
  server.setRequestHandler(sdk.ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: JOB_URI_TEMPLATE,
        name: 'job-file',
        title: 'A job\'s persisted output',
        description: `job: a handle from run_shell_command or shell_cmd; file: stdout.txt (the output), stderr.txt (shell_cmd's stderr) or info.json; offset: where to read on (bytes; each read returns at most 64 KiB and _meta.next)`,
      },
    ],
  }));
  server.setRequestHandler(sdk.ReadResourceRequestSchema, async (request) => {
    try {
      return { contents: [readJobResource(service.outputDir, request.params.uri)] };
    } catch (e) {
      // -32002: the code MCP gives a resource that does not exist.
      if (e instanceof ResourceNotFound) throw new ProtocolError(-32002, e.message, { uri: request.params.uri });
      throw e;
    }
  });

  server.setRequestHandler(sdk.CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const tool = (tools as unknown as Record<string, ShellTools[keyof ShellTools] | undefined>)[name];
    if (!tool || !Object.hasOwn(tools, name)) {
      return {
        content: [{ type: 'text' as const, text: `Unknown tool '${name}'. The tools are: ${DECLARATIONS.map((d) => d.name).join(', ')}.` }],
        isError: true,
      };
    }
    const token = request.params._meta?.progressToken;
    const progress =
      token !== undefined && tool.canUpdateOutput ? progressUpdates(token, (n) => extra.sendNotification(n)) : undefined;
    try {
      const jobsBefore = name === 'jobs' ? snapshotJobs(service) : null;
      const result = await tool.buildAndExecute(request.params.arguments ?? {}, extra.signal, progress?.update);
      // The final update (sent as the call ends) must reach the client before the result,
      // which ends the client's interest in progress for this call.
      await progress?.settled();
      const structuredContent = structuredResult(name as ToolName, result, service, jobsBefore);
      return {
        content: [{ type: 'text' as const, text: result.llmContent }],
        ...(structuredContent ? { structuredContent } : {}),
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
      announceJobs = () => {}; // the jobs killed now end with the connection
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
  log(`native-shell-service mcp: serving ${DECLARATIONS.length} tools for ${projectRoot} (containment: ${native.containment})`);
  return { service, tools, closed, close: () => close('asked to stop') };
}
