// `affected` end to end: a git repository with two commits, the files git says changed, and what
// each Kustomization's build reads (a base, a component, a patch file, a SOPS file, a plain
// directory), through planRun as the action and the CLI run it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReads, readsFile, type Reads } from '../../src/kustomize/reads.js';
import { planRun } from '../../src/plan/run.js';
import { planText } from '../../src/plan/render.js';
import { settingsOf } from '../../src/options/settings.js';
import { writeTree } from '../helpers/cluster.js';
import { commitAll, initRepository } from '../helpers/git-repos.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { createSopsToolkit, type SopsToolkit } from '../helpers/sops-fixtures.js';
import { heavyFile } from '../helpers/heavy.js';
import { KUSTOMIZE } from '../helpers/paths.js';

heavyFile();

const secret = `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: infra}
stringData: {password: hunter2}
`;

let kit: SopsToolkit;
let recipient: string;

beforeAll(() => {
  kit = createSopsToolkit();
  recipient = kit.ageKey().recipient;
});
afterAll(() => {
  kit.cleanup();
});

const ks = (name: string, path: string, deps: string[] = [], spec = '') =>
  kustomizationYaml({
    name,
    path,
    spec: [deps.length ? `dependsOn: [${deps.map((d) => `{name: ${d}}`).join(', ')}]` : '', spec].join('\n'),
  });

