// `native-shell-service mcp`: the five tools over MCP stdio, with the declarations'
// schemas and the tools' texts beside structured results, progress while a call waits,
// and every job's files as resources (the server itself: tools/mcp/server.ts, shared
// with the Streamable HTTP front, tools/mcp/http.ts). Tool failures are `isError`
// results; the server's jobs die with the client's connection, unless it runs them in
// the daemon (`--daemon`, docs/daemon.md): then they outlive the session, and the next
// session of the same project lists them (`jobs`) and takes them up by handle.
import type { Readable, Writable } from 'node:stream';

import type { AnyShellExecutionService as ShellExecutionService } from '../contract/addon.js';
import { DECLARATIONS } from './declarations.js';
import type { ShellTools } from './create.js';
import { ClientLog } from './mcp/client-log.js';
import { createMcpServer, type McpToolOptions, openMcpService, packageVersion } from './mcp/server.js';

export { packageVersion };

export interface McpServerOptions extends McpToolOptions {
  stdin?: Readable;
  stdout?: Writable;
  /**
   * Where errors go (default stderr; never stdout: it carries the protocol). What is not
   * an error is said to the client as MCP logging (tools/mcp/client-log.ts).
   */
  log?: (line: string) => void;
}

export interface RunningMcpServer {
  service: ShellExecutionService;
  tools: ShellTools;
  /** Resolves once the connection is gone and every job is killed. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function startMcpServer(options: McpServerOptions = {}): Promise<RunningMcpServer> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const projectRoot = options.projectRoot ?? process.cwd();
  // No daemon here (Windows, no binary, a bad socket directory) or one of another
  // version still holding jobs: the server runs, its jobs in this process as without
  // --daemon (the Gemini extension asks for the daemon everywhere).
  const notices = new ClientLog();
  const { native, containment } = await openMcpService({ ...options, projectRoot }, (line) => notices.say('warning', line));
  const { server, service, tools, inDaemon, quiet, wire } = await createMcpServer(native, { ...options, projectRoot });
  notices.attach(server);

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
      quiet(); // the jobs killed now end with the connection
      // In the daemon the jobs outlive the session (docs/daemon.md); in process they end.
      // Said to a client still there (asked to stop); one that left hears nothing.
      notices.say('info', `native-shell-service mcp: ${why}; ${inDaemon ? 'the jobs run on in the daemon' : 'stopping every job'}`);
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
  await server.connect(wire(transport));
  const where = inDaemon && native.daemon ? `, jobs in the daemon pid ${native.daemon.pid} at ${native.daemon.socket}` : '';
  notices.say('info', `native-shell-service mcp: serving ${DECLARATIONS.length} tools for ${projectRoot} (containment: ${containment}${where})`);
  return { service, tools, closed, close: () => close('asked to stop') };
}
