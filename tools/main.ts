// The entry of the bundled command, dist/native-shell-service.cjs (scripts/bundle.mjs:
// esbuild puts this, the tools and the MCP SDK in one file, so the package needs no
// dependency at run time). bin/native-shell-service.js calls `start`; the Gemini CLI
// extension (gemini-extension.json) runs the file itself with `node`.
import { main } from './cli.js';
import { runDaemonWithMcp } from './daemon-front.js';
import { runMcpUpstream } from './mcp-upstream.js';

/** Runs the command with this process's arguments and sets its exit code. */
export function start(argv: string[] = process.argv.slice(2)): void {
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`native-shell-service: ${e instanceof Error && e.stack ? e.stack : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * `native-shell-service daemon --listen ...` (bin/native-shell-service.js): the daemon
 * binary `bin` with the MCP Streamable HTTP server beside it; exits with its status.
 */
export function startDaemonWithMcp(bin: string, args: string[]): void {
  runDaemonWithMcp(bin, args).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`native-shell-service daemon: ${e instanceof Error && e.stack ? e.stack : String(e)}\n`);
      process.exit(1);
    },
  );
}

/**
 * `native-shell-service mcp-upstream ...` (bin/native-shell-service.js): the MCP server a
 * daemon started with `--mcp-server` runs as its child (tools/mcp-upstream.ts).
 */
export function startMcpUpstream(args: string[]): void {
  runMcpUpstream(args).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`native-shell-service mcp-upstream: ${e instanceof Error && e.stack ? e.stack : String(e)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) start();
