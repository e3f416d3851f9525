// Benchmarks the bundled CLI (dist/cli.js) against a real tier-a test cluster that it starts and
// stops itself. Prints figures; asserts nothing. Run with Node 24 (type stripping):
//   node_modules/.bin/node bench/apply.ts [--objects 1000] [--concurrency 1,4,8,16,32]
// See bench/README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(REPO, 'dist', 'cli.js');
const TESTCLUSTER = join(REPO, 'test', 'cluster', 'bin', 'testcluster');
const KUSTOMIZE = join(REPO, 'test', 'cluster', 'bin', 'kustomize');
const TIME = '/usr/bin/time';
const NODE = process.execPath;
/** No single CLI run may take longer than this. */
const RUN_TIMEOUT_MS = 180_000;

interface Row {
  run: string;
  command: 'apply' | 'diff';
  concurrency: number;
  exitCode: number;
  wallMs: number;
  objectsPerSec: number;
  requests: number;
  requestsByKind: Record<string, number>;
  peakRssMiB: number | undefined;
  counts: Record<string, number>;
  error?: string;
}

// ---------------------------------------------------------------- the cluster

interface Cluster {
  dir: string;
  kubeconfig: string;
  stop: () => Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  if (!existsSync(TESTCLUSTER)) throw new Error(`${TESTCLUSTER} is missing: run "npm run cluster:build" first`);
  const dir = await mkdtemp(join(os.tmpdir(), 'kr-bench-cluster-'));
  const child: ChildProcess = spawn(TESTCLUSTER, ['up', '--tier', 'a', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const kubeconfig = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`test cluster not ready after 120 s:\n${stderr.join('')}`));
      }, 120_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('KUBECONFIG=')) {
          clearTimeout(timer);
          resolve(line.slice('KUBECONFIG='.length));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`test cluster exited with ${code} before it was ready:\n${stderr.join('')}`));
      });
    });
    return { dir, kubeconfig, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------- a counting proxy

interface CountingProxy {
  kubeconfig: string;
  counts: Map<string, number>;
  reset: () => void;
  total: () => number;
  serverVersion: () => Promise<string>;
  close: () => Promise<void>;
}

/** A TLS loopback proxy in front of the apiserver that counts requests by method (dry-runs apart). */
async function startProxy(cluster: Cluster, workDir: string): Promise<CountingProxy> {
  const doc = parse(await readFile(cluster.kubeconfig, 'utf8')) as { clusters?: { cluster?: { server?: string } }[] };
  const upstream = new URL(doc.clusters?.[0]?.cluster?.server ?? '');
  const [ca, cert, key, serverCert, serverKey] = await Promise.all(
    ['ca.crt', 'admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key'].map((f) => readFile(join(cluster.dir, f))),
  );
  const agent = new https.Agent({ keepAlive: true, maxSockets: 128, ca, cert, key });
  const counts = new Map<string, number>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'https://proxy.invalid');
    const kind = `${req.method ?? 'GET'}${url.searchParams.get('dryRun') === 'All' ? ' (dry-run)' : ''}`;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    const out = https.request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end(`proxy: ${err.message}\n`);
    });
    req.pipe(out);
  };
  const server = https.createServer({ cert: serverCert, key: serverKey }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = join(workDir, 'proxy.kubeconfig');
  await writeFile(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'bench',
      clusters: [{ name: 'bench', cluster: { server: url, 'certificate-authority': join(cluster.dir, 'ca.crt') } }],
      contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'admin' } }],
      users: [
        {
          name: 'admin',
          user: { 'client-certificate': join(cluster.dir, 'admin.crt'), 'client-key': join(cluster.dir, 'admin.key') },
        },
      ],
    }),
  );
  return {
    kubeconfig,
    counts,
    reset: () => {
      counts.clear();
    },
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    serverVersion: () =>
      new Promise((resolve) => {
        https
          .get(`${upstream.origin}/version`, { agent }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => {
              try {
                resolve((JSON.parse(body) as { gitVersion?: string }).gitVersion ?? 'unknown');
              } catch {
                resolve('unknown');
              }
            });
          })
          .on('error', () => {
            resolve('unknown');
          });
      }),
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

// ---------------------------------------------------------------- the tree

const KINDS = ['ConfigMap', 'Secret', 'Service', 'Deployment', 'ConfigMap'] as const;

