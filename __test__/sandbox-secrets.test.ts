// What a sandboxed job may not read although it may read the rest of the file system
// (docs/sandbox.md, "Secrets and other jobs' output"): the home directory's credential
// stores, `readDeny` paths, other jobs' output files; and System V IPC, refused unless
// `sysvIpc`. Each escape runs unconfined first (`sandbox: false`), where it must
// succeed — the control, which shows the check can fail — then sandboxed.
//
// The home is one of the test's own, outside /tmp (every sandboxed job may read and
// write /tmp): the service takes the home from the environment (`$HOME`) as well as
// from the password database, so this file points `$HOME` there before it makes its
// service (vitest runs each file in a process of its own: `pool: 'forks'`).
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxFromFlags } from '../tools/sandbox-flags';
import { connect } from './mcp/setup';
import { ShellExecutionService } from './helpers';

const linux = process.platform === 'linux';
const PY = '/usr/bin/python3';

/** The credential stores the test plants, each with a line no other file has. */
const STORES: Record<string, string> = {
  '.ssh/id_ed25519': 'SSH-PRIVATE-KEY',
  '.aws/credentials': 'AWS-SECRET-KEY',
  '.config/gcloud/application_default_credentials.json': 'GCLOUD-TOKEN',
  '.kube/config': 'KUBE-TOKEN',
  '.docker/config.json': 'DOCKER-AUTH',
  '.netrc': 'NETRC-PASSWORD',
  '.git-credentials': 'GIT-CREDENTIAL',
  '.npmrc': 'NPM-TOKEN',
  '.gnupg/private-keys-v1.d/key': 'GPG-KEY',
  '.cargo/credentials.toml': 'CARGO-TOKEN',
  '.config/gh/hosts.yml': 'GH-TOKEN',
  '.mozilla/firefox/profile/logins.json': 'FIREFOX-LOGIN',
  '.local/share/keyrings/login.keyring': 'KEYRING',
};
/** Files beside them that stay readable. */
const PLAIN: Record<string, string> = {
  '.gitconfig': 'GITCONFIG-OK',
  '.config/nvim/init.vim': 'NVIM-OK',
  '.cargo/config.toml': 'CARGO-CONFIG-OK',
  '.docker/daemon.json': 'DOCKER-DAEMON-OK',
  '.ssh-notes': 'SSH-NOTES-OK',
};

let base: string;
let home: string;
let root: string;
let ioDir: string;
let service: InstanceType<typeof ShellExecutionService>;
const savedHome = process.env.HOME;

beforeAll(() => {
  if (!linux) return;
  // Not under /tmp: every sandboxed job may read (and write) it.
  const parent = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  base = realpathSync(mkdtempSync(join(parent, 'nss-secrets-')));
  chmodSync(base, 0o755);
  home = join(base, 'home');
  root = join(base, 'project');
  ioDir = join(base, 'io');
  mkdirSync(root, { recursive: true });
  for (const [rel, line] of Object.entries({ ...STORES, ...PLAIN })) {
    mkdirSync(join(home, rel, '..'), { recursive: true });
    writeFileSync(join(home, rel), `${line}\n`, { mode: 0o600 });
  }
  process.env.HOME = home;
  service = new ShellExecutionService({ projectRoot: root, ioDir, sessionId: 'secrets', persistOutput: true });
});

afterAll(async () => {
  if (!linux) return;
  process.env.HOME = savedHome;
  await service.shutdown();
  rmSync(base, { recursive: true, force: true });
});

type Options = NonNullable<Parameters<typeof service.run>[1]>;
// A bound on a hung job only: an emulated kernel (scripts/test-kernel-vm.sh) under load runs
// three Pythons in well over 30 s, and a job cut short loses the lines the checks read.
const run = (command: string, sandbox: Options['sandbox']) => service.run(command, { timeoutMs: 600_000, sandbox });
const catAll = (files: Record<string, string>) =>
  Object.keys(files)
    .map((rel) => `cat ~/${rel}`)
    .join('; ');

