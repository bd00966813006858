// What the server has to say that is not an error goes to the client as MCP logging
// (`notifications/message`), not to stderr: clients show a stdio server's stderr as
// errors (Claude Code logs each line as [ERROR]), so stderr carries only real errors.
// Messages said before the client's `initialized` wait for it: the spec allows a
// server no notification but pings and logging before then, and a client that has not
// finished its handshake may drop them.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js' with { 'resolution-mode': 'import' };

export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error';

/** The `logger` name the messages carry. */
export const LOGGER = 'native-shell-service';

export class ClientLog {
  private server: Server | null = null;
  private pending: Array<{ level: LogLevel; data: string }> | null = [];

  /** Sends `data` to the client (a failed send is dropped: the client is gone). */
  say(level: LogLevel, data: string): void {
    if (this.pending) {
      this.pending.push({ level, data });
      return;
    }
    this.server?.sendLoggingMessage({ level, logger: LOGGER, data }).catch(() => {});
  }

  /** The server to send through; what was said before is sent once the client is initialized. */
  attach(server: Server): void {
    this.server = server;
    const before = server.oninitialized;
    server.oninitialized = () => {
      before?.();
      const queued = this.pending ?? [];
      this.pending = null;
      for (const { level, data } of queued) this.say(level, data);
    };
  }
}
