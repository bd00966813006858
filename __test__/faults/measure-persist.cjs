// The figures of docs/reliability.md "Persistence under faults": the facts of each
// persistence fault of issue 24, for any build of the addon, so a before and an after
// can be put side by side:
//   node __test__/faults/measure-persist.cjs native-shell-service.linux-x64-gnu.node [disk|removed|two|long]
// The full-disk case mounts a 1 MiB tmpfs (root only). Not a test: it asserts nothing.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const addonPath = path.resolve(process.argv[2]);
const { ShellExecutionService } = require(addonPath);

function place(tmpfs) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'nss-measure-')));
  const root = path.join(base, 'project'); const ioDir = path.join(base, 'io');
  fs.mkdirSync(root); fs.mkdirSync(ioDir);
  if (tmpfs) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', ioDir]);
  return { base, root, ioDir };
}
function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out); else out.push(p);
  }
  return out;
}
function readAll(s, h, end) {
  let next = 0, text = 0, omitted = 0, reads = 0;
  while (next < end && reads < 1000) {
    const c = s.readOutput(h, { since: next, maxBytes: 65536 }); reads++;
    if (c.next === next) return `stalled at ${next} of ${end} (${reads} reads): {text:'${c.text}', next:${c.next}, omitted:${c.omitted}}`;
    text += c.text.length; omitted += c.omitted; next = c.next;
  }
  return `reached ${next} of ${end} in ${reads} reads: ${text} bytes of text + ${omitted} omitted`;
}
function marker(out) {
  const m = /the full output is in (\S+) \.\.\.\]/.exec(out);
  if (!m) return 'names no file';
  return `names ${path.basename(path.dirname(m[1]))}/${path.basename(m[1])} (${fs.existsSync(m[1]) ? fs.statSync(m[1]).size + ' bytes' : 'missing'})`;
}
function files(ioDir) {
  const all = walk(ioDir);
  const infos = all.filter((f) => f.endsWith('info.json') && !f.endsWith('.info.json.tmp')).map((f) => { try { return JSON.parse(fs.readFileSync(f, 'utf8')).status; } catch { return 'unreadable'; } });
  const tmps = all.filter((f) => f.endsWith('.info.json.tmp')).length;
  return `info.json: [${infos.join(', ')}], .info.json.tmp: ${tmps}`;
}

(async () => {
  const which = process.argv[3] || 'all';
  if (which === 'all' || which === 'disk') for (const mode of ['pipes', 'pty']) {
    const p = place(true);
    const s = new ShellExecutionService({ projectRoot: p.root, ioDir: p.ioDir, sessionId: 'm' });
    const r = await s.run('yes 0123456789012345678901234567890123456789012345678 | head -c 5000000; echo END', { mode });
    console.log(`full disk, ${mode}, 5 MB: status ${r.status}, error ${r.error}, persistError ${JSON.stringify(r.persistError)}, marker ${marker(r.output)}, ${files(p.ioDir)}, readOutput ${readAll(s, r.handle, 5000004)}`);
    await s.shutdown(); s.removeProcess(r.handle);
    try { execFileSync('umount', ['-l', p.ioDir]); } catch {}
    fs.rmSync(p.base, { recursive: true, force: true });
  }
  if (which === 'all' || which === 'removed') for (const [what, mode] of [['job folder', 'pty'], ['ioDir', 'pipes']]) {
    const p = place(false);
    const s = new ShellExecutionService({ projectRoot: p.root, ioDir: p.ioDir, sessionId: 'm' });
    const { handle } = s.start("seq -f '%099g' 1 30000; echo PAUSED; read x; seq -f '%099g' 30001 60000", { mode });
    await s.waitFor(handle, { pattern: 'PAUSED', fromStart: true, detectInput: false });
    const dir = s.getResult(handle).outputDir;
    fs.rmSync(what === 'ioDir' ? p.ioDir : dir, { recursive: true, force: true });
    s.writeToPty(handle, 'go\n');
    await s.waitFor(handle, { detectInput: false });
    const r = s.getResult(handle);
    const end = 6000007 + (mode === 'pty' ? 3 : 0);
    console.log(`${what} removed mid-job (${mode}): persistError ${JSON.stringify(r.persistError)}, marker ${marker(r.output)}, readOutput ${readAll(s, handle, end)}`);
    await s.shutdown();
    fs.rmSync(p.base, { recursive: true, force: true });
  }
  if (which === 'all' || which === 'two') {
    const p = place(false);
    const a = new ShellExecutionService({ projectRoot: p.root, ioDir: p.ioDir, sessionId: 'a' });
    const { handle } = a.start("seq -f '%099g' 1 20000; echo PAUSED; read x; seq -f '%099g' 20001 40000", { mode: 'pipes' });
    await a.waitFor(handle, { pattern: 'PAUSED', fromStart: true });
    await new Promise((r) => setTimeout(r, 200));
    const dir = a.getResult(handle).outputDir;
    for (let h = 1; h <= 120; h++) { const d = path.join(p.ioDir, 'old', String(h)); fs.mkdirSync(d, { recursive: true }); fs.writeFileSync(path.join(d, 'info.json'), '{}'); }
    const b = spawnSync(process.execPath, ['-e', `const {ShellExecutionService}=require(${JSON.stringify(addonPath)}); const fs=require('fs'); const s=new ShellExecutionService(${JSON.stringify({ projectRoot: p.root, ioDir: p.ioDir, sessionId: 'b' })}); const t=Date.now(); (function w(){ if (fs.readdirSync(${JSON.stringify(path.join(p.ioDir, 'old'))}).length>100 && Date.now()-t<30000) return setTimeout(w,20); setTimeout(()=>s.shutdown().then(()=>process.exit(0)),1000); })();`]);
    a.writeToPty(handle, 'go\n');
    await a.waitFor(handle);
    const r = a.getResult(handle);
    console.log(`two processes on one ioDir: A's running job folder after B started: ${fs.existsSync(dir) ? 'kept' : 'deleted'} (B exit ${b.status}); A: persistError ${JSON.stringify(r.persistError)}, marker ${marker(r.output)}, readOutput ${readAll(a, handle, 4000007)}`);
    await a.shutdown();
    fs.rmSync(p.base, { recursive: true, force: true });
  }
  if (which === 'all' || which === 'long') {
    const p = place(false);
    const s = new ShellExecutionService({ projectRoot: p.root, ioDir: p.ioDir, sessionId: 'long' });
    for (let i = 0; i < 250; i++) await s.run(`echo ${i}`);
    await new Promise((r) => setTimeout(r, 2000));
    const n = fs.readdirSync(path.join(p.ioDir, 'long'), { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).length;
    console.log(`long session, 250 commands: ${n} job folders on disk`);
    await s.shutdown();
    fs.rmSync(p.base, { recursive: true, force: true });
  }
  process.exit(0);
})();