describe.skipIf(!linux)('the home directory\'s credential stores', () => {
  it('are unreadable by default; the rest of the home is readable; the result lists what was left out', async () => {
    const command = `${catAll(STORES)}; ${catAll(PLAIN)}`;
    const plain = await run(command, false);
    for (const line of [...Object.values(STORES), ...Object.values(PLAIN)]) expect(plain.output).toContain(line);
    const boxed = await run(command, true);
    for (const line of Object.values(STORES)) expect(boxed.output, line).not.toContain(line);
    for (const line of Object.values(PLAIN)) expect(boxed.output, line).toContain(line);
    expect(boxed.output).toContain('Permission denied');
    const denied = boxed.sandbox!.readDenied;
    for (const store of ['.ssh', '.aws', '.config/gcloud', '.kube', '.docker/config.json', '.netrc', '.npmrc']) {
      expect(denied).toContain(join(home, store));
    }
    // The service's output folders and the private TMPDIRs' directory are not named
    // as credential stores, and the job's own TMPDIR is readable.
    expect(denied).toContain(ioDir);
    expect(boxed.sandbox!.sysvIpc).toBe(false);
    const tmp = await run('echo mine > "$TMPDIR/f" && cat "$TMPDIR/f"; echo t > /tmp/nss-secrets-$$ && cat /tmp/nss-secrets-$$ && rm /tmp/nss-secrets-$$', true);
    expect(tmp.output).toContain('mine');
    expect(tmp.output).toMatch(/^t$/m);
  });

  it('listing shows names only; a symlink or hard link the job makes does not reach them', async () => {
    const link = `ln -sf ~/.ssh/id_ed25519 key-link; cat key-link; ln ~/.ssh/id_ed25519 key-hard && cat key-hard; ls ~/.ssh`;
    const plain = await run(link, false);
    expect(plain.output).toContain('SSH-PRIVATE-KEY');
    rmSync(join(root, 'key-link'), { force: true });
    rmSync(join(root, 'key-hard'), { force: true });
    const boxed = await run(link, true);
    expect(boxed.output).not.toContain('SSH-PRIVATE-KEY');
    expect(boxed.output).toContain('id_ed25519');
    expect(existsSync(join(root, 'key-hard'))).toBe(false);
  });

  it('nothing made in the home later widens a later sandbox: symlinks get no rule, new entries no read', async () => {
    // The service's default sandbox has had a job (its layer is made): what follows
    // is made after.
    await run('true', true);
    // What an unconfined job (or anything of the user's) could leave there.
    symlinkSync(join(home, '.ssh'), join(home, 'keys'));
    mkdirSync(join(home, '.ssh2'));
    writeFileSync(join(home, '.ssh2', 'copy'), 'COPY-IN-SSH2\n');
    try {
      // A run's own sandbox is resolved again now: the symlink leads into .ssh, still
      // hidden; the new directory is readable (it holds only what was put there).
      const fresh = await run('cat ~/keys/id_ed25519; cat ~/.ssh2/copy', { network: false });
      expect(fresh.output).not.toContain('SSH-PRIVATE-KEY');
      expect(fresh.output).toContain('COPY-IN-SSH2');
      // The service's default sandbox was walked before: what was made since is not
      // readable by its jobs (fail closed) until a new sandbox is made.
      const before = await run('cat ~/.ssh2/copy; cat ~/keys/id_ed25519', true);
      expect(before.output).not.toContain('SSH-PRIVATE-KEY');
      expect(before.output).not.toContain('COPY-IN-SSH2');
    } finally {
      rmSync(join(home, 'keys'), { force: true });
      rmSync(join(home, '.ssh2'), { recursive: true, force: true });
    }
  });

  it('readAllow makes one store readable for one run; readDeny hides one more path', async () => {
    const allowed = await run('cat ~/.ssh/id_ed25519; cat ~/.aws/credentials', { readAllow: ['~/.ssh'] });
    expect(allowed.output).toContain('SSH-PRIVATE-KEY');
    expect(allowed.output).not.toContain('AWS-SECRET-KEY');
    expect(allowed.sandbox!.readDenied).not.toContain(join(home, '.ssh'));
    const extra = join(base, 'private');
    mkdirSync(extra, { recursive: true });
    writeFileSync(join(extra, 'notes'), 'PRIVATE-NOTES\n');
    // A run's own sandbox, walked now (the service's default one was walked before
    // the directory was made, so its jobs cannot read it: "what is made later").
    const plain = await run(`cat ${extra}/notes; cat ~/.gitconfig`, {});
    expect(plain.output).toContain('PRIVATE-NOTES');
    const denied = await run(`cat ${extra}/notes; cat ~/.gitconfig`, { readDeny: [extra] });
    expect(denied.output).not.toContain('PRIVATE-NOTES');
    expect(denied.output).toContain('GITCONFIG-OK');
    expect(denied.sandbox!.readDenied).toContain(extra);
    // With `read` naming the home, the stores are still cut out of it.
    const limited = await run('cat ~/.gitconfig; cat ~/.netrc', { read: [home] });
    expect(limited.output).toContain('GITCONFIG-OK');
    expect(limited.output).not.toContain('NETRC-PASSWORD');
  });

  it('renames and links across directories of the project still work (cargo moves its .rmeta so)', async () => {
    const move = (tag: string) => `mkdir -p ${tag}/a ${tag}/b && echo moved > ${tag}/a/f && mv ${tag}/a/f ${tag}/b/f && ln ${tag}/b/f ${tag}/a/g && cat ${tag}/a/g`;
    // A layer that handles reads only would refuse every one (Landlock counts
    // reparenting as handled by every ruleset); with `read` a root job has one more.
    for (const [tag, sandbox] of [['default', true], ['limited', { read: [] }]] as const) {
      const r = await run(move(tag), sandbox);
      expect(r.output, tag).toContain('moved');
      expect(r.exitCode, tag).toBe(0);
    }
  });

  it('bad readDeny and readAllow paths are INVALID_ARGUMENT', async () => {
    await expect(run('true', { readAllow: [join(base, 'missing')] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(run('true', { readDeny: [''] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe.skipIf(!linux)("other jobs' output", () => {
  it('an ioDir inside a read-only project stays readable, and the result says so', async () => {
    const project = join(base, 'ro-project');
    mkdirSync(join(project, '.io'), { recursive: true });
    const inside = new ShellExecutionService({
      projectRoot: project,
      ioDir: join(project, '.io'),
      sessionId: 'inside',
      persistOutput: true,
      sandbox: { readOnly: true },
    });
    try {
      const r = await inside.run('true', { timeoutMs: 30_000 });
      expect(r.sandbox!.notes.join(' ')).toContain(`${join(project, '.io')} stays readable: it lies inside the project root`);
      expect(r.sandbox!.readDenied).not.toContain(join(project, '.io'));
    } finally {
      await inside.shutdown();
    }
  });

  it("a job cannot read another job's output files", async () => {
    const first = await run('echo OUTPUT-OF-ANOTHER-JOB', false);
    const dir = first.outputDir!;
    expect(readFileSync(join(dir, 'stdout.txt'), 'utf8')).toContain('OUTPUT-OF-ANOTHER-JOB');
    const command = `cat ${dir}/stdout.txt; cat ${dir}/info.json`;
    const plain = await run(command, false);
    expect(plain.output).toContain('OUTPUT-OF-ANOTHER-JOB');
    const boxed = await run(command, true);
    expect(boxed.output).not.toContain('OUTPUT-OF-ANOTHER-JOB');
    expect(boxed.output).toContain('Permission denied');
  });
});

/** Python that calls System V IPC through ctypes: `shm <id>` reads a segment. */
const IPC = String.raw`
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
def fail(what):
    print(what, 'failed, errno', ctypes.get_errno()); sys.exit(1)
cmd = sys.argv[1]
if cmd == 'make':
    shmid = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    if shmid < 0: fail('shmget')
    p = libc.shmat(shmid, None, 0)
    if p in (None, 2**64 - 1): fail('shmat')
    ctypes.memmove(p, b'SHM-SECRET', 10)
    print('made', shmid)
elif cmd == 'read':
    p = libc.shmat(int(sys.argv[2]), None, 0)
    if p in (None, 2**64 - 1): fail('shmat')
    print('read', ctypes.string_at(p, 10).decode())
elif cmd == 'remove':
    if libc.shmctl(int(sys.argv[2]), IPC_RMID, None) < 0: fail('shmctl')
    print('removed')
elif cmd == 'others':
    for name, call in (('semget', lambda: libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600)), ('msgget', lambda: libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600))):
        i = call()
        print(name, 'ok' if i >= 0 else 'errno %d' % ctypes.get_errno())
        if i >= 0 and name == 'semget': libc.semctl(i, 0, IPC_RMID)
        if i >= 0 and name == 'msgget': libc.msgctl(i, IPC_RMID, None)
`;

describe.skipIf(!linux || !existsSync(PY))('System V IPC', () => {
  it("is refused (EPERM) by default: another process's shared memory, semaphores, message queues", async () => {
    writeFileSync(join(root, 'ipc.py'), IPC);
    const made = await run(`${PY} ipc.py make`, false);
    const id = /made (\d+)/.exec(made.output)?.[1];
    expect(id, made.output).toBeDefined();
    try {
      const plain = await run(`${PY} ipc.py read ${id}`, false);
      expect(plain.output).toContain('read SHM-SECRET');
      const boxed = await run(`${PY} ipc.py read ${id}; ${PY} ipc.py remove ${id}; ${PY} ipc.py others`, true);
      expect(boxed.output).not.toContain('SHM-SECRET');
      expect(boxed.output).toContain(`shmat failed, errno 1`);
      expect(boxed.output).toContain(`shmctl failed, errno 1`);
      expect(boxed.output).toContain('semget errno 1');
      expect(boxed.output).toContain('msgget errno 1');
      expect(boxed.exitCode).toBe(0);
      // The job was not killed: the refusal is an error it can handle.
      const allowed = await run(`${PY} ipc.py read ${id}; ${PY} ipc.py others`, { sysvIpc: true });
      expect(allowed.output).toContain('read SHM-SECRET');
      expect(allowed.output).toContain('semget ok');
      expect(allowed.sandbox!.sysvIpc).toBe(true);
    } finally {
      await run(`${PY} ipc.py remove ${id}`, false);
    }
  });
});

describe('the MCP server\'s flags', () => {
  it('--sandbox-read-deny, --sandbox-read-allow and --sandbox-sysv-ipc become readDeny, readAllow and sysvIpc', () => {
    const flags = new Map([
      ['sandbox-read-deny', ['~/work/.env', '/srv/keys']],
      ['sandbox-read-allow', ['~/.ssh']],
      ['sandbox-sysv-ipc', ['true']],
    ]);
    expect(sandboxFromFlags(flags)).toEqual({ readDeny: ['~/work/.env', '/srv/keys'], readAllow: ['~/.ssh'], sysvIpc: true });
  });
});

describe.skipIf(!linux)("the Gemini extension's default", () => {
  it('hides the credential stores from the MCP server\'s jobs too', async () => {
    const env = { ...process.env, HOME: home };
    const plain = await connect([], env);
    const boxed = await connect(['--sandbox', '--sandbox-network', '--sandbox-caches'], env);
    try {
      const command = 'cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.gitconfig';
      const p = await plain.call('run_shell_command', { command });
      expect(p.text).toContain('SSH-PRIVATE-KEY');
      const b = await boxed.call('run_shell_command', { command });
      expect(b.text).not.toContain('SSH-PRIVATE-KEY');
      expect(b.text).not.toContain('AWS-SECRET-KEY');
      expect(b.text).toContain('GITCONFIG-OK');
      // The refusal hint names the hidden path and the flag that gives it back.
      expect(b.text).toContain(`${join(home, '.ssh')} is hidden from sandboxed commands`);
      expect(b.text).toContain('--sandbox-read-allow PATH');
    } finally {
      await plain.cleanup();
      await boxed.cleanup();
    }
    // The user gives ~/.ssh back, by the flag, with `~` as the server's home.
    const allowed = await connect(['--sandbox', '--sandbox-network', '--sandbox-read-allow', '~/.ssh'], env);
    try {
      const a = await allowed.call('run_shell_command', { command: 'cat ~/.ssh/id_ed25519 ~/.aws/credentials' });
      expect(a.text).toContain('SSH-PRIVATE-KEY');
      expect(a.text).not.toContain('AWS-SECRET-KEY');
    } finally {
      await allowed.cleanup();
    }
  });
});
