// Issue 47, classes 3, 4 and 9 (`npm run attack`): a change borrows a secret the reviewed
// configuration gives to someone else. A Kustomization the pull request adds, or changes, names the
// platform's kubeconfig Secret (its token would go to that server), the platform's age key or the
// workflow's sops-age-key (a repository SOPS file would be opened), or takes the workflow's
// secret-vars; a push-preview or another event's run takes a base commit its author wrote (a push's
// `before`, a pull request into the author's own branch), or an event whose tree nobody reviewed
// runs as trusted. Each case runs the bundled action against the test cluster and writes
// reports/attack/<id>.json; a case fails when its attack got through. The controls prove the checks
// see a legitimate use.
//
// The rule the cases expect (src/source/secret-uses.ts, event-trust.ts, trust-base.ts): in an
// untrusted run, a Kustomization uses a Secret or secret only as the base commit's Kustomization of
// that namespace and name does; the base is a commit of the default branch; every event has a row.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { baseTree, cm, FROM_CHECKOUT, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  canaryList,
  cleanupRun,
  evidenceOf,
  inputCanaries,
  inputCanaryList,
  putSecret,
  runHostile,
  secretCanaries,
  secretData,
  startListener,
  type Canary,
  type Files,
  type HostileRun,
  type InputCanaries,
  type Listener,
} from '../helpers/hostile.js';
import { createSopsToolkit, type SopsToolkit } from '../helpers/sops-fixtures.js';

const repository = { full_name: 'org/repo', name: 'repo', owner: { login: 'org' }, default_branch: 'main' };

/** A kubeconfig whose server is `host` (a listener: any connection to it is the borrowed kubeconfig in use). */
const kubeconfigFor = (host: string, token: string) =>
  `apiVersion: v1
kind: Config
current-context: remote
clusters: [{name: remote, cluster: {server: "https://${host}"}}]
users: [{name: remote, user: {token: "${token}"}}]
contexts: [{name: remote, context: {cluster: remote, user: remote}}]
`;

const kubeConfigRef = (secret: string, key?: string) =>
  `  kubeConfig:\n    secretRef: {name: ${secret}${key === undefined ? '' : `, key: ${key}`}}\n`;
const decryptWith = (secret?: string) =>
  `  decryption:\n    provider: sops\n${secret === undefined ? '' : `    secretRef: {name: ${secret}}\n`}`;
const postBuild = '  postBuild:\n    substitute: {team: web}\n';

const gitRepo = (ns: string, name: string, url: string, secret: string) =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  url: ${url}
  ref: {branch: main}
  secretRef: {name: ${secret}}
`;

interface Ctx {
  ns: string;
  L: Record<string, Listener>;
  /** The token of each kubeconfig Secret (prod: the platform's remote; admin: another cluster's). */
  T: { prod: Canary; admin: Canary };
  /** The plaintext of the repository's SOPS file. */
  sopsValue: Canary;
  /** The workflow's secret-vars value. */
  varValue: Canary;
  /** The Secret git-auth the tools GitRepository names. */
  G: ReturnType<typeof secretCanaries>;
  I: InputCanaries;
  /** The repository's SOPS file (dotenv), encrypted for the platform's age key and the input's. */
  sopsFile: string;
}

interface Case {
  id: string;
  title: string;
  control?: boolean;
  base?: (ctx: Ctx) => Files;
  head: (ctx: Ctx) => Files;
  /** The Kustomization files the run reconciles (default clusters/prod/*.yaml). */
  kustomizations?: string;
  mode?: 'preview' | 'apply';
  event?: (ctx: Ctx) => (baseSha: string, headSha: string) => { name: string; payload: unknown };
  /** The listeners' legitimate canaries. */
  allowed?: (ctx: Ctx) => Record<string, Canary[]>;
  /** The case's own findings (the attack got through, or the control saw nothing). */
  judge: (run: HostileRun, ctx: Ctx) => string[];
}

// ---- what the run did ----------------------------------------------------------------------------

/** Text as GitHub shows it: the Markdown escapes and word joiners of src/util/markdown.ts removed. */
const plain = (s: string) => s.replace(/\\(.)/g, '$1').replace(/[\u2060\u200b]/g, '');
const commentOf = (run: HostileRun) => plain(run.github.join('\n'));
const decryptions = (run: HostileRun) => (run.stdout.match(/Decrypted \d+ SOPS file\(s\)/g) ?? []).length;

/** Evidence unless the PR comment says Kustomization ns/name was refused `what`. */
const refusedIn = (run: HostileRun, ns: string, name: string, what: string): string[] =>
  commentOf(run).includes(`refused ${what}`) && commentOf(run).includes(`${ns}/${name}`)
    ? []
    : [`the PR comment does not say ${ns}/${name} was refused ${what}`];

const connected = (l: Listener, what: string): string[] =>
  l.connections > 0 ? [`${what}: ${l.name} got ${l.connections} connection(s)`] : [];

/** A push to `ref` whose before is the attacker's own commit (`before`: 'head' or 'base'). */
const pushEvent = (ref: string) => (_ctx: Ctx) => (_base: string, head: string) => ({
  name: 'push',
  payload: { ref, before: head, after: head, repository, pusher: { name: 'mallory' } },
});

/** The GitRepository tools (credentials: git-auth) at listener L, and a Kustomization built from it. */
const toolsSource = ({ ns, L }: Ctx): Files => ({
  'clusters/prod/tools.yaml':
    gitRepo(ns, 'tools', `http://${L['git']!.host}/tools.git`, 'git-auth') +
    '---\n' +
    ks(ns, 'tools', './', `{kind: GitRepository, name: tools, namespace: ${ns}}`),
});

