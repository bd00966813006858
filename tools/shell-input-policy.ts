// The command policy on send_input to a shell: every line the shell will run is checked
// like a run_shell_command command (run-shell-command.ts `checkedCommand`), the strictest
// answer wins, and `onAsk` applies once to the whole call.
import type { ShellInputState, ShellToolInvocation } from './base.js';
import { applyOnAsk, checkedCommand } from './run-shell-command.js';
import { type ShellKind, type ShellLine, shellKind, splitShellInput } from './shell-input.js';
import type { PolicyDecision } from './types.js';

/** The answer for one send_input call, and what the shell holds once it is written. */
export interface ShellInputDecision extends PolicyDecision {
  /** The shell's name when the input goes to a shell, else null (nothing is checked). */
  shell: string | null;
  /** The lines checked, in order (a trailing partial line included). */
  lines: string[];
  /** The line that was refused (`deny`), if any. */
  refusedLine?: string;
  /** What to remember for the handle once the input is written (null: forget it). */
  next: ShellInputState | null;
}

interface LineVerdict {
  decision: PolicyDecision['decision'];
  reason: string;
  roots: string[];
  /** The line ends nothing: with the unfinished command before it, it still does not parse. */
  stillOpen: boolean;
  /** The unfinished command's text including this line. */
  joined: string;
}

const RANK = { allow: 0, ask: 1, deny: 2 } as const;

/** The reason `checkCommand` gives text it cannot parse (src/policy/mod.rs). */
const DOES_NOT_PARSE = 'the command does not parse as bash';

function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function judgeLine(
  invocation: ShellToolInvocation<object>,
  shell: string,
  kind: ShellKind,
  line: ShellLine,
  open: string,
): LineVerdict {
  const joined = open ? `${open}\n${line.text}` : line.text;
  // The line alone, and with the unfinished command it continues (`echo 'a` then
  // `b'; rm -rf x` runs rm): the stricter answer counts.
  const alone = checkedCommand(invocation, line.text);
  const continued = open ? checkedCommand(invocation, joined) : null;
  const checks = continued ? [alone, continued] : [alone];
  const roots = [...new Set(checks.flatMap((c) => c.roots))];
  // A shell whose syntax is not parsed is judged like run_shell_command judges
  // `fish -c '...'` (code it cannot read), and the bash reading of the line still counts.
  if (kind === 'other') checks.push(checkedCommand(invocation, `${shell} -c ${singleQuoted(line.text)}`));
  let worst = alone;
  for (const c of checks) if (RANK[c.decision] > RANK[worst.decision]) worst = c;
  let { decision, reason } = worst;
  if (line.edited && decision !== 'deny') {
    decision = 'ask';
    reason = 'keys or control characters (Tab, arrows, Backspace, C-r, ...) edit this line, so what the shell runs is not the text sent';
  }
  if (open && decision !== 'allow') {
    reason += ` (the line continues the unfinished command ${JSON.stringify(open)} sent before; send keys ["C-c"] to drop it)`;
  }
  const last = continued ?? alone;
  const stillOpen = last.decision !== 'deny' && last.reason.startsWith(DOES_NOT_PARSE);
  return { decision, reason, roots, stillOpen, joined };
}

/**
 * Decides whether a send_input call may write to job `handle` whose input reaches
 * `foreground` now. Input to a program that is not a shell is allowed unchecked.
 */
export function shellInputDecision(
  invocation: ShellToolInvocation<object>,
  handle: number,
  foreground: string | null | undefined,
  input: string,
  keys: string[],
  appendNewline: boolean,
): ShellInputDecision {
  const kind = shellKind(foreground);
  if (!kind || !foreground) {
    return { decision: 'allow', reason: 'the input goes to a program that is not a shell', roots: [], shell: null, lines: [], next: null };
  }
  const shell = foreground.replace(/^-/, '');
  const before = invocation.state.shellInput.get(handle) ?? { partial: { text: '', edited: false }, open: '' };
  const split = splitShellInput(before.partial, input, keys, appendNewline);
  const checked: Array<{ text: string; verdict: LineVerdict }> = [];
  let open = before.open;
  for (const line of split.lines) {
    if (line.afterCancel) open = '';
    // An empty line runs nothing (and changes no unfinished command).
    if (line.text.trim() === '' && !line.edited) continue;
    const verdict = judgeLine(invocation, shell, kind, line, open);
    checked.push({ text: line.text, verdict });
    open = verdict.stillOpen ? verdict.joined : '';
  }
  if (split.partial.afterCancel) open = '';
  // A partial line is checked as if it were complete: a later call can complete it
  // with a bare Enter, which alone would show nothing to check.
  if (split.partial.text.trim() !== '' || split.partial.edited) {
    checked.push({ text: split.partial.text, verdict: judgeLine(invocation, shell, kind, split.partial, open) });
  }
  const next: ShellInputState = { partial: { text: split.partial.text, edited: split.partial.edited }, open };
  const lines = checked.map((c) => c.text);
  const roots = [...new Set(checked.flatMap((c) => c.verdict.roots))];
  const denied = checked.find((c) => c.verdict.decision === 'deny');
  if (denied) {
    return {
      decision: 'deny',
      reason: `line ${JSON.stringify(denied.text)}: ${denied.verdict.reason}`,
      roots,
      shell,
      lines,
      refusedLine: denied.text,
      next,
    };
  }
  const asked = checked.filter((c) => c.verdict.decision === 'ask');
  if (asked.length > 0) {
    const reason = asked.map((c) => `line ${JSON.stringify(c.text)}: ${c.verdict.reason}`).join('; ');
    const ask: PolicyDecision = { decision: 'ask', reason, roots };
    const decided = applyOnAsk(invocation.config, ask);
    const refusedLine = decided.decision === 'deny' ? asked[0]?.text : undefined;
    return { ...decided, shell, lines, next, ...(refusedLine !== undefined ? { refusedLine } : {}) };
  }
  const reason = checked.length === 0 ? 'no line is completed' : 'every line is covered by coreTools or sessionApprovals';
  return { decision: 'allow', reason, roots, shell, lines, next };
}
