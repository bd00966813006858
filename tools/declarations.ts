// The five function declarations: names, parameters and defaults come from the seeds.
import type { FunctionDeclaration, JsonSchema } from './types.js';

/** Defaults the seeds fix; the tool classes read them from here. */
export const DEFAULTS = {
  runCallbackDelaySeconds: 5,
  sendInputCallbackDelaySeconds: 3,
  maxOutputSize: 16384,
  appendNewline: true,
  shellCmdTimeoutMs: 30000,
  /** How long a send_input waits for `ai_callback_pattern` before giving up (docs/tools.md). */
  patternTimeoutMs: 30000,
} as const;

/** Upper bounds the service accepts. */
export const LIMITS = {
  /** A day, in seconds. */
  delaySeconds: 86400,
  /** 64 MiB. */
  maxOutputSize: 64 * 1024 * 1024,
  /** A day, in milliseconds. */
  timeoutMs: 86400000,
  /** The longest command (bytes) the service and the policy accept. */
  commandBytes: 128 * 1024,
} as const;

/** The key names the service understands, in a canonical spelling. */
export const KEY_NAMES: readonly string[] = [
  ...'abcdefghijklmnopqrstuvwxyz'.split('').map((c) => `C-${c}`),
  'Enter',
  'Tab',
  'Escape',
  'Backspace',
  'Space',
  'Up',
  'Down',
  'Left',
  'Right',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  'Delete',
];

const handle = (what: string): JsonSchema => ({
  type: 'integer',
  minimum: 1,
  description: what,
});

export const RUN_SHELL_COMMAND: FunctionDeclaration = {
  name: 'run_shell_command',
  description: [
    'Runs a shell command with `bash -c` (`cmd.exe /c` on Windows) in a terminal and returns Handle, Command, Directory, Status, Stdout, Stderr, Error, Exit Code, Signal and Background PIDs. In a terminal, stderr is interleaved with stdout.',
    'The call returns when the command exits, when `ai_callback_pattern` appears in its output, or after `ai_callback_delay` seconds (default 5), whichever comes first. A command still running then keeps running under its Handle: talk to it with `send_input`, list it with `jobs`, stop it with `kill`.',
    "For interactive programs start them with their prompt as the pattern, e.g. `ed -p 'ED> ' file.txt` with ai_callback_pattern `ED> `, or `python3` with `>>> `. Servers and watchers: run them in the foreground with their ready line as the pattern; they stay alive under the Handle, their output readable. A trailing `&` also works: its PIDs are reported as Background PIDs. Either way, stop them with `kill` when done.",
    'For long builds or tests pass a larger ai_callback_delay (e.g. 300), or keep waiting later with send_input(handle, input="", append_newline=false, ai_callback_delay=60).',
    'Each call is a fresh shell: `cd` and variables do not carry over (use `directory`). Command substitution ($(), backticks, <(), >()) is refused. Avoid commands that wait for input you do not intend to send.',
  ].join(' '),
  parametersJsonSchema: {
    type: 'object',
    properties: {
      command: {
        type: 'string',
        minLength: 1,
        description: 'The exact bash command to run. Pipes, redirection, `&&`, `||`, `;` and a trailing `&` work.',
      },
      description: {
        type: 'string',
        description:
          'A brief description of what the command does, shown to the user when it asks for confirmation and in `jobs`.',
      },
      directory: {
        type: 'string',
        description:
          'The directory to run in, relative to the project root (default: the project root). Absolute paths and `..` escapes are refused.',
      },
      ai_callback_delay: {
        type: 'number',
        minimum: 0,
        maximum: LIMITS.delaySeconds,
        default: DEFAULTS.runCallbackDelaySeconds,
        description:
          'Seconds to wait before returning if the command has not exited and the pattern has not appeared (default: 5). The command keeps running after that.',
      },
      ai_callback_pattern: {
        type: 'string',
        description:
          "A regular expression; the call returns as soon as it appears in the output (only output produced by this command counts). Use the program's prompt, e.g. `ED> `, `>>> `, `(gdb) `, `mysql> `, or a server's ready line. Escape regex characters such as `(`, `$`, `?`.",
      },
      max_output_size: {
        type: 'integer',
        minimum: 1,
        maximum: LIMITS.maxOutputSize,
        default: DEFAULTS.maxOutputSize,
        description:
          'Most bytes of output returned (default: 16384). Longer output keeps its beginning and end; the whole output is saved to a file whose path is given.',
      },
    },
    required: ['command'],
    additionalProperties: false,
  },
};