/** A repository of four Kustomizations on cluster prod (infra ← apps ← tests; other alone), committed once. */
async function repository(): Promise<{
  root: string;
  commit: (files: Record<string, string | null>) => string;
  first: string;
}> {
  const root = await writeTree({
    'clusters/prod/infra.yaml': ks('infra', './infra', [], 'decryption: {provider: sops}'),
    'clusters/prod/apps.yaml': ks('apps', './apps/prod', ['infra'], 'components: [../../components/extra]'),
    'clusters/prod/tests.yaml': ks('tests', './tests', ['apps']),
    'clusters/prod/other.yaml': ks('other', './other'),
    'infra/kustomization.yaml': 'resources: [ns.yaml, db.enc.yaml]\n',
    'infra/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: infra}\n',
    'infra/db.enc.yaml': kit.encrypt(secret, 'yaml', {
      age: [recipient],
      flags: ['--encrypted-regex', '^(data|stringData)$'],
    }),
    'apps/base/kustomization.yaml': 'resources: [deploy.yaml]\nconfigMapGenerator: [{name: env, envs: [app.env]}]\n',
    'apps/base/deploy.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deploy, namespace: default}\n',
    'apps/base/app.env': 'A=1\n',
    'apps/prod/kustomization.yaml': 'resources: [../base]\npatches: [{path: replicas.yaml}]\n',
    'apps/prod/replicas.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deploy, namespace: default}\ndata: {r: "2"}\n',
    'components/extra/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [extra.yaml]\n',
    'components/extra/extra.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: default}\n',
    'tests/kustomization.yaml': 'resources: [job.yaml]\n',
    'tests/job.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tests, namespace: default}\n',
    'other/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\n',
    'other/notes.txt': 'not read\n',
    'docs/README.md': '# docs\n',
  });
  const first = initRepository(root);
  const commit = (files: Record<string, string | null>) => {
    for (const [path, text] of Object.entries(files)) {
      if (text === null) rmSync(join(root, path));
      else {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
    }
    return commitAll(root, 'change');
  };
  return { root, commit, first };
}

/** The names of a plan's affected ids (`cluster.namespace.name-hash`), sorted. */
const affectedNames = (ids: readonly string[]) =>
  ids
    .map((id) =>
      id
        .replace(/-[0-9a-f]{8}$/, '')
        .split('.')
        .pop(),
    )
    .sort();

const settingsFor = (root: string) =>
  settingsOf({ kubeconfig: { kind: 'default' }, root, kustomizations: ['clusters/*/*.yaml'], mode: 'preview' });

describe('affected', () => {
  it.each<[string, Record<string, string | null>, string[]]>([
    [
      'a base',
      { 'apps/base/deploy.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deploy2, namespace: default}\n' },
      ['prod.flux-system.apps', 'prod.flux-system.tests'],
    ],
    [
      'an env file of a base generator',
      { 'apps/base/app.env': 'A=2\n' },
      ['prod.flux-system.apps', 'prod.flux-system.tests'],
    ],
    [
      'a component (spec.components)',
      {
        'components/extra/extra.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra2, namespace: default}\n',
      },
      ['prod.flux-system.apps', 'prod.flux-system.tests'],
    ],
    [
      'a patch file',
      {
        'apps/prod/replicas.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deploy, namespace: default}\ndata: {r: "3"}\n',
      },
      ['prod.flux-system.apps', 'prod.flux-system.tests'],
    ],
    [
      'a SOPS file',
      { 'infra/db.enc.yaml': '' },
      ['prod.flux-system.infra', 'prod.flux-system.apps', 'prod.flux-system.tests'],
    ],
    ['a file no Kustomization reads', { 'docs/README.md': '# more docs\n', 'other/notes.txt': 'still not read\n' }, []],
    [
      'a new YAML file in a plain directory',
      { 'other/new.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: default}\n' },
      ['prod.flux-system.other'],
    ],
    [
      'a Kustomization file',
      { 'clusters/prod/tests.yaml': ks('tests', './tests', ['apps'], 'wait: true') },
      ['prod.flux-system.tests'],
    ],
    [
      'a deleted Kustomization file: the cluster runs its first job (removals)',
      { 'clusters/prod/other.yaml': null },
      ['prod.flux-system.infra'],
    ],
  ])('%s', async (_, change, ids) => {
    const repo = await repository();
    try {
      // A SOPS file re-encrypted: new data key, new MAC, same plaintext.
      const files =
        change['infra/db.enc.yaml'] === ''
          ? { 'infra/db.enc.yaml': kit.encrypt(secret, 'yaml', { age: [recipient] }) }
          : change;
      const head = repo.commit(files);
      const plan = await planRun(settingsFor(repo.root), { base: repo.first, head }, () => undefined);
      expect(plan.affected.map((id) => id.replace(/-[0-9a-f]{8}$/, ''))).toEqual(ids);
      expect(plan.all).toHaveLength(Object.values(change).includes(null) ? 3 : 4);
      expect(plan.change?.files.length).toBeGreaterThan(0);
    } finally {
      await rm(repo.root, { recursive: true, force: true });
    }
  });

  it.each<[string, Record<string, string>, string[]]>([
    [
      "the parent's patches",
      { 'clusters/prod/apps.yaml': ks('cluster-apps', './apps', [], 'targetNamespace: default') },
      ['cluster-apps', 'a', 'b'],
    ],
    [
      "the parent's kustomization.yaml",
      { 'apps/kustomization.yaml': 'resources: [a/ks.yaml, b/ks.yaml]\ncommonLabels: {x: y}\n' },
      ['cluster-apps', 'a', 'b'],
    ],
    [
      "one child's file: that child (and the parent that applies it), not its sibling",
      { 'apps/b/ks.yaml': ks('b', './apps/b/app', [], 'wait: true') },
      ['cluster-apps', 'b'],
    ],
    [
      "one child's objects: that child only",
      { 'apps/a/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a2}\n' },
      ['a'],
    ],
  ])('a parent and its children: a change of %s', async (_, change, names) => {
    const root = await writeTree({
      'clusters/prod/apps.yaml': ks('cluster-apps', './apps'),
      'apps/kustomization.yaml': 'resources: [a/ks.yaml, b/ks.yaml]\n',
      'apps/a/ks.yaml': ks('a', './apps/a/app'),
      'apps/a/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n',
      'apps/b/ks.yaml': ks('b', './apps/b/app'),
      'apps/b/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
    });
    try {
      const first = initRepository(root);
      for (const [path, text] of Object.entries(change)) writeFileSync(join(root, path), text);
      const head = commitAll(root, 'change');
      const settings = settingsOf({
        kubeconfig: { kind: 'default' },
        root,
        kustomizations: ['clusters/*/*.yaml', 'apps/*/ks.yaml'],
        mode: 'preview',
        kustomizeBin: KUSTOMIZE,
      });
      const plan = await planRun(settings, { base: first, head }, () => undefined);
      expect(affectedNames(plan.affected)).toEqual([...names].sort());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  // Flux's cluster-template layout: the parent's path is a plain directory of namespace folders, each
  // with a kustomization.yaml listing its namespace and its apps' ks.yaml; an app's objects are below.
  const template = (): Record<string, string> => {
    const files: Record<string, string> = {
      'kubernetes/flux/cluster/ks.yaml': ks('cluster-apps', './kubernetes/apps'),
      'kubernetes/apps/README.yaml': '# notes kept beside the apps\n',
    };
    for (const [ns, apps] of [
      ['network', ['echo', 'ingress']],
      ['media', ['plex']],
    ] as const) {
      files[`kubernetes/apps/${ns}/kustomization.yaml`] =
        `resources: [./namespace.yaml, ${apps.map((a) => `./${a}/ks.yaml`).join(', ')}]\n`;
      files[`kubernetes/apps/${ns}/namespace.yaml`] = `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`;
      for (const app of apps) {
        files[`kubernetes/apps/${ns}/${app}/ks.yaml`] = ks(app, `./kubernetes/apps/${ns}/${app}/app`);
        files[`kubernetes/apps/${ns}/${app}/app/kustomization.yaml`] = 'resources: [./deploy.yaml]\n';
        files[`kubernetes/apps/${ns}/${app}/app/deploy.yaml`] =
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${app}}\ndata: {image: "${app}:1.0.0"}\n`;
        // Written beside the app and listed by nobody: no build reads it.
        files[`kubernetes/apps/${ns}/${app}/app/unused.yaml`] =
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n';
      }
    }
    return files;
  };

  it.each<[string, Record<string, string>, string[]]>([
    [
      "an image bump in one app's objects: that app only",
      {
        'kubernetes/apps/network/echo/app/deploy.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: echo}\ndata: {image: "echo:1.0.1"}\n',
      },
      ['echo'],
    ],
    ['a file beside an app that nobody lists: none', { 'kubernetes/apps/media/plex/app/unused.yaml': '# gone\n' }, []],
    [
      'a new file in a new folder below an app: none (its kustomization.yaml lists what it reads)',
      { 'kubernetes/apps/media/plex/app/extra/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n' },
      [],
    ],
    [
      "one app's ks.yaml: that app, and the parent that applies it",
      { 'kubernetes/apps/media/plex/ks.yaml': ks('plex', './kubernetes/apps/media/plex/app', [], 'wait: true') },
      ['cluster-apps', 'plex'],
    ],
    [
      "a namespace folder's label: the parent and the children whose objects it changes",
      {
        'kubernetes/apps/network/kustomization.yaml':
          'resources: [./namespace.yaml, ./echo/ks.yaml, ./ingress/ks.yaml]\ncommonLabels: {team: net}\n',
      },
      ['cluster-apps', 'echo', 'ingress'],
    ],
    [
      'a new app listed in its namespace folder: the parent and the new app, not its siblings',
      {
        'kubernetes/apps/media/kustomization.yaml': 'resources: [./namespace.yaml, ./plex/ks.yaml, ./sonarr/ks.yaml]\n',
        'kubernetes/apps/media/sonarr/ks.yaml': ks('sonarr', './kubernetes/apps/media/sonarr/app'),
        'kubernetes/apps/media/sonarr/app/kustomization.yaml': 'resources: [./deploy.yaml]\n',
        'kubernetes/apps/media/sonarr/app/deploy.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sonarr}\n',
      },
      ['cluster-apps', 'sonarr'],
    ],
    [
      "an app's ks.yaml dropped from its folder's list (its file kept): the parent only",
      { 'kubernetes/apps/network/kustomization.yaml': 'resources: [./namespace.yaml, ./echo/ks.yaml]\n' },
      ['cluster-apps'],
    ],
    [
      "the parent's patch (its own file): the parent and every child it patches",
      {
        'kubernetes/flux/cluster/ks.yaml': ks(
          'cluster-apps',
          './kubernetes/apps',
          [],
          'patches:\n    - target: {kind: Kustomization}\n      patch: |\n        - {op: add, path: /spec/wait, value: true}',
        ),
      },
      ['cluster-apps', 'echo', 'ingress', 'plex'],
    ],
    [
      'a YAML file in the plain directory itself: the parent, not the children whose objects stay the same',
      { 'kubernetes/apps/README.yaml': '# more notes\n' },
      ['cluster-apps'],
    ],
  ])('a plain parent directory of namespace folders (cluster-template): %s', async (_, change, names) => {
    const root = await writeTree(template());
    try {
      const first = initRepository(root);
      for (const [path, text] of Object.entries(change)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      const head = commitAll(root, 'change');
      const settings = settingsOf({
        kubeconfig: { kind: 'default' },
        root,
        kustomizations: ['kubernetes/flux/cluster/ks.yaml', 'kubernetes/apps/*/*/ks.yaml'],
        mode: 'preview',
        kustomizeBin: KUSTOMIZE,
      });
      const plan = await planRun(settings, { base: first, head }, () => undefined);
      expect(plan.all.length).toBeGreaterThanOrEqual(3);
      expect(affectedNames(plan.affected)).toEqual([...names].sort());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('without a usable base every Kustomization counts, saying why', async () => {
    const repo = await repository();
    try {
      const lines: string[] = [];
      const plan = await planRun(
        settingsFor(repo.root),
        { base: '0000000000000000000000000000000000000000', head: 'HEAD' },
        (l) => lines.push(l),
      );
      expect(plan.affected).toHaveLength(4);
      expect(plan.allBecause).toMatch(/is no commit \(a push that created the branch\)/);
      const unknown = await planRun(settingsFor(repo.root), { base: 'no-such-rev', head: 'HEAD' }, (l) =>
        lines.push(l),
      );
      expect(unknown.affected).toHaveLength(4);
      expect(unknown.allBecause).toMatch(/could not be read, so every Kustomization counts as affected/);
      // Said once, by the plan's text, not also by the log.
      expect(lines.join('\n')).not.toMatch(/counts as affected/);
      expect(planText(unknown).match(/counts as affected/g)).toHaveLength(1);
    } finally {
      await rm(repo.root, { recursive: true, force: true });
    }
  });
});

describe('buildReads', () => {
  it('lists the kustomization files, the entries they load and the plain directories', async () => {
    const root = await writeTree({
      'app/kustomization.yaml':
        'resources: [../base, svc.yaml, https://example.com/remote.yaml]\ncomponents: [../comp]\nsecretGenerator: [{name: s, files: [key=secret.txt], envs: [s.env]}]\nreplacements: [{path: repl.yaml}]\n',
      'base/deploy.yaml': 'kind: ConfigMap\n',
      'base/sub/kustomization.yaml': 'resources: [x.yaml]\n',
      'comp/kustomization.yaml': 'kind: Component\npatches: [{path: p.yaml}]\n',
    });
    try {
      const r = await buildReads(root, 'app', ['../extra']);
      expect([...r.files].sort()).toEqual([
        'app/kustomization.yaml',
        'app/repl.yaml',
        'app/s.env',
        'app/secret.txt',
        'app/svc.yaml',
        'base/sub/kustomization.yaml',
        'base/sub/x.yaml',
        'comp/kustomization.yaml',
        'comp/p.yaml',
      ]);
      // A directory without a kustomization file is built over its YAML, as is a missing component directory.
      expect([...r.yamlDirs].sort()).toEqual(['base', 'extra']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  const reads: Reads = {
    files: new Set(['apps/kustomization.yaml', 'apps/net/kustomization.yaml', 'apps/net/echo/ks.yaml', 'apps/missing']),
    yamlDirs: new Set(['apps', 'apps/plain', 'apps/plain/deeper']),
    dirs: new Set(['apps', 'apps/net', 'apps/plain', 'apps/plain/deeper']),
  };
  it.each<[string, boolean]>([
    ['apps/net/echo/ks.yaml', true],
    ['apps/net/kustomization.yaml', true],
    ['apps/net/echo/app/deploy.yaml', false],
    ['apps/net/new.yaml', false],
    ['apps/top.yaml', true],
    ['apps/top.txt', false],
    ['apps/plain/x.yml', true],
    ['apps/plain/deeper/y.yaml', true],
    ['apps/plain/new-dir/z.yaml', true],
    ['apps/missing/kustomization.yaml', true],
    ['other/x.yaml', false],
  ])('readsFile: %s → %s', (file, expected) => {
    expect(readsFile(reads, file)).toBe(expected);
  });

  it('refuses a kustomization file it cannot read, naming it', async () => {
    const root = await writeTree({ 'app/kustomization.yaml': 'resources: [a\n' });
    await writeFile(join(root, 'x'), '');
    try {
      await expect(buildReads(root, 'app')).rejects.toThrow(/app\/kustomization\.yaml/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
