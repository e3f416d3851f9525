// A source is its definition, not its name (issue 47, class 7). A pull request defines a source that
// the base already defines (same kind, namespace and name) a second time, differently, in another
// directory, so that the Kustomizations nearest to each file pick different definitions: one would
// be built from the other's repository (the per-run cache of fetched trees was keyed by the name).
// Routes: a second GitRepository beside a new Kustomization; a second definition of the checkout's
// own GitRepository (flux-system/flux-system); an include that names the doubly defined repository;
// an OCIRepository defined twice. Every case runs the bundled action in preview on a pull_request
// event; the attacker's definitions point at a loopback listener. The attack got through when the
// listener was asked for anything, when a Kustomization planned the other repository's objects, or
// when the run did not refuse the doubly defined name naming both files. The control proves that two
// identical definitions of one name are one object, and build.
import { describe, it } from 'vitest';
import { freshNamespace } from '../helpers/cluster.js';
import { bareRepository } from '../helpers/git-repos.js';
import { baseTree, cm, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  previewFixture,
  runHostile,
  startListener,
  type Files,
  type HostileRun,
  type Listener,
} from '../helpers/hostile.js';

interface Ctx {
  ns: string;
  /** The attacker's server: any request to it is the attack getting somewhere. */
  L: Listener;
  /** The base's repository (served on loopback), holding ConfigMap legit-<ns>. */
  legitUrl: string;
}

interface ConfusionCase {
  id: string;
  title: string;
  control?: boolean;
  base: (ctx: Ctx) => Files;
  head: (ctx: Ctx) => Files;
  kustomizations: string;
  /** The object named in the refusal (`GitRepository ns/tenant`), and the two files; none for the control. */
  refusal?: (ctx: Ctx) => { object: string; files: [string, string] };
  /** Objects that must be planned (the control). */
  planned?: (ctx: Ctx) => string[];
}

const gitRepo = (ns: string, name: string, url: string, extra = '') =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  url: ${url}
  ref: {branch: main}
${extra}`;

const ociRepo = (ns: string, name: string, url: string) =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  url: ${url}
  insecure: true
  ref: {tag: v1}
`;

const ref = (kind: string, name: string, ns?: string) =>
  `{kind: ${kind}, name: ${name}${ns !== undefined ? `, namespace: ${ns}` : ''}}`;

const CASES: ConfusionCase[] = [
  {
    id: '47-7a-second-gitrepository-beside-new-kustomization',
    title:
      "the PR defines the base's GitRepository tenant again in tenants/evil/ (url at the attacker's listener), beside a new Kustomization of it",
    base: ({ ns, legitUrl }) => ({
      ...baseTree(ns),
      'clusters/prod/tenant.yaml': `${gitRepo(ns, 'tenant', legitUrl)}---\n${ks(ns, 'tenant', './apps', ref('GitRepository', 'tenant'))}`,
    }),
    head: ({ ns, L }) => ({
      'tenants/evil/source.yaml': gitRepo(ns, 'tenant', `http://${L.host}/org/tenant.git`),
      'tenants/evil/ks.yaml': ks(ns, 'evil', './apps', ref('GitRepository', 'tenant')),
    }),
    kustomizations: 'clusters/prod/*.yaml\ntenants/evil/*.yaml',
    refusal: ({ ns }) => ({
      object: `GitRepository ${ns}/tenant`,
      files: ['clusters/prod/tenant.yaml', 'tenants/evil/source.yaml'],
    }),
  },
  {
    id: '47-7b-checkout-gitrepository-redefined-elsewhere',
    title:
      "the PR defines flux-system/flux-system (the checkout's GitRepository, in the base's namespace) again in apps/evil/, pointing at the listener, with a Kustomization of it there",
    base: ({ ns }) => baseTree(ns),
    head: ({ ns, L }) => ({
      'apps/evil/gotk-sync.yaml': gitRepo('flux-system', 'flux-system', `http://${L.host}/org/repo.git`),
      'apps/evil/ks.yaml': ks(ns, 'evil', './apps/app'),
    }),
    kustomizations: 'clusters/prod/*.yaml\napps/evil/ks.yaml',
    refusal: () => ({
      object: 'GitRepository flux-system/flux-system',
      files: ['clusters/prod/flux-system.yaml', 'apps/evil/gotk-sync.yaml'],
    }),
  },
  {
    id: '47-7c-include-of-the-doubly-defined-name',
    title:
      "the PR adds a GitRepository wrap (the base's own repository) whose spec.include names lib, which the PR defines again beside it at the listener",
    base: ({ ns, legitUrl }) => ({
      ...baseTree(ns),
      'clusters/prod/lib.yaml': `${gitRepo(ns, 'lib', legitUrl)}---\n${ks(ns, 'lib', './apps', ref('GitRepository', 'lib'))}`,
    }),
    head: ({ ns, L, legitUrl }) => ({
      'tenants/evil/sources.yaml':
        `${gitRepo(ns, 'lib', `http://${L.host}/org/lib.git`)}---\n` +
        gitRepo(ns, 'wrap', legitUrl, '  include:\n    - repository: {name: lib}\n      toPath: vendor/lib\n'),
      'tenants/evil/ks.yaml': ks(ns, 'wrap', './vendor/lib/apps', ref('GitRepository', 'wrap')),
    }),
    kustomizations: 'clusters/prod/*.yaml\ntenants/evil/ks.yaml',
    refusal: ({ ns }) => ({
      object: `GitRepository ${ns}/lib`,
      files: ['clusters/prod/lib.yaml', 'tenants/evil/sources.yaml'],
    }),
  },
  {
    id: '47-7d-second-ocirepository-other-namespace-ref',
    title:
      'the PR defines the base OCIRepository charts again (at the listener) in another directory, and a Kustomization of it in another namespace names it with sourceRef.namespace',
    base: ({ ns, L }) => ({
      ...baseTree(ns),
      // The base's registry is the listener too: only a request for the attacker's repository counts.
      'clusters/prod/charts.yaml': `${ociRepo(ns, 'charts', `oci://${L.host}/acme/charts`)}---\n${ks(ns, 'charts', './', ref('OCIRepository', 'charts'))}`,
    }),
    head: ({ ns, L }) => ({
      'platform/evil/charts.yaml': ociRepo(ns, 'charts', `oci://${L.host}/evil/charts`),
      'platform/evil/ks.yaml': ks(ns, 'evil', './', ref('OCIRepository', 'charts', ns)),
    }),
    kustomizations: 'clusters/prod/*.yaml\nplatform/evil/ks.yaml',
    refusal: ({ ns }) => ({
      object: `OCIRepository ${ns}/charts`,
      files: ['clusters/prod/charts.yaml', 'platform/evil/charts.yaml'],
    }),
  },
  {
    id: '47-7-control-identical-definitions',
    title: "control: the PR defines the base's GitRepository tenant again, identically, beside a new Kustomization",
    control: true,
    base: ({ ns, legitUrl }) => ({
      ...baseTree(ns),
      'clusters/prod/tenant.yaml': `${gitRepo(ns, 'tenant', legitUrl)}---\n${ks(ns, 'tenant', './apps', ref('GitRepository', 'tenant'))}`,
    }),
    head: ({ ns, legitUrl }) => ({
      'tenants/team/source.yaml': gitRepo(ns, 'tenant', legitUrl),
      'tenants/team/ks.yaml': ks(ns, 'team', './apps', ref('GitRepository', 'tenant')),
    }),
    kustomizations: 'clusters/prod/*.yaml\ntenants/team/*.yaml',
    planned: ({ ns }) => [`legit-${ns}`],
  },
];

