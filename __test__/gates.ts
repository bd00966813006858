// Tests, or groups of them, that need more than their file (__test__/capabilities.ts):
// where the need is not met they are skipped, never failed, and say why twice: in the
// test's name and in a printed line. Use as `itIf('escapes-held')('name', fn)`.
import { describe, it } from 'vitest';

import { met, type Need, why } from './capabilities';

type Body = () => unknown;
type Options = number | { timeout?: number };

function label(need: Need): string {
  return need.startsWith('landlock:') ? `Landlock ABI ${need.slice('landlock:'.length)}` : need;
}

const told = new Set<Need>();

/** Prints the skip (the reason in full the first time a need is missing) and names the test. */
function skipped(kind: string, need: Need, name: string): string {
  console.log(`skipped ${kind} "${name}": ${told.has(need) ? `needs ${label(need)} (as above)` : why(need)}`);
  told.add(need);
  return `${name} [skipped, needs ${label(need)}]`;
}

/** `it` where every need is met, else `it.skip` with the reason. */
export function itIf(...needs: Need[]) {
  return (name: string, fn: Body, options?: Options): void => {
    const missing = needs.find((n) => !met(n));
    if (missing) it.skip(skipped('test', missing, name), fn);
    else it(name, fn, options);
  };
}

/** `describe` where every need is met, else `describe.skip` with the reason. */
export function describeIf(...needs: Need[]) {
  return (name: string, fn: () => void): void => {
    const missing = needs.find((n) => !met(n));
    if (missing) describe.skip(skipped('group', missing, name), fn);
    else describe(name, fn);
  };
}