/** Evidence when git-auth's credentials reached the listener. */
const gitCredentialsSent = (ctx: Ctx): string[] => {
  const sent = ctx.L['git']!.records.some((r) => r.headers.some(([k]) => k.toLowerCase() === 'authorization'));
  return sent ? ['the GitRepository was fetched with git-auth: an Authorization header reached the listener'] : [];
};

// ---- cases --------------------------------------------------------------------------------------

/** The base every kubeConfig case starts from: Kustomization remote (clusters/other) uses prod-kubeconfig. */
const remoteBase = ({ ns }: Ctx): Files => ({
  'clusters/other/remote.yaml': ks(ns, 'remote', './apps/remote', FROM_CHECKOUT, kubeConfigRef('prod-kubeconfig')),
  'apps/remote/cm.yaml': cm(ns, 'remote-settings'),
});

/** The base of the decryption cases: Kustomization vault (clusters/other) opens apps/secret with sops-age. */
const vaultBase = ({ ns, sopsFile }: Ctx): Files => ({
  'clusters/other/vault.yaml': ks(ns, 'vault', './apps/secret', FROM_CHECKOUT, decryptWith('sops-age')),
  'apps/secret/kustomization.yaml': `namespace: ${ns}\nsecretGenerator:\n  - name: vault-data\n    envs: [token.env]\ngeneratorOptions: {disableNameSuffixHash: true}\n`,
  'apps/secret/token.env': sopsFile,
});

/** The base of the secret-vars cases: Kustomization subst (clusters/other) substitutes. */
const substBase = ({ ns }: Ctx): Files => ({
  'clusters/other/subst.yaml': ks(ns, 'subst', './apps/subst', FROM_CHECKOUT, postBuild),
  'apps/subst/cm.yaml': cm(ns, 'subst-settings', 'token: "${PLATFORM_TOKEN}"'),
});

/** A directory whose ConfigMap takes the workflow's secret variable, sliced (no mask matches a slice). */
const leakDir = (ns: string): Files => ({
  'apps/leak/cm.yaml': cm(
    ns,
    'leak',
    'head: "${PLATFORM_TOKEN:0:12}", tail: "${PLATFORM_TOKEN:12}", whole: "${PLATFORM_TOKEN:-unset}"',
  ),
});

const noneAt = (ctx: Ctx, what: string) => [...connected(ctx.L['prod']!, what), ...connected(ctx.L['admin']!, what)];

