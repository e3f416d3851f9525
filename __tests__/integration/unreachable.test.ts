// Bad cluster connections never hang and fail once: a server that accepts connections but never
// answers, a refused port, exec credential plugins that hang or fail, and a kubeconfig whose
// context names a user it does not have. Through the bundled CLI, against loopback servers and
// the test cluster.
import { chmod, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { eventually, freshNamespace, kubeconfigPath, runNode, writeTree, type RunResult } from '../helpers/cluster.js';
import { faultProxySuite, on, type FaultProxy } from '../helpers/fault-proxy.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** A tree with a Namespace and three ConfigMaps in it (two apply stages' worth of objects). */
async function tree(): Promise<string> {
  const cm = (n: number) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${n}\n  namespace: unreachable-test\ndata:\n  a: "${n}"\n`;
  return writeTree({
    'app/kustomization.yaml': 'resources: [ns.yaml, cm-1.yaml, cm-2.yaml, cm-3.yaml]\n',
    'app/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: unreachable-test\n',
    'app/cm-1.yaml': cm(1),
    'app/cm-2.yaml': cm(2),
    'app/cm-3.yaml': cm(3),
  });
}

/** A kubeconfig for `server` whose user `user` has `auth` (a token by default). */
async function kubeconfig(dir: string, server: string, auth: Record<string, unknown> = { token: 'test-token' }) {
  const file = join(dir, 'kubeconfig');
  // client-node speaks plain http only to a cluster marked insecure.
  const insecure = server.startsWith('http:') ? { 'insecure-skip-tls-verify': true } : {};
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'test',
      clusters: [{ name: 'test-cluster', cluster: { server, ...insecure } }],
      contexts: [{ name: 'test', context: { cluster: 'test-cluster', user: 'deployer' } }],
      users: [{ name: 'deployer', user: auth }],
    }),
  );
  return file;
}

/** An executable shell script in `dir`. */
async function script(dir: string, name: string, body: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

const cli = (root: string, kc: string, ...args: string[]): Promise<RunResult> =>
  runNode('dist/cli.js', [...args, '--path', 'app', '--kubeconfig', kc, '--kustomize-path', KUSTOMIZE], {
    cwd: root,
  });

/** How often `needle` occurs in the run's output (stdout and stderr). */
function occurrences(run: RunResult, needle: string): number {
  return (run.stdout + run.stderr).split(needle).length - 1;
}

describe('a server that accepts connections and never answers', () => {
  let server: net.Server;
  const sockets = new Set<net.Socket>();
  let url: string;
  beforeAll(async () => {
    server = net.createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(['diff', 'apply'])('fails %s with the connect timeout, once', async (command) => {
    const root = await tree();
    const kc = await kubeconfig(root, url);
    const run = await cli(root, kc, command, '--connect-timeout', '1s', '--request-timeout', '20s');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(occurrences(run, 'could not connect within 1s (connect-timeout)'), run.stdout + run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toContain(url);
  });

  it('names the request timeout when it runs out before the connect timeout', async () => {
    const root = await tree();
    const kc = await kubeconfig(root, url);
    const run = await cli(root, kc, 'diff', '--connect-timeout', '30s', '--request-timeout', '2s');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(occurrences(run, 'could not connect within 2s (request-timeout)'), run.stdout + run.stderr).toBe(1);
  });

  it('fails with the request timeout when the connection opens but no answer comes (plain http)', async () => {
    const root = await tree();
    const kc = await kubeconfig(root, url.replace('https:', 'http:'));
    const run = await cli(root, kc, 'diff', '--request-timeout', '2s');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(occurrences(run, 'no answer within 2s (request-timeout)'), run.stdout + run.stderr).toBe(1);
  });
});

describe('a refused port', () => {
  it.each(['diff', 'apply'])('fails %s with the connection error, once', async (command) => {
    // A port that was just free: nothing listens on it.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const root = await tree();
    const run = await cli(root, await kubeconfig(root, `https://127.0.0.1:${port}`), command);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(occurrences(run, `ECONNREFUSED 127.0.0.1:${port}`), run.stdout + run.stderr).toBe(1);
  });
});

describe('several Kustomizations and a refused port', () => {
  it('shows the connection error once for all of them', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const files: Record<string, string> = {};
    for (const n of names) {
      files[`${n}/cm.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: default}\ndata: {a: b}\n`;
      files[`ks/${n}.yaml`] = kustomizationYaml({ name: n });
    }
    const root = await writeTree(files);
    const kc = await kubeconfig(root, `https://127.0.0.1:${port}`);
    for (const command of ['diff', 'apply']) {
      const run = await runNode(
        'dist/cli.js',
        [command, '--kustomizations', 'ks/*.yaml', '--kubeconfig', kc, '--kustomize-path', KUSTOMIZE],
        { cwd: root },
      );
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(occurrences(run, `ECONNREFUSED 127.0.0.1:${port}`), run.stdout + run.stderr).toBe(1);
    }
  });
});

