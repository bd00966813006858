// The service on Windows, run by Windows node.exe under Wine (scripts/test-windows.sh).
// Real processes only: cmd.exe and node.exe itself. Wine-only workarounds are marked
// and live in this directory (conwrap.exe); the addon has none.
'use strict';

const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { ShellExecutionService } = require('../../index.js');

const node = process.execPath;
// Test-only: the ConPTY wrapper Wine 8 needs (see conwrap.c); real Windows does not.
const conwrap = path.join(__dirname, 'conwrap.exe');

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'nss-root-')));
fs.mkdirSync(path.join(root, 'sub', 'inner'), { recursive: true });
const ioDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nss-io-'));
const shell = new ShellExecutionService({ projectRoot: root, ioDir });
after(() => shell.shutdown());

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what, check, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// A node.exe that writes its pid to a file and then lives for a minute: the processes
// of a tree whose end a test checks. The script is a file, so the command line holds
// nothing cmd.exe would interpret, however deeply nested.
const sleeperJs = path.join(root, 'sleeper.js');
fs.writeFileSync(sleeperJs, "require('fs').writeFileSync(process.argv[2], String(process.pid));\nsetTimeout(() => {}, 60000);\n");
const sleeper = (file) => `"${node}" "${sleeperJs}" "${file}"`;

const readPid = (file) => (fs.existsSync(file) && Number(fs.readFileSync(file, 'utf8'))) || 0;

test('run: output and exit codes through cmd.exe', async () => {
  const ok = await shell.run('echo hello world', { mode: 'pipes' });
  assert.equal(ok.status, 'exited');
  assert.equal(ok.exitCode, 0);
  assert.equal(ok.signal, null);
  // cmd writes CRLF; the text view has plain line ends.
  assert.equal(ok.stdout.trimEnd(), 'hello world');
  assert.doesNotMatch(ok.stdout, /\r/);
  const three = await shell.run('echo before & exit /b 3', { mode: 'pipes' });
  assert.equal(three.exitCode, 3);
  assert.match(three.stdout, /before/);
  const missing = await shell.run('nss-no-such-command', { mode: 'pipes' });
  assert.notEqual(missing.exitCode, 0);
  assert.equal(missing.error, null);
});

test('run: the command reaches cmd.exe verbatim, and jobs get GEMINI_CLI=1', async () => {
  const r = await shell.run('echo "quoted & kept" %GEMINI_CLI% && echo second', { mode: 'pipes' });
  assert.equal(r.exitCode, 0);
  // cmd's echo keeps the blank before `&&`.
  assert.deepEqual(r.stdout.trim().split(/\r?\n/), ['"quoted & kept" 1 ', 'second']);
});

test('UTF-8: cmd.exe output is UTF-8 (chcp 65001 before the command)', async () => {
  const r = await shell.run('echo héllo wörld ✓ 日本', { mode: 'pipes' });
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout.trimEnd(), 'héllo wörld ✓ 日本');
});

test('argv mode: arguments reach the program as given', async () => {
  const args = ['-e', 'console.log(JSON.stringify(process.argv.slice(1)))', 'two words', 'q"uote', 'back\\', ''];
  const r = await shell.run(node, { args, mode: 'pipes' });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['two words', 'q"uote', 'back\\', '']);
});

test('pipes mode: stderr is kept apart from stdout', async () => {
  const r = await shell.run('echo to-out & echo to-err 1>&2 & exit /b 1', { mode: 'pipes' });
  assert.equal(r.exitCode, 1);
  assert.match(r.stdout, /to-out/);
  assert.doesNotMatch(r.stdout, /to-err/);
  assert.match(r.stderr, /to-err/);
  assert.doesNotMatch(r.stderr, /to-out/);
});

test('directory: inside the root it is the working directory', async () => {
  const r = await shell.run('cd', { mode: 'pipes', directory: 'sub\\inner' });
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout.trim().toLowerCase(), path.join(root, 'sub', 'inner').toLowerCase());
  assert.equal(r.directory, 'sub\\inner');
});