function objectFor(kind: (typeof KINDS)[number], name: string, namespace: string, generation: number): unknown {
  const labels = { app: name, 'bench.kustomize-reconcile/tier': 'a' };
  const metadata = { name, namespace, labels };
  switch (kind) {
    case 'ConfigMap':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        data: { generation: String(generation), 'app.properties': `x=${name}` },
      };
    case 'Secret':
      return { apiVersion: 'v1', kind, metadata, type: 'Opaque', stringData: { token: `t-${name}` } };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      };
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata,
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'ghcr.io/stefanprodan/podinfo:6.7.1',
                  ports: [{ containerPort: 8080 }],
                  resources: { requests: { cpu: '10m', memory: '16Mi' } },
                },
              ],
            },
          },
        },
      };
  }
}

/**
 * Writes N objects as plain YAML files (no kustomization.yaml: one is generated, as Flux does):
 * one Namespace per 200 objects, the rest ConfigMaps, Secrets, Services and Deployments spread over them.
 * Returns the file of the object that `change` edits.
 */
async function writeTree(dir: string, n: number): Promise<{ changeFile: string; change: () => Promise<void> }> {
  await mkdir(dir, { recursive: true });
  const namespaces = Array.from({ length: Math.max(1, Math.round(n / 200)) }, (_, i) => `bench-${i}`);
  await writeFile(
    join(dir, 'namespaces.yaml'),
    namespaces.map((name) => stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).join('---\n'),
  );
  const rest = Math.max(0, n - namespaces.length);
  const writes: Promise<void>[] = [];
  for (let i = 0; i < rest; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const name = `${kind.toLowerCase()}-${i}`;
    const ns = namespaces[i % namespaces.length]!;
    writes.push(writeFile(join(dir, `${name}.yaml`), stringify(objectFor(kind, name, ns, 1))));
  }
  await Promise.all(writes);
  const changeFile = join(dir, 'configmap-0.yaml');
  return {
    changeFile,
    change: () => writeFile(changeFile, stringify(objectFor('ConfigMap', 'configmap-0', namespaces[0]!, 2))),
  };
}

// ---------------------------------------------------------------- running the CLI

interface CliRun {
  code: number;
  wallMs: number;
  peakRssKiB: number | undefined;
  report: { ok?: boolean; counts?: Record<string, number>; error?: string } | undefined;
  stderr: string;
}