describe('exec credential plugins', () => {
  it('stops a plugin that never returns, naming the user and the command', async () => {
    const root = await tree();
    const pidFile = join(root, 'plugin.pid');
    const plugin = await script(root, 'hangs.sh', `sleep 600 &\necho $! > ${pidFile}\nwait`);
    const kc = await kubeconfig(root, 'https://127.0.0.1:9', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin },
    });
    const run = await cli(root, kc, 'diff', '--request-timeout', '2s');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    const message = `kubeconfig user "deployer": the exec credential plugin "${plugin}" did not finish within 2s`;
    expect(occurrences(run, message), run.stdout + run.stderr).toBe(1);
    // The plugin's own children were stopped with it (gone, or a zombie nobody reaped yet).
    const pid = Number(await readFile(pidFile, 'utf8'));
    const state = () =>
      readFile(`/proc/${pid}/stat`, 'utf8').then(
        (stat) => stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3),
        () => 'gone',
      );
    // The kill is sent before the CLI exits; the kernel may take a moment to carry it out.
    await eventually('the plugin child to be stopped', 5000, async () => {
      const s = await state();
      return s === 'gone' || s === 'Z' ? s : undefined;
    });
    expect(['gone', 'Z']).toContain(await state());
  });

  it('shows the stderr of a plugin that exits 1', async () => {
    const root = await tree();
    const plugin = await script(
      root,
      'fails.sh',
      'echo "error: the SSO session for profile prod has expired" >&2\nexit 1',
    );
    const kc = await kubeconfig(root, 'https://127.0.0.1:9', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin },
    });
    const run = await cli(root, kc, 'apply');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    const message = `kubeconfig user "deployer": the exec credential plugin "${plugin}" exited with code 1: error: the SSO session for profile prod has expired`;
    expect(occurrences(run, message), run.stdout + run.stderr).toBe(1);
  });

  it("cuts a plugin's long stderr, saying how much was left out", async () => {
    const root = await tree();
    const plugin = await script(root, 'noisy.sh', 'seq 1 5000 | sed "s/^/trace line /" >&2\nexit 3');
    const kc = await kubeconfig(root, 'https://127.0.0.1:9', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin },
    });
    const run = await cli(root, kc, 'diff');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stdout + run.stderr).toContain('exited with code 3: trace line 1\n');
    expect(run.stdout + run.stderr).toMatch(/more lines \([\d,]+ characters\) left out\]/);
    expect(run.stdout + run.stderr).not.toContain('trace line 4999');
  });

  it('runs a working plugin once for all of a run’s requests, against the test cluster', async () => {
    const dir = join(kubeconfigPath(), '..');
    const cert = await readFile(join(dir, 'admin.crt'), 'utf8');
    const key = await readFile(join(dir, 'admin.key'), 'utf8');
    const testKc = await readFile(kubeconfigPath(), 'utf8');
    const { server } = (parse(testKc) as { clusters: { cluster: { server: string } }[] }).clusters[0]!.cluster;
    const cluster = { server, 'certificate-authority': join(dir, 'ca.crt') };
    const root = await tree();
    const credential = join(root, 'credential.json');
    await writeFile(
      credential,
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        status: { clientCertificateData: cert, clientKeyData: key },
      }),
    );
    const runs = join(root, 'runs');
    const plugin = await script(root, 'works.sh', `echo run >> ${runs}\ncat ${credential}`);
    const kc = join(root, 'kubeconfig');
    await writeFile(
      kc,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'test',
        clusters: [{ name: 'test-cluster', cluster }],
        contexts: [{ name: 'test', context: { cluster: 'test-cluster', user: 'deployer' } }],
        users: [
          { name: 'deployer', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin } } },
        ],
      }),
    );
    const run = await cli(root, kc, 'diff');
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('ConfigMap/unreachable-test/cm-1 created');
    expect((await readFile(runs, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
  });
});

describe('a kubeconfig whose context names a user it does not have', () => {
  it('says so instead of failing the TLS handshake', async () => {
    const doc = parse(await readFile(kubeconfigPath(), 'utf8')) as {
      'current-context': string;
      contexts: { name: string; context: { user: string } }[];
    };
    for (const c of doc.contexts) c.context.user = 'nobody';
    const root = await tree();
    const kc = join(root, 'kubeconfig');
    await writeFile(kc, stringify(doc));
    const run = await cli(root, kc, 'diff');
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stdout + run.stderr).toContain(
      `kubeconfig ${kc}: context "${doc['current-context']}" names user "nobody", which is not in its users list`,
    );
    expect(run.stdout + run.stderr).not.toContain('unable to verify');
  });
});

