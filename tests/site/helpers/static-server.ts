// A small static server for site/dist (127.0.0.1, port 0) that serves files the
// way the product does: `/x/` → `x/index.html`, `.md` as text/markdown,
// `.txt` as text/plain, its own origin written into absolute URLs. Optional extra routes stand in for the co-deployed API.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { withPublicOrigin } from '../../../api/src/docs-paths.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.xml': 'application/xml; charset=utf-8',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
};

const WITH_ORIGIN = new Set(['.html', '.md', '.txt', '.xml']);

export type ExtraRoute = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

export interface StaticServer {
  url: string;
  /** Requests the server saw (method + path), for assertions about what a page fetched. */
  requests: string[];
  close(): Promise<void>;
}

export async function startStaticServer(root: string, extra?: ExtraRoute): Promise<StaticServer> {
  const requests: string[] = [];
  let url = '';
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push(`${req.method} ${path}`);
    if (extra && (await extra(req, res))) return;
    let file = join(root, path);
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) {
      if (!path.endsWith('/')) {
        res.writeHead(301, { Location: `${path}/` }).end();
        return;
      }
      file = join(file, 'index.html');
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      const notFound = join(root, '404.html');
      res.writeHead(404, { 'Content-Type': TYPES['.html'] as string });
      res.end(existsSync(notFound) ? readFileSync(notFound) : 'Not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
    // Absolute URLs name this server, as the product writes its own origin into them.
    const body = WITH_ORIGIN.has(extname(file))
      ? withPublicOrigin(readFileSync(file, 'utf8'), url)
      : readFileSync(file);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;
  return {
    url,
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
