// Benchmarks the bundled CLI (dist/cli.js) side by side with the tools users would pick instead
// (kubectl ApplySet, kapp, and Flux's kustomize-controller at its defaults and at QPS 500), on the same
// tier-a test cluster that it starts and stops itself. Prints figures; asserts nothing about time.
//   node_modules/.bin/node bench/run.ts [--objects 100,1000] [--large] [--concurrency-sweep 1,8,32]
// See bench/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import {
  applyKustomization,
  ArtifactServer,
  finished,
  FluxController,
  installFluxCrds,
  kustomizationPath,
  publishExternalArtifact,
  requestReconcile,
  testClusterClient,
  type FluxKustomization,
} from '../test/flux/flux.ts';
import { cpuMsOf, createNamespace, startCluster, startProxy, type Cluster, type CountingProxy } from './common.ts';
import { profileTables, startProfiler, type Profiler, type ScenarioProfile } from './profile.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(REPO, 'dist', 'cli.js');
const ACTION = join(REPO, 'dist', 'index.js');
const KUSTOMIZE = join(REPO, 'test', 'cluster', 'bin', 'kustomize');
const PEERS = join(REPO, 'bench', 'peers.sh');
const TIME = '/usr/bin/time';
const NODE = process.execPath;
const OURS = 'kustomize-reconcile';
const PROFILED = 'kustomize-reconcile (profiled)';
/** No single run may take longer than this. */
const RUN_TIMEOUT_MS = 300_000;

// ---------------------------------------------------------------- the tree

const KINDS = ['ConfigMap', 'Secret', 'Service', 'Deployment', 'ConfigMap'] as const;
type Kind = (typeof KINDS)[number] | 'Widget';

interface Tree {
  dir: string;
  /** Objects in the tree as first written (Namespaces, the CRD, CRs and the rest). */
  objects: number;
  namespaces: string[];
  crdName: string;
  /** Edits one ConfigMap. */
  change: () => Promise<void>;
  /** Deletes 10 % of the object files (never a Namespace or the CRD); returns how many objects went. */
  removeTenth: () => Promise<number>;
}

function objectFor(kind: Kind, name: string, namespace: string, generation: number, group: string): unknown {
  const labels = { app: name, 'bench.kustomize-reconcile/tier': 'a' };
  const metadata = { name, namespace, labels };
  switch (kind) {
    case 'ConfigMap':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        data: { generation: String(generation), 'app.properties': `x=${name}\ny=${'v'.repeat(64)}\n` },
      };
    case 'Secret':
      return { apiVersion: 'v1', kind, metadata, type: 'Opaque', stringData: { token: `t-${name}` } };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        spec: {
          // The test cluster's service range is a /24 (254 addresses) that the five tools share: past 40
          // per tool, headless.
          ...(Number(name.split('-').pop()) >= 200 ? { clusterIP: 'None' } : {}),
          selector: { app: name },
          ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        },
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
                  env: [{ name: 'PODINFO_UI_MESSAGE', value: name }],
                  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
                  readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 10 },
                },
              ],
            },
          },
        },
      };
    case 'Widget':
      return {
        apiVersion: `${group}/v1`,
        kind,
        metadata,
        spec: { size: generation, color: 'blue', tags: ['bench', name] },
      };
  }
}

function crdFor(group: string): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer' },
                    color: { type: 'string' },
                    tags: { type: 'array', items: { type: 'string' } },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * Writes N objects as plain YAML files, one object a file (no kustomization.yaml: one is generated, as
 * Flux does; kubectl and kapp read the directory as is): one Namespace per 200 objects, one CRD with
 * N/20 custom resources, the rest ConfigMaps (40 %), Secrets, Services and Deployments (20 % each)
 * spread over the namespaces. `prefix` keeps each tool's namespaces and CRD group apart.
 */
async function writeTree(dir: string, n: number, prefix: string): Promise<Tree> {
  await mkdir(dir, { recursive: true });
  const group = `${prefix}.bench.example.com`;
  const namespaces = Array.from({ length: Math.max(1, Math.round(n / 200)) }, (_, i) => `${prefix}-bench-${i}`);
  await writeFile(
    join(dir, '00-namespaces.yaml'),
    namespaces.map((name) => stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).join('---\n'),
  );
  await writeFile(join(dir, '01-crd.yaml'), stringify(crdFor(group)));
  const crs = Math.floor(n / 20);
  const rest = Math.max(0, n - namespaces.length - 1 - crs);
  const files: string[] = [];
  const writes: Promise<void>[] = [];
  const put = (kind: Kind, name: string, ns: string) => {
    const file = join(dir, `${name}.yaml`);
    files.push(file);
    writes.push(writeFile(file, stringify(objectFor(kind, name, ns, 1, group))));
  };
  for (let i = 0; i < crs; i++) put('Widget', `widget-${i}`, namespaces[i % namespaces.length]!);
  for (let i = 0; i < rest; i++) {
    const kind = KINDS[i % KINDS.length]!;
    put(kind, `${kind.toLowerCase()}-${i}`, namespaces[i % namespaces.length]!);
  }
  await Promise.all(writes);
  return {
    dir,
    objects: namespaces.length + 1 + crs + rest,
    namespaces,
    crdName: `widgets.${group}`,
    change: () =>
      writeFile(
        join(dir, 'configmap-0.yaml'),
        stringify(objectFor('ConfigMap', 'configmap-0', namespaces[0]!, 2, group)),
      ),
    removeTenth: async () => {
      // Every 10th file, so each kind loses about a tenth; never configmap-0 (the changed one).
      const gone = files.filter((f, i) => i % 10 === 9 && !f.endsWith('/configmap-0.yaml'));
      await Promise.all(gone.map((f) => rm(f)));
      return gone.length;
    },
  };
}

// ---------------------------------------------------------------- running a tool

