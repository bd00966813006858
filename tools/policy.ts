// Command policy: the native `checkCommand` (a real bash parser) when the addon has it,
// otherwise a small fallback: substitution refused, prefix allow/deny lists per command.
import { loadAddon } from './addon.js';

/** Tool lists in the Gemini CLI's settings syntax, e.g. `run_shell_command(git)`. */
export interface CommandPolicy {
  /** Denylist: a command matching any entry is refused. */
  excludeTools?: string[];
  /** Allowlist: commands matching these run without asking. */
  coreTools?: string[];
  /** Commands approved earlier in this session; they allow like `coreTools`. */
  sessionApprovals?: string[];
}

export interface CommandCheck {
  decision: 'allow' | 'deny' | 'ask';
  roots: string[];
  subcommands: string[];
  hasSubstitution: boolean;
  hasRedirection: boolean;
  reason: string;
}

type NativeCheck = (command: string, policy?: CommandPolicy) => CommandCheck;

/** The native checker, or null while the addon does not export one. */
export function nativeCheckCommand(): NativeCheck | null {
  const fn = (loadAddon() as { checkCommand?: unknown }).checkCommand;
  return typeof fn === 'function' ? (fn as NativeCheck) : null;
}

/** Decides whether `command` may run. Throws only for input the checker refuses outright. */
export function checkCommand(command: string, policy: CommandPolicy = {}): CommandCheck {
  const native = nativeCheckCommand();
  if (native) {
    return native(command, {
      excludeTools: policy.excludeTools ?? [],
      coreTools: policy.coreTools ?? [],
      sessionApprovals: policy.sessionApprovals ?? [],
    });
  }
  return fallbackCheckCommand(command, policy);
}

// ---------------------------------------------------------------------------------
// Fallback, used only while the native checker is missing.

interface Segment {
  words: string[];
  text: string;
}

export function fallbackCheckCommand(command: string, policy: CommandPolicy = {}): CommandCheck {
  const scan = scanCommand(command);
  const roots = [...new Set(scan.segments.map((s) => s.words[0]).filter((w): w is string => !!w))];
  const base = {
    roots,
    subcommands: scan.segments.map((s) => s.text),
    hasSubstitution: scan.substitution !== null,
    hasRedirection: scan.redirection,
  };
  if (scan.substitution) {
    return {
      ...base,
      decision: 'deny',
      reason: `command substitution (${scan.substitution}) is not allowed: it runs a command that cannot be checked before it runs`,
    };
  }
  const deny = parseRules(policy.excludeTools ?? []);
  const allow = parseRules([...(policy.coreTools ?? []), ...(policy.sessionApprovals ?? [])]);
  for (const rule of deny) {
    if (rule.words.length === 0) {
      return { ...base, decision: 'deny', reason: `every shell command is blocked by excludeTools entry \`${rule.entry}\`` };
    }
    const hit = scan.segments.find((s) => matches(rule.words, s.words, true));
    if (hit) {
      return { ...base, decision: 'deny', reason: `\`${hit.text}\` is blocked by excludeTools entry \`${rule.entry}\`` };
    }
  }
  if (scan.segments.length === 0) {
    return { ...base, decision: 'ask', reason: 'there is no command to check' };
  }
  for (const segment of scan.segments) {
    if (!allow.some((rule) => rule.words.length === 0 || matches(rule.words, segment.words, false))) {
      const why = allow.length === 0 ? 'no coreTools or sessionApprovals entries are set' : 'it is not covered by coreTools or sessionApprovals';
      return { ...base, decision: 'ask', reason: `\`${segment.text}\` needs confirmation: ${why}` };
    }
  }
  return { ...base, decision: 'allow', reason: 'every command is covered by coreTools or sessionApprovals' };
}

interface Rule {
  entry: string;
  words: string[];
}

function parseRules(entries: string[]): Rule[] {
  const rules: Rule[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    const m = /^(run_shell_command|ShellTool)\s*(?:\((.*)\))?$/s.exec(entry);
    if (!m) continue;
    rules.push({ entry, words: m[2] === undefined ? [] : scanCommand(m[2]).segments[0]?.words ?? [] });
  }
  return rules;
}

function matches(ruleWords: string[], words: string[], deny: boolean): boolean {
  if (words.length < ruleWords.length) return false;
  return ruleWords.every((r, i) => {
    const w = words[i] as string;
    return w === r || (deny && i === 0 && w.split('/').pop() === r);
  });
}

interface Scan {
  segments: Segment[];
  substitution: string | null;
  redirection: boolean;
}

/** Splits on unquoted `;`, `&`, `|`, newlines; notes substitutions and redirections. */
function scanCommand(command: string): Scan {
  const segments: Segment[] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let text = '';
  let quote: "'" | '"' | null = null;
  let substitution: string | null = null;
  let redirection = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endSegment = () => {
    endWord();
    // Leading VAR=value assignments are not the command.
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) words.shift();
    if (words.length > 0) segments.push({ words, text: text.trim() });
    words = [];
    text = '';
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    const next = command[i + 1];
    if (quote === "'") {
      text += c;
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (c === '\\' && next !== undefined) {
      text += c + next;
      word += next;
      inWord = true;
      i++;
      continue;
    }
    if (c === '`') substitution ??= 'backticks';
    if (c === '$' && next === '(') substitution ??= '$()';
    if (quote === '"') {
      text += c;
      if (c === '"') quote = null;
      else word += c;
      continue;
    }
    if ((c === '<' || c === '>') && next === '(') substitution ??= `${c}()`;
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      text += c;
      continue;
    }
    if (c === '#' && !inWord) {
      while (i < command.length && command[i] !== '\n') i++;
      endSegment();
      continue;
    }
    if (c === ';' || c === '&' || c === '|' || c === '\n') {
      if (c === '&' && (command[i - 1] === '>' || next === '>')) {
        text += c;
        continue;
      }
      endSegment();
      continue;
    }
    if (c === '>') {
      const rest = command.slice(i + 1).replace(/^[>|&]?\s*/, '');
      if (!rest.startsWith('/dev/null') && !/^\d/.test(rest)) redirection = true;
    }
    if (c === '(' || c === ')' || c === '{' || c === '}') {
      endWord();
      text += c;
      continue;
    }
    if (/\s/.test(c)) {
      endWord();
      text += c;
      continue;
    }
    word += c;
    inWord = true;
    text += c;
  }
  endSegment();
  return { segments, substitution, redirection };
}
