// The CLI peers of bench/run.ts: found (and built, for kubectl) by bench/peers.sh; kubectl's server-side
// apply with an ApplySet (its cluster-scoped parent made beforehand) and kapp deploy, each on its
// own kubeconfig through the counting proxy, described from its output.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createNamespace, type CountingProxy } from '../common.ts';
import { PEERS } from '../paths.ts';
import { lastLine } from './measure.ts';
import type { Tool } from './model.ts';

export interface Peer {
  tool: string;
  bin: string | undefined;
  version: string;
}

export function buildPeers(): Peer[] {
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

export function kubectlTool(proxy: CountingProxy, workDir: string, bin: string, version: string): Tool {
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
export function kappTool(proxy: CountingProxy, workDir: string, bin: string, version: string): Tool {
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