export const SEND_INPUT: FunctionDeclaration = {
  name: 'send_input',
  description: [
    'Sends input to a running process started with run_shell_command (an interactive program such as ed, a python REPL, gdb, mysql) and returns only the output produced after the input.',
    'A newline is appended unless append_newline is false. With `ai_callback_pattern` (usually the prompt, e.g. `ED> ` or `>>> `) the call returns as soon as the pattern appears or the process exits, giving up after `ai_callback_delay` seconds if you pass one, else after 30 seconds; without a pattern it returns after `ai_callback_delay` seconds (default 3) or when the process exits.',
    'Use `keys` for special keys such as C-c (interrupt), C-d (end of input), Escape, Up; they are sent after `input`. Some programs print no prompt in some states (ed after `a` waits for text lines without a prompt): send those lines without a pattern and with a short delay.',
    'To just wait for more output, send an empty input with append_newline false.',
    'Lines sent to a shell prompt (bash, sh, zsh...) are checked like run_shell_command commands (same refusals, including command substitution); a refused line is not written at all.',
  ].join(' '),
  parametersJsonSchema: {
    type: 'object',
    properties: {
      handle: handle('The Handle of the process, as returned by run_shell_command or listed by jobs.'),
      input: {
        type: 'string',
        description: 'Text to send. Prefer append_newline over writing "\\n" yourself. May be empty.',
      },
      append_newline: {
        type: 'boolean',
        default: DEFAULTS.appendNewline,
        description:
          'Whether to append a newline to the input (default: true, or false when `keys` are given). Interactive programs need it to run a line.',
      },
      ai_callback_delay: {
        type: 'number',
        minimum: 0,
        maximum: LIMITS.delaySeconds,
        default: DEFAULTS.sendInputCallbackDelaySeconds,
        description:
          'Seconds to wait for output before returning (default: 3). With ai_callback_pattern it is the most to wait for the pattern (default then: 30). Use small values for quick interactive replies.',
      },
      ai_callback_pattern: {
        type: 'string',
        description:
          'A regular expression; the call returns as soon as it appears in the output produced after this input. For ed: `ED> `; for python: `>>> `.',
      },
      keys: {
        type: 'array',
        items: { type: 'string', enum: [...KEY_NAMES] },
        description:
          'Named keys sent after `input`, in order: C-a … C-z (C-c interrupts, C-d ends input), Enter, Tab, Escape, Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Delete.',
      },
    },
    required: ['handle', 'input'],
    additionalProperties: false,
  },
};

export const JOBS: FunctionDeclaration = {
  name: 'jobs',
  description:
    'Lists the background processes started with run_shell_command that are still running (Handle, PID, Command, Duration, Status, last output line), and reports the ones that finished since they were last seen. Use it to find a Handle for send_input or kill, and before finishing a task to stop what you started.',
  parametersJsonSchema: {
    type: 'object',
    properties: {},
    additionalProperties: false,
  },
};

export const KILL: FunctionDeclaration = {
  name: 'kill',
  description:
    'Stops a process started with run_shell_command, by its Handle: SIGTERM to its whole process group and background children, then SIGKILL if it has not exited after a grace period. Use it for servers, watchers and interactive programs you no longer need. Killing a process that already exited is not an error.',
  parametersJsonSchema: {
    type: 'object',
    properties: {
      handle: handle('The Handle of the process to stop (from run_shell_command or jobs).'),
    },
    required: ['handle'],
    additionalProperties: false,
  },
};

export const SHELL_CMD: FunctionDeclaration = {
  name: 'shell_cmd',
  description: [
    'Runs one program directly, without a shell: `command` is the program and `parameters` its arguments, passed literally (no globbing, variables, pipes or redirection), so quoting is never a problem.',
    'Waits for it to finish (up to `timeout` milliseconds, default 30000; then it is killed) and returns Command, Executed at, Duration, Exit code, Standard Output and Standard Error.',
    'Not for interactive programs: use run_shell_command for those.',
  ].join(' '),
  parametersJsonSchema: {
    type: 'object',
    properties: {
      command: {
        type: 'string',
        minLength: 1,
        description: 'The program to run, e.g. "ls", "git", "grep".',
      },
      parameters: {
        type: 'array',
        items: { type: 'string' },
        description: 'Arguments for the program, one per element, e.g. ["-la", "src"].',
      },
      timeout: {
        type: 'integer',
        minimum: 1,
        maximum: LIMITS.timeoutMs,
        default: DEFAULTS.shellCmdTimeoutMs,
        description: 'Timeout in milliseconds (default: 30000); the program is killed when it is reached.',
      },
      cwd: {
        type: 'string',
        description:
          'Working directory: relative to the project root, or an absolute path inside the project (default: the project root).',
      },
    },
    required: ['command'],
    additionalProperties: false,
  },
};

export const DECLARATIONS: readonly FunctionDeclaration[] = [RUN_SHELL_COMMAND, SEND_INPUT, JOBS, KILL, SHELL_CMD];
