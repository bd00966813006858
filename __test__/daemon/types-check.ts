// Compile-time checks of the entry's types (tsc -p tsconfig.test.json): in process the
// generated synchronous signatures, unchanged; with `daemon` promises of the same values.
import type { DaemonShellExecutionService, ProcessInfo, RunResult, ShellExecutionService, StartedJob } from '../../service.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const check = <T extends true>(): T | undefined => undefined;

declare const Ctor: typeof import('../../service.js').ShellExecutionService;
const inProcess = new Ctor({ projectRoot: '/' });
const viaDaemon = new Ctor({ daemon: true });
const withSocket = new Ctor({ daemon: { socket: '/tmp/x.sock', idleExitMs: 1000 } });
const withUrl = new Ctor({ daemon: { url: 'http://127.0.0.1:49983', token: 't', maxFrameBytes: 64 << 20 } });

check<Equal<typeof inProcess, ShellExecutionService>>();
check<Equal<typeof viaDaemon, DaemonShellExecutionService>>();
check<Equal<typeof withSocket, DaemonShellExecutionService>>();
check<Equal<typeof withUrl, DaemonShellExecutionService>>();
check<Equal<ReturnType<typeof inProcess.start>, StartedJob>>();
check<Equal<ReturnType<typeof viaDaemon.start>, Promise<StartedJob>>>();
check<Equal<ReturnType<typeof inProcess.getActiveProcesses>, ProcessInfo[]>>();
check<Equal<ReturnType<typeof viaDaemon.getActiveProcesses>, Promise<ProcessInfo[]>>>();
check<Equal<ReturnType<typeof inProcess.getResult>, RunResult>>();
check<Equal<typeof inProcess.projectRoot, string>>();
check<Equal<typeof viaDaemon.projectRoot, Promise<string>>>();
check<Equal<ProcessInfo['attached'], 'this' | 'other' | 'none'>>();
