// Reads what a built `.node` is without any platform's tools: its object format (ELF,
// Mach-O, PE), CPU, whether it is a shared library, the symbols it exports and the
// libraries it loads. `npm run build:all` (scripts/build-all.mjs) uses it to check each
// cross-built addon, because nothing here can load a Mach-O, and binutils' `nm` reads
// only the host's formats. Only the little-endian 64-bit layouts are handled: every
// platform in npm/ is one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * `glibc`: the newest glibc symbol version an ELF file needs (weak references left out:
 * the program checks for those itself), e.g. `2.17`. `minOs`: the oldest macOS a Mach-O
 * file says it runs on; `signed`: it carries a code signature whose page hashes match the
 * file (Apple silicon loads no code without one, and checks each page against it).
 * @typedef {{ format: string, arch: string, shared: boolean, exports: string[], libraries: string[],
 *   glibc?: string | null, minOs?: string | null, signed?: boolean }} BinaryInfo
 */

/** @returns {BinaryInfo} */
export function inspectBinary(path) {
  const buf = readFileSync(path);
  if (buf.length >= 4 && buf.readUInt32BE(0) === 0x7f454c46) return readElf(buf);
  if (buf.length >= 4 && buf.readUInt32LE(0) === 0xfeedfacf) return readMachO(buf);
  if (buf.length >= 2 && buf.toString('latin1', 0, 2) === 'MZ') return readPe(buf);
  const magic = buf.subarray(0, 4).toString('hex');
  throw new Error(`${path}: not an ELF, 64-bit Mach-O or PE file (magic ${magic})`);
}

/** A NUL-terminated string at `offset`. */
function cString(buf, offset) {
  const end = buf.indexOf(0, offset);
  return buf.toString('latin1', offset, end < 0 ? buf.length : end);
}

function readElf(buf) {
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('ELF: only 64-bit little-endian files are read');
  const type = buf.readUInt16LE(16);
  const machine = buf.readUInt16LE(18);
  const shoff = Number(buf.readBigUInt64LE(40));
  const shentsize = buf.readUInt16LE(58);
  const shnum = buf.readUInt16LE(60);
  const section = (i) => {
    const at = shoff + i * shentsize;
    return {
      type: buf.readUInt32LE(at + 4),
      offset: Number(buf.readBigUInt64LE(at + 24)),
      size: Number(buf.readBigUInt64LE(at + 32)),
      link: buf.readUInt32LE(at + 40),
      entsize: Number(buf.readBigUInt64LE(at + 56)),
    };
  };
  const exports = [];
  const libraries = [];
  const strongImports = []; // dynsym indexes of undefined, non-weak symbols
  let versym = null;
  const versionNames = new Map(); // version index -> name, from the needed-versions table
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type === 11 /* SHT_DYNSYM */) {
      const strtab = section(s.link).offset;
      for (let at = s.offset + s.entsize, index = 1; at < s.offset + s.size; at += s.entsize, index++) {
        const bind = buf[at + 4] >> 4;
        const visibility = buf[at + 5] & 3;
        const defined = buf.readUInt16LE(at + 6) !== 0;
        // Global or weak, default or protected visibility, defined here: what a loader can find.
        if (defined && (bind === 1 || bind === 2) && (visibility === 0 || visibility === 3)) {
          exports.push(cString(buf, strtab + buf.readUInt32LE(at)));
        } else if (!defined && bind === 1) strongImports.push(index);
      }
    } else if (s.type === 0x6fffffff /* SHT_GNU_versym */) {
      versym = s.offset;
    } else if (s.type === 0x6ffffffe /* SHT_GNU_verneed */) {
      const strtab = section(s.link).offset;
      for (let need = s.offset, more = true; more; ) {
        const count = buf.readUInt16LE(need + 2);
        for (let aux = need + buf.readUInt32LE(need + 8), k = 0; k < count; k++) {
          versionNames.set(buf.readUInt16LE(aux + 6), cString(buf, strtab + buf.readUInt32LE(aux + 8)));
          aux += buf.readUInt32LE(aux + 12);
        }
        more = buf.readUInt32LE(need + 12) !== 0;
        need += buf.readUInt32LE(need + 12);
      }
    } else if (s.type === 6 /* SHT_DYNAMIC */) {
      const strtab = section(s.link).offset;
      for (let at = s.offset; at < s.offset + s.size; at += 16) {
        const tag = Number(buf.readBigInt64LE(at));
        if (tag === 0) break;
        if (tag === 1 /* DT_NEEDED */) libraries.push(cString(buf, strtab + Number(buf.readBigUInt64LE(at + 8))));
      }
    }
  }
  let glibc = null;
  if (versym !== null) {
    for (const index of strongImports) {
      const name = versionNames.get(buf.readUInt16LE(versym + index * 2) & 0x7fff);
      const version = name?.startsWith('GLIBC_') ? name.slice('GLIBC_'.length) : null;
      if (version && (glibc === null || compareVersions(version, glibc) > 0)) glibc = version;
    }
  }
  const arch = { 62: 'x64', 183: 'arm64' }[machine] ?? `e_machine ${machine}`;
  return { format: 'ELF', arch, shared: type === 3 /* ET_DYN */, exports, libraries, glibc };
}

