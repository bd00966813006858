// What send_input writes to a shell, as the lines the shell will run: text and named keys
// become complete lines (up to a newline, `\r` or Enter), a trailing partial line, and
// whether keys edited a line (so its text is not what the shell sees). Pure: the policy
// applied to these lines is in shell-input-policy.ts.

/** Shells whose syntax `checkCommand` parses (src/policy/ parses bash; these read it). */
const PARSED_SHELLS = new Set(['bash', 'rbash', 'sh', 'dash', 'zsh', 'ksh', 'ksh93', 'mksh', 'pdksh', 'ash', 'yash', 'posh']);
/** Shells with a syntax of their own: their lines are commands we cannot read fully. */
const OTHER_SHELLS = new Set(['fish', 'csh', 'tcsh', 'nu', 'elvish', 'xonsh', 'pwsh', 'rc', 'es']);

export type ShellKind = 'parsed' | 'other';

/**
 * Whether the program named `foreground` (a process name as the kernel reports it,
 * see src/input_wait.rs) is a shell, and whether its syntax is parsed. A login shell's
 * name starts with `-` (`-bash`).
 */
export function shellKind(foreground: string | null | undefined): ShellKind | null {
  if (!foreground) return null;
  const name = foreground.replace(/^-/, '');
  if (PARSED_SHELLS.has(name)) return 'parsed';
  if (OTHER_SHELLS.has(name)) return 'other';
  return null;
}

/** A line the shell will run, or the partial line it holds after the call. */
export interface ShellLine {
  text: string;
  /** Keys or control characters edited or recalled the line: the shell's text is not `text`. */
  edited: boolean;
  /** C-c came before this line (in this call): an unfinished command before it was dropped. */
  afterCancel: boolean;
}

/** The shell's line buffer between two calls (kept per handle in the shared state). */
export interface PendingLine {
  text: string;
  edited: boolean;
}

export interface SplitInput {
  /** Lines completed by this call, in order. */
  lines: ShellLine[];
  /** What the shell holds unfinished after this call (empty text when nothing). */
  partial: ShellLine;
}

/** Keys that end a line: `Enter`/`Return` send `\r`, `C-m` is `\r`, `C-j` is `\n` (src/job/keys.rs). */
const LINE_END_KEYS = new Set(['Enter', 'Return', 'C-m', 'Ctrl-m', 'C-M', 'Ctrl-M', 'C-j', 'Ctrl-j', 'C-J', 'Ctrl-J']);
const CANCEL_KEYS = new Set(['C-c', 'Ctrl-c', 'C-C', 'Ctrl-C']);
const EOF_KEYS = new Set(['C-d', 'Ctrl-d', 'C-D', 'Ctrl-D']);

type Token = { kind: 'text'; text: string } | { kind: 'end' } | { kind: 'cancel' } | { kind: 'eof' } | { kind: 'edit' };

function textTokens(input: string): Token[] {
  const tokens: Token[] = [];
  let run = '';
  for (const ch of input) {
    const code = ch.codePointAt(0) ?? 0;
    const control = code < 0x20 || code === 0x7f;
    if (!control) {
      run += ch;
      continue;
    }
    if (run) tokens.push({ kind: 'text', text: run });
    run = '';
    if (ch === '\n' || ch === '\r') tokens.push({ kind: 'end' });
    else if (code === 0x03) tokens.push({ kind: 'cancel' });
    else if (code === 0x04) tokens.push({ kind: 'eof' });
    // Tab completes, DEL/Backspace and ESC sequences edit, C-r/C-p recall history.
    else tokens.push({ kind: 'edit' });
  }
  if (run) tokens.push({ kind: 'text', text: run });
  return tokens;
}

function keyToken(name: string): Token {
  if (LINE_END_KEYS.has(name)) return { kind: 'end' };
  if (CANCEL_KEYS.has(name)) return { kind: 'cancel' };
  if (EOF_KEYS.has(name)) return { kind: 'eof' };
  if (name === 'Space') return { kind: 'text', text: ' ' };
  return { kind: 'edit' };
}

/**
 * Splits one send_input call into the lines the shell will run, starting from the
 * partial line `pending` left by earlier calls. The write order is the service's
 * (src/service.rs `prepare_input`): `input`, its newline, then `keys`.
 */
export function splitShellInput(pending: PendingLine, input: string, keys: string[], appendNewline: boolean): SplitInput {
  const tokens = textTokens(input);
  if (appendNewline && (input !== '' || keys.length === 0)) tokens.push({ kind: 'end' });
  tokens.push(...keys.map(keyToken));

  const lines: ShellLine[] = [];
  let text = pending.text;
  let edited = pending.edited;
  let cancelled = false;
  for (const token of tokens) {
    switch (token.kind) {
      case 'text':
        text += token.text;
        break;
      case 'end':
        lines.push({ text, edited, afterCancel: cancelled });
        text = '';
        edited = false;
        cancelled = false;
        break;
      case 'cancel':
        // A shell's line editor drops the line (and an unfinished command) on C-c;
        // the lines completed before it were read (and run) already.
        text = '';
        edited = false;
        cancelled = true;
        break;
      case 'eof':
        // On an empty line the shell reads end of input and exits: nothing runs.
        // On a non-empty one C-d deletes a character: the line is edited.
        if (text !== '') edited = true;
        break;
      case 'edit':
        edited = true;
        break;
    }
  }
  return { lines, partial: { text, edited, afterCancel: cancelled } };
}
