// The repo80 shape of bench/run.ts: the parent/children layout public Flux repositories use (the
// onedr0p/cluster-template layout). A parent Kustomization (clusters/prod/apps.yaml) whose spec.path is
// the plain directory apps/ (no kustomization.yaml: Flux generates one, which lists each namespace's
// directory), a kustomization.yaml per namespace (apps/<ns>/kustomization.yaml: ./namespace.yaml and
// each ./<app>/ks.yaml), and per app its Flux Kustomization (apps/<ns>/<app>/ks.yaml) and what it
// builds (apps/<ns>/<app>/app/: the app's base of real.ts, its own generators, and the shared
// component components/monitoring). The parent patches prune and interval into every child. Also the
// three changes bench/plan.ts commits for `plan --base` (an app's image, the parent's patch, the
// shared component) with how many Kustomizations each should affect.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { appBase, components, IMAGE, KUSTOMIZATION, OBJECTS_PER_APP, writeFiles } from './real.ts';
import type { Tree } from './tree.ts';

/** Kustomizations of repo80 (children of one parent), in REPO80_NAMESPACES.length namespaces of equal size. */
export const REPO80_CHILDREN = 80;
/** The namespaces' directories under apps/ (each Namespace is named `<prefix>-<dir>`). */
export const REPO80_NAMESPACES = [
  'default',
  'network',
  'monitoring',
  'database',
  'media',
  'security',
  'tools',
  'home',
] as const;
const PER_CHILD = OBJECTS_PER_APP + 2;
/** The Kustomization files, as the benchmark passes them to --kustomizations. */
export const REPO80_KUSTOMIZATIONS = 'clusters/prod/*.yaml,apps/*/*/ks.yaml';
const PARENT_FILE = 'clusters/prod/apps.yaml';
const COMPONENT = 'components/monitoring';

export interface Repo80App {
  /** appNN, the i-th app. */
  app: string;
  /** Its namespace's directory under apps/. */
  ns: string;
  /** apps/<ns>/<app>: its ks.yaml, and app/ (what it builds). */
  dir: string;
  /** The apps it depends on (indices). */
  dependsOn: number[];
}

/**
 * The 80 apps: REPO80_CHILDREN / 8 a namespace, in order; in dependsOn levels of bench/fanout/repo.ts's
 * graph (⌈√80⌉ columns: column j depends on column j of the level above, odd columns on j + 1 too).
 */
export function repo80Apps(): Repo80App[] {
  const width = Math.ceil(Math.sqrt(REPO80_CHILDREN));
  const perNs = Math.ceil(REPO80_CHILDREN / REPO80_NAMESPACES.length);
  return Array.from({ length: REPO80_CHILDREN }, (_, i) => {
    const app = `app${String(i).padStart(2, '0')}`;
    const ns = REPO80_NAMESPACES[Math.floor(i / perNs)]!;
    const [level, j] = [Math.floor(i / width), i % width];
    const above = (c: number) => (level - 1) * width + c;
    const dependsOn = level === 0 ? [] : [above(j), ...(j % 2 === 1 ? [above((j + 1) % width)] : [])];
    return { app, ns, dir: `apps/${ns}/${app}`, dependsOn };
  });
}

/** The i-th app and every app that depends on it, directly or not (Flux reconciles those again). */
export function withDependents(apps: readonly Repo80App[], i: number): Set<number> {
  const out = new Set([i]);
  for (let grew = true; grew;) {
    grew = false;
    apps.forEach((a, k) => {
      if (!out.has(k) && a.dependsOn.some((d) => out.has(d))) {
        out.add(k);
        grew = true;
      }
    });
  }
  return out;
}

export async function writeRepo80(dir: string, prefix: string, clusterIPs: number): Promise<Tree> {
  const apps = repo80Apps();
  const parent = `${prefix}-apps`;
  const nsName = (ns: string) => `${prefix}-${ns}`;
  const name = (i: number) => `${prefix}-${apps[i]!.app}`;
  const files = new Map<string, unknown>();
  files.set(PARENT_FILE, {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: parent, namespace: 'flux-system' },
    spec: {
      interval: '30m',
      prune: true,
      path: './apps',
      sourceRef: { kind: 'GitRepository', name: 'flux-system' },
      patches: [
        {
          target: { group: 'kustomize.toolkit.fluxcd.io', kind: 'Kustomization' },
          patch: '- op: add\n  path: /spec/prune\n  value: true\n- op: add\n  path: /spec/interval\n  value: 1h\n',
        },
      ],
    },
  });
  for (const [f, c] of components()) if (f.startsWith(`${COMPONENT}/`)) files.set(f, c);
  const kustomizationOf = (app: string, withService: boolean) => ({
    ...KUSTOMIZATION,
    resources: ['deployment.yaml', ...(withService ? ['service.yaml'] : []), 'configmap.yaml', 'serviceaccount.yaml'],
    components: [`../../../../${COMPONENT}`],
    configMapGenerator: [{ name: `${app}-env`, literals: ['LOG_LEVEL=info', `APP=${app}`] }],
    secretGenerator: [{ name: `${app}-credentials`, literals: ['username=app', `password=${app}-s3cr3t`] }],
  });
  const baseOf = (app: string, generation: number, headless: boolean) =>
    appBase(app, { generation, headless, envConfigMap: `${app}-env`, credentialsSecret: `${app}-credentials` });
  apps.forEach(({ app, ns, dir: appDir, dependsOn }, i) => {
    files.set(`${appDir}/ks.yaml`, {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: name(i), namespace: 'flux-system' },
      spec: {
        path: `./${appDir}/app`,
        targetNamespace: nsName(ns),
        sourceRef: { kind: 'GitRepository', name: 'flux-system' },
        ...(dependsOn.length > 0 ? { dependsOn: dependsOn.map((d) => ({ name: name(d) })) } : {}),
      },
    });
    for (const [f, c] of baseOf(app, 1, i >= clusterIPs)) files.set(`${appDir}/app/${f}`, c);
    files.set(`${appDir}/app/kustomization.yaml`, kustomizationOf(app, true));
  });
  for (const ns of REPO80_NAMESPACES) {
    files.set(`apps/${ns}/namespace.yaml`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName(ns) } });
    files.set(`apps/${ns}/kustomization.yaml`, {
      ...KUSTOMIZATION,
      resources: ['./namespace.yaml', ...apps.filter((a) => a.ns === ns).map((a) => `./${a.app}/ks.yaml`)],
    });
  }
  await writeFiles(dir, files);
  const first = apps[0]!;
  return {
    dir,
    shape: 'repo80',
    units: [{ name: parent, path: 'apps', dependsOn: [] }],
    kustomizations: REPO80_KUSTOMIZATIONS,
    objects: REPO80_NAMESPACES.length + REPO80_CHILDREN * PER_CHILD,
    namespaces: REPO80_NAMESPACES.map(nsName),
    crdName: '',
    change: () =>
      writeFiles(dir, new Map([[`${first.dir}/app/configmap.yaml`, baseOf(first.app, 2, true).get('configmap.yaml')]])),
    removeTenth: async () => {
      const odd = apps.filter((_, i) => i % 2 === 1);
      await writeFiles(
        dir,
        new Map(odd.map((a) => [`${a.dir}/app/kustomization.yaml`, kustomizationOf(a.app, false)] as const)),
      );
      return odd.length;
    },
  };
}