function uleb(buf, state) {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[state.at++];
    if (byte === undefined) throw new Error('Mach-O: export trie runs past the end of the file');
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return Number(result);
    shift += 7n;
  }
}

/** The names in a dyld export trie: what dyld itself resolves `dlsym` against. */
function exportTrie(buf, start, size) {
  const names = [];
  const seen = new Set();
  const walk = (nodeOffset, prefix) => {
    if (nodeOffset >= size || seen.has(nodeOffset)) return;
    seen.add(nodeOffset);
    const state = { at: start + nodeOffset };
    const terminalSize = uleb(buf, state);
    if (terminalSize > 0) names.push(prefix);
    state.at += terminalSize;
    const children = buf[state.at++];
    for (let i = 0; i < children; i++) {
      const edge = cString(buf, state.at);
      state.at += Buffer.byteLength(edge, 'latin1') + 1;
      walk(uleb(buf, state), prefix + edge);
    }
  };
  walk(0, '');
  return names;
}

function readMachO(buf) {
  const cputype = buf.readUInt32LE(4);
  const filetype = buf.readUInt32LE(12);
  const ncmds = buf.readUInt32LE(16);
  const exports = new Set();
  const libraries = [];
  let minOs = null;
  let signed = false;
  // A version packed as xxxx.yy.zz in a 32-bit word.
  const version = (v) => `${v >>> 16}.${(v >> 8) & 0xff}${v & 0xff ? `.${v & 0xff}` : ''}`;
  let at = 32; // the mach_header_64
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(at);
    const cmdsize = buf.readUInt32LE(at + 4);
    if (cmd === 0x2 /* LC_SYMTAB */) {
      const symoff = buf.readUInt32LE(at + 8);
      const nsyms = buf.readUInt32LE(at + 12);
      const stroff = buf.readUInt32LE(at + 16);
      for (let s = 0; s < nsyms; s++) {
        const entry = symoff + s * 16;
        const type = buf[entry + 4];
        // External (N_EXT) and defined in a section (N_SECT), not a debugging entry.
        if ((type & 0xe0) === 0 && (type & 0x01) !== 0 && (type & 0x0e) === 0x0e) {
          exports.add(cString(buf, stroff + buf.readUInt32LE(entry)));
        }
      }
    } else if (cmd === 0x22 || cmd === 0x80000022 /* LC_DYLD_INFO(_ONLY) */) {
      const off = buf.readUInt32LE(at + 40);
      const size = buf.readUInt32LE(at + 44);
      if (size > 0) for (const name of exportTrie(buf, off, size)) exports.add(name);
    } else if (cmd === 0x80000033 /* LC_DYLD_EXPORTS_TRIE */) {
      const off = buf.readUInt32LE(at + 8);
      const size = buf.readUInt32LE(at + 12);
      if (size > 0) for (const name of exportTrie(buf, off, size)) exports.add(name);
    } else if (cmd === 0xc || cmd === 0x80000018 || cmd === 0x80000023 /* LC_(LOAD|WEAK|REEXPORT)_DYLIB */) {
      libraries.push(cString(buf, at + buf.readUInt32LE(at + 8)));
    } else if (cmd === 0x32 /* LC_BUILD_VERSION */) {
      minOs = version(buf.readUInt32LE(at + 12));
    } else if (cmd === 0x24 /* LC_VERSION_MIN_MACOSX */) {
      minOs = version(buf.readUInt32LE(at + 8));
    } else if (cmd === 0x1d /* LC_CODE_SIGNATURE */) {
      signed = codeSignatureMatches(buf, buf.readUInt32LE(at + 8));
    }
    at += cmdsize;
  }
  const arch = { 0x01000007: 'x64', 0x0100000c: 'arm64' }[cputype] ?? `cputype 0x${cputype.toString(16)}`;
  return { format: 'Mach-O', arch, shared: filetype === 6 /* MH_DYLIB */, exports: [...exports], libraries, minOs, signed };
}

