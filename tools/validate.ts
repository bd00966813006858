// Checks parameters against a declaration's schema (the subset the declarations use),
// with messages a model can act on.
import type { FunctionDeclaration, JsonSchema } from './types.js';

/**
 * Parameters hosts add to every tool on their own, which the tools ignore: the Gemini CLI
 * adds `wait_for_previous` (a scheduling hint) to each declaration and forwards it, to
 * MCP servers too.
 */
export const HOST_PARAMETERS: readonly string[] = ['wait_for_previous'];

/** `params` without the host's own parameters. */
export function withoutHostParameters<P>(params: P): P {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return params;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (!HOST_PARAMETERS.includes(k)) out[k] = v;
  return out as P;
}

/** Returns null when `params` fit the declaration, otherwise one clear sentence. */
export function validateParams(declaration: FunctionDeclaration, params: unknown): string | null {
  const schema = declaration.parametersJsonSchema;
  if (params === undefined || params === null) params = {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    return `${declaration.name} expects an object of parameters, got ${describe(params)}.`;
  }
  const record = withoutHostParameters(params as Record<string, unknown>);
  const properties = schema.properties ?? {};
  const known = Object.keys(properties);
  for (const name of Object.keys(record)) {
    if (!(name in properties)) {
      return known.length === 0
        ? `${declaration.name} takes no parameters, got '${name}'.`
        : `Unknown parameter '${name}' for ${declaration.name}; its parameters are: ${known.join(', ')}.`;
    }
  }
  for (const name of schema.required ?? []) {
    if (record[name] === undefined) return `Missing required parameter '${name}' for ${declaration.name}.`;
  }
  for (const [name, value] of Object.entries(record)) {
    // An explicit null means "not given", as some clients send it for optional parameters.
    if (value === undefined || (value === null && !(schema.required ?? []).includes(name))) continue;
    const problem = check(value, properties[name] as JsonSchema, `'${name}'`);
    if (problem) return `Invalid parameter ${problem}`;
  }
  return null;
}

function check(value: unknown, schema: JsonSchema, where: string): string | null {
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') return `${where}: expected a string, got ${describe(value)}.`;
      if (schema.minLength !== undefined && value.trim().length < schema.minLength) {
        return `${where}: must not be empty.`;
      }
      if (value.includes('\0')) return `${where}: must not contain NUL characters.`;
      if (schema.enum && !schema.enum.includes(value)) {
        return `${where}: '${value}' is not one of ${schema.enum.join(', ')}.`;
      }
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? null : `${where}: expected true or false, got ${describe(value)}.`;
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        return `${where}: expected a number, got ${describe(value)}.`;
      }
      if (schema.type === 'integer' && !Number.isInteger(value)) {
        return `${where}: expected a whole number, got ${value}.`;
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        return `${where}: must be at least ${schema.minimum}, got ${value}.`;
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        return `${where}: must be at most ${schema.maximum}, got ${value}.`;
      }
      return null;
    }
    case 'array': {
      if (!Array.isArray(value)) return `${where}: expected an array, got ${describe(value)}.`;
      for (let i = 0; i < value.length; i++) {
        const problem = schema.items ? check(value[i], schema.items, `${where}[${i}]`) : null;
        if (problem) return problem;
      }
      return null;
    }
    default:
      return null;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
