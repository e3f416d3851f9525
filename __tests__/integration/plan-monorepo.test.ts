// Issue 50, item 1: `mode: plan` (and the CLI's `plan --base`) on a monorepo in the cluster-template /
// home-ops layout fans a pull request out only where it lands. cluster-apps (kubernetes/flux/cluster/
// ks.yaml) builds ./kubernetes/apps, a plain directory of namespace folders, and patches every child
// Kustomization; each namespace folder's kustomization.yaml sets the namespace and lists its apps'
// ks.yaml; each app's objects are in its app/ folder. A file affects a Kustomization only when its build
// reads it (or, for a child, its parent's build reads it), and dependents follow.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAction } from '../helpers/action.js';
import { runNode, writeTree } from '../helpers/cluster.js';
import { commitAll, initRepository } from '../helpers/git-repos.js';
import { KUSTOMIZE } from '../helpers/paths.js';

const KUSTOMIZATIONS = ['kubernetes/flux/cluster/ks.yaml', 'kubernetes/apps/*/*/ks.yaml'];

/** The CLI's `plan --base BASE --head HEAD` of the repository at `root`, as JSON, with the pinned kustomize. */
const planCli = (root: string, base: string, head: string) =>
  runNode(
    'dist/cli.js',
    [
      'plan',
      '--kustomizations',
      KUSTOMIZATIONS.join(','),
      '--base',
      base,
      '--head',
      head,
      '--output',
      'json',
      '--kustomize-path',
      KUSTOMIZE,
    ],
    { cwd: root },
  );

/** cluster-apps, patching every child Kustomization as cluster-template does. */
const parent = (patch: string) => `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cluster-apps
  namespace: flux-system
spec:
  interval: 1h
  path: ./kubernetes/apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  decryption:
    provider: sops
    secretRef:
      name: sops-age
  postBuild:
    substituteFrom:
      - name: cluster-settings
        kind: ConfigMap
  patches:
    - # Add the SOPS decryption and the cluster settings to every child Kustomization
      patch: |-
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: _
        spec:
          deletionPolicy: ${patch}
          decryption:
            provider: sops
            secretRef:
              name: sops-age
          postBuild:
            substituteFrom:
              - name: cluster-settings
                kind: ConfigMap
      target:
        group: kustomize.toolkit.fluxcd.io
        kind: Kustomization
`;

interface App {
  ns: string;
  name: string;
  /** HelmRelease (helmrelease.yaml) or Deployment (deployment.yaml). */
  kind: 'helm' | 'deploy';
  dependsOn?: { name: string; namespace: string }[];
  /** A configMapGenerator reading config/settings.toml. */
  generator?: boolean;
}

const APPS: App[] = [
  { ns: 'database', name: 'cloudnative-pg', kind: 'helm' },
  {
    ns: 'database',
    name: 'postgres',
    kind: 'helm',
    dependsOn: [{ name: 'cloudnative-pg', namespace: 'database' }],
  },
  { ns: 'database', name: 'dragonfly', kind: 'helm' },
  { ns: 'default', name: 'echo', kind: 'deploy' },
  {
    ns: 'default',
    name: 'atuin',
    kind: 'deploy',
    generator: true,
    dependsOn: [{ name: 'postgres', namespace: 'database' }],
  },
  {
    ns: 'default',
    name: 'paperless',
    kind: 'helm',
    dependsOn: [
      { name: 'postgres', namespace: 'database' },
      { name: 'dragonfly', namespace: 'database' },
    ],
  },
  { ns: 'media', name: 'plex', kind: 'helm' },
  { ns: 'media', name: 'sonarr', kind: 'deploy' },
  { ns: 'media', name: 'radarr', kind: 'deploy' },
  { ns: 'media', name: 'bazarr', kind: 'deploy', dependsOn: [{ name: 'sonarr', namespace: 'media' }] },
];

const ks = (app: App) => `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app ${app.name}
  namespace: &namespace ${app.ns}
spec:
  commonMetadata:
    labels:
      app.kubernetes.io/name: *app
${
  app.dependsOn
    ? `  dependsOn:\n${app.dependsOn.map((d) => `    - name: ${d.name}\n      namespace: ${d.namespace}\n`).join('')}`
    : ''
}  interval: 1h
  path: ./kubernetes/apps/${app.ns}/${app.name}/app
  prune: true
  retryInterval: 2m
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  targetNamespace: *namespace
  timeout: 5m
  wait: false
`;

