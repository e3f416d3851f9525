// Issue 51 (`npm run attack`): spec.kubeConfig.configMapRef makes the run mint a token of a
// ServiceAccount of the action's cluster and send it to the address a ConfigMap names. A pull request
// must not choose where such a token goes: not by adding a Kustomization that names the platform's
// ConfigMap, not by switching one to another ConfigMap of the cluster (one a tenant may write), not
// by adding configMapRef to a Kustomization that had none, and not by putting a ConfigMap of that
// name with its own address in its tree (the ConfigMap is read from the cluster). Each case runs the
// bundled action against the test cluster; two listeners stand in for the remote API servers: prod
// (the platform's ConfigMap prod-identity) and admin (ConfigMap admin-identity, or an address the
// pull request writes). Any connection to a listener the case does not allow is a token on its way.
//
// The rule (src/source/secret-uses.ts, use kubeConfigMap): in an untrusted run a Kustomization gets
// a token only when the base commit's Kustomization of that namespace and name names the same
// ConfigMap; the address is the cluster's ConfigMap's.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { baseTree, cm, FROM_CHECKOUT, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  inputCanaries,
  inputCanaryList,
  runHostile,
  startListener,
  type Files,
  type HostileRun,
  type InputCanaries,
  type Listener,
} from '../helpers/hostile.js';

const identityRef = (configMap: string) => `  kubeConfig:\n    configMapRef: {name: ${configMap}}\n`;

/** The ConfigMap data of a generic-provider remote at `host`, with the token of ServiceAccount deployer. */
const identityData = (host: string) => ({
  provider: 'generic',
  address: `https://${host}`,
  audiences: 'remote',
  serviceAccountName: 'deployer',
});

interface Ctx {
  ns: string;
  L: Record<'prod' | 'admin', Listener>;
}

interface Case {
  id: string;
  title: string;
  control?: boolean;
  base?: (ctx: Ctx) => Files;
  head: (ctx: Ctx) => Files;
  kustomizations?: string;
  judge: (run: HostileRun, ctx: Ctx) => string[];
}

const plain = (s: string) => s.replace(/\\(.)/g, '$1').replace(/[\u2060\u200b]/g, '');

/** Evidence unless the PR comment says Kustomization ns/name was refused a token for ConfigMap `cmName`. */
const refusedIn = (run: HostileRun, ns: string, name: string, cmName: string): string[] => {
  const comment = plain(run.github.join('\n'));
  const what = `refused a ServiceAccount token for the cluster of ConfigMap ${ns}/${cmName} for spec.kubeConfig.configMapRef`;
  return comment.includes(what) && comment.includes(`${ns}/${name}`)
    ? []
    : [`the PR comment does not say ${ns}/${name} was ${what}`];
};

const connected = (l: Listener, what: string): string[] =>
  l.connections > 0 ? [`${what}: ${l.name} got ${l.connections} connection(s)`] : [];
const noneAt = (ctx: Ctx, what: string) => [...connected(ctx.L.prod, what), ...connected(ctx.L.admin, what)];

/** The base: Kustomization remote (clusters/other) reaches the cluster of ConfigMap prod-identity. */
const remoteBase = ({ ns }: Ctx): Files => ({
  'clusters/other/remote.yaml': ks(ns, 'remote', './apps/remote', FROM_CHECKOUT, identityRef('prod-identity')),
  'apps/remote/cm.yaml': cm(ns, 'remote-settings'),
});
const BOTH = 'clusters/prod/*.yaml\nclusters/other/*.yaml';

