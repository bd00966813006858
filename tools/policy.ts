// Command policy: the addon's `checkCommand` (a real bash parser: quoting, escapes,
// here-documents, wrappers such as sudo/env/xargs, substitutions anywhere bash runs them).

import { type CommandCheck, type CommandPolicy, loadAddon } from '../contract/addon.js';

export type { CommandCheck, CommandPolicy };

/**
 * Decides whether `command` may run under `policy` (`allow`, `deny` or `ask`, with the
 * command's roots and a reason). Throws `INVALID_ARGUMENT` for a command over the size
 * limit.
 */
export function checkCommand(command: string, policy: CommandPolicy = {}): CommandCheck {
  return loadAddon().checkCommand(command, {
    excludeTools: policy.excludeTools ?? [],
    coreTools: policy.coreTools ?? [],
    sessionApprovals: policy.sessionApprovals ?? [],
  });
}