const helmRelease = (name: string, tag: string) => `---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ${name}
spec:
  interval: 1h
  chartRef:
    kind: OCIRepository
    name: app-template
  values:
    controllers:
      ${name}:
        containers:
          app:
            image:
              repository: ghcr.io/home-operations/${name}
              tag: ${tag}
`;

const deployment = (name: string, tag: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
        - name: app
          image: ghcr.io/home-operations/${name}:${tag}
`;

const objectsFile = (app: App) => (app.kind === 'helm' ? 'helmrelease.yaml' : 'deployment.yaml');
const objects = (app: App, tag: string) => (app.kind === 'helm' ? helmRelease : deployment)(app.name, tag);

const namespaceKustomization = (ns: string, apps: readonly App[]) => `---
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${ns}
components:
  - ../../components/common
resources:
  - ./namespace.yaml
${apps.map((a) => `  - ./${a.name}/ks.yaml\n`).join('')}`;

function repository(apps: readonly App[] = APPS): Record<string, string> {
  const files: Record<string, string> = {
    'README.md': '# home-ops\n',
    'kubernetes/flux/cluster/ks.yaml': parent('WaitForTermination'),
    'kubernetes/components/common/kustomization.yaml':
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [./sops-age.yaml]\n',
    'kubernetes/components/common/sops-age.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sops-age-stand-in}\ndata: {key: none}\n',
  };
  for (const ns of [...new Set(apps.map((a) => a.ns))]) {
    const mine = apps.filter((a) => a.ns === ns);
    files[`kubernetes/apps/${ns}/kustomization.yaml`] = namespaceKustomization(ns, mine);
    files[`kubernetes/apps/${ns}/namespace.yaml`] = `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`;
    for (const app of mine) {
      const dir = `kubernetes/apps/${ns}/${app.name}`;
      files[`${dir}/ks.yaml`] = ks(app);
      files[`${dir}/app/${objectsFile(app)}`] = objects(app, '1.0.0');
      files[`${dir}/app/kustomization.yaml`] =
        `---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ./${objectsFile(app)}\n` +
        (app.generator
          ? `configMapGenerator:\n  - name: ${app.name}-configmap\n    files:\n      - settings.toml=./config/settings.toml\ngeneratorOptions:\n  disableNameSuffixHash: true\n`
          : '');
      if (app.generator) files[`${dir}/app/config/settings.toml`] = 'sync_address = "https://atuin.example.org"\n';
      files[`${dir}/README.md`] = `# ${app.name}\n`;
    }
  }
  return files;
}

const app = (name: string) => APPS.find((a) => a.name === name)!;
const appFile = (name: string) => `kubernetes/apps/${app(name).ns}/${name}/app/${objectsFile(app(name))}`;
const every = ['flux-system/cluster-apps', ...APPS.map((a) => `${a.ns}/${a.name}`)];

interface Case {
  name: string;
  /** Files written (path → text) or deleted (null) by the pull request. */
  change: () => Record<string, string | null>;
  /** The matrix: `namespace/name` of each entry. */
  matrix: string[];
}

const prowlarr: App = {
  ns: 'media',
  name: 'prowlarr',
  kind: 'deploy',
  dependsOn: [{ name: 'sonarr', namespace: 'media' }],
};

