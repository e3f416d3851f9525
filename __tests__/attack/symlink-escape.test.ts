// Files stay inside their root, through symlinks too (issue 47, class 1). A pull request commits
// symlinks (`l -> /`, `r -> ../../../..`, chains, a link to the workspace's `.git/config` where
// actions/checkout keeps the job's token) and names paths through them in every field the run reads:
// a GitRepository's include (fromPath, toPath), ArtifactGenerator copies, kustomize's entries, a
// kustomization file, spec.path, `.sourceignore`. Each case plants a canary file outside the workspace
// and a fake token in the workspace's `.git/config` (as checkout writes it), runs the bundled action in
// preview on a pull_request event, and looks for them in every output (log, summary, outputs, PR
// comment, check run, objects written) and for files written outside. The control proves that links
// inside the root, to places inside it, still build.
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'vitest';
import { freshNamespace } from '../helpers/cluster.js';
import { baseTree, cm, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  runHostile,
  type Canary,
  type Files,
  previewFixture,
  type HostileRun,
} from '../helpers/hostile.js';

interface Ctx {
  ns: string;
  /** The runner's directory outside the workspace, which the links point at. */
  outside: string;
  /** The canary in the files there. */
  file: Canary;
  /** The token in the workspace's `.git/config`. */
  token: Canary;
}

interface SymlinkCase {
  id: string;
  title: string;
  control?: boolean;
  head: (ctx: Ctx) => Files;
  /** Links made once the workspace exists (their targets name it, as an attacker knows the runner's path). */
  links?: (ctx: Ctx) => Record<string, string>;
  /** How many times the run must say a path leaves the source root (a refusal per route). */
  refusals: number;
  judge?: (run: HostileRun, ctx: Ctx) => string[];
}

/** Up far enough from any scratch directory to reach `/` (extra `..` at `/` stay there). */
const UP = '../'.repeat(16).slice(0, -1);

const gitRepository = (name: string, include = '') =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: flux-system}
spec:
  interval: 1m
  url: https://github.com/org/repo
  ref: {branch: main}
${include}`;

/** The checkout's GitRepository with `include` entries (each `{repository: {name: mirror}, …}`), and mirror: this repository again. */
const withInclude = (...entries: string[]) =>
  gitRepository('flux-system', `  include:\n${entries.map((e) => `    - ${e}\n`).join('')}`) +
  '---\n' +
  gitRepository('mirror');

const generator = (ns: string, artifacts: Record<string, string[]>) =>
  `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: gen, namespace: ${ns}}
spec:
  sources:
    - {alias: repo, kind: GitRepository, name: flux-system, namespace: flux-system}
  artifacts:
