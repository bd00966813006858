// A scripted model on 127.0.0.1 for the real Claude Code and Codex CLIs: the Anthropic
// Messages API (`POST /v1/messages`, streamed as server-sent events) and the OpenAI
// Responses API (`POST /v1/responses`, streamed). Each model turn makes the next scripted
// call of one of the MCP server's tools, then answers with text; every request's tool
// results are kept, so a test asserts on what the MODEL was handed, not on what the
// server sent. Which turn it is comes from the request itself (the number of tool
// results in its history): side requests (a title, a summary) get plain text.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ScriptedCall {
  /** The MCP tool (`run_shell_command`); the client's name for it is found in the request's tools. */
  tool: string;
  args: Record<string, unknown>;
}

/** One tool result as the model received it. */
export interface SeenResult {
  /** The text the model read: the result's text blocks joined (a string result as it is). */
  text: string;
  /** The raw value the client sent. */
  raw: unknown;
}

export interface FakeModel {
  url: string;
  /** The tool results of the longest conversation so far, in order. */
  results(): SeenResult[];
  /** The paths and bodies of every request (for a failing test's message). */
  requests: Array<{ path: string; body: unknown }>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((b) => {
        const block = b as Json;
        return typeof block.text === 'string' ? block.text : '';
      })
      .join('\n');
  }
  return JSON.stringify(value);
}

/** The client's name for `tool` among the request's tools (`mcp__shell__run_shell_command`, ...). */
function toolName(tools: unknown, tool: string): string | undefined {
  if (!Array.isArray(tools)) return undefined;
  const names = tools.map((t) => (t as Json).name).filter((n): n is string => typeof n === 'string');
  return names.find((n) => n.endsWith(`__${tool}`)) ?? names.find((n) => n.endsWith(tool));
}

function sse(res: ServerResponse, events: Array<[string, Json]>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

/** Anthropic Messages API: tool results are `tool_result` blocks of user messages. */
function anthropic(body: Json, script: ScriptedCall[], res: ServerResponse): SeenResult[] {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  const results: SeenResult[] = [];
  for (const m of messages) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const block of m.content as Json[]) {
      if (block.type === 'tool_result') results.push({ text: textOf(block.content), raw: block.content });
    }
  }
  const step = script[results.length];
  const name = step ? toolName(body.tools, step.tool) : undefined;
  const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id: `msg_${Date.now()}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage };
  const block: Json = step && name
    ? { type: 'tool_use', id: `toolu_${results.length + 1}`, name, input: {} }
    : { type: 'text', text: '' };
  const delta: Json = step && name
    ? { type: 'input_json_delta', partial_json: JSON.stringify(step.args) }
    : { type: 'text_delta', text: 'Done.' };
  if (body.stream !== true) {
    const content = step && name ? [{ ...block, input: step.args }] : [{ type: 'text', text: 'Done.' }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content, stop_reason: step && name ? 'tool_use' : 'end_turn' }));
    return name ? results : [];
  }
  sse(res, [
    ['message_start', { type: 'message_start', message }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: block }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: step && name ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
  return Array.isArray(body.tools) ? results : [];
}

/**
 * The Responses API's name for `tool`: a function of its own, or one inside a
 * `namespace` tool (Codex 0.17x puts each MCP server's tools in one, `mcp__shell`).
 */
function responsesTool(tools: unknown, tool: string): { name: string; namespace?: string } | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const t of tools as Json[]) {
    if (t.type === 'namespace' && Array.isArray(t.tools)) {
      const inner = (t.tools as Json[]).find((f) => f.name === tool);
      if (inner) return { name: tool, namespace: t.name as string };
    }
  }
  const name = toolName(tools, tool);
  return name ? { name } : undefined;
}

/** OpenAI Responses API: tool results are `function_call_output` input items. */
function openai(body: Json, script: ScriptedCall[], res: ServerResponse): SeenResult[] {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  const results: SeenResult[] = input
    .filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .map((item) => ({ text: textOf(item.output), raw: item.output }));
  const step = script[results.length];
  const name = step ? responsesTool(body.tools, step.tool) : undefined;
  const id = `resp_${Date.now()}`;
  const item: Json = step && name
    ? { type: 'function_call', id: `fc_${results.length + 1}`, call_id: `call_${results.length + 1}`, ...name, arguments: JSON.stringify(step.args) }
    : { type: 'message', id: `msg_${results.length + 1}`, role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] };
  sse(res, [
    ['response.created', { type: 'response.created', response: { id } }],
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    [
      'response.completed',
      {
        type: 'response.completed',
        response: { id, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 11 } },
      },
    ],
  ]);
  return Array.isArray(body.tools) ? results : [];
}

export async function fakeModel(script: ScriptedCall[]): Promise<FakeModel> {
  let longest: SeenResult[] = [];
  const requests: FakeModel['requests'] = [];
  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((text) => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        let body: Json = {};
        try {
          body = JSON.parse(text) as Json;
        } catch {
          // not JSON: answered below by path
        }
        requests.push({ path, body });
        let seen: SeenResult[] = [];
        if (req.method === 'POST' && path.endsWith('/messages/count_tokens')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 10 }));
        } else if (req.method === 'POST' && path.endsWith('/messages')) seen = anthropic(body, script, res);
        else if (req.method === 'POST' && path.endsWith('/responses')) seen = openai(body, script, res);
        else if (path.endsWith('/models')) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [], models: [] }));
        else res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        if (seen.length >= longest.length) longest = seen;
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    results: () => longest,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
