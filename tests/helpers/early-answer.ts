// A request whose answer may arrive while its body is still being sent (a server refusing an
// oversized body as it streams in). fetch reports such an exchange as a socket error once the
// server stops reading; node:http, used here on its own connection, reads the answer instead.
import { request } from 'node:http';

export interface EarlyAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Sends `body` (or, with `chunked`, `chunked.total` bytes of filler after `body`, without a
 * Content-Length) and resolves with the answer, whenever it comes.
 */
export function sendExpectingEarlyAnswer(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body: string;
    chunked?: { total: number };
  },
): Promise<EarlyAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...(options.headers ?? {}) };
    if (!options.chunked) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = request(url, { method: options.method ?? 'POST', headers, agent: false });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    // Writing after the server stopped reading fails; only an error before any answer counts.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.write(options.body);
    if (!options.chunked) {
      req.end();
      return;
    }
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (!answered && sent < options.chunked!.total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}
