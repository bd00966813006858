// The differential corpus: every command runs through upstream and the adapter, in
// PTY and in pipes mode. `differs` names the fields where a mode is expected to
// differ, each with the id of its row in docs/gemini-compat.md ("Deliberate
// differences"); everything else must be equal.
import type { Case } from './harness';

export type Field = 'output' | 'exitCode' | 'signal' | 'aborted' | 'kinds';
/** PTY only: the text of the last grid sent, compared where the outputs agree. */
export type ViewField = 'view';
export type Diff = Partial<Record<Field | ViewField, string>>;

export interface CorpusCase extends Case {
  differs?: { pty?: Diff; pipes?: Diff };
  /** What the adapter must give where it differs (so a difference is never unchecked). */
  compat?: { pty?: Partial<Record<Field, unknown>>; pipes?: Partial<Record<Field, unknown>> };
  /** Only these modes (a full-screen editor needs a terminal). */
  modes?: Array<'pty' | 'pipes'>;
  /** Applied to both outputs before comparing (pids and the like). */
  normalize?: (output: string) => string;
}

const BIG = 'head -c 10000000 /dev/zero | tr "\\0" a | fold -w 99';
const BIG_OUTPUT = `${`${'a'.repeat(99)}\n`.repeat(101010)}${'a'.repeat(10)}`;
const D4 = { output: 'D4' } as const;