async function runCli(
  workDir: string,
  command: 'apply' | 'diff',
  kubeconfig: string,
  concurrency: number,
): Promise<CliRun> {
  const rssFile = join(workDir, 'rss.txt');
  await rm(rssFile, { force: true });
  const cliArgs = [
    CLI,
    command,
    '--root',
    workDir,
    '--path',
    'tree',
    '--kubeconfig',
    kubeconfig,
    '--kustomize-path',
    KUSTOMIZE,
    '--output',
    'json',
    '--concurrency',
    String(concurrency),
  ];
  // Peak RSS: GNU time's %M (KiB) when present; else the CLI's own maxRSS, written on exit by a preload.
  const useTime = existsSync(TIME);
  const preload = `data:text/javascript,${encodeURIComponent(
    `import { writeFileSync } from 'node:fs'; process.on('exit', () => writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));`,
  )}`;
  const [cmd, args] = useTime
    ? [TIME, ['-f', '%M', '-o', rssFile, NODE, ...cliArgs]]
    : [NODE, ['--import', preload, ...cliArgs]];
  const started = performance.now();
  const child = spawn(cmd, args, { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const code = await new Promise<number>((resolve) => {
    child.once('close', (c) => {
      resolve(c ?? 1);
    });
  });
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  const rssText = await readFile(rssFile, 'utf8').catch(() => '');
  const rss = Number(rssText.trim().split('\n').pop());
  let report: CliRun['report'];
  try {
    report = JSON.parse(stdout) as CliRun['report'];
  } catch {
    report = undefined;
  }
  return { code, wallMs, peakRssKiB: Number.isFinite(rss) && rss > 0 ? rss : undefined, report, stderr };
}

// ---------------------------------------------------------------- output

function fmt(n: number | undefined, digits = 0): string {
  return n === undefined ? 'n/a' : n.toFixed(digits);
}

function countsText(counts: Record<string, number>): string {
  return (
    Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '-'
  );
}

function markdownTable(rows: Row[]): string {
  const head =
    '| run | cmd | conc. | exit | wall ms | objects/s | API requests | requests by kind | peak RSS MiB | change set |';
  const sep = '|---|---|---:|---:|---:|---:|---:|---|---:|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.run} | ${r.command} | ${r.concurrency} | ${r.exitCode} | ${fmt(r.wallMs)} | ${fmt(r.objectsPerSec)} | ${r.requests} | ${countsText(r.requestsByKind)} | ${fmt(r.peakRssMiB, 1)} | ${r.error ? `error: ${r.error.slice(0, 80)}` : countsText(r.counts)} |`,
  );
  return [head, sep, ...lines].join('\n');
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '1,4,8,16,32' },
      'default-concurrency': { type: 'string', default: '8' },
    },
  });
  const n = Number(values.objects);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--objects must be a positive whole number; got ${values.objects}`);
  const sweep = values.concurrency.split(',').map((s) => Number(s.trim()));
  if (sweep.some((c) => !Number.isInteger(c) || c < 1 || c > 64)) {
    throw new Error(`--concurrency takes whole numbers from 1 to 64, comma-separated; got ${values.concurrency}`);
  }
  const defaultConcurrency = Number(values['default-concurrency']);
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run bundle" first`);

  const workDir = await mkdtemp(join(os.tmpdir(), 'kr-bench-'));
  let cluster: Cluster | undefined;
  let proxy: CountingProxy | undefined;
  const cleanup = async () => {
    await proxy?.close().catch(() => undefined);
    proxy = undefined;
    await cluster?.stop().catch(() => undefined);
    cluster = undefined;
    await rm(workDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    process.stderr.write(`\n${sig}: stopping the test cluster\n`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const t0 = performance.now();
    process.stderr.write(`starting a tier-a test cluster...\n`);
    cluster = await startCluster();
    process.stderr.write(`cluster ready in ${fmt((performance.now() - t0) / 1000, 1)} s\n`);
    proxy = await startProxy(cluster, workDir);
    const p = proxy;
    const tree = await writeTree(join(workDir, 'tree'), n);

    const rows: Row[] = [];
    const measure = async (run: string, command: 'apply' | 'diff', concurrency = defaultConcurrency) => {
      p.reset();
      const r = await runCli(workDir, command, p.kubeconfig, concurrency);
      const row: Row = {
        run,
        command,
        concurrency,
        exitCode: r.code,
        wallMs: Math.round(r.wallMs),
        objectsPerSec: Math.round((n / r.wallMs) * 1000),
        requests: p.total(),
        requestsByKind: Object.fromEntries(p.counts),
        peakRssMiB: r.peakRssKiB === undefined ? undefined : Math.round((r.peakRssKiB / 1024) * 10) / 10,
        counts: r.report?.counts ?? {},
        ...(r.report?.error || !r.report
          ? { error: r.report?.error ?? (r.stderr.trim().split('\n').pop() || `exit ${r.code}`) }
          : {}),
      };
      rows.push(row);
      process.stderr.write(
        `${run} (${command}, concurrency ${concurrency}): ${row.wallMs} ms, ${row.requests} requests\n`,
      );
      return row;
    };

    await measure('preview on an empty cluster', 'diff');
    await measure('first apply', 'apply');
    await measure('no-op re-run', 'apply');
    await tree.change();
    await measure('preview of one changed object', 'diff');
    await measure('one object changed', 'apply');
    const sweepRows: Row[] = [];
    for (const c of sweep) sweepRows.push(await measure(`no-op re-run, concurrency ${c}`, 'apply', c));

    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryMiB: Math.round(os.totalmem() / 1024 / 1024),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      node: process.version,
      kubeApiserver: await p.serverVersion(),
      peakRss: existsSync(TIME) ? '/usr/bin/time %M' : 'process.resourceUsage().maxRSS',
    };

    const mainRows = rows.slice(0, rows.length - sweepRows.length);
    const out = [
      `## kustomize-reconcile apply benchmark: ${n} objects`,
      '',
      `${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryMiB} MiB, ${machine.platform}, Node ${machine.node}, kube-apiserver ${machine.kubeApiserver} (tier a, loopback TLS proxy counting requests)`,
      '',
      markdownTable(mainRows),
      '',
      `### no-op re-run by --concurrency`,
      '',
      '| concurrency | wall ms | objects/s | API requests | peak RSS MiB |',
      '|---:|---:|---:|---:|---:|',
      ...sweepRows.map(
        (r) =>
          `| ${r.concurrency} | ${fmt(r.wallMs)} | ${fmt(r.objectsPerSec)} | ${r.requests} | ${fmt(r.peakRssMiB, 1)} |`,
      ),
      '',
    ].join('\n');
    process.stdout.write(out + '\n');

    const resultsDir = join(REPO, 'bench', 'results');
    await mkdir(resultsDir, { recursive: true });
    const stamp = new Date()
      .toISOString()
      .replace(/:\d\d\.\d+Z$/, 'Z')
      .replace(':', '');
    const file = join(resultsDir, `apply-${stamp}.json`);
    await writeFile(
      file,
      JSON.stringify({ date: new Date().toISOString(), objects: n, defaultConcurrency, machine, rows }, null, 2) + '\n',
    );
    process.stderr.write(`results written to ${file}\n`);
  } finally {
    await cleanup();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
