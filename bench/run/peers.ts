// The CLI peers of bench/run.ts: found (and built, for kubectl) by bench/peers.sh; kubectl's server-side
// apply with an ApplySet (its cluster-scoped parent made beforehand) and kapp deploy, each on its
// own kubeconfig through the counting proxy, described from its output.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createNamespace, type CountingProxy } from '../common.ts';
import { PEERS } from '../paths.ts';
import type { Tree, Unit } from './tree.ts';
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

/** `args` as one word each for bash (the bench's paths and names hold no quote). */
function shellWords(args: readonly string[]): string {
  return args.map((a) => `'${a}'`).join(' ');
}

/**
 * A bash script that runs a command for each unit of the tree, in dependsOn order, and exits with
 * the first failure's code, or 1 when one exited 1 (a diff that found changes) and none failed.
 */
function perUnit(tree: Tree, one: (unit: Unit) => { words: string[]; pipeFrom?: string[] }): [string, string[]] {
  const steps = tree.units.map((u) => {
    const { words, pipeFrom } = one(u);
    const command = pipeFrom ? `${shellWords(pipeFrom)} | ${shellWords(words)}` : shellWords(words);
    return `${command}; r=$?; if [ $r -gt 1 ]; then exit $r; fi; if [ $r -eq 1 ]; then rc=1; fi`;
  });
  return ['bash', ['-c', `set -o pipefail; rc=0; ${steps.join('; ')}; exit $rc`]];
}

export function kubectlTool(proxy: CountingProxy, workDir: string, bin: string, version: string): Tool {
  const kubeconfig = join(workDir, 'kubectl.kubeconfig');
  const parents = new Map<string, string>();
  return {
    name: 'kubectl ApplySet',
    version,
    prefix: 'kc',
    waits: 'for nothing (its first apply fails on the custom resources and is run twice)',
    applyTwiceOnFirstApply: true,
    prepare: async (tree) => {
      await proxy.kubeconfig(kubeconfig);
      for (const u of tree.units) parents.set(u.name, await createApplySetParent(proxy, u.name, version));
    },
    command: (s, tree) => {
      // A fresh discovery cache per run, as on a CI runner (kubectl otherwise caches it in ~/.kube/cache).
      const cache = join(workDir, `kubectl-cache-${String(performance.now())}`);
      // A plain directory with -f; a kustomization with -k (kubectl's own kustomize), one ApplySet each.
      const source = (u: Unit) => (tree.shape === 'plain' ? ['-f', tree.dir] : ['-k', join(tree.dir, u.path)]);
      const common = ['--kubeconfig', kubeconfig, '--cache-dir', cache];
      const words = (u: Unit) =>
        s === 'preview of a change'
          ? [bin, 'diff', '--server-side', ...common, ...source(u)]
          : [bin, 'apply', '--server-side', '--prune', `--applyset=${parents.get(u.name)!}`, ...common, ...source(u)];
      const env = s === 'preview of a change' ? {} : { KUBECTL_APPLYSET: 'true' };
      const okCodes = s === 'preview of a change' ? [0, 1] : [0];
      if (tree.units.length === 1) {
        const [cmd, ...args] = words(tree.units[0]!);
        return [cmd!, args, env, okCodes];
      }
      const [cmd, args] = perUnit(tree, (u) => ({ words: words(u) }));
      return [cmd, args, env, okCodes];
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
export function kappTool(proxy: CountingProxy, workDir: string, bin: string, version: string, kustomize: string): Tool {
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
      // A plain directory as files; a kustomization as a kapp user runs it: kustomize build | kapp deploy -f -.
      const deploy = (u: Unit) => {
        // One app per Kustomization: `<prefix>-bench` for a tree of one (ka-bench, ka2-bench in round 2).
        const app = u.name;
        const args = ['deploy', '-a', app, '-n', KAPP_APP_NAMESPACE, '-f', tree.shape === 'plain' ? tree.dir : '-'];
        args.push('-y', '--wait=false', '--kubeconfig', kubeconfig, '--color=false');
        if (s === 'preview of a change') args.push('--diff-run', '--diff-changes');
        return args;
      };
      if (tree.shape === 'plain') return [bin, deploy(tree.units[0]!), {}, [0]];
      const [cmd, args] = perUnit(tree, (u) => ({
        words: [bin, ...deploy(u)],
        pipeFrom: [kustomize, 'build', join(tree.dir, u.path)],
      }));
      return [cmd, args, {}, [0]];
    },
    describe: (r) => {
      // "Op:      3 create, 0 delete, 0 update, 0 noop, 0 exists", once per app deployed: summed.
      const sums = new Map<string, number>();
      for (const m of r.stdout.matchAll(/^Op:\s+(.*)$/gm)) {
        for (const part of m[1]!.trim().split(', ')) {
          const [count, ...what] = part.split(' ');
          sums.set(what.join(' '), (sums.get(what.join(' ')) ?? 0) + Number(count));
        }
      }
      const text = [...sums]
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${String(v)} ${k}`)
        .join(', ');
      return r.code === 0 ? text || 'no changes' : `${text}; error: ${lastLine(r.stderr || r.stdout)}`;
    },
  };
}
