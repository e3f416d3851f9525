// Just enough of a Kubernetes client for the workflow runs to look at what a workflow did: GET and
// merge-PATCH with the kubeconfig's client certificate (the test cluster's admin).
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { parse } from 'yaml';

interface KubeConfigDoc {
  'current-context': string;
  contexts: { name: string; context: { cluster: string; user: string } }[];
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
}

export interface Kube {
  get(path: string): Promise<Record<string, unknown> | undefined>;
  patch(path: string, body: unknown): Promise<void>;
  /** POSTs `body` to the collection `path`; one that exists already is fine. */
  create(path: string, body: unknown): Promise<void>;
}

export function kubeFrom(kubeconfigPath: string): Kube {
  const doc = parse(readFileSync(kubeconfigPath, 'utf8')) as KubeConfigDoc;
  const ctx = doc.contexts.find((c) => c.name === doc['current-context'])?.context;
  const cluster = doc.clusters.find((c) => c.name === ctx?.cluster)?.cluster;
  const user = doc.users.find((u) => u.name === ctx?.user)?.user;
  if (!cluster || !user) throw new Error(`${kubeconfigPath}: no cluster or user for its current context`);
  const b64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64');
  const agent = new https.Agent({
    ca: b64(cluster['certificate-authority-data']),
    cert: b64(user['client-certificate-data']),
    key: b64(user['client-key-data']),
  });
  const request = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = https.request(
        new URL(path, cluster.server),
        {
          method,
          agent,
          headers: body
            ? { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }
            : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, text });
          });
        },
      );
      req.on('error', reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  return {
    async get(path) {
      const r = await request('GET', path);
      if (r.status === 404) return undefined;
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text.slice(0, 200)}`);
      return JSON.parse(r.text) as Record<string, unknown>;
    },
    async create(path, body) {
      const r = await request('POST', path, body);
      if (r.status !== 201 && r.status !== 409) throw new Error(`POST ${path}: ${r.status} ${r.text.slice(0, 200)}`);
    },
    async patch(path, body) {
      const r = await request('PATCH', path, body);
      if (r.status !== 200) throw new Error(`PATCH ${path}: ${r.status} ${r.text.slice(0, 200)}`);
    },
  };
}