const CASES: Case[] = [
  {
    id: '51-a-configmapref-borrowed-by-a-new-kustomization',
    title: 'a new Kustomization names the platform’s ConfigMap prod-identity: no token is minted or sent',
    base: remoteBase,
    head: ({ ns }) => ({
      'clusters/prod/evil.yaml': ks(ns, 'evil', './apps/app', FROM_CHECKOUT, identityRef('prod-identity')),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the new Kustomization reached a remote'),
      ...refusedIn(run, ctx.ns, 'evil', 'prod-identity'),
    ],
  },
  {
    id: '51-b-configmapref-switched-to-another-configmap',
    title: 'the base Kustomization remote is switched to ConfigMap admin-identity of the cluster',
    base: remoteBase,
    kustomizations: BOTH,
    head: ({ ns }) => ({
      'clusters/other/remote.yaml': ks(ns, 'remote', './apps/remote', FROM_CHECKOUT, identityRef('admin-identity')),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the switched Kustomization reached a remote'),
      ...refusedIn(run, ctx.ns, 'remote', 'admin-identity'),
    ],
  },
  {
    id: '51-c-configmapref-added-to-an-existing-kustomization',
    title: 'the base Kustomization app, local on the base, gains configMapRef prod-identity',
    head: ({ ns }) => ({
      'clusters/prod/app.yaml': ks(ns, 'app', './apps/app', FROM_CHECKOUT, identityRef('prod-identity')),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the Kustomization reached a remote'),
      ...refusedIn(run, ctx.ns, 'app', 'prod-identity'),
    ],
  },
  {
    id: '51-d-configmap-in-the-tree-moves-no-token',
    title:
      'the tree holds a ConfigMap prod-identity (and a Kustomization applying it) whose address is the attacker’s: the cluster’s is used',
    base: remoteBase,
    kustomizations: BOTH,
    head: ({ ns, L }) => ({
      'clusters/prod/identity.yaml': ks(ns, 'identity', './apps/identity'),
      'apps/identity/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: prod-identity, namespace: ${ns}}\ndata:\n  provider: generic\n  address: https://${L.admin.host}\n  audiences: remote\n  serviceAccountName: deployer\n`,
    }),
    judge: (_run, ctx) => [
      ...connected(ctx.L.admin, 'the token went to the address the tree wrote'),
      ...(ctx.L.prod.connections > 0 ? [] : ['the unchanged Kustomization did not reach the cluster’s address']),
    ],
  },
  {
    id: '51-control-configmapref-as-on-the-base',
    title: 'control: the base Kustomization remote, unchanged, reaches the address of its ConfigMap',
    control: true,
    base: remoteBase,
    kustomizations: BOTH,
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: c') }),
    judge: (_run, ctx) => [
      ...(ctx.L.prod.connections > 0 ? [] : ['the base Kustomization did not reach its remote server']),
      ...connected(ctx.L.admin, 'a control reached another address'),
    ],
  },
];

describe('ServiceAccount tokens for spec.kubeConfig.configMapRef (bundled action)', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;
  let I: InputCanaries;

  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    I = await inputCanaries();
    github = await startFakeGitHub({
      tokens: { [I.githubToken.value]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  }, 60_000);

  afterAll(async () => {
    await github.close();
    client.close();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    let run: HostileRun | undefined;
    const cleanups: (() => Promise<unknown>)[] = [];
    const body = async (evidence: string[], result: Record<string, unknown>) => {
      const ns = await freshNamespace(client, 'atk');
      cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
      const L = {} as Ctx['L'];
      for (const name of ['prod', 'admin'] as const) {
        L[name] = await startListener(`${c.id}/${name}`);
        cleanups.push(() => L[name].close());
      }
      await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer' } },
      });
      for (const [name, host] of [
        ['prod-identity', L.prod.host],
        ['admin-identity', L.admin.host],
      ] as const) {
        await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: identityData(host) },
        });
      }
      const ctx: Ctx = { ns, L };
      run = await runHostile({
        client,
        github,
        number: 5100 + index,
        base: { ...baseTree(ns), ...(c.base?.(ctx) ?? {}) },
        head: c.head(ctx),
        inputs: {
          kubeconfig,
          mode: 'preview',
          kustomizations: c.kustomizations ?? 'clusters/prod/*.yaml',
          'github-token': I.githubToken.value,
        },
      });
      Object.assign(result, {
        exitCode: run.code,
        connections: { prod: L.prod.connections, admin: L.admin.connections },
        log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-80).join('\n'),
      });
      evidence.push(
        ...evidenceOf({
          run,
          canaries: inputCanaryList(I),
          listeners: [{ listener: L.prod }, { listener: L.admin }],
          namespace: ns,
        }),
        ...c.judge(run, ctx),
      );
    };
    await attackCase(c, body, async () => {
      if (run) await cleanupRun(run);
      for (const f of cleanups.reverse()) await f().catch(() => undefined);
    });
  });
});