describe('a connection that breaks on every apply, through a fault proxy', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  it('fails the run with one error after the retries, and still returns its report', async () => {
    const ns = await freshNamespace(client, 'reset');
    // A path of its own: the run cannot release its lock, which then expires, and no other test waits for it.
    const root = await writeTree({
      [`${ns}/cm.yaml`]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  a: "1"\n`,
    });
    const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
    proxy.setRules([{ match: on('PATCH', path, { dryRun: false }), fault: { reset: true } }]);
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: proxy.kubeconfig }, path: ns });
    expect(report.ok).toBe(false);
    expect(report.error).toMatch(new RegExp(`^PATCH ${path} to ${proxy.url}: .*\\(5 attempts\\)`));
    expect(report.error?.split(`PATCH ${path}`)).toHaveLength(2);
    expect(proxy.requests.filter((r) => r.method === 'PATCH' && r.status === 'reset')).toHaveLength(5);
  });

  it('says once that the cluster went away, not once per object of the stage', async () => {
    const ns = await freshNamespace(client, 'many');
    const files: Record<string, string> = {};
    for (let i = 0; i < 5; i++) {
      files[`${ns}/cm-${i}.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${ns}\ndata:\n  a: "1"\n`;
    }
    const root = await writeTree(files);
    // Every dry-run of the namespace's objects breaks: the connection is gone for all of them alike.
    proxy.setRules([
      {
        match: on('PATCH', new RegExp(`^/api/v1/namespaces/${ns}/configmaps/`), { dryRun: true }),
        fault: { reset: true },
      },
    ]);
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: proxy.kubeconfig }, path: ns });
    expect(report.ok).toBe(false);
    // One error for the run (the first request that found the server gone), not one per object.
    expect(report.error).toMatch(
      new RegExp(`^PATCH /api/v1/namespaces/${ns}/configmaps/cm-\\d to ${proxy.url}: .*\\(5 attempts\\)`),
    );
    expect(report.error?.split(proxy.url)).toHaveLength(2);
    expect(report.error?.match(/configmaps\/cm-\d/g)).toHaveLength(1);
  });

  it('ends the health wait when the cluster goes away during it, instead of polling until the timeout', async () => {
    const ns = await freshNamespace(client, 'gone');
    // A Deployment no node can run: never ready, so only the lost cluster can end the 10-minute wait.
    const root = await writeTree({
      [`${ns}/web.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {kr-test/none: "true"}
      containers: [{name: web, image: "nginx:1.27"}]
`,
    });
    const log: string[] = [];
    const settings = {
      kubeconfig: { kind: 'path', path: proxy.kubeconfig } as const,
      path: ns,
      wait: true,
      timeout: '10m',
    };
    const report = await reconcileTree(root, settings, (line) => {
      log.push(line);
      // The cluster goes away once the apply is done and the wait begins.
      if (line.startsWith('Waiting up to')) proxy.setRules([{ match: () => true, fault: { reset: true } }]);
    });
    proxy.setRules([]);
    expect(report.ok).toBe(false);
    expect(report.changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([`Deployment/${ns}/web created`]);
    expect(report.error).toMatch(new RegExp(`to ${proxy.url}: `));
    expect(report.error).not.toContain('health check failed');
    // No poll after the first that could not reach the cluster (it would log the object as Unknown).
    expect(log.filter((l) => l.startsWith(`Deployment/${ns}/web: Unknown`))).toEqual([]);
    expect(report.error).not.toContain('lost the lock');
  });
});

describe('credentials the cluster does not accept', () => {
  it('fail the run once, naming the kubeconfig user', async () => {
    const doc = parse(await readFile(kubeconfigPath(), 'utf8')) as {
      contexts: { name: string; context: { user: string } }[];
      users: { name: string; user: Record<string, unknown> }[];
      'current-context': string;
    };
    const userName = doc.contexts.find((c) => c.name === doc['current-context'])!.context.user;
    for (const u of doc.users) if (u.name === userName) u.user = { token: 'not-a-token-the-cluster-knows' };
    const root = await tree();
    const kc = join(root, 'kubeconfig');
    await writeFile(kc, stringify(doc));
    for (const command of ['diff', 'apply']) {
      const run = await cli(root, kc, command);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      const message = `Unauthorized: the API server did not accept the credentials of kubeconfig user "${userName}"`;
      expect(occurrences(run, message), run.stdout + run.stderr).toBe(1);
      expect(occurrences(run, 'Unauthorized'), run.stdout + run.stderr).toBe(1);
      expect(run.stdout + run.stderr).not.toContain('not-a-token-the-cluster-knows');
    }
  });
});