describe.concurrent('one source per namespace/name (preview on a pull_request event, bundled action)', () => {
  const fixture = previewFixture();

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    const { client, github, kubeconfig, githubToken } = fixture;
    let run: HostileRun | undefined;
    let listener: Listener | undefined;
    const cleanups: (() => Promise<unknown>)[] = [];
    await attackCase(
      c,
      async (evidence, result) => {
        const ns = await freshNamespace(client, 'atk');
        cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
        listener = await startListener(`evil-${c.id}`);
        const legit = await bareRepository({ main: { 'apps/cm.yaml': cm(ns, `legit-${ns}`) } });
        const ctx: Ctx = { ns, L: listener, legitUrl: legit.url };
        run = await runHostile({
          client,
          github,
          number: 4770 + index,
          base: c.base(ctx),
          head: c.head(ctx),
          inputs: {
            kubeconfig,
            mode: 'preview',
            kustomizations: c.kustomizations,
            'github-token': githubToken,
            'allow-private-source-hosts': 'true',
          },
        });
        const shown = [run.stdout, run.summary, ...run.github].join('\n');
        const refusal = c.refusal?.(ctx);
        const asked = listener.records.filter((r) => !(refusal?.object.startsWith('OCI') && r.url.includes('/acme/')));
        Object.assign(result, {
          exitCode: run.code,
          requests: listener.records.map((r) => `${r.method} ${r.url}`),
          log: run.stdout.split('\n').slice(-60).join('\n'),
        });
        evidence.push(...evidenceOf({ run, canaries: [], listeners: [], namespace: ns }));
        if (run.timedOut === true) evidence.push('the run did not end by itself');
        if (refusal !== undefined) {
          evidence.push(
            ...asked.map((r) => `the attacker's definition was fetched: ${r.method} ${r.url.slice(0, 80)}`),
          );
          const line = shown
            .split('\n')
            .find(
              (l) =>
                l.includes(`${refusal.object} is defined differently`) && refusal.files.every((f) => l.includes(f)),
            );
          if (line === undefined) {
            evidence.push(`no refusal of ${refusal.object} naming ${refusal.files.join(' and ')}`);
          }
          // Whichever definition was had first, a Kustomization built from it took the other's source.
          const built = run.stdout.split('\n').filter((l) => l.includes(`] Built from ${refusal.object} `));
          evidence.push(
            ...built.map((l) => `a Kustomization was built from the doubly defined ${refusal.object}: ${l}`),
          );
        }
        for (const want of c.planned?.(ctx) ?? []) {
          if (!shown.includes(want)) evidence.push(`${want} was not planned: identical definitions must build`);
        }
        if (c.control && shown.includes('is defined differently')) {
          evidence.push('identical definitions were refused as different');
        }
      },
      async () => {
        if (run) await cleanupRun(run);
        await listener?.close();
        for (const f of cleanups.reverse()) await f().catch(() => undefined);
      },
    );
  });
});