test('directory: drive letters, UNC paths and .. escapes are refused with INVALID_DIRECTORY', async () => {
  const escapes = [
    '..',
    'sub\\..\\..',
    '../..',
    'C:\\Windows',
    'C:Windows',
    'C:',
    '\\Windows',
    '/Windows',
    '\\\\server\\share',
    '\\\\?\\C:\\Windows',
    'missing',
  ];
  for (const directory of escapes) {
    await assert.rejects(shell.run('cd', { mode: 'pipes', directory }), { code: 'INVALID_DIRECTORY' }, directory);
    assert.throws(() => shell.start('cd', { mode: 'pipes', directory }), { code: 'INVALID_DIRECTORY' }, directory);
  }
});

test('coded errors: bad input gets a stable code', async () => {
  await assert.rejects(shell.run('echo', { mode: 'tty' }), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(shell.run('echo', { shell: 'bash' }), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(shell.run('echo', { callbackPattern: '(' }), { code: 'INVALID_PATTERN' });
  await assert.rejects(shell.sendInput(987654, 'x'), { code: 'PROCESS_NOT_FOUND' });
  assert.throws(() => shell.start('nss-no-such-program.exe', { args: [], mode: 'pipes' }), { code: 'SPAWN_FAILED' });
  assert.throws(() => shell.start('echo', { env: { 'A=B': 'x' } }), { code: 'INVALID_ARGUMENT' });
});

test('sandbox: Windows has none, so a sandboxed job or service is refused, never run unconfined', async () => {
  const marker = path.join(root, 'sandboxed.txt');
  await assert.rejects(shell.run(`echo x> "${marker}"`, { sandbox: true }), { code: 'SANDBOX_UNAVAILABLE' });
  assert.throws(() => shell.start('echo', { sandbox: { write: [] } }), { code: 'SANDBOX_UNAVAILABLE' });
  assert.equal(fs.existsSync(marker), false);
  assert.throws(() => new ShellExecutionService({ projectRoot: root, sandbox: true }), { code: 'SANDBOX_UNAVAILABLE' });
});

test('persistence: a pipes job writes stdout.txt, stderr.txt and info.json', async () => {
  const r = await shell.run('echo persisted-out & echo persisted-err 1>&2', { mode: 'pipes' });
  assert.equal(r.exitCode, 0);
  assert.ok(r.outputDir, 'outputDir is set');
  assert.match(fs.readFileSync(path.join(r.outputDir, 'stdout.txt'), 'utf8'), /^persisted-out \n/);
  assert.match(fs.readFileSync(path.join(r.outputDir, 'stderr.txt'), 'utf8'), /persisted-err/);
  const info = JSON.parse(fs.readFileSync(path.join(r.outputDir, 'info.json'), 'utf8'));
  assert.equal(info.exitCode, 0);
  assert.equal(info.status, 'exited');
});

test('start /b: the command returns, backgroundPids is [], kill ends what it left', async () => {
  const file = path.join(root, 'background.pid');
  const r = await shell.run(`start /b "" ${sleeper(file)} & echo started`, { mode: 'pipes' });
  assert.equal(r.status, 'exited');
  assert.equal(r.exitCode, 0);
  assert.match(r.stdout, /started/);
  assert.deepEqual(r.backgroundPids, []);
  const pid = await until('the background process', () => readPid(file));
  assert.ok(alive(pid), 'the background process runs on after its shell exited');
  const listed = shell.getActiveProcesses().find((p) => p.handle === r.handle);
  assert.ok(listed, 'the job is listed');
  assert.deepEqual(listed.backgroundPids, []);
  await shell.kill(r.handle);
  await until('the background process to end', () => !alive(pid));
});

test('kill: a tree of processes started by cmd.exe all ends', async () => {
  const files = ['a', 'b', 'c'].map((n) => path.join(root, `tree-${n}.pid`));
  // A child started in the background, a grandchild under a nested cmd, and one in front.
  const command = `start /b "" ${sleeper(files[0])} & start /b "" cmd /d /c "${sleeper(files[1])}" & ${sleeper(files[2])}`;
  const { handle } = shell.start(command, { mode: 'pipes' });
  const pids = await Promise.all(files.map((f) => until(f, () => readPid(f))));
  for (const pid of pids) assert.ok(alive(pid), `pid ${pid} runs`);
  assert.equal(shell.isPtyActive(handle), true);
  const killed = await shell.kill(handle);
  assert.equal(killed.status, 'killed');
  await until('every process of the tree to end', () => pids.every((pid) => !alive(pid)), 10000);
  assert.equal(shell.isPtyActive(handle), false);
});

test('no orphans: killing the Windows node.exe that owns jobs ends them', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nss-owner-'));
  const files = ['pipes', 'pty', 'background'].map((n) => path.join(dir, `${n}.pid`));
  const owner = spawn(node, [path.join(__dirname, 'owner.cjs'), dir, conwrap, ...files], { stdio: 'ignore' });
  try {
    const pids = await Promise.all(files.map((f) => until(f, () => readPid(f), 30000)));
    for (const pid of pids) assert.ok(alive(pid), `pid ${pid} runs while its owner does`);
    // TerminateProcess: no exit hook, no destructor runs in the owner.
    owner.kill('SIGKILL');
    await until('the owner to end', () => owner.exitCode !== null || owner.signalCode !== null);
    await until('every job process to end with its owner', () => pids.every((pid) => !alive(pid)), 15000);
  } finally {
    if (owner.exitCode === null) owner.kill('SIGKILL');
  }
});

test('shell option: powershell is accepted on Windows', async () => {
  // Wine has no real PowerShell; only that the option is taken is checked here.
  const r = shell.start('Write-Output x', { shell: 'powershell', mode: 'pipes' });
  assert.ok(r.handle > 0);
  await shell.kill(r.handle);
});

test('ConPTY: a one-shot command prints through the pseudoconsole and exits', async () => {
  const r = await shell.run(conwrap, { args: ['cmd.exe', '/d', '/c', 'echo pty-hello & exit /b 4'], mode: 'pty' });
  assert.equal(r.status, 'exited');
  assert.equal(r.exitCode, 4);
  assert.match(r.output, /pty-hello/);
  assert.deepEqual(r.backgroundPids, []);
});

test('ConPTY: input typed into an interactive cmd.exe, and pattern waits', async () => {
  const { handle } = shell.start(conwrap, { args: ['cmd.exe', '/d'], mode: 'pty', cols: 100, rows: 30 });
  try {
    const prompt = await shell.waitFor(handle, { pattern: '>$', fromStart: true, timeoutMs: 20000 });
    assert.equal(prompt.status, 'matched', prompt.output);
    // Wine's cmd.exe takes a line when it sees \r (a terminal's Enter), not \r\n.
    const typed = await shell.sendInput(handle, 'echo typed-%GEMINI_CLI%-line\r', {
      appendNewline: false,
      pattern: 'typed-1-line',
      timeoutMs: 20000,
    });
    assert.equal(typed.status, 'matched', typed.output);
    const screen = shell.getProcessOutput(handle, { view: 'text' });
    assert.match(screen, /typed-1-line/);
    // Resizing reaches ResizePseudoConsole; Wine 8 does not implement it (E_NOTIMPL).
    try {
      shell.resizePty(handle, 120, 40);
    } catch (error) {
      assert.match(String(error.message), /ResizePseudoConsole failed: 0x80004001/);
    }
    const exited = await shell.sendInput(handle, 'exit 7', { appendNewline: false, keys: ['Enter'], timeoutMs: 20000 });
    assert.equal(exited.status, 'exited', exited.output);
    assert.equal(exited.exitCode, 7);
  } finally {
    await shell.kill(handle);
  }
});