/** One change bench/plan.ts commits and plans with --base. */
export interface PlanChange {
  name: string;
  /** The file it edits, relative to the tree. */
  file: string;
  /** Edits the file. */
  edit: (dir: string) => Promise<void>;
  /** Kustomizations a build that follows what kustomize reads would mark (with their dependents), of all. */
  expected: number;
  /** Why that many. */
  why: string;
}

/** The app whose image the first change bumps: one in the middle of the dependsOn levels. */
const BUMPED = 40;

async function replaceIn(dir: string, file: string, from: string, to: string): Promise<void> {
  const path = join(dir, file);
  const text = await readFile(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} holds no ${from}`);
  await writeFile(path, text.replaceAll(from, to));
}

/** The app a change adds: a copy of the last one, under a name no app has. */
const NEW_APP = `app${String(REPO80_CHILDREN)}`;

/** Copies `app`'s folder as `to` (every mention of its name renamed) and lists it in its namespace folder. */
async function copyApp(dir: string, app: Repo80App, to: string): Promise<void> {
  const from = join(dir, app.dir);
  const target = join(dir, app.dir.replace(new RegExp(`${app.app}$`), to));
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const rel = relative(from, join(entry.parentPath, entry.name));
    await mkdir(dirname(join(target, rel)), { recursive: true });
    await writeFile(join(target, rel), (await readFile(join(from, rel), 'utf8')).replaceAll(app.app, to));
  }
  // One more entry, indented as the entry it follows.
  const file = join(dir, `apps/${app.ns}/kustomization.yaml`);
  const lines = (await readFile(file, 'utf8')).split('\n');
  const at = lines.findIndex((l) => l.endsWith(`./${app.app}/ks.yaml`));
  if (at < 0) throw new Error(`apps/${app.ns}/kustomization.yaml does not list ${app.app}`);
  lines.splice(at + 1, 0, lines[at]!.replace(`./${app.app}/`, `./${to}/`));
  await writeFile(file, lines.join('\n'));
}

/** The changes of `plan --base`, each its own commit, in order. */
export function repo80PlanChanges(): PlanChange[] {
  const apps = repo80Apps();
  const bumped = apps[BUMPED]!;
  const last = apps[apps.length - 1]!;
  const dependents = withDependents(apps, BUMPED).size - 1;
  return [
    {
      name: `one app's image bump (${bumped.dir}/app/deployment.yaml)`,
      file: `${bumped.dir}/app/deployment.yaml`,
      edit: (dir) => replaceIn(dir, `${bumped.dir}/app/deployment.yaml`, `${IMAGE}:6.7.0`, `${IMAGE}:6.7.1`),
      expected: 1 + dependents,
      why: `${bumped.app} and the ${String(dependents)} that depend on it, directly or not`,
    },
    {
      name: `the parent's patch (${PARENT_FILE}: interval 1h → 2h)`,
      file: PARENT_FILE,
      edit: (dir) => replaceIn(dir, PARENT_FILE, 'value: 1h', 'value: 2h'),
      expected: 1 + REPO80_CHILDREN,
      why: 'the parent (its own file) and every child it patches',
    },
    {
      name: `the shared component (${COMPONENT}/monitoring-patch.yaml: the metrics port)`,
      file: `${COMPONENT}/monitoring-patch.yaml`,
      edit: (dir) => replaceIn(dir, `${COMPONENT}/monitoring-patch.yaml`, '9797', '9798'),
      expected: REPO80_CHILDREN,
      why: 'every child (each app lists the component); not the parent, whose build never reads it',
    },
    {
      name: `a new app listed in its namespace folder (apps/${last.ns}/${NEW_APP})`,
      file: `apps/${last.ns}/kustomization.yaml`,
      edit: (dir) => copyApp(dir, last, NEW_APP),
      expected: 2,
      why: "the parent (its build reads the namespace folder) and the new app; no sibling: their objects in the parent's build stay the same",
    },
  ];
}
