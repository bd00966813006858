// What the tools tell the model about the sandbox (docs/sandbox.md): that a command ran
// confined and what it was allowed, and — when a failure looks like the sandbox refusing
// (a write outside, a connection refused) — that it probably was, and which setting
// allows it. Only said when the job was sandboxed; an unconfined job's text is unchanged.
import type { RunResult, SandboxInfo } from '../contract/addon.js';

/** The setting names of each host, to name in a hint. */
export interface SandboxSettingNames {
  write: string;
  network: string;
  ports: string;
  /** What gives a hidden path (a credential store, another job's output) back. */
  readAllow?: string;
}

/** The names of the programmatic config (ShellToolsConfig.sandbox). */
export const CONFIG_SETTINGS: SandboxSettingNames = {
  write: 'sandbox.write',
  network: 'sandbox.network',
  ports: 'sandbox.network.tcpPorts',
  readAllow: 'sandbox.readAllow',
};

/** The names of the MCP server's flags. */
export const MCP_SETTINGS: SandboxSettingNames = {
  write: '--sandbox-write PATH',
  network: '--sandbox-network',
  ports: '--sandbox-ports',
  readAllow: '--sandbox-read-allow PATH',
};

/** One line: what confined the job. */
export function sandboxLine(info: SandboxInfo): string {
  const network =
    info.network === 'all'
      ? 'allowed'
      : info.network === 'ports'
        ? `TCP ports ${info.tcpPorts.join(', ')} only`
        : 'none';
  const writes = info.write.filter((p) => !p.startsWith('/dev/')).join(', ');
  return `Sandbox: on (writable: ${writes}; network: ${network}${info.read ? '; reads limited to the project and system paths' : ''})`;
}

// Messages of a refused write or connection, in the words of coreutils, bash, Python,
// Node and curl.
const WRITE_REFUSED = /Permission denied|Operation not permitted|EACCES|EPERM|Read-only file system/;
const NETWORK_REFUSED =
  /Operation not permitted|Permission denied|EPERM|EACCES|Could not resolve host|Temporary failure in name resolution|getaddrinfo|Network is unreachable|Couldn't connect|ECONNREFUSED/;

/** A hint when a sandboxed command failed the way a refusal fails; null otherwise. */
export function refusalHint(result: RunResult, names: SandboxSettingNames = CONFIG_SETTINGS): string | null {
  const info = result.sandbox;
  if (!info) return null;
  const failed = (result.exitCode !== null && result.exitCode !== 0) || result.status === 'failed';
  if (!failed) return null;
  const text = `${result.output}\n${result.stderr}\n${result.error ?? ''}`;
  const hints: string[] = [];
  // A hidden path the failure names (docs/sandbox.md, "Secrets and other jobs' output"):
  // a refused read there, not a write.
  const hidden = WRITE_REFUSED.test(text) ? (info.readDenied ?? []).find((p) => text.includes(p)) : undefined;
  if (hidden !== undefined) {
    hints.push(
      `${hidden} is hidden from sandboxed commands (credentials, other jobs' output)${names.readAllow ? `; only the user can give it back (${names.readAllow})` : ''}`,
    );
  } else if (WRITE_REFUSED.test(text)) {
    hints.push(`writes outside ${info.write.filter((p) => !p.startsWith('/dev/')).join(', ')} are refused (allow a path with ${names.write})`);
  }
  if (info.network !== 'all' && NETWORK_REFUSED.test(text)) {
    hints.push(
      info.network === 'ports'
        ? `only TCP ports ${info.tcpPorts.join(', ')} may be used (more with ${names.ports})`
        : `the network is off (allow it with ${names.network}, or some ports with ${names.ports})`,
    );
  }
  if (hints.length === 0) return null;
  return `This failure looks like the sandbox refusing: ${hints.join('; ')}. Do not retry the same way; work inside the allowed paths, or ask the user to change the setting.`;
}

/** The lines `run_shell_command` and `shell_cmd` add for a sandboxed job. */
export function sandboxLines(result: RunResult, names: SandboxSettingNames = CONFIG_SETTINGS): string[] {
  if (!result.sandbox) return [];
  const hint = refusalHint(result, names);
  return hint ? [sandboxLine(result.sandbox), hint] : [sandboxLine(result.sandbox)];
}