/**
 * Whether the signature blob at `offset` holds a SHA-256 code directory whose hash of
 * every page (up to its code limit) matches the file: what the kernel checks as it maps
 * the pages of ad-hoc signed code. The blob's fields are big-endian.
 */
function codeSignatureMatches(buf, offset) {
  if (buf.readUInt32BE(offset) !== 0xfade0cc0 /* embedded signature */) return false;
  const count = buf.readUInt32BE(offset + 8);
  for (let i = 0; i < count; i++) {
    const type = buf.readUInt32BE(offset + 12 + i * 8);
    const cd = offset + buf.readUInt32BE(offset + 16 + i * 8);
    if (type !== 0 /* the code directory */ || buf.readUInt32BE(cd) !== 0xfade0c02) continue;
    const hashOffset = buf.readUInt32BE(cd + 16);
    const slots = buf.readUInt32BE(cd + 28);
    const codeLimit = buf.readUInt32BE(cd + 32);
    const hashSize = buf[cd + 36];
    const hashType = buf[cd + 37];
    const pageSize = 2 ** buf[cd + 39];
    if (hashType !== 2 /* SHA-256 */ || slots === 0) return false;
    for (let slot = 0; slot < slots; slot++) {
      const page = buf.subarray(slot * pageSize, Math.min((slot + 1) * pageSize, codeLimit));
      const want = buf.subarray(cd + hashOffset + slot * hashSize, cd + hashOffset + (slot + 1) * hashSize);
      if (!createHash('sha256').update(page).digest().subarray(0, hashSize).equals(want)) return false;
    }
    return true;
  }
  return false;
}

function readPe(buf) {
  const pe = buf.readUInt32LE(0x3c);
  if (buf.readUInt32BE(pe) !== 0x50450000) throw new Error('PE: no PE signature');
  const coff = pe + 4;
  const machine = buf.readUInt16LE(coff);
  const sectionCount = buf.readUInt16LE(coff + 2);
  const optionalSize = buf.readUInt16LE(coff + 16);
  const characteristics = buf.readUInt16LE(coff + 18);
  const optional = coff + 20;
  const magic = buf.readUInt16LE(optional);
  if (magic !== 0x20b) return { format: `PE (optional header magic 0x${magic.toString(16)})`, arch: '?', shared: false, exports: [], libraries: [] };
  const sections = [];
  for (let i = 0; i < sectionCount; i++) {
    const at = optional + optionalSize + i * 40;
    sections.push({
      va: buf.readUInt32LE(at + 12),
      size: Math.max(buf.readUInt32LE(at + 8), buf.readUInt32LE(at + 16)),
      raw: buf.readUInt32LE(at + 20),
    });
  }
  const offsetOf = (rva) => {
    const s = sections.find((x) => rva >= x.va && rva < x.va + x.size);
    if (!s) throw new Error(`PE: RVA 0x${rva.toString(16)} is in no section`);
    return rva - s.va + s.raw;
  };
  const directoryCount = buf.readUInt32LE(optional + 108);
  const directory = (i) => (i < directoryCount ? buf.readUInt32LE(optional + 112 + i * 8) : 0);
  const exports = [];
  const exportRva = directory(0);
  if (exportRva) {
    const dir = offsetOf(exportRva);
    const count = buf.readUInt32LE(dir + 24);
    const names = offsetOf(buf.readUInt32LE(dir + 32));
    for (let i = 0; i < count; i++) exports.push(cString(buf, offsetOf(buf.readUInt32LE(names + i * 4))));
  }
  const libraries = [];
  const importRva = directory(1);
  if (importRva) {
    for (let at = offsetOf(importRva); ; at += 20) {
      const name = buf.readUInt32LE(at + 12);
      if (name === 0) break;
      libraries.push(cString(buf, offsetOf(name)));
    }
  }
  const delayRva = directory(13);
  if (delayRva) {
    for (let at = offsetOf(delayRva); ; at += 32) {
      const name = buf.readUInt32LE(at + 4);
      if (name === 0) break;
      libraries.push(cString(buf, offsetOf(name)));
    }
  }
  const arch = { 0x8664: 'x64', 0xaa64: 'arm64' }[machine] ?? `machine 0x${machine.toString(16)}`;
  return { format: 'PE32+', arch, shared: (characteristics & 0x2000) !== 0 /* IMAGE_FILE_DLL */, exports, libraries };
}

/** Orders dotted versions by number: `2.17` < `2.28` < `10.15` < `11.0`. */
export function compareVersions(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
