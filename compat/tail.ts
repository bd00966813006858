// The end of a long text kept as the slices it arrived in, so that neither keeping it
// nor handing it out copies it: the final `output` of a flood is the last 16 MB (pipes)
// or the last 300 030 lines (PTY) of up to hundreds of MB, and building it as one flat
// string in one turn held the host's JS thread for hundreds of milliseconds.
// Strings joined with `+` are ropes in V8: the caller gets the same text without a copy.
// What they stand for: `pipesOutput` and `ptyOutput` (compat/views.ts) of the whole text.

/** Joins slices without flattening them (`Array.prototype.join` would copy them all). */
function rope(parts: readonly string[]): string {
  let text = '';
  for (const part of parts) text += part;
  return text;
}

/** The last `max` UTF-16 units of everything appended (pipes: upstream's 16 MB buffer). */
export class CharTail {
  private parts: string[] = [];
  /** Units in `parts`. */
  private kept = 0;
  /** Units ever appended. */
  total = 0;

  constructor(private readonly max: number) {}

  append(text: string): void {
    if (text.length === 0) return;
    this.parts.push(text);
    this.kept += text.length;
    this.total += text.length;
    // Whole slices only leave once the rest still holds `max` units.
    while (this.parts.length > 1 && this.kept - this.parts[0]!.length >= this.max) {
      this.kept -= this.parts.shift()!.length;
    }
  }

  /** The last `max` units (a rope; the first slice cut, never copied). */
  text(): string {
    const parts = [...this.parts];
    const excess = this.kept - this.max;
    if (excess > 0) parts[0] = parts[0]!.slice(excess);
    return rope(parts);
  }

  /** `pipesOutput(this.text())`, trimmed slice by slice (`trim` of a rope would flatten it). */
  trimmed(): string {
    const parts = [...this.parts];
    const excess = this.kept - this.max;
    if (excess > 0) parts[0] = parts[0]!.slice(excess);
    while (parts.length > 0) {
      parts[0] = parts[0]!.trimStart();
      if (parts[0] !== '') break;
      parts.shift();
    }
    while (parts.length > 0) {
      const last = parts.length - 1;
      parts[last] = parts[last]!.trimEnd();
      if (parts[last] !== '') break;
      parts.pop();
    }
    return rope(parts);
  }
}

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The text of the last `maxLines` lines of everything appended, as `ptyOutput` cuts it. */
export class LineTail {
  private parts: string[] = [];
  private counts: number[] = [];
  /** Newlines in `parts` after the first. */
  private laterNewlines = 0;

  constructor(private readonly maxLines: number) {}

  append(text: string): void {
    if (text.length === 0) return;
    const count = newlines(text);
    if (this.parts.length > 0) this.laterNewlines += count;
    this.parts.push(text);
    this.counts.push(count);
    // The first slice is no longer needed once the later ones hold `maxLines` newlines:
    // the window starts after the `maxLines`-th newline from the end.
    while (this.parts.length > 1 && this.laterNewlines >= this.maxLines) {
      this.parts.shift();
      this.counts.shift();
      this.laterNewlines -= this.counts[0]!;
    }
  }

  /**
   * Puts `text` before everything appended so far (a reader going backwards from the
   * end, see `readLastLines` in compat/text.ts); nothing is let go. Returns the
   * newlines `text` holds.
   */
  prepend(text: string): number {
    if (text.length === 0) return 0;
    const count = newlines(text);
    if (this.parts.length > 0) this.laterNewlines += this.counts[0]!;
    this.parts.unshift(text);
    this.counts.unshift(count);
    return count;
  }

  /**
   * `ptyOutput(everything, maxLines)`: the text after the `maxLines`-th newline from the
   * end (all of it when there are fewer), trailing newlines dropped (they end empty lines).
   */
  output(): string {
    const parts = [...this.parts];
    let seen = 0;
    for (let p = parts.length - 1; p >= 0; p--) {
      const part = parts[p]!;
      if (seen + this.counts[p]! < this.maxLines) {
        seen += this.counts[p]!;
        continue;
      }
      let at = part.length;
      while (seen < this.maxLines) {
        at = part.lastIndexOf('\n', at - 1);
        seen++;
      }
      parts.splice(0, p + 1, part.slice(at + 1));
      break;
    }
    while (parts.length > 0) {
      const last = parts.length - 1;
      parts[last] = parts[last]!.replace(/\n+$/, '');
      if (parts[last] !== '') break;
      parts.pop();
    }
    return rope(parts);
  }
}
