// Issue 50, item 2 (`npm run attack`): a pull request borrows a Secret through the parent's patches. In
// the parent/children layout (cluster-template: cluster-apps builds ./kubernetes/apps and patches every
// child Kustomization; each child's namespace comes from its folder's kustomization.yaml, its file says
// none), the PR changes the parent's spec.patches so that every child gets postBuild.substituteFrom the
// platform's Secret, which the base gives to nobody, or to one other child only. A preview judges the
// base's Kustomizations as the parent's build on the base makes them (src/reconcile/base-built.ts): the
// Secret is refused, and its canary value appears nowhere (log, summary, outputs, PR comment, check run,
// cluster writes). The control: the base's parent gives every child cluster-secrets through its patch and
// the PR only bumps an image, so the child reads it (no refusal). Each case writes reports/attack/<id>.json.
import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { freshNamespace } from '../helpers/cluster.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  previewFixture,
  putSecret,
  runHostile,
  type Canary,
  type Files,
  type HostileRun,
} from '../helpers/hostile.js';

/** One patch of cluster-apps: substituteFrom `secrets` for the child Kustomizations `target` selects. */
const patch = (
  secrets: readonly string[],
  name?: string,
) => `    - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization${name ? `, name: ${name}` : ''}}
      patch: |
        - op: add
          path: /spec/postBuild
          value: {substituteFrom: [${secrets.map((s) => `{kind: Secret, name: ${s}}`).join(', ')}]}
`;

/** cluster-apps (in flux-system, as cluster-template has it), with `patches` (patch() blocks), and targetNamespace `ns` for every child. */
const parent = (ns: string, patches: string) => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  path: ./kubernetes/apps
  sourceRef: {kind: GitRepository, name: flux-system}
  patches:
${patches}    - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
      patch: |
        - op: add
          path: /spec/targetNamespace
          value: ${ns}
`;

/** A child's ks.yaml as cluster-template writes it: no namespace (its folder's kustomization.yaml sets it). */
const child = (ns: string, name: string) => `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app ${name}
spec:
  interval: 1h
  prune: true
  path: ./kubernetes/apps/network/${name}/app
  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  wait: false
`;

const configMap = (name: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {${data}}\n`;

/** The tree: cluster-apps with `patches`; children echo (reads ${SECRET_DOMAIN}) and vault (reads nothing). */
function tree(ns: string, patches: string, echoData = 'domain: "${SECRET_DOMAIN}", image: "echo:1.0.0"'): Files {
  return {
    'kubernetes/flux/cluster/ks.yaml': parent(ns, patches),
    'kubernetes/apps/network/kustomization.yaml': `namespace: ${ns}\nresources: [./echo/ks.yaml, ./vault/ks.yaml]\n`,
    'kubernetes/apps/network/echo/ks.yaml': child(ns, 'echo'),
    'kubernetes/apps/network/echo/app/kustomization.yaml': 'resources: [./cm.yaml]\n',
    'kubernetes/apps/network/echo/app/cm.yaml': configMap('echo', echoData),
    'kubernetes/apps/network/vault/ks.yaml': child(ns, 'vault'),
    'kubernetes/apps/network/vault/app/kustomization.yaml': 'resources: [./cm.yaml]\n',
    'kubernetes/apps/network/vault/app/cm.yaml': configMap('vault', 'role: "platform"'),
  };
}

/** The PR's echo ConfigMap: it takes the platform's value too. */
const borrowingEcho = 'domain: "${SECRET_DOMAIN}", admin: "${ADMIN_TOKEN:=none}", image: "echo:1.0.0"';

interface Ctx {
  ns: string;
}

interface Case {
  id: string;
  title: string;
  control?: boolean;
  base: (ctx: Ctx) => Files;
  head: (ctx: Ctx) => Files;
  /** The case's own findings (the attack got through, or the control saw nothing). */
  judge: (run: HostileRun, ctx: Ctx) => string[];
}

/** Text as GitHub shows it: the Markdown escapes and word joiners of src/util/markdown.ts removed. */
const plain = (s: string) => s.replace(/\\(.)/g, '$1').replace(/[\u2060\u200b]/g, '');
const commentOf = (run: HostileRun) => plain(run.github.join('\n'));

/** Evidence unless the PR comment says echo was refused the platform's Secret. */
const echoRefused = (run: HostileRun, { ns }: Ctx): string[] => {
  const comment = commentOf(run);
  return comment.includes(`${ns}/echo`) && comment.includes(`Secret ${ns}/platform-admin`)
    ? []
    : [`the PR comment does not say ${ns}/echo was refused Secret ${ns}/platform-admin`];
};

