// Fails (exit 1) when modules import each other in a circle, naming every cycle found:
//
// - Rust: each crate's modules (the core's from src/lib.rs, the addon's from
//   src/binding/lib.rs), found by following `mod` declarations from its root
//   (`#[path]` included, every cfg at once). A module is a file (`foo.rs` or
//   `foo/mod.rs`); an inline `mod x { ... }` counts as part of its file. An edge is a
//   `crate::`, `super::` or `self::` path naming another module's item, anywhere in
//   the code (a `use`, or a path written inline).
// - TypeScript and JavaScript: the files of tools/, compat/, contract/, bench/ and
//   scripts/, and their relative imports (`import`/`export ... from`, `import()`,
//   `require()`), type-only imports included.
//
// docs/architecture.md says which way the arrows point; this script keeps them so.
// Usage: node scripts/check-cycles.mjs [repository root] (default: this repository).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const TS_DIRS = ['tools', 'compat', 'contract', 'bench', 'scripts'];
const TS_EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'];

// ---------------------------------------------------------------------------------
// Rust

/** Identifiers, `::`, the punctuation that matters, and string literals (for `#[path]`). */
function rustTokens(text) {
  const tokens = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  const push = (kind, value) => tokens.push({ kind, value, line });
  while (i < n) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      // Block comments nest in Rust.
      let depth = 0;
      do {
        if (text[i] === '/' && text[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (text[i] === '*' && text[i + 1] === '/') {
          depth--;
          i += 2;
        } else {
          if (text[i] === '\n') line++;
          i++;
        }
      } while (i < n && depth > 0);
    } else if ((c === 'r' || (c === 'b' && text[i + 1] === 'r')) && /^b?r#*"/.test(text.slice(i, i + 260))) {
      const start = text.slice(i).match(/^b?r(#*)"/);
      const close = `"${start[1]}`;
      const end = text.indexOf(close, i + start[0].length);
      const stop = end < 0 ? n : end + close.length;
      const body = text.slice(i + start[0].length, end < 0 ? n : end);
      push('string', body);
      line += body.split('\n').length - 1;
      i = stop;
    } else if (c === '"' || (c === 'b' && text[i + 1] === '"')) {
      let j = c === 'b' ? i + 2 : i + 1;
      let body = '';
      while (j < n && text[j] !== '"') {
        if (text[j] === '\\') {
          body += text[j + 1] ?? '';
          j += 2;
        } else {
          body += text[j];
          j++;
        }
      }
      push('string', body);
      line += body.split('\n').length - 1;
      i = j + 1;
    } else if (c === "'" || (c === 'b' && text[i + 1] === "'")) {
      // A char literal ('a', '\n', '\u{1F600}', b'x'), else a lifetime or label ('a).
      const literal = text.slice(i).match(/^b?'(?:\\u\{[0-9a-fA-F]{1,6}\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'/);
      if (literal) i += literal[0].length;
      else {
        i++;
        while (i < n && /[A-Za-z0-9_]/.test(text[i])) i++;
      }
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < n && /[A-Za-z0-9_]/.test(text[j])) j++;
      push('ident', text.slice(i, j));
      i = j;
    } else if (c === ':' && text[i + 1] === ':') {
      push('punct', '::');
      i += 2;
    } else if ('{}();,#[]=*'.includes(c)) {
      push('punct', c);
      i++;
    } else {
      i++;
    }
  }
  return tokens;
}

/**
 * Reads a path after `crate`/`super`/`self` at `tokens[at]`: its segments (a `use`
 * group expanded into several paths). Returns the paths and the index after them.
 */
function readPaths(tokens, at) {
  const segments = [];
  let i = at;
  for (;;) {
    if (tokens[i]?.value === '{') {
      const paths = [];
      i++;
      while (i < tokens.length && tokens[i].value !== '}') {
        if (tokens[i].kind === 'ident') {
          const inner = readPaths(tokens, i);
          for (const p of inner.paths) paths.push([...segments, ...p]);
          i = inner.next;
          // `x as y`
          if (tokens[i]?.value === 'as') i += 2;
        } else {
          if (tokens[i].value === '*') paths.push([...segments]);
          i++;
        }
      }
      if (paths.length === 0) paths.push(segments);
      return { paths, next: i + 1 };
    }
    if (tokens[i]?.value === '*') return { paths: [segments], next: i + 1 };
    const t = tokens[i];
    if (t?.kind !== 'ident') break;
    segments.push(t.value);
    i++;
    if (tokens[i]?.value !== '::') return { paths: [segments], next: i };
    i++;
  }
  return { paths: [segments], next: i };
}

/** The crate's module tree: file modules, every module path (inline ones too) → its file module, and the references. */
function rustModules(srcDir) {
  const fileOf = new Map(); // module path (a::b, inline included) → file module path
  const files = new Map(); // file module path → its file, relative to the root
  const references = []; // { from: file module, path: absolute segments, line }
  const pending = [{ file: join(srcDir, 'lib.rs'), module: [], isDirOwner: true }];
  while (pending.length > 0) {
    const { file, module, isDirOwner } = pending.pop();
    const key = module.join('::');
    if (files.has(key) || !existsSync(file)) continue;
    files.set(key, relative(root, file));
    fileOf.set(key, key);
    const tokens = rustTokens(readFileSync(file, 'utf8'));
    // A `mod x;` in foo.rs is foo/x.rs; in mod.rs or lib.rs it is x.rs next to it.
    const childDir = isDirOwner ? dirname(file) : join(dirname(file), file.slice(dirname(file).length + 1, -3));
    const inline = []; // { name, depth }
    let depth = 0;
    let pathAttribute = null;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t.value === '{') depth++;
      else if (t.value === '}') {
        depth--;
        if (inline.length > 0 && inline[inline.length - 1].depth === depth) inline.pop();
      } else if (t.value === '#' && tokens[i + 1]?.value === '[' && tokens[i + 2]?.value === 'path' && tokens[i + 3]?.value === '=') {
        pathAttribute = tokens[i + 4]?.kind === 'string' ? tokens[i + 4].value : null;
      } else if (t.value === 'mod' && tokens[i + 1]?.kind === 'ident') {
        const name = tokens[i + 1].value;
        const here = [...module, ...inline.map((m) => m.name)];
        if (tokens[i + 2]?.value === '{') {
          inline.push({ name, depth });
          fileOf.set([...here, name].join('::'), key);
        } else if (tokens[i + 2]?.value === ';') {
          const dir = inline.length > 0 ? join(childDir, ...inline.map((m) => m.name)) : childDir;
          let target;
          let owner = false;
          if (pathAttribute !== null) {
            target = resolve(inline.length > 0 ? dir : dirname(file), pathAttribute);
            owner = target.endsWith(`${join('/', 'mod.rs')}`);
          } else if (existsSync(join(dir, `${name}.rs`))) target = join(dir, `${name}.rs`);
          else {
            target = join(dir, name, 'mod.rs');
            owner = true;
          }
          pending.push({ file: target, module: [...here, name], isDirOwner: owner });
        }
        pathAttribute = null;
      } else if ((t.value === 'crate' || t.value === 'super' || t.value === 'self') && tokens[i + 1]?.value === '::') {
        // `x::crate::` never occurs; a path starts here unless it continues another.
        if (tokens[i - 1]?.value === '::') continue;
        const here = [...module, ...inline.map((m) => m.name)];
        let base;
        let j = i;
        if (t.value === 'crate') {
          base = [];
          j = i + 2;
        } else {
          base = [...here];
          while (tokens[j]?.value === 'super' && tokens[j + 1]?.value === '::') {
            base.pop();
            j += 2;
          }
          if (tokens[j]?.value === 'self' && tokens[j + 1]?.value === '::') j += 2;
        }
        const { paths, next } = readPaths(tokens, j);
        for (const p of paths) references.push({ from: key, path: [...base, ...p], line: t.line });
        i = next - 1;
      } else if (t.value !== 'pub' && t.value !== '(' && t.value !== ')' && t.value !== ']' && t.kind !== 'string') {
        // An attribute applies to the next item only.
        if (t.value === ';' || t.value === 'fn' || t.value === 'struct' || t.value === 'use') pathAttribute = null;
      }
    }
  }
  const edges = new Map();
  for (const { from, path, line } of references) {
    // The longest prefix of the path that is a module names the module depended on.
    let target = null;
    for (let k = path.length; k >= 0 && target === null; k--) {
      const candidate = path.slice(0, k).join('::');
      if (fileOf.has(candidate)) target = fileOf.get(candidate);
    }
    if (target === null || target === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const out = edges.get(from);
    if (!out.has(target)) out.set(target, `${files.get(from)}:${line}`);
  }
  const name = (m) => `${m === '' ? 'crate' : `crate::${m}`} (${files.get(m)})`;
  return { nodes: [...files.keys()], edges, name };
}