const CASES: Case[] = [
  {
    name: "an image bump in one app's helmrelease.yaml: that app and its dependents, in every namespace",
    change: () => ({ [appFile('postgres')]: objects(app('postgres'), '1.0.1') }),
    matrix: ['database/postgres', 'default/atuin', 'default/paperless'],
  },
  {
    name: "an image bump in one app's deployment.yaml, which nothing depends on: that app only",
    change: () => ({ [appFile('echo')]: objects(app('echo'), '1.0.1') }),
    matrix: ['default/echo'],
  },
  {
    name: "the file an app's configMapGenerator reads: that app only",
    change: () => ({
      'kubernetes/apps/default/atuin/app/config/settings.toml': 'sync_address = "https://x.example"\n',
    }),
    matrix: ['default/atuin'],
  },
  {
    name: "the parent's patch: the parent and every child it patches",
    change: () => ({ 'kubernetes/flux/cluster/ks.yaml': parent('Delete') }),
    matrix: every,
  },
  {
    // The parent's build gains one Kustomization object; every other child's object is the same as on
    // the base, so under Flux no other child changes.
    name: 'a new app listed in its namespace kustomization.yaml: the parent (whose build reads that file) and the new app',
    change: () => {
      const files = repository([...APPS, prowlarr]);
      const dir = 'kubernetes/apps/media/prowlarr';
      return Object.fromEntries(
        Object.entries(files).filter(
          ([p]) => p.startsWith(`${dir}/`) || p === 'kubernetes/apps/media/kustomization.yaml',
        ),
      );
    },
    matrix: ['flux-system/cluster-apps', 'media/prowlarr'],
  },
  {
    name: 'README.md files: nothing',
    change: () => ({ 'README.md': '# home-ops\n\nMore words.\n', 'kubernetes/apps/media/plex/README.md': '# plex!\n' }),
    matrix: [],
  },
];

/** A repository of its own: the base commit, then the pull request's head commit. */
async function pullRequest(
  change: Record<string, string | null>,
): Promise<{ root: string; base: string; head: string }> {
  const root = await writeTree(repository());
  const base = initRepository(root);
  for (const [path, text] of Object.entries(change)) {
    if (text === null) await rm(join(root, path));
    else {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  }
  return { root, base, head: commitAll(root, 'pull request') };
}

type Entry = Record<string, unknown>;
const kustomizationsOf = (include: Entry[]) => include.map((e) => String(e['kustomization'])).sort();

describe('plan on a monorepo in the parent/children layout', () => {
  it.each(CASES)('mode: plan on a pull request, $name', async ({ change, matrix }) => {
    const { root, base, head } = await pullRequest(change());
    try {
      const r = await runAction(
        root,
        { mode: 'plan', kustomizations: KUSTOMIZATIONS.join('\n') },
        {
          event: { name: 'pull_request', payload: { pull_request: { base: { sha: base }, head: { sha: head } } } },
          env: { GITHUB_SHA: head },
        },
      );
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const got = JSON.parse(r.outputs['matrix']!) as { include: Entry[] };
      expect(
        kustomizationsOf(got.include),
        JSON.stringify(got.include.map((e) => [e['kustomization'], e['reason']])),
      ).toEqual([...matrix].sort());
      expect(r.outputs['count']).toBe(String(matrix.length));
      // Each entry says why it runs.
      for (const e of got.include) expect(e['reason']).toEqual(expect.any(String));
      const total = APPS.length + 1 + (matrix.includes('media/prowlarr') ? 1 : 0);
      expect(r.summary).toContain(`plan — ${matrix.length} of ${total} Kustomizations affected`);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it.each(CASES)('the CLI plan --base, $name', async ({ change, matrix }) => {
    const { root, base, head } = await pullRequest(change());
    try {
      const r = await planCli(root, base, head);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const got = JSON.parse(r.stdout) as { matrix: { include: Entry[] }; all: string[]; change: { files: string[] } };
      expect(kustomizationsOf(got.matrix.include)).toEqual([...matrix].sort());
      expect(got.all).toHaveLength(APPS.length + 1 + (matrix.includes('media/prowlarr') ? 1 : 0));
      expect(got.change.files.length).toBeGreaterThan(0);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('dependents follow in dependsOn order, naming the dependency they follow', async () => {
    const { root, base, head } = await pullRequest({ [appFile('sonarr')]: objects(app('sonarr'), '4.0.1') });
    try {
      const r = await planCli(root, base, head);
      expect(r.code, r.stderr).toBe(0);
      const got = JSON.parse(r.stdout) as { matrix: { include: Entry[] } };
      expect(got.matrix.include.map((e) => [e['kustomization'], e['level'], e['reason'], e['unchanged']])).toEqual([
        ['media/sonarr', 0, `reads ${appFile('sonarr')}, which changed`, ''],
        ['media/bazarr', 1, 'depends on media/sonarr', ''],
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