${Object.entries(artifacts)
  .map(([name, copy]) => `    - name: ${name}\n      copy:\n${copy.map((c) => `        - ${c}\n`).join('')}`)
  .join('')}`;

/** A kustomization generating ConfigMap `name` from `files` (and reading `resources`). */
const generating = (ns: string, name: string, files: string[], resources: string[] = []) =>
  `namespace: ${ns}\nresources: ${JSON.stringify(resources)}\nconfigMapGenerator:\n  - name: ${name}\n    files: ${JSON.stringify(files)}\ngeneratorOptions: {disableNameSuffixHash: true}\n`;

const CASES: SymlinkCase[] = [
  {
    id: '47-1a-include-frompath-through-root-link',
    title:
      'spec.include fromPath through a committed `l -> /` names a directory of the runner; a Kustomization reads what the include copied',
    head: ({ ns, outside }) => ({
      'clusters/prod/flux-system.yaml': withInclude(
        `{repository: {name: mirror}, fromPath: "l${outside}", toPath: vendor/a}`,
      ),
      l: { symlink: '/' },
      'clusters/prod/leak.yaml': ks(ns, 'leak', './apps/leak'),
      'apps/leak/kustomization.yaml': generating(
        ns,
        'victim-gen',
        ['../../vendor/a/secret.txt'],
        ['../../vendor/a/cm.yaml'],
      ),
    }),
    refusals: 1,
  },
  {
    id: '47-1b-include-frompath-to-checkout-git-config',
    title:
      "spec.include fromPath through a link to the workspace's .git (absolute, as the runner's path is known) copies .git/config, where checkout keeps the token, for a configMapGenerator",
    head: ({ ns }) => ({
      'clusters/prod/flux-system.yaml': withInclude(
        '{repository: {name: mirror}, fromPath: g/config, toPath: vendor/g}',
        '{repository: {name: mirror}, fromPath: r/config, toPath: vendor/r}',
      ),
      'clusters/prod/leak.yaml': ks(ns, 'leak', './apps/leak'),
      'apps/leak/kustomization.yaml': generating(ns, 'victim-gen', ['../../vendor/g', '../../vendor/r']),
    }),
    links: () => ({ g: '@WS/.git', r: `${UP}@WS/.git` }),
    refusals: 1,
  },
  {
    id: '47-1c-include-topath-writes-outside',
    title:
      'spec.include toPath through a committed link out of the tree (absolute, and climbing with ../): the copy would write into the runner',
    head: ({ ns, outside }) => ({
      'clusters/prod/flux-system.yaml': withInclude(
        '{repository: {name: mirror}, fromPath: payload, toPath: out/written-abs}',
        '{repository: {name: mirror}, fromPath: payload, toPath: up/written-rel}',
      ),
      out: { symlink: outside },
      up: { symlink: `${UP}${outside}` },
      'payload/cm.yaml': cm(ns, 'payload'),
      'clusters/prod/app2.yaml': ks(ns, 'app2', './payload'),
    }),
    refusals: 1,
    judge: (_run, { outside }) =>
      ['written-abs', 'written-rel'].flatMap((d) =>
        existsSync(join(outside, d))
          ? [`the include wrote ${join(outside, d)}: ${readdirSync(join(outside, d)).join(', ')}`]
          : [],
      ),
  },
  {
    id: '47-1d-artifactgenerator-through-symlinked-directory',
    title:
      'ArtifactGenerator copies through a committed `d -> <runner dir>`: a glob over its contents, a literal file below it, a glob matching it as a directory, a Merge',
    head: ({ ns, outside }) => ({
      d: { symlink: outside },
      'own/cm.yaml': cm(ns, 'own'),
      'clusters/prod/gen.yaml':
        generator(ns, {
          glob: ["{from: '@repo/d/**', to: '@artifact/x/'}"],
          literal: ["{from: '@repo/d/cm.yaml', to: '@artifact/cm.yaml'}"],
          star: ["{from: '@repo/*', to: '@artifact/all/'}"],
          merge: [
            "{from: '@repo/own/cm.yaml', to: '@artifact/cm.yaml'}",
            "{from: '@repo/d/cm.yaml', to: '@artifact/cm.yaml', strategy: Merge}",
          ],
        }) +
        ['glob', 'literal', 'star', 'merge']
          .map((a) => `---\n${ks(ns, `made-${a}`, './', `{kind: ExternalArtifact, name: ${a}}`)}`)
          .join(''),
    }),
    refusals: 3,
  },
  {
    id: '47-1e-kustomize-entries-behind-symlink-chains',
    title:
      "kustomize's entries through links: a resource behind a chain of three links, a patch in a linked directory, a generator file linked to .git/config, an env file behind a climbing link, a component directory linked out, openapi.path linked out",
    head: ({ ns, outside }) => ({
      'clusters/prod/k.yaml': ['res', 'patch', 'gen', 'env', 'comp', 'openapi']
        .map((n) => ks(ns, `k-${n}`, `./apps/${n}`))
        .join('---\n'),
      'apps/res/kustomization.yaml': `namespace: ${ns}\nresources: [a/cm.yaml]\n`,
      'apps/res/a': { symlink: 'b' },
      'apps/res/b': { symlink: '../c' },
      'apps/c': { symlink: outside },
      'apps/patch/kustomization.yaml': `namespace: ${ns}\nresources: [own.yaml]\npatches: [{path: p/cm.yaml}]\n`,
      'apps/patch/own.yaml': cm(ns, 'own-patch'),
      'apps/patch/p': { symlink: outside },
      'apps/gen/kustomization.yaml': generating(ns, 'victim-gen', ['token=cfg']),
      'apps/env/kustomization.yaml': `namespace: ${ns}\nsecretGenerator: [{name: leak, envs: [e/secret.env]}]\n`,
      'apps/env/e': { symlink: `${UP}${outside}` },
      'apps/comp/kustomization.yaml': `namespace: ${ns}\nresources: [own.yaml]\ncomponents: [c]\n`,
      'apps/comp/own.yaml': cm(ns, 'own'),
      'apps/comp/c': { symlink: join(outside, 'component') },
      'apps/openapi/kustomization.yaml': `namespace: ${ns}\nresources: [own.yaml]\nopenapi: {path: schema.json}\n`,
      'apps/openapi/own.yaml': cm(ns, 'own2'),
      'apps/openapi/schema.json': { symlink: join(outside, 'schema.json') },
    }),
    links: () => ({ 'apps/gen/cfg': '@WS/.git/config' }),
    refusals: 6,
  },
  {
    id: '47-1f-spec-path-through-links',
    title:
      'spec.path through a committed `l -> /`, through a climbing relative link, and `deep/..` where deep is a link out (lexically inside, outside for the kernel)',
    head: ({ ns, outside }) => ({
      'clusters/prod/p.yaml': [
        ks(ns, 'p-root', `./l${outside}`),
        ks(ns, 'p-rel', `./r${outside}`),
        ks(ns, 'p-dotdot', './deep/..'),
      ].join('---\n'),
      l: { symlink: '/' },
      r: { symlink: UP },
      deep: { symlink: join(outside, 'sub') },
    }),
    // `deep/..` is cleaned to the root before anything reads it (as Flux cleans spec.path): built, not refused.
    refusals: 2,
  },
  {
    id: '47-1g-kustomization-file-plain-file-and-sourceignore-links',
    title:
      'a kustomization.yaml that is a link out, a plain directory whose manifest is a link out, a .sourceignore linked to .git/config, a resource `deep/../cm.yaml` whose deep is a link out',
    head: ({ ns, outside }) => ({
      'clusters/prod/g.yaml': ['kfile', 'plain', 'dotdot', 'sops']
        .map((n) => ks(ns, `g-${n}`, `./apps/${n}`))
        .join('---\n'),
      'apps/kfile/kustomization.yaml': { symlink: join(outside, 'kustomization.yaml') },
      'apps/plain/cm.yaml': { symlink: join(outside, 'cm.yaml') },
      'apps/dotdot/kustomization.yaml': `namespace: ${ns}\nresources: [deep/../cm.yaml]\n`,
      'apps/dotdot/deep': { symlink: join(outside, 'sub') },
      // A SOPS file (decrypted in place when the Kustomization decrypts) that is a link out.
      'apps/sops/kustomization.yaml': `namespace: ${ns}\nsecretGenerator: [{name: s, files: [s.enc.yaml]}]\n`,
      'apps/sops/s.enc.yaml': { symlink: join(outside, 'secret.env') },
    }),
    links: () => ({ '.sourceignore': '@WS/.git/config' }),
    // The plain directory's link is left out of its generated kustomization (only regular files are listed).
    refusals: 3,
  },
  {
    id: '47-1h-kustomization-file-matched-through-a-link',
    title:
      'a file the kustomizations input matches (clusters/prod/*.yaml) is a link to a Kustomization file of the runner, and another climbs to it',
    head: ({ outside }) => ({
      'clusters/prod/evil.yaml': { symlink: join(outside, 'ks.yaml') },
      'clusters/prod/evil-rel.yaml': { symlink: `${UP}${join(outside, 'ks.yaml')}` },
    }),
    refusals: 1,
  },
  {
    id: '47-1z-symlinks-inside-the-root-control',
    title:
      'control: links inside the root to places inside it (a manifest, a base directory, a generator file, spec.path, an include fromPath) still build',
    control: true,
    head: ({ ns }) => ({
      'clusters/prod/flux-system.yaml': withInclude(
        '{repository: {name: mirror}, fromPath: linked-inc, toPath: vendor/s}',
      ),
      'clusters/prod/ok.yaml': [ks(ns, 'ok', './apps/ok'), ks(ns, 'ok-path', './ok-link')].join('---\n'),
      'shared/cm.yaml': cm(ns, `linked-${ns}`),
      'shared/data.txt': 'inside',
      'shared/base/kustomization.yaml': 'resources: [cm.yaml]\n',
      'shared/base/cm.yaml': cm(ns, `based-${ns}`),
      'inc-src/cm.yaml': cm(ns, `included-${ns}`),
      'linked-inc': { symlink: 'inc-src' },
      'ok-link': { symlink: 'apps/ok-plain' },
      'apps/ok-plain/cm.yaml': cm(ns, `plain-${ns}`),
      'apps/ok/kustomization.yaml': `namespace: ${ns}\nresources: [cm.yaml, base, ../../vendor/s/cm.yaml]\nconfigMapGenerator: [{name: gen-${ns}, files: [data.txt]}]\n`,
      'apps/ok/cm.yaml': { symlink: '../../shared/cm.yaml' },
      'apps/ok/base': { symlink: '../../shared/base' },
      'apps/ok/data.txt': { symlink: '../../shared/data.txt' },
    }),
    refusals: 0,
    judge: (run, { ns }) => {
      const shown = [run.stdout, run.summary, ...run.github].join('\n');
      return [`linked-${ns}`, `based-${ns}`, `plain-${ns}`, `gen-${ns}`, `included-${ns}`]
        .flatMap((name) =>
          shown.includes(name) ? [] : [`the preview does not show ${name}, built through a link inside the root`],
        )
        .concat(run.code === 0 ? [] : [`the run failed (exit ${run.code})`]);
    },
  },
];

/** The runner's files the links point at: a manifest, a secret, a kustomization, a component, all carrying the canary. */
function plantOutside(ctx: Ctx): void {
  const { outside, ns, file } = ctx;
  const put = (rel: string, text: string) => {
    mkdirSync(dirname(join(outside, rel)), { recursive: true });
    writeFileSync(join(outside, rel), text);
  };
  // Named as objects the cluster holds: a change shows its values in the preview's diff.
  const stolen = cm(ns, 'victim', `token: ${file.value}`);
  put('cm.yaml', stolen);
  put('sub/cm.yaml', stolen);
  put('secret.txt', file.value);
  put('secret.env', `TOKEN=${file.value}\n`);
  put('ks.yaml', ks(ns, 'outside', './', undefined, `  postBuild: {substitute: {token: ${file.value}}}\n`));
  put('schema.json', JSON.stringify({ definitions: { x: { description: file.value } } }));
  put(
    'kustomization.yaml',
    `namespace: ${ns}\nconfigMapGenerator: [{name: victim-gen, literals: [token=${file.value}]}]\ngeneratorOptions: {disableNameSuffixHash: true}\n`,
  );
  put(
    'component/kustomization.yaml',
    `apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [../cm.yaml]\n`,
  );
  put('sub/kustomization.yaml', `namespace: ${ns}\nresources: [cm.yaml]\n`);
}

/** What actions/checkout leaves in `.git/config` with persist-credentials (its default). */
const extraheader = (token: string) =>
  `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}\n`;

describe.concurrent('symlinks out of the root (preview on a pull_request event, bundled action)', () => {
  const fixture = previewFixture();

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    const { client, github, kubeconfig, githubToken } = fixture;
    let run: HostileRun | undefined;
    let outside: string | undefined;
    const cleanups: (() => Promise<unknown>)[] = [];
    await attackCase(
      c,
      async (evidence, result) => {
        const ns = await freshNamespace(client, 'atk');
        cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
        outside = join(tmpdir(), `kr-symlink-outside-${ns}`);
        const ctx: Ctx = {
          ns,
          outside,
          file: { where: `the runner's file ${outside}`, value: `krfile${randomBytes(12).toString('hex')}` },
          token: { where: "the token in the workspace's .git/config", value: `ghs_${randomBytes(18).toString('hex')}` },
        };
        plantOutside(ctx);
        // The objects the stolen files would change, so that the preview's diff shows their values.
        for (const name of ['victim', 'victim-gen']) {
          const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { a: 'b' } };
          await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body });
        }
        run = await runHostile({
          client,
          github,
          number: 4700 + index,
          base: baseTree(ns),
          head: c.head(ctx),
          inputs: {
            kubeconfig,
            mode: 'preview',
            kustomizations: 'clusters/prod/*.yaml',
            'github-token': githubToken,
          },
          workspaceReady: (ws) => {
            appendFileSync(join(ws, '.git', 'config'), extraheader(ctx.token.value));
            for (const [rel, target] of Object.entries(c.links?.(ctx) ?? {})) {
              mkdirSync(dirname(join(ws, rel)), { recursive: true });
              symlinkSync(target.replace('@WS', ws), join(ws, rel));
            }
            return Promise.resolve();
          },
        });
        const shown = [run.stdout, run.summary, ...run.github].join('\n');
        const refused = shown.match(/leaves the source root/g)?.length ?? 0;
        Object.assign(result, {
          exitCode: run.code,
          refusals: refused,
          log: run.stdout.split('\n').slice(-60).join('\n'),
        });
        evidence.push(
          ...evidenceOf({ run, canaries: [ctx.file, ctx.token], listeners: [], namespace: ns }),
          ...(shown.includes(`ConfigMap/${ns}/victim`)
            ? [`a ConfigMap only the runner's files define (victim, victim-gen) was planned`]
            : []),
          ...(refused >= c.refusals
            ? []
            : [`expected ${c.refusals} refusal(s) naming "leaves the source root", saw ${refused}`]),
          ...(c.judge?.(run, ctx) ?? []),
        );
      },
      async () => {
        if (run) await cleanupRun(run);
        if (outside) rmSync(outside, { recursive: true, force: true });
        for (const f of cleanups.reverse()) await f().catch(() => undefined);
      },
    );
  });
});
