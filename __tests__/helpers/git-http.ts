// A git smart-HTTP server on loopback for the tests of GitRepository sources: git's own
// `git http-backend` (CGI) behind a Node HTTP server that demands one Authorization header.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface GitHttpServer {
  /** The HTTP URL of the bare repository at `file://…/name.git`. */
  urlOf: (fileUrl: string) => string;
  /** The Authorization headers requests came with (undefined: none). */
  seen: (string | undefined)[];
  close: () => Promise<void>;
}

/** Serves the bare repositories beside `fileUrl`'s; answers 401 unless the request carries `authorization`. */
export async function gitHttpServer(fileUrl: string, authorization?: string): Promise<GitHttpServer> {
  const root = dirname(fileURLToPath(fileUrl));
  const seen: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    if (authorization !== undefined && req.headers.authorization !== authorization) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    const out: Buffer[] = [];
    cgi.stdout.on('data', (b: Buffer) => out.push(b));
    cgi.on('close', () => {
      const all = Buffer.concat(out);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head) {
        const [k, ...v] = line.split(':');
        if (k!.toLowerCase() === 'status') status = Number(v.join(':').trim().split(' ')[0]);
        else if (k) headers[k] = v.join(':').trim();
      }
      res.writeHead(status, headers).end(all.subarray(end + 4));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  // A server shared by a test file's repositories must not keep its worker alive.
  server.unref();
  return {
    urlOf: (f) => `http://127.0.0.1:${port}/${fileURLToPath(f).slice(root.length + 1)}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => {
          r();
        });
      }),
  };
}