export const corpus: CorpusCase[] = [
  // plain output
  { name: 'echo', cmd: 'echo hello' },
  { name: 'several lines', cmd: 'echo one; echo two; echo three' },
  { name: 'no trailing newline', cmd: 'printf "no newline"' },
  { name: 'no output', cmd: 'true' },
  { name: 'only blank lines', cmd: 'printf "\\n\\n\\n"' },
  { name: 'leading blank lines', cmd: 'printf "\\n\\nafter two blanks\\n"' },
  { name: 'blank lines inside', cmd: 'printf "a\\n\\n\\nb\\n"' },
  { name: 'trailing spaces', cmd: 'printf "spaces   \\nend\\n"' },
  { name: 'seq 1000', cmd: 'seq 1 1000' },
  { name: 'pipeline', cmd: 'echo abc | tr a-z A-Z' },
  { name: 'sort', cmd: 'printf "b\\na\\nc\\n" | sort -r' },
  { name: 'heredoc', cmd: 'cat <<EOF\nline 1\nline 2\nEOF' },
  { name: 'long line wraps', cmd: 'printf "%0200d\\n" 7' },
  { name: 'very long line', cmd: 'printf "%5000s\\n" "" | tr " " x' },
  { name: 'yes | head', cmd: 'yes y | head -n 5' },
  { name: 'delayed output', cmd: 'sleep 0.3; echo done' },
  { name: 'hidden cursor', cmd: 'printf "\\033[?25lno cursor\\033[?25h\\n"' },
  { name: 'paced output', cmd: 'for i in 1 2 3; do echo tick $i; sleep 0.15; done' },
  // colours and escapes
  { name: 'red', cmd: 'printf "\\033[31mred\\033[0m\\n"' },
  { name: 'bold and underline', cmd: 'printf "\\033[1mbold\\033[0m \\033[4munder\\033[0m\\n"' },
  { name: '256 and truecolor', cmd: 'printf "\\033[38;5;202morange\\033[0m \\033[38;2;1;2;3mrgb\\033[0m\\n"' },
  { name: 'background colours', cmd: 'printf "\\033[41;97m alert \\033[0m \\033[7minv\\033[27m \\033[2;3mdim italic\\033[0m\\n"' },
  // The grid against upstream's, cell by cell: what compat/screen.ts lays out.
  { name: 'colour wraps', cmd: 'printf "\\033[41;97m%0150d\\033[0m tail\\n" 7' },
  { name: 'cursor mid-line', cmd: 'printf "abcdef\\033[3D"' },
  { name: 'cursor hidden at the end', cmd: 'printf "shown\\033[?25l"' },
  { name: 'showColor off', cmd: 'printf "\\033[1;31mred\\033[0m \\033[44mblue\\033[0m\\n"', config: { showColor: false } },
  { name: 'window of maxSerializedLines', cmd: 'seq 1 300', config: { maxSerializedLines: 50 } },
  // The sleep keeps upstream from losing the end at the exit (D5).
  { name: 'window of 2000 lines', cmd: 'seq 1 2500; sleep 0.3' },
  { name: 'no trimming', cmd: 'echo top', config: { disableDynamicLineTrimming: true } },
  {
    name: 'ends on the alternate screen',
    cmd: 'echo before; printf "\\033[?1049h\\033[H\\033[32mon alt\\033[0m\\n"',
    differs: { pty: { output: 'D2' } },
    compat: { pty: { output: 'before\non alt' } },
  },
  { name: 'erase in line', cmd: 'printf "old text\\r\\033[Knew\\n"', differs: { pipes: D4 }, compat: { pipes: { output: 'new' } } },
  // Multi-line redraws (cursor up, rewrite): the native text applies them as the screen does.
  { name: 'cursor up redraw', cmd: 'printf "a1\\nb1\\n\\033[2Aa2\\n\\033[1Bdone\\n"' },
  {
    name: 'cursor up redraw, paced',
    cmd: 'printf "a 0%%\\nb 0%%\\n"; sleep 0.2; printf "\\033[2Aa 50%%\\n\\033[Kb 50%%\\n"; sleep 0.2; printf "\\033[2Aa 100%%\\nb 100%%\\n"',
  },
  { name: 'ls --color', cmd: 'mkdir -p cdir && ls --color=always -d cdir && rmdir cdir' },
  { name: 'OSC title', cmd: 'printf "\\033]0;a title\\007visible\\n"' },
  { name: 'bell', cmd: 'printf "a\\007b\\n"', differs: { pipes: D4 }, compat: { pipes: { output: 'ab' } } },
  { name: 'cursor left', cmd: 'printf "abcdef\\033[3Dxy\\n"', differs: { pipes: D4 }, compat: { pipes: { output: 'abcxyf' } } },
  {
    name: 'clear screen',
    cmd: 'printf "gone\\n\\033[2J\\033[Hkept\\n"',
    differs: { pty: { output: 'D2' } },
    compat: { pty: { output: 'gone\nkept' } },
  },
  { name: 'backspace', cmd: 'printf "abc\\bd\\n"', differs: { pipes: D4 }, compat: { pipes: { output: 'abd' } } },
  { name: 'CRLF', cmd: 'printf "a\\r\\nb\\r\\n"', differs: { pipes: D4 }, compat: { pipes: { output: 'a\nb' } } },
  // stderr
  { name: 'stderr only', cmd: 'echo oops >&2' },
  // Upstream reads two pipes and may reorder them; the adapter keeps the written order.
  {
    name: 'stdout and stderr',
    cmd: 'echo out; echo err >&2; echo out2',
    differs: { pipes: { output: 'D6' } },
    compat: { pty: { output: 'out\nerr\nout2' }, pipes: { output: 'out\nerr\nout2' } },
  },
  {
    name: 'interleaved streams',
    cmd: 'for i in 1 2 3 4 5; do echo "o$i"; echo "e$i" >&2; done',
    differs: { pipes: { output: 'D6' } },
    compat: { pipes: { output: 'o1\ne1\no2\ne2\no3\ne3\no4\ne4\no5\ne5' } },
  },
  { name: 'ls missing', cmd: 'ls /definitely/not/here' },
  // exit codes
  { name: 'exit 1', cmd: 'exit 1' },
  { name: 'exit 42 after output', cmd: 'echo before; exit 42' },
  { name: 'exit 255', cmd: 'exit 255' },
  { name: 'false', cmd: 'false' },
  { name: 'command not found', cmd: 'definitely_not_a_command_xyz' },
  { name: 'set -e', cmd: 'set -e; echo a; false; echo never' },
  { name: 'subshell exit', cmd: '(exit 3); echo "sub=$?"' },
  // signals
  { name: 'SIGTERM self', cmd: 'echo a; kill -TERM $$' },
  { name: 'SIGKILL self', cmd: 'kill -KILL $$' },
  { name: 'SIGINT self', cmd: 'echo before; kill -INT $$' },
  { name: 'SIGHUP self', cmd: 'kill -HUP $$', differs: { pty: { signal: 'D3' } }, compat: { pty: { exitCode: 0, signal: 0 } } },
  {
    name: 'child killed',
    cmd: 'sleep 5 & kill -9 $!; wait $!; echo "status=$?"',
    normalize: (o) => o.replace(/line 1: +\d+ Killed +/, 'line 1: PID Killed '),
    differs: { pipes: { output: 'D6' } },
    compat: { pipes: { output: '/usr/bin/bash: line 1: PID Killed sleep 5\nstatus=137' } },
  },
  // Unicode, tabs and wide characters
  // Upstream's grid puts a filler space after each wide character ("日 本 語").
  { name: 'CJK', cmd: 'echo 日本語のテキスト', differs: { pty: { view: 'D17' } } },
  { name: 'emoji', cmd: 'echo "ok 👍🏽 🎉"' },
  { name: 'combining', cmd: 'printf "e\\xcc\\x81 cafe\\xcc\\x81\\n"' },
  { name: 'RTL', cmd: 'echo "שלום עולם"' },
  { name: 'tab', cmd: 'printf "a\\tb\\n"', differs: { pty: { output: 'D1' } }, compat: { pty: { output: 'a\tb' } } },
  {
    name: 'tab table',
    cmd: 'printf "name\\tsize\\nx\\t1\\nlonger\\t22\\n"',
    differs: { pty: { output: 'D1' } },
    compat: { pty: { output: 'name\tsize\nx\t1\nlonger\t22' } },
  },
  {
    name: 'wide + tab',
    cmd: 'printf "日本\\tx\\n"',
    differs: { pty: { output: 'D1', view: 'D17' } },
    compat: { pty: { output: '日本\tx' } },
  },
  // carriage-return progress
  { name: 'progress', cmd: 'printf "10%%\\r20%%\\r100%%\\n"', differs: { pipes: D4 }, compat: { pipes: { output: '100%' } } },
  {
    name: 'progress paced',
    cmd: 'for i in 1 2 3 4; do printf "\\rstep %d/4" $i; sleep 0.05; done; echo',
    differs: { pipes: D4 },
    compat: { pipes: { output: 'step 4/4' } },
  },
  {
    name: 'progress no newline',
    cmd: 'printf "loading\\rdone   "',
    differs: { pipes: D4 },
    compat: { pty: { output: 'done   ' }, pipes: { output: 'done' } },
  },
  // binary
  { name: 'zeros', cmd: 'head -c 2000 /dev/zero' },
  { name: 'NUL in text', cmd: 'printf "x\\0y\\n"' },
  { name: 'gzip stream', cmd: 'printf "aaaaaaaaaa" | gzip -c' },
  { name: 'text then binary', cmd: 'echo header; sleep 0.3; head -c 4096 /dev/zero' },
  // volume
  // Upstream's PTY path sometimes drops the end of the output at exit: compare to the truth.
  {
    name: '10 MB',
    cmd: BIG,
    // The pipes-mode events skip what a flood pushed out of memory (D7); the result is whole.
    differs: { pty: { output: 'D5' }, pipes: { view: 'D7' } },
    compat: { pty: { output: BIG_OUTPUT }, pipes: { output: BIG_OUTPUT } },
  },
  // abort
  { name: 'abort mid-run', cmd: 'echo started; sleep 10; echo never', abortAfterMs: 500 },
  { name: 'abort with trap', cmd: 'trap "echo trapped; exit 7" TERM; echo ready; sleep 10 & wait', abortAfterMs: 500 },
  // background jobs
  { name: 'background &', cmd: 'sleep 0.2 & echo started bg' },
  { name: 'background then wait', cmd: '(sleep 0.2; echo from bg) & wait; echo done' },
  // cd and environment
  { name: 'pwd', cmd: 'pwd | sed "s|.*/||"', cwd: 'sub' },
  { name: 'cd relative', cmd: 'cd deeper && pwd | sed "s|.*/||"', cwd: 'sub' },
  { name: 'cd /tmp', cmd: 'cd /tmp && pwd' },
  { name: 'GEMINI_CLI', cmd: 'echo "$GEMINI_CLI"' },
  { name: 'pagers', cmd: 'echo "$PAGER $GIT_PAGER"' },
  { name: 'TERM', cmd: 'echo "$TERM"' },
  { name: 'git overrides', cmd: 'echo "$GIT_CONFIG_COUNT $GIT_CONFIG_KEY_0 $GIT_TERMINAL_PROMPT $GIT_CONFIG_GLOBAL"' },
  { name: 'export', cmd: 'export X=41; X=$((X+1)); echo $X' },
  { name: 'env prefix', cmd: 'FOO=bar sh -c "echo \\$FOO"' },
  { name: 'custom env', cmd: 'echo "$COMPAT_CUSTOM"', config: { env: { ...process.env, COMPAT_CUSTOM: 'custom-value' } } },
  {
    name: 'redacted secret',
    cmd: 'echo "[$COMPAT_API_TOKEN] [$COMPAT_PLAIN]"',
    config: {
      env: { ...process.env, COMPAT_API_TOKEN: 'secret-value', COMPAT_PLAIN: 'plain' },
      sanitizationConfig: {
        allowedEnvironmentVariables: [],
        blockedEnvironmentVariables: ['COMPAT_PLAIN'],
        enableEnvironmentVariableRedaction: true,
      },
    },
  },
  { name: 'dotglob off', cmd: 'touch .hidden visible; echo *; rm -f .hidden visible' },
  // terminal
  { name: 'is a tty', cmd: 'test -t 1 && echo tty || echo notty' },
  { name: 'stty size', cmd: 'stty size 2>/dev/null || echo none' },
  { name: 'tput cols', cmd: 'tput cols 2>/dev/null || echo none' },
  // interactive programs fed through writeToPty
  {
    name: 'read a line',
    cmd: 'printf "name? "; read -r n; echo "hi $n"',
    input: [{ after: /name\?/, delayMs: 1500, text: 'bob\n' }],
  },
  {
    name: 'less, quit with q',
    cmd: 'printf "l1\\nl2\\n" | less',
    input: [{ after: /l2/, delayMs: 3000, text: 'q' }],
    differs: { pty: { output: 'D2' } },
    compat: { pty: { output: 'l1\nl2' }, pipes: { output: 'l1\nl2' } },
  },
  {
    name: 'vim: insert, write, quit',
    cmd: 'rm -f v.txt; vim -u NONE -N -n v.txt && cat v.txt && rm v.txt',
    modes: ['pty'],
    input: [
      { after: /~/, delayMs: 3000, text: 'ihello from vim\x1b' },
      { delayMs: 300, text: ':wq\r' },
    ],
    // vim's last message line, drawn after it left the alternate screen, stays in the text log.
    differs: { pty: { output: 'D2' } },
    compat: { pty: { output: '"v.txt" [New] 1L, 15B written\nhello from vim', exitCode: 0 } },
  },
  {
    name: 'cat echo',
    cmd: 'head -n 2',
    input: [
      { delayMs: 400, text: 'first\n' },
      { delayMs: 400, text: 'second\n' },
    ],
    // node-pty sometimes reports this exit as SIGHUP (the terminal hung up on it).
    differs: { pty: { signal: 'D3' } },
    compat: { pty: { output: 'first\nfirst\nsecond\nsecond', exitCode: 0, signal: 0 } },
  },
];