const CASES: Case[] = [
  // -- class 3: spec.kubeConfig.secretRef ----------------------------------------------------------
  {
    id: '47-3a-kubeconfig-borrowed-by-a-new-kustomization',
    title:
      "a Kustomization the PR adds names the platform's kubeconfig Secret (prod-kubeconfig): its token must not reach that server",
    base: remoteBase,
    head: ({ ns }) => ({
      'clusters/prod/evil.yaml': ks(ns, 'evil', './apps/app', FROM_CHECKOUT, kubeConfigRef('prod-kubeconfig')),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the new Kustomization used the borrowed kubeconfig'),
      ...refusedIn(run, ctx.ns, 'evil', `Secret ${ctx.ns}/prod-kubeconfig for spec.kubeConfig.secretRef`),
    ],
  },
  {
    id: '47-3b-kubeconfig-key-changed',
    title:
      'the base Kustomization remote keeps its Secret but the PR changes its key to admin.yaml (another cluster’s kubeconfig)',
    base: remoteBase,
    kustomizations: 'clusters/prod/*.yaml\nclusters/other/*.yaml',
    head: ({ ns }) => ({
      'clusters/other/remote.yaml': ks(
        ns,
        'remote',
        './apps/remote',
        FROM_CHECKOUT,
        kubeConfigRef('prod-kubeconfig', 'admin.yaml'),
      ),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the changed key was used'),
      ...refusedIn(run, ctx.ns, 'remote', `Secret ${ctx.ns}/prod-kubeconfig for spec.kubeConfig.secretRef`),
    ],
  },
  {
    id: '47-3c-kubeconfig-secretref-switched',
    title: 'the base Kustomization remote switches its secretRef to platform-admin (another cluster’s kubeconfig)',
    base: remoteBase,
    kustomizations: 'clusters/prod/*.yaml\nclusters/other/*.yaml',
    head: ({ ns }) => ({
      'clusters/other/remote.yaml': ks(ns, 'remote', './apps/remote', FROM_CHECKOUT, kubeConfigRef('platform-admin')),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the switched Secret was used'),
      ...refusedIn(run, ctx.ns, 'remote', `Secret ${ctx.ns}/platform-admin for spec.kubeConfig.secretRef`),
    ],
  },
  {
    id: '47-3d-kubeconfig-same-name-key-spelled-out',
    title:
      'the PR defines Kustomization remote again in another file with key: value spelled out (Flux reads the same key) in a flow mapping',
    base: remoteBase,
    head: ({ ns }) => ({
      'clusters/prod/remote.yaml': ks(
        ns,
        'remote',
        './apps/app',
        FROM_CHECKOUT,
        '  kubeConfig: {secretRef: {key: value, name: prod-kubeconfig}}\n',
      ),
    }),
    judge: (run, ctx) => [
      ...noneAt(ctx, 'the kubeconfig with another key spelling was used'),
      ...refusedIn(run, ctx.ns, 'remote', `Secret ${ctx.ns}/prod-kubeconfig for spec.kubeConfig.secretRef`),
    ],
  },
  {
    id: '47-3-control-kubeconfig-as-on-the-base',
    title: 'control: the base Kustomization remote, unchanged, reaches its remote cluster',
    control: true,
    base: remoteBase,
    kustomizations: 'clusters/prod/*.yaml\nclusters/other/*.yaml',
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: c') }),
    allowed: ({ T }) => ({ prod: [T.prod] }),
    judge: (_run, ctx) =>
      ctx.L['prod']!.connections > 0 ? [] : ['the base Kustomization did not reach its remote server'],
  },
  // -- class 3: decryption -------------------------------------------------------------------------
  {
    id: '47-3e-decryption-secret-borrowed-by-a-new-kustomization',
    title:
      "a Kustomization the PR adds decrypts the repository's SOPS file with the platform's age key (Secret sops-age)",
    base: vaultBase,
    head: ({ ns }) => ({
      'clusters/prod/evil.yaml': ks(
        ns,
        'evil',
        './apps/secret',
        FROM_CHECKOUT,
        decryptWith('sops-age') + '  namePrefix: x-\n',
      ),
    }),
    judge: (run, ctx) => [
      ...(decryptions(run) > 0 ? ['the new Kustomization decrypted the SOPS file'] : []),
      ...refusedIn(run, ctx.ns, 'evil', `Secret ${ctx.ns}/sops-age`),
    ],
  },
  {
    id: '47-3f-decryption-input-key-borrowed-by-a-new-kustomization',
    title:
      "a Kustomization the PR adds decrypts it with the workflow's sops-age-key (decryption: {provider: sops}, no Secret)",
    base: vaultBase,
    head: ({ ns }) => ({
      'clusters/prod/evil.yaml': ks(ns, 'evil', './apps/secret', FROM_CHECKOUT, decryptWith() + '  nameSuffix: -x\n'),
    }),
    judge: (run, ctx) => [
      ...(decryptions(run) > 0 ? ['the new Kustomization decrypted the SOPS file'] : []),
      ...refusedIn(run, ctx.ns, 'evil', "the workflow's decryption keys"),
    ],
  },
  {
    id: '47-3g-decryption-input-key-without-a-decryption-block',
    title:
      "a Kustomization the PR adds, with no spec.decryption at all, pointed at the SOPS file (the action's input keys decrypt every Kustomization)",
    base: vaultBase,
    head: ({ ns }) => ({
      'clusters/prod/evil.yaml': ks(ns, 'evil', './apps/secret', FROM_CHECKOUT, '  targetNamespace: default\n'),
    }),
    judge: (run, ctx) => [
      ...(decryptions(run) > 0 ? ['the new Kustomization decrypted the SOPS file'] : []),
      ...refusedIn(run, ctx.ns, 'evil', "the workflow's decryption keys"),
    ],
  },
  {
    id: '47-3h-decryption-added-to-an-existing-kustomization',
    title: 'the base Kustomization app (no decryption) moves to the SOPS file and adds decryption with sops-age',
    base: vaultBase,
    head: ({ ns }) => ({
      'clusters/prod/app.yaml': ks(ns, 'app', './apps/secret', FROM_CHECKOUT, decryptWith('sops-age')),
    }),
    judge: (run, ctx) => [
      ...(decryptions(run) > 0 ? ['the changed Kustomization decrypted the SOPS file'] : []),
      ...refusedIn(run, ctx.ns, 'app', `Secret ${ctx.ns}/sops-age`),
    ],
  },
  {
    id: '47-3-control-decryption-as-on-the-base',
    title: 'control: the base Kustomization vault, unchanged, decrypts its SOPS file (the value stays hidden)',
    control: true,
    base: vaultBase,
    kustomizations: 'clusters/prod/*.yaml\nclusters/other/*.yaml',
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: c') }),
    judge: (run) => (decryptions(run) > 0 ? [] : ['the base Kustomization did not decrypt its file']),
  },
  // -- class 3: secret-vars ------------------------------------------------------------------------
  {
    id: '47-3i-secret-vars-to-a-new-kustomization',
    title: "a Kustomization the PR adds (postBuild on) slices the workflow's secret-vars into a ConfigMap",
    base: substBase,
    head: ({ ns }) => ({
      'clusters/prod/evil.yaml': ks(ns, 'evil', './apps/leak', FROM_CHECKOUT, '  postBuild: {substitute: {}}\n'),
      ...leakDir(ns),
    }),
    judge: (run, ctx) => refusedIn(run, ctx.ns, 'evil', "the workflow's secret-vars"),
  },
  {
    id: '47-3j-secret-vars-to-a-kustomization-that-starts-substituting',
    title: 'the base Kustomization app (no postBuild) adds postBuild and points at the slicing ConfigMap',
    base: substBase,
    head: ({ ns }) => ({
      'clusters/prod/app.yaml': ks(
        ns,
        'app',
        './apps/leak',
        FROM_CHECKOUT,
        '  postBuild:\n    substituteStrategy: Always\n',
      ),
      ...leakDir(ns),
    }),
    judge: (run, ctx) => refusedIn(run, ctx.ns, 'app', "the workflow's secret-vars"),
  },
  {
    id: '47-3k-secret-vars-same-name-other-namespace',
    title: 'the PR adds a Kustomization named subst, like the base’s, without metadata.namespace (flux-system)',
    base: substBase,
    head: ({ ns }) => ({
      'clusters/prod/subst.yaml': ks(ns, 'subst', './apps/leak', FROM_CHECKOUT, postBuild).replace(
        `, namespace: ${ns}}`,
        '}',
      ),
      ...leakDir(ns),
    }),
    judge: (run) => refusedIn(run, 'flux-system', 'subst', "the workflow's secret-vars"),
  },
  {
    id: '47-3-control-secret-vars-as-on-the-base',
    title: 'control: the base Kustomization subst, unchanged, gets the secret-vars (and shows no value)',
    control: true,
    base: substBase,
    kustomizations: 'clusters/prod/*.yaml\nclusters/other/*.yaml',
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: c') }),
    judge: (run) =>
      commentOf(run).includes("refused the workflow's secret-vars")
        ? ['the base Kustomization was refused its secret-vars']
        : [],
  },
  // -- class 4: the base commit --------------------------------------------------------------------
  {
    id: '47-4a-push-preview-two-pushes',
    title:
      'a preview on a push: the first push added a GitRepository with credentials, the second uses it (before = the first)',
    head: toolsSource,
    event: pushEvent('refs/heads/feature'),
    judge: (_run, ctx) => gitCredentialsSent(ctx),
  },
  {
    id: '47-4b-push-preview-payload-says-main',
    title:
      "a push payload naming refs/heads/main, whose before is the attacker's commit, over a tree of another branch",
    head: toolsSource,
    event: pushEvent('refs/heads/main'),
    judge: (_run, ctx) => gitCredentialsSent(ctx),
  },
  {
    id: '47-4c-pull-request-into-the-attackers-branch',
    title: "a pull request into the attacker's own branch staging, whose tip already defines the GitRepository",
    head: toolsSource,
    event: () => (_base, head) => ({
      name: 'pull_request',
      payload: {
        action: 'synchronize',
        number: 4,
        pull_request: {
          number: 4,
          base: { sha: head, ref: 'staging', repo: repository },
          head: { sha: head, ref: 'feature', repo: repository },
        },
        repository,
      },
    }),
    judge: (_run, ctx) => gitCredentialsSent(ctx),
  },
  {
    id: '47-4-control-push-preview-source-on-main',
    title: 'control: a preview on a push, the GitRepository defined on main: fetched with its credentials',
    control: true,
    base: toolsSource,
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: c') }),
    event: pushEvent('refs/heads/feature'),
    allowed: ({ G }) => ({ git: canaryList(G) }),
    judge: (_run, ctx) => (gitCredentialsSent(ctx).length > 0 ? [] : ['the credentials were not sent']),
  },
  // -- class 9: every event has a row --------------------------------------------------------------
  ...(
    [
      [
        '47-9a-apply-on-workflow-run',
        'workflow_run',
        (head) => ({ workflow_run: { head_sha: head, head_branch: 'feature', event: 'pull_request' } }),
      ],
      [
        '47-9b-apply-on-issue-comment',
        'issue_comment',
        () => ({ issue: { number: 4, pull_request: {} }, comment: { body: '/deploy' } }),
      ],
      [
        '47-9c-apply-on-workflow-dispatch-of-a-branch',
        'workflow_dispatch',
        () => ({ ref: 'refs/heads/feature', inputs: {} }),
      ],
      [
        '47-9d-apply-on-pull-request-review-comment',
        'pull_request_review_comment',
        (head) => ({
          pull_request: { number: 4, base: { sha: head, ref: 'feature' }, head: { sha: head, ref: 'feature' } },
        }),
      ],
      ['47-9e-apply-on-an-unknown-event', 'deployment', () => ({ deployment: { ref: 'feature', sha: 'x' } })],
    ] as [string, string, (head: string) => Record<string, unknown>][]
  ).map(([id, name, payload]): Case => ({
    id,
    title: `mode apply on a ${name} event over a tree that adds a GitRepository with credentials: the tree is untrusted`,
    mode: 'apply',
    head: toolsSource,
    event: () => (_base, head) => ({ name, payload: { ...payload(head), repository } }),
    judge: (_run, ctx) => gitCredentialsSent(ctx),
  })),
];

describe('borrowed secrets and bases (bundled action)', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;
  let I: InputCanaries;
  // Made at the first case that needs a SOPS file (the pinned sops and age-keygen of test/cluster/build.sh).
  let sops: SopsToolkit | undefined;
  let platformAge: { identity: string; recipient: string } | undefined;
  const toolkit = () => {
    sops ??= createSopsToolkit();
    platformAge ??= sops.ageKey();
    return { sops, platformAge };
  };

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
    sops?.cleanup();
    client.close();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    let run: HostileRun | undefined;
    const cleanups: (() => Promise<unknown>)[] = [];
    const L: Record<string, Listener> = {};
    const body = async (evidence: string[], result: Record<string, unknown>) => {
      const ns = await freshNamespace(client, 'atk');
      cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
      for (const name of ['prod', 'admin', 'git']) {
        L[name] = await startListener(`${c.id}/${name}`);
        cleanups.push(() => L[name]!.close());
      }
      const T = {
        prod: { where: `Secret ${ns}/prod-kubeconfig token`, value: `krprodtoken${randomHex()}` },
        admin: { where: `Secret ${ns}/platform-admin token`, value: `kradmintoken${randomHex()}` },
      };
      const sopsValue = { where: 'the repository SOPS file apps/secret/token.env', value: `krsops${randomHex()}` };
      const varValue = { where: 'input secret-vars PLATFORM_TOKEN', value: `krvarhead${randomHex()}` };
      const G = secretCanaries(`Secret ${ns}/git-auth`);
      const { identityToRecipient } = await import('age-encryption');
      const usesSops = c.id.includes('decryption');
      const kit = usesSops ? toolkit() : undefined;
      const sopsFile = kit
        ? kit.sops.encrypt(`TOKEN=${sopsValue.value}\n`, 'dotenv', {
            age: [kit.platformAge.recipient, await identityToRecipient(I.ageKey.value)],
          })
        : '';
      await putSecret(client, ns, 'prod-kubeconfig', {
        value: kubeconfigFor(L['prod']!.host, T.prod.value),
        'admin.yaml': kubeconfigFor(L['admin']!.host, T.admin.value),
      });
      await putSecret(client, ns, 'platform-admin', { value: kubeconfigFor(L['admin']!.host, T.admin.value) });
      if (kit) await putSecret(client, ns, 'sops-age', { 'age.agekey': kit.platformAge.identity });
      await putSecret(client, ns, 'git-auth', secretData(G, [L['git']!.host]));
      const ctx: Ctx = { ns, L, T, sopsValue, varValue, G, I, sopsFile };
      const canaries: Canary[] = [
        T.prod,
        T.admin,
        sopsValue,
        varValue,
        // A slice of the variable (${PLATFORM_TOKEN:0:12}) is as good as the whole to an attacker.
        { where: 'input secret-vars PLATFORM_TOKEN (its tail)', value: varValue.value.slice(12) },
        ...(kit ? [{ where: 'Secret sops-age', value: kit.platformAge.identity.trim().split('\n').pop()! }] : []),
        ...canaryList(G),
        ...inputCanaryList(I),
      ];
      const inputs: Record<string, string> = {
        kubeconfig,
        mode: c.mode ?? 'preview',
        kustomizations: c.kustomizations ?? 'clusters/prod/*.yaml',
        'github-token': I.githubToken.value,
        'sops-age-key': I.ageKey.value,
        'secret-vars': `PLATFORM_TOKEN: ${varValue.value}\n`,
        'strict-substitute': 'false',
        'allow-private-source-hosts': 'true',
      };
      run = await runHostile({
        client,
        github,
        number: 4700 + index,
        base: { ...baseTree(ns), ...(c.base?.(ctx) ?? {}) },
        head: c.head(ctx),
        inputs,
        ...(c.event ? { event: c.event(ctx) } : {}),
      });
      Object.assign(result, {
        exitCode: run.code,
        connections: Object.fromEntries(Object.entries(L).map(([k, l]) => [k, l.connections])),
        log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-80).join('\n'),
      });
      const found = [
        ...evidenceOf({
          run,
          canaries,
          listeners: Object.entries(L).map(([name, listener]) => ({ listener, allowed: c.allowed?.(ctx)[name] ?? [] })),
          namespace: ns,
        }),
        ...c.judge(run, ctx),
      ];
      // An apply writes its inventory: that is the mode's work, not a leak.
      evidence.push(
        ...(c.mode === 'apply' ? found.filter((e) => !e.startsWith('a preview wrote the inventory')) : found),
      );
    };
    await attackCase(c, body, async () => {
      if (run) await cleanupRun(run);
      for (const f of cleanups.reverse()) await f().catch(() => undefined);
    });
  });
});

function randomHex(): string {
  return Array.from({ length: 24 }, () => Math.floor(Math.random() * 16).toString(16)).join('');
}
