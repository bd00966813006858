// `env` options checked here as the binding checks them (src/binding/env_arg.rs): JSON
// would turn a `Map` into `{}` and a number into nothing, so the daemon could not tell.

const article = (word: string) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

function kind(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  return article(typeof v);
}

/** Why `env` is not a plain object of strings (null/undefined are fine), or null. */
export function envProblem(env: unknown): string | null {
  if (env === null || env === undefined) return null;
  if (typeof env !== 'object' || Array.isArray(env)) return `env must be an object of strings, got ${kind(env)}`;
  const proto = Object.getPrototypeOf(env) as object | null;
  if (proto !== null && Object.getPrototypeOf(proto) !== null) {
    return 'env must be a plain object of strings (not a Map or a class instance)';
  }
  for (const [name, value] of Object.entries(env)) {
    if (name.includes('\0')) return `invalid environment variable name ${JSON.stringify(name)}`;
    if (typeof value !== 'string') return `env.${name} must be a string, got ${value === null ? 'null' : kind(value)}`;
  }
  return null;
}