// ---------------------------------------------------------------------------------
// TypeScript and JavaScript

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'target' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (TS_EXTENSIONS.some((e) => entry.endsWith(e)) && !entry.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveImport(from, spec, known) {
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(m|c)?js$/, '');
  const candidates = [base, ...TS_EXTENSIONS.map((e) => stem + e), ...TS_EXTENSIONS.map((e) => join(base, `index${e}`))];
  return candidates.find((c) => known.has(c)) ?? null;
}

function scriptModules() {
  const files = TS_DIRS.flatMap((d) => sourceFiles(join(root, d)));
  const known = new Set(files);
  const edges = new Map();
  const pattern = /(?:\b(?:import|export)\b[^'"`;]*?\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\1/g;
  for (const file of files) {
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '));
    const lines = text.split('\n').map((l) => l.replace(/(^|[^:'"`])\/\/.*$/, '$1'));
    const code = lines.join('\n');
    for (const m of code.matchAll(pattern)) {
      const target = resolveImport(file, m[2], known);
      if (target === null || target === file) continue;
      if (!edges.has(file)) edges.set(file, new Map());
      const line = code.slice(0, m.index).split('\n').length;
      if (!edges.get(file).has(target)) edges.get(file).set(target, `${relative(root, file)}:${line}`);
    }
  }
  return { nodes: files, edges, name: (f) => relative(root, f) };
}

// ---------------------------------------------------------------------------------
// Cycles

/** Strongly connected components with more than one member (Tarjan's algorithm). */
function tangles(nodes, edges) {
  let index = 0;
  const order = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    order.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), order.get(w)));
    }
    if (low.get(v) === order.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const v of nodes) if (!order.has(v)) visit(v);
  return found;
}

/** One shortest cycle through the component's first member, as the list of its steps. */
function oneCycle(component, edges) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        for (let p = previous.get(v); p !== null; p = previous.get(p)) path.unshift(p);
        return path;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}

function report(kind, { nodes, edges, name }) {
  const found = tangles(nodes, edges);
  for (const component of found) {
    const cycle = oneCycle(component, edges);
    const steps = cycle.map((v, k) => {
      const next = cycle[(k + 1) % cycle.length];
      return `  ${name(v)}\n    → ${name(next)}   (${edges.get(v).get(next)})`;
    });
    console.error(`${kind} import cycle among ${component.length} modules: ${component.map(name).sort().join(', ')}\n${steps.join('\n')}`);
  }
  return found.length;
}

const cycles =
  report('Rust', rustModules(join(root, 'src'))) +
  report('Rust (the addon)', rustModules(join(root, 'src', 'binding'))) +
  report('TypeScript', scriptModules());
if (cycles > 0) {
  console.error(`${cycles} import cycle(s); docs/architecture.md says which way the arrows point.`);
  process.exit(1);
}
console.log('no import cycles among the Rust modules or the TypeScript files');