const CASES: Case[] = [
  {
    id: '50-2a-parent-patch-gives-every-child-a-secret-nobody-had',
    title:
      "the PR changes the parent's spec.patches so that every child gets postBuild.substituteFrom the platform's Secret (platform-admin), which the base gives to nobody",
    base: ({ ns }) => tree(ns, patch(['cluster-secrets'])),
    head: ({ ns }) => ({
      'kubernetes/flux/cluster/ks.yaml': parent(ns, patch(['cluster-secrets', 'platform-admin'])),
      'kubernetes/apps/network/echo/app/cm.yaml': configMap('echo', borrowingEcho),
    }),
    judge: echoRefused,
  },
  {
    id: '50-2b-parent-patch-widens-another-childs-secret',
    title:
      "the base's parent gives the platform's Secret to one child (vault) by a patch naming it; the PR widens that patch's target to every child",
    base: ({ ns }) => tree(ns, patch(['cluster-secrets']) + patch(['cluster-secrets', 'platform-admin'], 'vault')),
    head: ({ ns }) => ({
      'kubernetes/flux/cluster/ks.yaml': parent(
        ns,
        patch(['cluster-secrets']) + patch(['cluster-secrets', 'platform-admin']),
      ),
      'kubernetes/apps/network/echo/app/cm.yaml': configMap('echo', borrowingEcho),
    }),
    // vault reads the Secret the base's parent gives it (a patch naming it): no refusal there.
    judge: (run, ctx) => [
      ...echoRefused(run, ctx),
      ...(commentOf(run).includes(`Kustomization ${ctx.ns}/vault does not read it`)
        ? [`${ctx.ns}/vault was refused the Secret its parent gives it on the base`]
        : []),
    ],
  },
  {
    id: '50-2-control-parent-patch-gives-cluster-secrets',
    title:
      "control: the base's parent gives every child cluster-secrets through its patch and the PR only bumps echo's image: echo reads it",
    control: true,
    base: ({ ns }) => tree(ns, patch(['cluster-secrets'])),
    head: () => ({
      'kubernetes/apps/network/echo/app/cm.yaml': configMap('echo', 'domain: "${SECRET_DOMAIN}", image: "echo:1.0.1"'),
    }),
    judge: (run, { ns }) => {
      const comment = commentOf(run);
      const out: string[] = [];
      if (run.code !== 0) out.push(`the preview exited ${run.code}`);
      if (!comment.includes(`${ns}/echo`)) out.push(`the PR comment does not name ${ns}/echo`);
      if (/refused|is not read/.test(comment)) out.push('the PR comment refuses something');
      return out;
    },
  },
];

describe.concurrent("a pull request borrows a Secret through the parent's patches (bundled action)", () => {
  const fixture = previewFixture();

  it.each(CASES.map((c, i) => [c.id, c, i] as const))(
    '%s',
    async (_id, c, index) => {
      const { client, github, kubeconfig, githubToken } = fixture;
      let run: HostileRun | undefined;
      const cleanups: (() => Promise<unknown>)[] = [];
      await attackCase(
        c,
        async (evidence, result) => {
          const ns = await freshNamespace(client, 'atk');
          cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
          const admin: Canary = {
            where: `Secret ${ns}/platform-admin`,
            value: `kradmin${randomBytes(12).toString('hex')}`,
          };
          // The legitimate Secret's value is substituted into echo's ConfigMap: a preview still shows it nowhere.
          const domain: Canary = {
            where: `Secret ${ns}/cluster-secrets`,
            value: `krdomain${randomBytes(8).toString('hex')}`,
          };
          await putSecret(client, ns, 'cluster-secrets', { SECRET_DOMAIN: domain.value });
          await putSecret(client, ns, 'platform-admin', { ADMIN_TOKEN: admin.value, SECRET_DOMAIN: admin.value });
          const ctx: Ctx = { ns };
          run = await runHostile({
            client,
            github,
            number: 5020 + index,
            base: c.base(ctx),
            head: c.head(ctx),
            inputs: {
              kubeconfig,
              mode: 'preview',
              kustomizations: 'kubernetes/flux/cluster/ks.yaml\nkubernetes/apps/*/*/ks.yaml',
              'github-token': githubToken,
              'strict-substitute': 'false',
            },
            timeoutMs: 180_000,
          });
          Object.assign(result, {
            exitCode: run.code,
            comment: commentOf(run).slice(0, 4000),
            log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-80).join('\n'),
          });
          evidence.push(
            ...evidenceOf({ run, canaries: [admin, domain], listeners: [], namespace: ns }),
            ...c.judge(run, ctx),
          );
        },
        async () => {
          if (run) await cleanupRun(run);
          for (const f of cleanups.reverse()) await f().catch(() => undefined);
        },
      );
    },
    300_000,
  );
});
