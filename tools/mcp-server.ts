// `native-shell-service mcp`: the five tools over MCP stdio, with the declarations'
// schemas and the tools' texts beside structured results (tools/mcp/), progress while a
// call waits, and every job's files as resources. Tool failures are `isError` results;
// the server's jobs die with the client's connection, unless it runs them in the daemon
// (`--daemon`, docs/daemon.md): then they outlive the session, and the next session of
// the same project lists them (`jobs`) and takes them up by handle.
import type { Readable, Writable } from 'node:stream';

import {
  type AnyShellExecutionService as ShellExecutionService,
  type DaemonOptions,
  isDaemonClient,
  loadAddon,
  packageManifest,
  type SandboxOptions,
} from '../contract/addon.js';
import type { ShellToolsConfig } from './base.js';
import { DECLARATIONS } from './declarations.js';
import { createShellTools, type ShellTools } from './create.js';
import {
  JOB_URI_TEMPLATE,
  jobFileResources,
  type JobResource,
  listJobResources,
  parseJobUri,
  readJobResource,
  ResourceNotFound,
  watchJobs,
} from './mcp/job-resources.js';
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
  /**
   * Run the jobs in the per-user daemon (docs/daemon.md): they outlive this server, and
   * a later server of the same project lists them and takes them up by handle.
   */
  daemon?: boolean | DaemonOptions;
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
  const serviceOptions = {
    projectRoot,
    ...(options.ioDir ? { ioDir: options.ioDir } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.env ? { env: options.env } : {}),
    // Refused at once (SANDBOX_UNAVAILABLE) where no sandbox can be given.
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  };
  let native: ShellExecutionService = new ShellExecutionService({ ...serviceOptions, ...(options.daemon ? { daemon: options.daemon } : {}) });
  let containment: string;
  try {
    containment = await native.containment; // a daemon client: connected and opened
  } catch (e) {
    const err = e as Error & { code?: string };
    // No daemon here (Windows, no binary, a bad socket directory) or one of another
    // version still holding jobs: the server runs, its jobs in this process as without
    // --daemon (the Gemini extension asks for the daemon everywhere).
    if (!options.daemon || (err.code !== 'DAEMON_UNAVAILABLE' && err.code !== 'DAEMON_VERSION')) throw e;
    log(`native-shell-service mcp: no daemon (${err.code}: ${err.message}); the jobs run in this process and end with it`);
    native = new ShellExecutionService(serviceOptions);
    containment = await native.containment;
  }
  const inDaemon = isDaemonClient(native);
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

  /** A daemon's job's folder, by its handle (the folder of whichever session started it). */
  const daemonJobDir = async (handle: number): Promise<string | null> => {
    try {
      return (await service.getResult(handle, { maxOutputSize: 1 })).outputDir;
    } catch {
      return null;
    }
  };
  server.setRequestHandler(sdk.ListResourcesRequestSchema, async () => {
    if (!inDaemon) return { resources: listJobResources(await service.outputDir) };
    // Every job the daemon holds for this project, named by the daemon's handle.
    const resources: JobResource[] = [];
    for (const job of await service.getActiveProcesses()) {
      const dir = await daemonJobDir(job.handle);
      if (dir) resources.push(...jobFileResources(dir, String(job.handle)));
    }
    return { resources };
  });
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
      if (!inDaemon) return { contents: [readJobResource(await service.outputDir, request.params.uri)] };
      const { job } = parseJobUri(request.params.uri);
      const dir = /^\d+$/.test(job) ? await daemonJobDir(Number(job)) : null;
      if (!dir) throw new ResourceNotFound(`${request.params.uri}: no job ${job} here`);
      return { contents: [readJobResource(await service.outputDir, request.params.uri, undefined, dir)] };
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
      const structuredContent = await structuredResult(name as ToolName, result, service, jobsBefore);
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
      // In the daemon the jobs outlive the session (docs/daemon.md); in process they end.
      log(`native-shell-service mcp: ${why}; ${inDaemon ? 'the jobs run on in the daemon' : 'stopping every job'}`);
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
  const where = inDaemon && native.daemon ? `, jobs in the daemon pid ${native.daemon.pid} at ${native.daemon.socket}` : '';
  log(`native-shell-service mcp: serving ${DECLARATIONS.length} tools for ${projectRoot} (containment: ${containment}${where})`);
  return { service, tools, closed, close: () => close('asked to stop') };
}