interface ProcRun {
  code: number;
  wallMs: number;
  /** From process start to the proxy's first request. */
  firstRequestMs: number | undefined;
  peakRssKiB: number | undefined;
  /** The tool's own CPU time (user + system), ms: the process's, or a controller's during the run. */
  cpuMs: number | undefined;
  stdout: string;
  stderr: string;
  /** ms since the epoch when the process was spawned and seen to exit (a CLI). */
  spawnedAt?: number;
  exitedAt?: number;
}

/** ms since the epoch, on the monotonic clock performance.now() keeps (as src/util/timings.ts stamps). */
const epochNow = () => performance.timeOrigin + performance.now();

async function runMeasured(
  proxy: CountingProxy,
  workDir: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ProcRun> {
  const rssFile = join(workDir, 'rss.txt');
  await rm(rssFile, { force: true });
  const useTime = existsSync(TIME);
  proxy.reset();
  const started = performance.now();
  const spawnedAt = epochNow();
  const child = useTime
    ? spawn(TIME, ['-f', '%M %U %S', '-o', rssFile, cmd, ...args], {
        cwd: workDir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
      })
    : spawn(cmd, args, { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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
  const exitedAt = epochNow();
  const wallMs = performance.now() - started;
  const first = proxy.firstRequestAt();
  // The last line (after "Command exited with non-zero status N"): peak RSS KiB, user s, system s.
  const [rss, user, sys] = ((await readFile(rssFile, 'utf8').catch(() => '')).trim().split('\n').pop() ?? '')
    .split(' ')
    .map(Number);
  return {
    code,
    wallMs,
    firstRequestMs: first === undefined ? undefined : first - started,
    peakRssKiB: rss !== undefined && Number.isFinite(rss) && rss > 0 ? rss : undefined,
    cpuMs: user !== undefined && sys !== undefined && Number.isFinite(user + sys) ? (user + sys) * 1000 : undefined,
    stdout,
    stderr,
    spawnedAt,
    exitedAt,
  };
}

type Scenario = 'first apply' | 'no-op re-run' | 'preview of a change' | 'one object changed' | '10% removed (prune)';
const SCENARIOS: Scenario[] = [
  'first apply',
  'no-op re-run',
  'preview of a change',
  'one object changed',
  '10% removed (prune)',
];

interface Row {
  objects: number;
  tool: string;
  scenario: string;
  command: string;
  exitCode: number;
  /** A preview that found changes exits 1 (ours, kubectl diff): that is success. */
  ok: boolean;
  wallMs: number;
  firstRequestMs: number | undefined;
  requests: number;
  requestsByKind: Record<string, number>;
  requestsByTarget: Record<string, number>;
  peakRssMiB: number | undefined;
  /** CPU time of the tool's process (a CLI) or of its controller during the run (Flux), ms. */
  toolCpuMs: number | undefined;
  /** CPU time the kube-apiserver and etcd processes used during the run, ms. */
  apiserverCpuMs: number | undefined;
  etcdCpuMs: number | undefined;
  note?: string;
}

interface Tool {
  name: string;
  version: string;
  prefix: string;
  /** What it waits for before it reports success (bench/README.md says the same). */
  waits: string;
  /** Set-up before the first scenario (not measured). */
  prepare: (tree: Tree) => Promise<void>;
  /** Tear-down after its last scenario (a controller is stopped; not measured). */
  finish?: () => Promise<void>;
  /** Scenarios it has no equivalent for (Flux has no preview); their cells read "n/a". */
  skips?: Scenario[];
  /** A CLI: the command for a scenario: [program, args, env, exit codes that mean success]. */
  command?: (s: Scenario, tree: Tree) => [string, string[], NodeJS.ProcessEnv, number[]];
  /**
   * A controller: triggers the scenario, waits until it is done and returns the run as measured (wall
   * time from the trigger; it resets the proxy's counts at the trigger). Exit code 0 is success.
   */
  reconcile?: (s: Scenario, tree: Tree) => Promise<ProcRun>;
  /** Run the first apply a second time when the first fails (CRs before their CRD is served). */
  applyTwiceOnFirstApply?: boolean;
  /** Describes the outcome (change counts, last error line). */
  describe: (r: ProcRun) => string;
  /** Called with each scenario's run once it is measured (the profile is read). */
  after?: (s: Scenario, r: ProcRun) => Promise<void>;
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .pop() ?? ''
  ).slice(0, 200);
}

/**
 * Our CLI; with a profiler, the same CLI bundled with a source map, run under `node --cpu-prof` with
 * KR_TIMINGS and kustomize behind the profiler's wrapper, on its own tree (bench/profile.ts).
 */
function oursTool(
  proxy: CountingProxy,
  workDir: string,
  concurrency: number,
  profiler?: { profiler: Profiler; profiles: ScenarioProfile[] },
): Tool {
  const kubeconfig = join(workDir, 'ours.kubeconfig');
  const p = profiler?.profiler;
  return {
    name: p ? PROFILED : OURS,
    version: p ? 'src/ bundled with a source map, node --cpu-prof' : 'dist/cli.js',
    prefix: p ? 'kp' : 'kr',
    waits: 'for its CRDs to be Established before their custom resources (wait: false, the default: no health checks)',
    prepare: async () => {
      await proxy.kubeconfig(kubeconfig);
      await createNamespace(proxy, 'kr-inventory');
    },
    command: (s, tree) => [
      NODE,
      [
        ...(p ? [...p.run(s).nodeArgs, p.cli] : [CLI]),
        s === 'preview of a change' ? 'diff' : 'apply',
        '--root',
        tree.dir,
        '--path',
        '.',
        '--prune',
        '--inventory-namespace',
        'kr-inventory',
        '--kubeconfig',
        kubeconfig,
        '--kustomize-path',
        p ? p.kustomize : KUSTOMIZE,
        '--concurrency',
        String(concurrency),
        '--output',
        'json',
      ],
      p ? p.run(s).env : {},
      s === 'preview of a change' ? [0, 1] : [0],
    ],
    ...(profiler
      ? {
          after: async (s: Scenario, r: ProcRun) => {
            if (r.spawnedAt === undefined || r.exitedAt === undefined) return;
            profiler.profiles.push(
              await profiler.profiler.collect(s, { spawnedAt: r.spawnedAt, exitedAt: r.exitedAt, toolCpuMs: r.cpuMs }),
            );
          },
        }
      : {}),
    describe: (r) => {
      try {
        const report = JSON.parse(r.stdout) as {
          counts?: Record<string, number>;
          pruned?: unknown[];
          error?: string;
        };
        if (report.error) return `error: ${lastLine(report.error)}`;
        const counts = { ...report.counts, pruned: report.pruned?.length ?? 0 };
        return Object.entries(counts)
          .filter(([, v]) => v > 0)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
      } catch {
        return `error: ${lastLine(r.stderr)}`;
      }
    },
  };
}

const APPLYSET_GROUP = 'bench.example.com';

/**
 * kubectl's ApplySet ID for a parent: base64url(sha256(<name>.<namespace>.<kind>.<group>)), as
 * k8s.io/kubectl/pkg/cmd/apply/applyset.go computes it.
 */
function applySetId(name: string, namespace: string, kind: string, group: string): string {
  const hash = createHash('sha256').update([name, namespace, kind, group].join('.')).digest('base64url');
  return `applyset-${hash}-v1`;
}

/**
 * A tree over several namespaces needs a cluster-scoped ApplySet parent: kubectl takes a ConfigMap or
 * Secret parent's namespace only from -n, and -n makes it refuse every object in another namespace.
 * So: a cluster-scoped CRD labelled applyset.kubernetes.io/is-parent-type, and its parent object made
 * beforehand (kubectl does not create custom parents), with the ID label and tooling annotation it checks.
 */
async function createApplySetParent(proxy: CountingProxy, name: string, kubectlVersion: string): Promise<string> {
  const crd = `applysets.${APPLYSET_GROUP}`;
  const r = await proxy.upstream('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crd, labels: { 'applyset.kubernetes.io/is-parent-type': 'true' } },
    spec: {
      group: APPLYSET_GROUP,
      scope: 'Cluster',
      names: { plural: 'applysets', singular: 'applyset', kind: 'ApplySet', listKind: 'ApplySetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  });
  if (r.status !== 201 && r.status !== 409) throw new Error(`creating CRD ${crd}: ${r.status} ${r.body}`);
  for (let i = 0; ; i++) {
    const body = JSON.parse(
      (await proxy.upstream('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`)).body,
    ) as { status?: { conditions?: { type: string; status: string }[] } };
    if (body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
    if (i > 100) throw new Error(`CRD ${crd} not established after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The group/version may take a moment to be served after Established.
  for (let i = 0; ; i++) {
    const created = await proxy.upstream('POST', `/apis/${APPLYSET_GROUP}/v1/applysets`, {
      apiVersion: `${APPLYSET_GROUP}/v1`,
      kind: 'ApplySet',
      metadata: {
        name,
        labels: { 'applyset.kubernetes.io/id': applySetId(name, '', 'ApplySet', APPLYSET_GROUP) },
        annotations: {
          'applyset.kubernetes.io/tooling': `kubectl/${kubectlVersion}`,
          'applyset.kubernetes.io/contains-group-kinds': '',
        },
      },
    });
    if (created.status === 201 || created.status === 409) break;
    if (i > 100) throw new Error(`creating ApplySet ${name}: ${created.status} ${created.body}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return `applysets.${APPLYSET_GROUP}/${name}`;
}

function kubectlTool(proxy: CountingProxy, workDir: string, bin: string, version: string): Tool {
  const kubeconfig = join(workDir, 'kubectl.kubeconfig');
  let parent = '';
  return {
    name: 'kubectl ApplySet',
    version,
    prefix: 'kc',
    waits: 'for nothing (its first apply fails on the custom resources and is run twice)',
    applyTwiceOnFirstApply: true,
    prepare: async () => {
      await proxy.kubeconfig(kubeconfig);
      parent = await createApplySetParent(proxy, 'kc-bench', version);
    },
    command: (s, tree) => {
      // A fresh discovery cache per run, as on a CI runner (kubectl otherwise caches it in ~/.kube/cache).
      const cache = join(workDir, `kubectl-cache-${String(performance.now())}`);
      const common = ['--kubeconfig', kubeconfig, '--cache-dir', cache, '-f', tree.dir];
      if (s === 'preview of a change') return [bin, ['diff', '--server-side', ...common], {}, [0, 1]];
      return [
        bin,
        ['apply', '--server-side', '--prune', `--applyset=${parent}`, ...common],
        { KUBECTL_APPLYSET: 'true' },
        [0],
      ];
    },
    describe: (r) => {
      if (r.code !== 0 && r.code !== 1) return `error: ${lastLine(r.stderr)}`;
      const lines = r.stdout.split('\n');
      const by = (re: RegExp) => lines.filter((l) => re.test(l)).length;
      const parts = [
        ['serverside-applied', by(/serverside-applied$/)],
        ['pruned', by(/ pruned$/)],
        ['diff lines', by(/^[+-][^+-]/)],
      ] as const;
      const text = parts
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      return r.code === 0 || r.stdout.startsWith('diff') ? text : `${text}; error: ${lastLine(r.stderr)}`;
    },
  };
}

const KAPP_APP_NAMESPACE = 'ka-apps';

/**
 * kapp deploys an "app": its record (a ConfigMap) lives in the namespace given by -n, which must exist;
 * what left the tree is deleted (prune is its default). --wait=false: kapp waits by default for every
 * change to reconcile, which for a Deployment means its controller observed the new generation (never,
 * on a tier-a cluster without controllers), and the other tools do not wait for health either.
 */
function kappTool(proxy: CountingProxy, workDir: string, bin: string, version: string): Tool {
  const kubeconfig = join(workDir, 'kapp.kubeconfig');
  return {
    name: 'kapp',
    version,
    prefix: 'ka',
    waits:
      'for nothing with --wait=false (its default waits for each change to reconcile, Deployments included, which cannot finish without controllers)',
    prepare: async () => {
      await proxy.kubeconfig(kubeconfig);
      await createNamespace(proxy, KAPP_APP_NAMESPACE);
    },
    command: (s, tree) => {
      const args = ['deploy', '-a', 'ka-bench', '-n', KAPP_APP_NAMESPACE, '-f', tree.dir, '-y', '--wait=false'];
      args.push('--kubeconfig', kubeconfig, '--color=false');
      if (s === 'preview of a change') args.push('--diff-run', '--diff-changes');
      return [bin, args, {}, [0]];
    },
    describe: (r) => {
      // "Op:      3 create, 0 delete, 0 update, 0 noop, 0 exists"
      const op = /^Op:\s+(.*)$/m.exec(r.stdout)?.[1]?.trim();
      const text = (op ?? '')
        .split(', ')
        .filter((x) => x !== '' && !x.startsWith('0 '))
        .join(', ');
      return r.code === 0 ? text || 'no changes' : `${text}; error: ${lastLine(r.stderr || r.stdout)}`;
    },
  };
}

const FLUX_NAMESPACE = 'flux-system';

/** Peak resident set of a running process so far (VmHWM), KiB. */
async function peakRssKiBOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8').catch(() => '');
  const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
  return Number.isFinite(kib) && kib > 0 ? kib : undefined;
}

/**
 * Flux's kustomize-controller (test/flux: the real v1.9.6), out of cluster on this machine, its kubeconfig
 * pointing at the counting proxy. Its source is an ExternalArtifact whose status points at a tarball of
 * the tree on a loopback HTTP server (as source-controller would serve it); the Kustomization is Flux's
 * defaults plus prune: true. A scenario is timed from its trigger (publishing a new revision, creating the
 * Kustomization, or asking for a reconcile) until the Kustomization says it is done: Ready=True for its
 * generation, no Reconciling condition, lastAppliedRevision the revision published (and, for a reconcile
 * request, lastHandledReconcileAt the token asked for). The bench's own requests go straight to the
 * apiserver, uncounted; the controller's CPU is its process's during the scenario.
 */
function fluxTool(
  proxy: CountingProxy,
  cluster: Cluster,
  workDir: string,
  peer: { name: string; prefix: string; version: string; qps?: number; burst?: number },
): Tool {
  const kubeconfig = join(workDir, `${peer.prefix}.kubeconfig`);
  const name = `${peer.prefix}-bench`;
  let client: Awaited<ReturnType<typeof testClusterClient>> | undefined;
  let artifacts: ArtifactServer | undefined;
  let controller: FluxController | undefined;
  let revision = '';
  const flags =
    peer.qps === undefined
      ? 'its default flags'
      : `--kube-api-qps=${String(peer.qps)} --kube-api-burst=${String(peer.burst)}`;
  return {
    name: peer.name,
    version: `${peer.version}, ${flags}`,
    prefix: peer.prefix,
    waits:
      'for its CRDs and Namespaces to be Current (kstatus, polled every 2 s) before the rest (spec.wait: false, the default: no health checks); timed until the Kustomization reports the revision applied',
    skips: ['preview of a change'],
    prepare: async () => {
      await proxy.kubeconfig(kubeconfig);
      client = await testClusterClient(cluster.kubeconfig);
      await installFluxCrds(client);
      await createNamespace(proxy, FLUX_NAMESPACE);
      artifacts = await ArtifactServer.start(join(workDir, `${peer.prefix}-artifacts`));
      controller = await FluxController.start({
        kubeconfig,
        dir: join(workDir, `${peer.prefix}-flux`),
        ...(peer.qps === undefined ? {} : { qps: peer.qps, burst: peer.burst }),
      });
    },
    finish: async () => {
      // Suspended, so that the next controller started on this cluster leaves it alone.
      await client
        ?.request('PATCH', kustomizationPath(FLUX_NAMESPACE, name), {
          body: { spec: { suspend: true } },
          contentType: 'application/merge-patch+json',
        })
        .catch(() => undefined);
      await controller?.stop();
      await artifacts?.close();
      client?.close();
    },
    reconcile: async (s, tree) => {
      if (!client || !artifacts || !controller) throw new Error(`${peer.name}: reconcile before prepare`);
      // Packing the tree is source-controller's work, before the trigger.
      const artifact = s === 'no-op re-run' ? undefined : await artifacts.publish(name, tree.dir);
      const pid = controller.pid;
      const cpu0 = await cpuMsOf(pid);
      // Counted from the trigger: whatever the controller did while the tree was packed is not this run's.
      proxy.reset();
      const started = performance.now();
      let token: string | undefined;
      if (artifact) {
        await publishExternalArtifact(client, FLUX_NAMESPACE, name, artifact);
        revision = artifact.revision;
      }
      if (s === 'first apply') {
        await applyKustomization(client, FLUX_NAMESPACE, name, { path: './', prune: true }, name);
      } else if (!artifact) {
        token = await requestReconcile(client, FLUX_NAMESPACE, name);
      }
      const want = { revision, ...(token === undefined ? {} : { token }) };
      const k = await proxy.watchUntil<FluxKustomization>(
        kustomizationPath(FLUX_NAMESPACE),
        name,
        (obj) => finished(obj, want),
        RUN_TIMEOUT_MS,
      );
      const wallMs = performance.now() - started;
      const cpu1 = await cpuMsOf(pid);
      const first = proxy.firstRequestAt();
      const ready = k?.status?.conditions?.find((c) => c.type === 'Ready');
      const ok = ready?.status === 'True' && k?.status?.lastAppliedRevision === revision;
      return {
        code: ok ? 0 : 1,
        wallMs,
        firstRequestMs: first === undefined ? undefined : first - started,
        peakRssKiB: await peakRssKiBOf(pid),
        cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
        stdout: k ? `Ready=${ready?.status ?? '?'} (${ready?.reason ?? ''}): ${ready?.message ?? ''}` : '',
        stderr: k ? '' : `not done after ${String(RUN_TIMEOUT_MS / 1000)} s; log: ${controller.logFile}`,
      };
    },
    describe: (r) => lastLine(r.code === 0 ? r.stdout : `${r.stdout} ${r.stderr}`),
  };
}

// ---------------------------------------------------------------- peers

interface Peer {
  tool: string;
  bin: string | undefined;
  version: string;
}

function buildPeers(): Peer[] {
  process.stderr.write('peers: bench/peers.sh (builds and caches kubectl; first time takes a few minutes)...\n');
  const r = spawnSync('bash', [PEERS], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`bench/peers.sh failed with ${String(r.status)}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((line) => {
      const [tool = '', bin = '-', version = ''] = line.split('\t');
      return { tool, bin: bin === '-' ? undefined : bin, version };
    });
}

// ---------------------------------------------------------------- one size

interface Startup {
  firstRequestMs: number | undefined;
  wallMs: number;
  exitCode: number;
  requests: number;
}

interface SizeResult {
  objects: number;
  rows: Row[];
  startup: Startup;
  startupTiny: Startup;
  kubeApiserver: string;
  /** The tools run, in order (ours first), and what each waits for. */
  tools: { name: string; version: string; waits: string }[];
  /** os.loadavg() before and after this size: the machine is shared. */
  loadBefore: number[];
  loadAfter: number[];
  /** With --profile: the profiled runs' breakdowns. */
  profiles?: ScenarioProfile[];
}

async function benchSize(
  n: number,
  peers: Peer[],
  concurrency: number,
  sweep: number[],
  profilesDir: string | undefined,
): Promise<SizeResult> {
  const workDir = await mkdtemp(join(os.tmpdir(), 'kr-bench-'));
  let cluster: Cluster | undefined;
  let proxy: CountingProxy | undefined;
  try {
    const t0 = performance.now();
    const loadBefore = os.loadavg();
    process.stderr.write(`\n== ${n} objects: starting a tier-a test cluster...\n`);
    cluster = await startCluster();
    process.stderr.write(`cluster ready in ${fmt((performance.now() - t0) / 1000, 1)} s\n`);
    proxy = await startProxy(cluster);
    const p = proxy;
    const version = await p.upstream('GET', '/version');
    const kubeApiserver = (JSON.parse(version.body) as { gitVersion?: string }).gitVersion ?? 'unknown';

    const tools: Tool[] = [oursTool(p, workDir, concurrency)];
    const profiles: ScenarioProfile[] = [];
    if (profilesDir) {
      process.stderr.write('profile: bundling src/ with a source map...\n');
      const profiler = await startProfiler(REPO, join(workDir, 'profile'), KUSTOMIZE, join(profilesDir, String(n)));
      tools.push(oursTool(p, workDir, concurrency, { profiler, profiles }));
    }
    const kubectl = peers.find((x) => x.tool === 'kubectl');
    if (kubectl?.bin) tools.push(kubectlTool(p, workDir, kubectl.bin, kubectl.version));
    const kapp = peers.find((x) => x.tool === 'kapp');
    if (kapp?.bin) tools.push(kappTool(p, workDir, kapp.bin, kapp.version));
    const flux = peers.find((x) => x.tool === 'kustomize-controller');
    if (flux?.bin) {
      tools.push(
        fluxTool(p, cluster, workDir, { name: 'Flux', prefix: 'fd', version: flux.version }),
        fluxTool(p, cluster, workDir, {
          name: 'Flux QPS 500',
          prefix: 'fq',
          version: flux.version,
          qps: 500,
          burst: 1000,
        }),
      );
    }

    const rows: Row[] = [];
    const cpu = async () => ({
      apiserver: await cpuMsOf(cluster?.pids.apiserver),
      etcd: await cpuMsOf(cluster?.pids.etcd),
    });
    const measure = async (tool: Tool, scenario: string, tree: Tree, as: Scenario) => {
      const cpu0 = await cpu();
      let cmd: string;
      let args: string[];
      let env: NodeJS.ProcessEnv = {};
      let okCodes: number[];
      let r: ProcRun;
      if (tool.reconcile) {
        [cmd, args, okCodes] = [tool.name, [as], [0]];
        r = await tool.reconcile(as, tree);
      } else if (tool.command) {
        [cmd, args, env, okCodes] = tool.command(as, tree);
        r = await runMeasured(p, workDir, cmd, args, env);
        await tool.after?.(as, r);
      } else throw new Error(`tool ${tool.name} has neither a command nor a reconcile`);
      let counts = new Map(p.counts);
      let targets = new Map(p.targets);
      let retried = '';
      if (tool.applyTwiceOnFirstApply && as === 'first apply' && !okCodes.includes(r.code)) {
        // kubectl maps every object before it applies any, so custom resources whose CRD is in the same
        // apply fail the first time ("ensure CRDs are installed first"): users run it again. Both count.
        retried = `2 invocations (the first: ${tool.describe(r)}); `;
        const again = await runMeasured(p, workDir, cmd, args, env);
        for (const [k, v] of counts) p.counts.set(k, (p.counts.get(k) ?? 0) + v);
        for (const [k, v] of targets) p.targets.set(k, (p.targets.get(k) ?? 0) + v);
        counts = new Map(p.counts);
        targets = new Map(p.targets);
        r = {
          ...again,
          wallMs: r.wallMs + again.wallMs,
          firstRequestMs: r.firstRequestMs,
          peakRssKiB: Math.max(r.peakRssKiB ?? 0, again.peakRssKiB ?? 0) || undefined,
          cpuMs: r.cpuMs === undefined || again.cpuMs === undefined ? undefined : r.cpuMs + again.cpuMs,
        };
      }
      const cpu1 = await cpu();
      const delta = (a: number | undefined, b: number | undefined) =>
        a === undefined || b === undefined ? undefined : Math.round(b - a);
      const row: Row = {
        objects: n,
        tool: tool.name,
        scenario,
        command: [cmd === NODE ? 'node' : cmd.split('/').pop(), ...args.slice(cmd === NODE ? 1 : 0, 3)].join(' '),
        exitCode: r.code,
        ok: okCodes.includes(r.code),
        wallMs: Math.round(r.wallMs),
        firstRequestMs: r.firstRequestMs === undefined ? undefined : Math.round(r.firstRequestMs),
        requests: p.total(),
        requestsByKind: Object.fromEntries([...counts].sort()),
        requestsByTarget: Object.fromEntries([...targets].sort()),
        peakRssMiB: r.peakRssKiB === undefined ? undefined : Math.round((r.peakRssKiB / 1024) * 10) / 10,
        toolCpuMs: r.cpuMs === undefined ? undefined : Math.round(r.cpuMs),
        apiserverCpuMs: delta(cpu0.apiserver, cpu1.apiserver),
        etcdCpuMs: delta(cpu0.etcd, cpu1.etcd),
        note: retried + tool.describe(r),
      };
      rows.push(row);
      process.stderr.write(
        `${tool.name} / ${scenario}: exit ${row.exitCode}, ${row.wallMs} ms, ${row.requests} requests` +
          `${row.ok ? '' : ` FAILED: ${row.note ?? ''}`}\n`,
      );
      return row;
    };

    let oursTree: Tree | undefined;
    for (const tool of tools) {
      const tree = await writeTree(join(workDir, `tree-${tool.prefix}`), n, tool.prefix);
      if (tool.prefix === 'kr') oursTree = tree;
      process.stderr.write(`${tool.name}: preparing...\n`);
      await tool.prepare(tree);
      try {
        for (const s of SCENARIOS) {
          if (s === 'preview of a change') await tree.change();
          if (tool.skips?.includes(s)) continue;
          if (s === '10% removed (prune)') {
            const gone = await tree.removeTenth();
            const row = await measure(tool, s, tree, s);
            row.note = `${String(gone)} files removed; ${row.note ?? ''}`;
            continue;
          }
          await measure(tool, s, tree, s);
        }
      } finally {
        await tool.finish?.();
      }
    }
    const ours = tools[0]!;
    for (const c of sweep) {
      await measure(oursTool(p, workDir, c), `no-op re-run, --concurrency ${String(c)}`, oursTree!, 'no-op re-run');
      rows[rows.length - 1]!.tool = ours.name;
    }

    // Action start-up: dist/index.js from process start to its first API request (preview mode), on our
    // tree (the kustomize build comes first) and on a one-object tree (mostly loading the bundle).
    const summary = join(workDir, 'step-summary.md');
    const outputFile = join(workDir, 'github-output');
    await writeFile(summary, '');
    await writeFile(outputFile, '');
    const kubeconfig = await p.kubeconfig(join(workDir, 'ours.kubeconfig'));
    const tiny = join(workDir, 'tree-tiny');
    await mkdir(tiny, { recursive: true });
    await writeFile(join(tiny, 'cm.yaml'), stringify(objectFor('ConfigMap', 'tiny', 'kr-inventory', 1, '')));
    // No name input: the Kustomization's name is derived from the directory (no git remote) and the
    // path, as the CLI runs above derive it, so the preview reads the inventory they wrote.
    const startAction = async (dir: string) => {
      const action = await runMeasured(p, workDir, NODE, [ACTION], {
        GITHUB_WORKSPACE: dir,
        GITHUB_STEP_SUMMARY: summary,
        GITHUB_OUTPUT: outputFile,
        INPUT_KUBECONFIG: kubeconfig,
        INPUT_PATH: '.',
        INPUT_MODE: 'preview',
        'INPUT_KUSTOMIZE-PATH': KUSTOMIZE,
        'INPUT_INVENTORY-NAMESPACE': 'kr-inventory',
        INPUT_PRUNE: 'true',
        INPUT_COMMENT: 'false',
        'INPUT_CHECK-RUN': 'false',
      });
      return {
        firstRequestMs: action.firstRequestMs === undefined ? undefined : Math.round(action.firstRequestMs),
        wallMs: Math.round(action.wallMs),
        exitCode: action.code,
        requests: p.total(),
      };
    };
    const startup = await startAction(oursTree!.dir);
    const startupTiny = await startAction(tiny);
    process.stderr.write(
      `action start-up: first API request after ${fmt(startup.firstRequestMs)} ms (exit ${startup.exitCode}, ${startup.wallMs} ms); one-object tree: ${fmt(startupTiny.firstRequestMs)} ms\n`,
    );
    return {
      objects: n,
      rows,
      startup,
      startupTiny,
      kubeApiserver,
      tools: tools.map((t) => ({ name: t.name, version: t.version, waits: t.waits })),
      loadBefore,
      loadAfter: os.loadavg(),
      ...(profilesDir ? { profiles } : {}),
    };
  } finally {
    await proxy?.close().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await rm(workDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- output

function fmt(n: number | undefined, digits = 0): string {
  return n === undefined ? 'n/a' : n.toFixed(digits);
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a === undefined || b === undefined || b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`;
}

function countsText(counts: Record<string, number>): string {
  return (
    Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '-'
  );
}

type Metric = 'wall' | 'requests' | 'apiserver' | 'toolCpu' | 'rss' | 'first';

const METRICS: { metric: Metric; title: string; ratio: boolean }[] = [
  { metric: 'wall', title: 'Wall time, ms (ours/peer)', ratio: true },
  { metric: 'requests', title: 'API requests (ours/peer)', ratio: true },
  { metric: 'apiserver', title: 'kube-apiserver CPU during the run, ms (ours/peer)', ratio: true },
  {
    metric: 'toolCpu',
    title: "The tool's own CPU (its process; Flux: the controller during the run), ms",
    ratio: false,
  },
  {
    metric: 'rss',
    title: "Peak RSS, MiB (a CLI: its process's; Flux: the controller's VmHWM since it started)",
    ratio: false,
  },
  { metric: 'first', title: 'Process start to its first API request, ms', ratio: false },
];

function valueOf(r: Row | undefined, metric: Metric): number | undefined {
  if (!r) return undefined;
  switch (metric) {
    case 'wall':
      return r.wallMs;
    case 'requests':
      return r.requests;
    case 'apiserver':
      return r.apiserverCpuMs;
    case 'toolCpu':
      return r.toolCpuMs;
    case 'rss':
      return r.peakRssMiB;
    case 'first':
      return r.firstRequestMs;
  }
}

function cell(r: Row | undefined, metric: Metric): string {
  if (!r) return 'n/a';
  const v = valueOf(r, metric);
  return `${metric === 'rss' ? fmt(v, 1) : fmt(v)}${r.ok ? '' : ' ✗'}`;
}

/**
 * Our requests beside the floor: one request for each object the change touches (a write; in a
 * preview, a dry-run), counted from our own outcome line (created, configured, deleted).
 */
function floorTable(res: SizeResult): string {
  const lines = SCENARIOS.map((s) => {
    const r = res.rows.find((x) => x.tool === OURS && x.scenario === s);
    if (!r) return `| ${s} | n/a | n/a | n/a | n/a | n/a |`;
    const count = (word: string) => Number(new RegExp(`\\b${word} (\\d+)`).exec(r.note ?? '')?.[1] ?? 0);
    const touched = count('created') + count('configured') + count('deleted');
    const by = r.requestsByKind;
    const dryRuns = by['PATCH (dry-run)'] ?? 0;
    const writes = ['PATCH', 'POST', 'PUT', 'DELETE'].reduce((sum, k) => sum + (by[k] ?? 0), 0);
    const reads = by['GET'] ?? 0;
    const perObject = touched === 0 ? 'n/a' : (r.requests / touched).toFixed(2);
    return `| ${s} | ${touched} | ${writes} / ${dryRuns} / ${reads} | ${r.requests} | ${perObject} | ${r.requests - touched} |`;
  });
  return [
    'Our requests against the floor (one request per object the change touches: created, configured or deleted, by our outcome line; writes include the inventory and the lock):',
    '',
    '| scenario | floor | ours: writes / dry-runs / reads | ours in all | per object touched | above the floor |',
    '|---|---:|---:|---:|---:|---:|',
    ...lines,
    '',
  ].join('\n');
}

function sizeTables(res: SizeResult, peerNames: string[]): string {
  const row = (t: string, s: string) => res.rows.find((r) => r.tool === t && r.scenario === s);
  const tables = METRICS.map(({ metric, title, ratio: withRatio }) => {
    const lines = SCENARIOS.map((s) => {
      const o = row(OURS, s);
      const cells = [cell(o, metric)];
      for (const t of peerNames) {
        const q = row(t, s);
        const r = withRatio && o && q ? ratio(valueOf(o, metric), valueOf(q, metric)) : undefined;
        cells.push(r && r !== 'n/a' ? `${cell(q, metric)} (${r})` : cell(q, metric));
      }
      return `| ${s} | ${cells.join(' | ')} |`;
    });
    return [
      `${title}:`,
      '',
      `| scenario | ours | ${peerNames.join(' | ')} |`,
      `|---|${'---:|'.repeat(1 + peerNames.length)}`,
      ...lines,
      '',
    ].join('\n');
  });
  const detail = [
    '| tool | scenario | exit | wall ms | apiserver / etcd / tool CPU ms | requests by method | by target | outcome |',
    '|---|---|---:|---:|---|---|---|---|',
    ...res.rows.map(
      (r) =>
        `| ${r.tool} | ${r.scenario} | ${r.exitCode}${r.ok ? '' : ' ✗'} | ${r.wallMs} | ${fmt(r.apiserverCpuMs)} / ${fmt(r.etcdCpuMs)} / ${fmt(r.toolCpuMs)} | ${countsText(r.requestsByKind)} | ${countsText(r.requestsByTarget)} | ${(r.note ?? '').replaceAll('|', '\\|')} |`,
    ),
  ];
  return [
    `### ${res.objects} objects`,
    '',
    ...tables,
    floorTable(res),
    `Action start-up (\`node dist/index.js\`, preview mode): first API request after ${fmt(res.startup.firstRequestMs)} ms on this tree (discovery starts before the kustomize build; run: exit ${res.startup.exitCode}, ${res.startup.wallMs} ms, ${res.startup.requests} requests), after ${fmt(res.startupTiny.firstRequestMs)} ms on a one-object tree (exit ${res.startupTiny.exitCode}, ${res.startupTiny.wallMs} ms).`,
    '',
    `Load average (1, 5, 15 min) when this size started: ${res.loadBefore.map((x) => x.toFixed(2)).join(', ')}; when it ended: ${res.loadAfter.map((x) => x.toFixed(2)).join(', ')}.`,
    '',
    '<details><summary>every run, requests by method</summary>',
    '',
    ...detail,
    '',
    '</details>',
    '',
    ...(res.profiles
      ? [
          `#### Profile of ${PROFILED} (\`--profile\`), ${res.objects} objects`,
          '',
          'The same scenarios on a tree of its own; the profiled process runs slower than the plain one above (compare their rows).',
          '',
          profileTables(res.profiles),
        ]
      : []),
  ].join('\n');
}

function toolVersion(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return (r.stdout || r.stderr || 'unknown').trim().split('\n')[0] ?? 'unknown';
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string' },
      large: { type: 'boolean', default: false },
      concurrency: { type: 'string', default: '8' },
      'concurrency-sweep': { type: 'string', default: '' },
      peers: { type: 'string', default: 'kubectl,kapp,flux' },
      profile: { type: 'boolean', default: false },
    },
  });
  const resultsDir = join(REPO, 'bench', 'results');
  const stamp = new Date()
    .toISOString()
    .replace(/:\d\d\.\d+Z$/, 'Z')
    .replace(':', '');
  const profilesDir = values.profile ? join(resultsDir, `profile-${stamp}`) : undefined;
  const sizes = (values.objects ?? (values.large ? '100,1000,5000' : '100,1000'))
    .split(',')
    .map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 30)) {
    throw new Error(`--objects takes whole numbers of at least 30, comma-separated; got ${values.objects ?? ''}`);
  }
  const concurrency = Number(values.concurrency);
  const sweep = values['concurrency-sweep']
    .split(',')
    .filter((s) => s.trim() !== '')
    .map((s) => Number(s.trim()));
  if ([concurrency, ...sweep].some((c) => !Number.isInteger(c) || c < 1 || c > 64)) {
    throw new Error('--concurrency and --concurrency-sweep take whole numbers from 1 to 64');
  }
  for (const f of [CLI, ACTION]) if (!existsSync(f)) throw new Error(`${f} is missing: run "npm run bundle" first`);

  const state = { stopping: false };
  const onSignal = (sig: NodeJS.Signals) => {
    // benchSize's finally blocks stop the cluster once the running child is killed by the timeout;
    // a second signal exits at once.
    if (state.stopping) process.exit(130);
    state.stopping = true;
    process.stderr.write(`\n${sig}: stopping after the current run (again to exit now)\n`);
    process.exitCode = 130;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const wanted = values.peers.split(',').map((x) => x.trim());
  const known = ['kubectl', 'kapp', 'flux'];
  if (wanted.some((x) => x !== '' && !known.includes(x))) {
    throw new Error(`--peers takes a comma-separated list of ${known.join(', ')}; got ${values.peers}`);
  }
  const peers = buildPeers().filter((p) => wanted.includes(p.tool === 'kustomize-controller' ? 'flux' : p.tool));
  for (const p of peers) process.stderr.write(`peer ${p.tool}: ${p.bin ? `${p.bin} (${p.version})` : p.version}\n`);

  const results: SizeResult[] = [];
  for (const n of sizes) {
    if (state.stopping) break;
    results.push(await benchSize(n, peers, concurrency, sweep, profilesDir));
  }
  const tools = results[0]?.tools ?? [];
  const peerNames = tools.map((t) => t.name).filter((t) => t !== OURS);

  const bundle = await readFile(ACTION);
  const cliSize = (await stat(CLI)).size;
  const cpus = os.cpus();
  const machine = {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryMiB: Math.round(os.totalmem() / 1024 / 1024),
    os: `${os.platform()} ${os.release()} ${os.arch()}`,
    osRelease: (await readFile('/etc/os-release', 'utf8').catch(() => '')).match(/^PRETTY_NAME="?([^"\n]*)/m)?.[1],
    node: process.version,
    go: toolVersion('go', ['version']),
    kustomize: toolVersion(KUSTOMIZE, ['version']),
    kubeApiserver: results[0]?.kubeApiserver ?? 'unknown',
    peakRss: existsSync(TIME) ? '/usr/bin/time %M' : 'unavailable',
  };
  const bundleInfo = {
    indexJsBytes: bundle.length,
    indexJsGzipBytes: gzipSync(bundle, { level: 9 }).length,
    cliJsBytes: cliSize,
  };

  const out = [
    `## kustomize-reconcile vs peers`,
    '',
    `${machine.cores} cores (${machine.cpuModel}), ${machine.memoryMiB} MiB, ${machine.osRelease ?? machine.os}, Node ${machine.node}, ${machine.go}, kube-apiserver ${machine.kubeApiserver} (tier a: etcd + apiserver, no controllers), kustomize ${machine.kustomize}.`,
    '',
    `Tools: kustomize-reconcile ${CLI.replace(REPO, '')} (--concurrency ${concurrency}); ${peers
      .map((p) => `${p.tool}: ${p.bin ? p.version : `not run: ${p.version}`}`)
      .join('; ')}.`,
    '',
    'What each waits for before it is done:',
    '',
    ...tools.map((t) => `- **${t.name}**: ${t.waits}.`),
    '',
    'One cluster per size; each tool gets its own tree, namespaces and CRD group on it, and runs the scenarios in order. Every tool talks to the apiserver through the same counting TLS proxy. Wall time is process start to exit (Flux: from the trigger, a new artifact revision or a reconcile request, to the Kustomization reporting it done). CPU is utime + stime from /proc (the apiserver and etcd processes, and the Flux controller) or `/usr/bin/time` (a CLI), so it includes whatever else the apiserver did meanwhile: the machine is shared, see the load averages. "1st req" is process start (Flux: the trigger) to the first request the proxy sees; RSS is the peak resident set of the process (`/usr/bin/time %M`; Flux: the controller VmHWM, its peak since it started). ✗ marks a run that failed (see the details); n/a, a scenario a tool has no equivalent for.',
    '',
    ...results.map((r) => sizeTables(r, peerNames)),
    `Bundle: dist/index.js ${bundleInfo.indexJsBytes} bytes (${bundleInfo.indexJsGzipBytes} gzip -9); dist/cli.js ${bundleInfo.cliJsBytes} bytes.`,
    '',
  ].join('\n');
  process.stdout.write(out + '\n');

  await mkdir(resultsDir, { recursive: true });
  const base = join(resultsDir, `bench-${stamp}`);
  await writeFile(`${base}.md`, out);
  await writeFile(
    `${base}.json`,
    JSON.stringify(
      { date: new Date().toISOString(), concurrency, machine, bundle: bundleInfo, peers, results },
      null,
      2,
    ) + '\n',
  );
  process.stderr.write(`results written to ${base}.md and .json\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
