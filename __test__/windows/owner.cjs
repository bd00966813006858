// Not a test: the Node process that owns jobs in the no-orphans test
// (service.test.cjs), which kills it with TerminateProcess. Arguments: a project root,
// the ConPTY wrapper (conwrap.c), then the pid files of its three jobs' processes.
'use strict';

const { ShellExecutionService } = require('../../index.js');

const [root, conwrap, pipesFile, ptyFile, backgroundFile] = process.argv.slice(2);
const node = process.execPath;
const script = "require('fs').writeFileSync(process.argv[1], String(process.pid)); setTimeout(() => {}, 60000)";
const sleeper = (file) => `"${node}" -e "${script}" "${file}"`;

const shell = new ShellExecutionService({ projectRoot: root, persistOutput: false });
shell.start(sleeper(pipesFile), { mode: 'pipes' });
shell.start(conwrap, { args: [node, '-e', script, ptyFile], mode: 'pty' });
shell.start(`start /b "" ${sleeper(backgroundFile)} & echo left-running`, { mode: 'pipes' });
setInterval(() => {}, 60000);
