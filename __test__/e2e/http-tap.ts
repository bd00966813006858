// A loopback HTTP proxy between a real MCP client and the daemon's `/mcp`: every request
// goes on unchanged and its answer streams back unchanged (SSE included), and the
// JSON-RPC messages the client POSTed are recorded in order, with the method of each
// HTTP request (a DELETE ends a session). The HTTP counterpart of wire-tap.cjs, for
// __test__/e2e/model-clients.test.ts to assert on what a client asked over HTTP.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';

import type { ClientRun } from './model-clients';

export interface HttpTap {
  /** The proxy's address; `/mcp` on it is the target's `/mcp`. */
  url: string;
  /** The JSON-RPC messages POSTed, in order (a batch's one by one). */
  wire(): ClientRun['wire'];
  /** The HTTP methods of the requests, in order (POST, GET, DELETE). */
  httpMethods(): string[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A proxy to `target` (`http://127.0.0.1:PORT`). */
export async function httpTap(target: string): Promise<HttpTap> {
  const to = new URL(target);
  const wire: ClientRun['wire'] = [];
  const methods: string[] = [];
  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((body) => {
        methods.push(req.method ?? '');
        if (req.method === 'POST' && body.length > 0) {
          try {
            const parsed = JSON.parse(body.toString('utf8')) as unknown;
            for (const m of Array.isArray(parsed) ? parsed : [parsed]) wire.push(m as ClientRun['wire'][number]);
          } catch {
            // not JSON: forwarded as it is; the server answers it
          }
        }
        const upstream = request(
          { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, host: to.host } },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', () => res.destroy());
        // The client went away (it ended a GET stream): so does the request upstream.
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    wire: () => [...wire],
    httpMethods: () => [...methods],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
