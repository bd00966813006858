// The MCP server itself, without a transport: the five tools with their schemas and
// structured results, progress while a call waits, and every job's files as resources.
// The stdio command (tools/mcp-server.ts) connects one to stdin/stdout; the HTTP front
// (tools/mcp/http.ts) makes one per Streamable HTTP session.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js' with { 'resolution-mode': 'import' };
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js' with { 'resolution-mode': 'import' };

import {
  type AnyShellExecutionService as ShellExecutionService,
  type DaemonOptions,
  isDaemonClient,
  loadAddon,
  packageManifest,
  type SandboxOptions,
} from '../../contract/addon.js';
import type { ShellToolsConfig } from '../base.js';
import { DECLARATIONS } from '../declarations.js';
import { createShellTools, type ShellTools } from '../create.js';
import { MCP_SETTINGS } from '../sandbox-text.js';
import type { ToolName } from '../types.js';
import { JobFiles } from './job-files.js';
import { JOB_URI_TEMPLATE, ResourceNotFound, watchJobs } from './job-resources.js';
import { type ModernInfo, ModernWire } from './modern-wire.js';
import { ANNOTATIONS, OUTPUT_SCHEMAS } from './output-schemas.js';
import { progressUpdates } from './progress.js';
import { snapshotJobs, structuredResult } from './structured.js';
import { ShellTasks } from './tasks/shell-tasks.js';

/** What the tools do and with which service (the transport's options are elsewhere). */
export interface McpToolOptions {
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
}

/** One server and what it drives. */
export interface McpSession {
  server: Server;
  /** The service the tools use (announcing jobs as they start and end). */
  service: ShellExecutionService;
  tools: ShellTools;
  inDaemon: boolean;
  /** Stops the `resources/list_changed` announcements (the connection is ending). */
  quiet(): void;
  /** What `server/discover` says and who serves the tasks (tools/mcp/modern-wire.ts). */
  modern: ModernInfo;
  /** `transport` speaking 2026-07-28 beside the 2025 versions: connect the server to this. */
  wire(transport: Transport): Transport;
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

/**
 * The service the tools run on, opened (a daemon client connected). With `daemon` and
 * `required` false, a machine where no daemon can be had (Windows, no binary, a bad
 * socket directory, another version holding jobs) gets an in-process service, said on
 * `log`; with `required`, that error is thrown.
 */
export async function openMcpService(
  options: McpToolOptions,
  log: (line: string) => void,
  required = false,
): Promise<{ native: ShellExecutionService; containment: string }> {
  const { ShellExecutionService } = loadAddon();
  const serviceOptions = {
    projectRoot: options.projectRoot ?? process.cwd(),
    ...(options.ioDir ? { ioDir: options.ioDir } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.env ? { env: options.env } : {}),
    // Refused at once (SANDBOX_UNAVAILABLE) where no sandbox can be given.
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  };
  const native: ShellExecutionService = new ShellExecutionService({ ...serviceOptions, ...(options.daemon ? { daemon: options.daemon } : {}) });
  try {
    return { native, containment: await native.containment }; // a daemon client: connected and opened
  } catch (e) {
    const err = e as Error & { code?: string };
    if (required || !options.daemon || (err.code !== 'DAEMON_UNAVAILABLE' && err.code !== 'DAEMON_VERSION')) throw e;
    log(`native-shell-service mcp: no daemon (${err.code}: ${err.message}); the jobs run in this process and end with it`);
    const local = new ShellExecutionService(serviceOptions);
    return { native: local, containment: await local.containment };
  }
}

/** A server for one client over `native` (opened by `openMcpService`); connect it to a transport. */
export async function createMcpServer(native: ShellExecutionService, options: McpToolOptions): Promise<McpSession> {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const sdk = await import('@modelcontextprotocol/sdk/types.js');
  const inDaemon = isDaemonClient(native);
  const allow = options.allow ?? [];
  const config: ShellToolsConfig = {
    projectRoot: options.projectRoot ?? process.cwd(),
    format: options.format ?? 'text',
    policy: { coreTools: allow, excludeTools: options.deny ?? [] },
    onAsk: options.onAsk ?? (allow.length > 0 ? 'deny' : 'allow'),
    ...(options.sandbox ? { sandbox: options.sandbox, sandboxSettings: MCP_SETTINGS } : {}),
  };
  // Assigned below; jobs start only in tool calls, after the server exists.
  let announceJobs = () => {};
  const service = watchJobs(native, () => announceJobs());
  const tools = createShellTools(service, config);

  const serverInfo = { name: 'native-shell-service', version: packageVersion() };
  const capabilities = { tools: {}, resources: { listChanged: true }, logging: {} };
  const instructions =
    'Shell tools with process handles. run_shell_command returns a Handle; a command still running stays alive: use send_input to talk to it (interactive programs: pass their prompt as ai_callback_pattern), jobs to list, kill to stop. shell_cmd runs one program without a shell. Each result says what to do next (next) and names the job\'s files (files): its whole output is the resource shell-job://<handle>/stdout.txt, running or finished, read in pages of 8 KiB (a page that stops early says which URI reads on).';
  const server = new Server(serverInfo, { capabilities, instructions });
  const modern: ModernInfo = { serverInfo, capabilities, instructions, tasks: new ShellTasks(service, tools, MCP_SETTINGS) };
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

  const files = new JobFiles(service, inDaemon);
  server.setRequestHandler(sdk.ListResourcesRequestSchema, async () => ({ resources: await files.list() }));
  server.setRequestHandler(sdk.ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: JOB_URI_TEMPLATE,
        name: 'job-file',
        title: 'A job\'s output',
        description:
          'job: a handle from run_shell_command or shell_cmd (running or finished); file: stdout.txt (the output), stderr.txt (shell_cmd\'s stderr) or info.json; offset: where to read on (bytes); length: the most bytes to return (8 KiB by default, at most 1 MiB). A page that stops before the end is followed by a second item naming the URI that reads on.',
      },
    ],
  }));
  server.setRequestHandler(sdk.ReadResourceRequestSchema, async (request) => {
    try {
      return { contents: await files.read(request.params.uri) };
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
      // A job this call may end is forgotten by the tools (and a daemon) when it ends:
      // its folder is learnt first, so its files stay readable.
      const target = (request.params.arguments as { handle?: unknown } | undefined)?.handle;
      if ((name === 'kill' || name === 'send_input') && typeof target === 'number') await files.dir(target);
      const result = await tool.buildAndExecute(request.params.arguments ?? {}, extra.signal, progress?.update);
      // The final update (sent as the call ends) must reach the client before the result,
      // which ends the client's interest in progress for this call.
      await progress?.settled();
      // The job's folder, kept for reads of its files after the tools forget the job.
      if (typeof result.data?.handle === 'number') files.remember(result.data.handle, result.data.outputDir);
      const structuredContent = await structuredResult(name as ToolName, result, service, jobsBefore, MCP_SETTINGS);
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

  return {
    server,
    service,
    tools,
    inDaemon,
    quiet: () => {
      announceJobs = () => {};
    },
    modern,
    wire: (transport) => new ModernWire(transport, modern),
  };
}
