// Validates the parity corpus (test/parity/corpus/): the data the parity harness reconciles with real
// Flux and with us. Every case must follow the format in test/parity/corpus/README.md, and no two cases
// may claim the same namespace, cluster-scoped name or flux-system object, because cases run side by
// side on one cluster.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, normalize, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const CORPUS = fileURLToPath(new URL('../../test/parity/corpus/', import.meta.url));
const CASE_NAME = /^[a-z0-9]([a-z0-9-]{0,22}[a-z0-9])?$/;
const CASE_KEYS = new Set(['description', 'kustomizations', 'children', 'setup', 'steps', 'expect']);
/** Built-in cluster-scoped kinds, as "group/Kind" ("" is the core group). */
const CLUSTER_KINDS = new Set([
  '/Namespace',
  '/PersistentVolume',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'scheduling.k8s.io/PriorityClass',
  'storage.k8s.io/StorageClass',
  'networking.k8s.io/IngressClass',
  'node.k8s.io/RuntimeClass',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'apiregistration.k8s.io/APIService',
]);

/** "group/Kind" of an object ("" is the core group). */
function groupKind(apiVersion: unknown, kind: unknown): string {
  const av = String(apiVersion);
  return `${av.includes('/') ? av.split('/')[0] : ''}/${String(kind)}`;
}

type Obj = Record<string, unknown>;
interface Manifest {
  file: string;
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: Obj;
  spec?: Obj;
}
interface Case {
  name: string;
  dir: string;
  raw: Obj;
  /** Why case.yaml did not parse into a mapping, if it did not. */
  error?: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function listFiles(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(root, rel));
    else out.push(rel);
  }
  return out;
}

const isYaml = (file: string) => /\.ya?ml$/.test(file);

/** The documents of a YAML text; throws with the file's name when one does not parse. */
function documents(text: string, file: string): unknown[] {
  return parseAllDocuments(text).map((doc, i) => {
    if (doc.errors.length > 0) throw new Error(`${file}, document ${i + 1}: ${doc.errors[0]!.message}`);
    return doc.toJS() as unknown;
  });
}

function manifestsOf(text: string, file: string): Manifest[] {
  const out: Manifest[] = [];
  for (const doc of documents(text, file)) {
    if (!isObj(doc)) continue;
    const items = doc.kind === 'List' && Array.isArray(doc.items) ? doc.items.filter(isObj) : [doc];
    for (const item of items) {
      if (item.kind === undefined || item.apiVersion === undefined) continue;
      out.push({
        file,
        apiVersion: item.apiVersion,
        kind: item.kind,
        metadata: isObj(item.metadata) ? item.metadata : undefined,
        spec: isObj(item.spec) ? item.spec : undefined,
      });
    }
  }
  return out;
}

/** A relative path that stays inside its root ("a/b", not "/a", "../a" or "."). */
function insideRoot(path: string): boolean {
  if (path.startsWith('/')) return false;
  const norm = posix.normalize(path);
  return norm !== '.' && norm !== './' && !norm.startsWith('../') && norm !== '..';
}

function loadCase(name: string): Case {
  const dir = join(CORPUS, name);
  try {
    const raw: unknown = parse(readFileSync(join(dir, 'case.yaml'), 'utf8'));
    return isObj(raw) ? { name, dir, raw } : { name, dir, raw: {}, error: 'case.yaml is not a mapping' };
  } catch (error) {
    return { name, dir, raw: {}, error: `case.yaml: ${(error as Error).message}` };
  }
}

const cases: Case[] = readdirSync(CORPUS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => loadCase(e.name));

/** The tree's files at the first step, and every file a git step writes: path -> content. */
function treeFiles(c: Case): Map<string, string> {
  const root = join(c.dir, 'tree');
  return new Map(listFiles(root).map((f) => [f, readFileSync(join(root, f), 'utf8')]));
}

function kustomizationsOf(c: Case): Obj[] {
  return Array.isArray(c.raw.kustomizations) ? c.raw.kustomizations.filter(isObj) : [];
}
function stepsOf(c: Case): Obj[] {
  return Array.isArray(c.raw.steps) ? c.raw.steps.filter(isObj) : [];
}
function setupOf(c: Case): Obj[] {
  return Array.isArray(c.raw.setup) ? c.raw.setup.filter(isObj) : [];
}

const manifestCache = new Map<string, Manifest[]>();

/** Every manifest the case can ever apply or create: the first tree, every file a git step writes, setup. */
function allManifests(c: Case): Manifest[] {
  const cached = manifestCache.get(c.name);
  if (cached) return cached;
  const out: Manifest[] = [];
  manifestCache.set(c.name, out);
  for (const [file, text] of treeFiles(c)) if (isYaml(file)) out.push(...manifestsOf(text, `tree/${file}`));
  stepsOf(c).forEach((step, i) => {
    const write = isObj(step.git) && isObj(step.git.write) ? step.git.write : {};
    for (const [file, text] of Object.entries(write)) {
      if (isYaml(file) && typeof text === 'string') out.push(...manifestsOf(text, `steps[${i}].git.write.${file}`));
    }
  });
  setupOf(c).forEach((obj, i) => {
    out.push({
      file: `setup[${i}]`,
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: isObj(obj.metadata) ? obj.metadata : undefined,
    });
  });
  return out;
}

/** The tree's files at the first step and after each git step. */
function statesOf(c: Case): { label: string; files: Map<string, string> }[] {
  const files = treeFiles(c);
  const out = [{ label: 'the first step', files: new Map(files) }];
  stepsOf(c).forEach((step, i) => {
    if (!isObj(step.git)) return;
    for (const [file, text] of Object.entries(isObj(step.git.write) ? step.git.write : {})) {
      if (typeof text === 'string') files.set(posix.normalize(file), text);
    }
    for (const file of Array.isArray(step.git.delete) ? step.git.delete : [])
      files.delete(posix.normalize(String(file)));
    out.push({ label: `steps[${i}]`, files: new Map(files) });
  });
  return out;
}

/** Local files and directories a kustomization.yaml refers to that are missing from `files`. */
function missingReferences(file: string, text: string, files: Map<string, string>): string[] {
  const kus = parse(text) as unknown;
  if (!isObj(kus)) return [];
  const dir = posix.dirname(file);
  const wanted: { ref: string; dirOk: boolean }[] = [];
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  for (const ref of [...list(kus.resources), ...list(kus.components)]) wanted.push({ ref, dirOk: true });
  for (const p of Array.isArray(kus.patches) ? kus.patches.filter(isObj) : []) {
    if (typeof p.path === 'string') wanted.push({ ref: p.path, dirOk: false });
  }
  for (const gen of [kus.configMapGenerator, kus.secretGenerator].flatMap((g): unknown[] =>
    Array.isArray(g) ? g : [],
  )) {
    if (!isObj(gen)) continue;
    for (const f of list(gen.files))
      wanted.push({ ref: f.includes('=') ? f.slice(f.indexOf('=') + 1) : f, dirOk: false });
    for (const f of list(gen.envs)) wanted.push({ ref: f, dirOk: false });
  }
  return wanted
    .filter(({ ref }) => !/^[a-z]+:\/\//.test(ref) && !ref.startsWith('github.com/'))
    .filter(({ ref, dirOk }) => {
      const path = posix.normalize(posix.join(dir, ref));
      if (files.has(path)) return false;
      return !(dirOk && [...files.keys()].some((f) => f.startsWith(`${path}/`)));
    })
    .map(({ ref }) => `${file}: ${ref}`);
}

const owned = (c: Case, name: string) =>
  name === c.name || name.startsWith(`${c.name}-`) || name.startsWith(`${c.name}:`);

/** Kinds the case's own CRDs declare cluster-scoped. */
const kindCache = new Map<string, Set<string>>();

function clusterCustomKinds(c: Case): Set<string> {
  const cached = kindCache.get(c.name);
  if (cached) return cached;
  const kinds = new Set<string>();
  kindCache.set(c.name, kinds);
  for (const m of allManifests(c)) {
    if (m.kind !== 'CustomResourceDefinition' || !m.spec) continue;
    const names = isObj(m.spec.names) ? m.spec.names : {};
    if (m.spec.scope === 'Cluster' && typeof names.kind === 'string') kinds.add(`${str(m.spec.group)}/${names.kind}`);
  }
  return kinds;
}

function isClusterScoped(c: Case, m: { apiVersion?: unknown; kind?: unknown }): boolean {
  const gk = groupKind(m.apiVersion, m.kind);
  return CLUSTER_KINDS.has(gk) || clusterCustomKinds(c).has(gk);
}

const isNamespace = (m: { apiVersion?: unknown; kind?: unknown }) => groupKind(m.apiVersion, m.kind) === '/Namespace';

/** Whether the namespaces written in the tree may be rewritten by a build (targetNamespace, or kustomize's namespace). */
function namespacesRewritten(c: Case): boolean {
  if (kustomizationsOf(c).some((k) => isObj(k.spec) && typeof k.spec.targetNamespace === 'string')) return true;
  return [...treeFiles(c).entries()].some(
    ([file, text]) =>
      (/(^|\/)kustomization\.ya?ml$/.test(file) && /^namespace:/m.test(text)) ||
      /^kind: NamespaceTransformer$/m.test(text),
  );
}

/** Names of the objects a case claims on the shared cluster, as "scope:name" keys. */
function claims(c: Case): Set<string> {
  const out = new Set<string>();
  for (const m of allManifests(c)) {
    const name = str(m.metadata?.name);
    if (!name) continue;
    if (isNamespace(m)) out.add(`namespace:${name}`);
    else if (isClusterScoped(c, m)) out.add(`cluster:${String(m.kind)}/${name}`);
    else if (str(m.metadata?.namespace) === 'flux-system') out.add(`flux-system:${String(m.kind)}/${name}`);
  }
  for (const k of kustomizationsOf(c)) out.add(`flux-system:Kustomization/${String(k.name)}`);
  for (const name of childrenOf(c).names) out.add(`flux-system:Kustomization/${name}`);
  return out;
}

/** The case's children (Kustomizations its own apply): their files' globs and their names. */
function childrenOf(c: Case): { files: unknown[]; names: string[] } {
  const children = isObj(c.raw.children) ? c.raw.children : {};
  return {
    files: Array.isArray(children.files) ? children.files : [],
    names: Array.isArray(children.names) ? children.names.map(String) : [],
  };
}

/** The Flux Kustomizations (kustomize.toolkit.fluxcd.io) that a case's tree defines, in any file. */
function treeKustomizations(c: Case): Manifest[] {
  return allManifests(c).filter(
    (m) => m.kind === 'Kustomization' && String(m.apiVersion).startsWith('kustomize.toolkit.fluxcd.io/'),
  );
}

describe('parity corpus', () => {
  it('has at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it('lists every case with its expectation in README.md', () => {
    const rows = new Set(
      readFileSync(join(CORPUS, 'README.md'), 'utf8')
        .split('\n')
        .map((line) => line.split('|').map((cell) => cell.trim()))
        .filter((cells) => cells.length > 3)
        .map((cells) => `${cells[1]} ${cells[2]}`),
    );
    const missing = cases.filter((c) => !rows.has(`${c.name} ${String(c.raw.expect)}`)).map((c) => c.name);
    expect(missing).toEqual([]);
  });

  it('keeps the committed age test key that SOPS cases use', () => {
    expect(readFileSync(join(CORPUS, 'age.agekey'), 'utf8')).toMatch(/^AGE-SECRET-KEY-1[0-9A-Z]+$/m);
  });

  it('has no two cases claiming the same namespace, cluster-scoped name or flux-system object', () => {
    const owners = new Map<string, string[]>();
    for (const c of cases) for (const key of claims(c)) owners.set(key, [...(owners.get(key) ?? []), c.name]);
    const shared = [...owners.entries()]
      .filter(([, names]) => names.length > 1)
      .map(([k, n]) => `${k}: ${n.join(', ')}`);
    expect(shared).toEqual([]);
  });

  describe.each(cases.map((c) => [c.name, c] as const))('%s', (name, c) => {
    it('has a case.yaml that parses, a valid name and only the known top-level keys', () => {
      expect(c.error).toBeUndefined();
      expect(name).toMatch(CASE_NAME);
      expect(Object.keys(c.raw).filter((k) => !CASE_KEYS.has(k))).toEqual([]);
      expect(str(c.raw.description)?.trim()).toBeTruthy();
      expect(['ready', 'failed']).toContain(c.raw.expect);
      expect(statSync(join(c.dir, 'tree')).isDirectory()).toBe(true);
    });

    it('declares Flux Kustomizations whose spec the harness can complete', () => {
      const ks = kustomizationsOf(c);
      expect(ks.length).toBeGreaterThan(0);
      expect(ks.length).toBe((c.raw.kustomizations as unknown[]).length);
      const names = ks.map((k) => String(k.name));
      expect(new Set(names).size).toBe(names.length);
      const files = [...treeFiles(c).keys()];
      for (const k of ks) {
        const kname = String(k.name);
        expect(owned(c, kname), `kustomization ${kname} must be ${name} or start with ${name}-`).toBe(true);
        expect(Object.keys(k).sort()).toEqual(['name', 'spec']);
        expect(isObj(k.spec)).toBe(true);
        const spec = k.spec as Obj;
        expect(spec, `${kname}: the harness sets sourceRef`).not.toHaveProperty('sourceRef');
        expect(spec, `${kname}: the harness sets interval`).not.toHaveProperty('interval');
        const path = str(spec.path) ?? '';
        expect(insideRoot(path), `${kname}: spec.path ${path} must be a subdirectory of tree/`).toBe(true);
        const dir = posix.normalize(path);
        expect(
          files.some((f) => f.startsWith(`${dir}/`)),
          `${kname}: spec.path ${path} must exist under tree/`,
        ).toBe(true);
        for (const dep of Array.isArray(spec.dependsOn) ? spec.dependsOn : []) {
          expect(isObj(dep) && names.includes(String(dep.name)), `${kname}: dependsOn ${JSON.stringify(dep)}`).toBe(
            true,
          );
          expect(isObj(dep) ? (dep.namespace ?? 'flux-system') : undefined).toBe('flux-system');
        }
      }
    });

    it('names its children, each defined in the tree with the case as its source', () => {
      const { files, names } = childrenOf(c);
      const defined = treeKustomizations(c);
      if (c.raw.children === undefined) {
        // Without children, a Kustomization object in the tree would be applied by Flux and never reconciled by ours.
        expect(defined.map((m) => `${m.file}: ${String(m.metadata?.name)}`)).toEqual([]);
        return;
      }
      expect(Object.keys(c.raw.children as Obj).sort()).toEqual(['files', 'names']);
      expect(files.length).toBeGreaterThan(0);
      expect(files.every((f) => typeof f === 'string' && insideRoot(f))).toBe(true);
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) {
        expect(owned(c, name), `child ${name} must start with ${c.name}-`).toBe(true);
        const ks = defined.filter((m) => m.metadata?.name === name);
        expect(ks.length, `child ${name} is defined in the tree`).toBeGreaterThan(0);
        for (const m of ks) {
          expect(m.spec?.sourceRef, `${m.file}: the case's ExternalArtifact is its source`).toEqual({
            kind: 'ExternalArtifact',
            name: c.name,
          });
        }
      }
      const listed = new Set(names);
      expect(defined.filter((m) => !listed.has(String(m.metadata?.name))).map((m) => m.file)).toEqual([]);
    });

    it('creates in setup only objects that name their namespace and belong to the case', () => {
      for (const [i, obj] of setupOf(c).entries()) {
        const meta = isObj(obj.metadata) ? obj.metadata : {};
        expect(str(obj.apiVersion), `setup[${i}].apiVersion`).toBeTruthy();
        expect(str(obj.kind), `setup[${i}].kind`).toBeTruthy();
        const objName = str(meta.name) ?? '';
        const ns = str(meta.namespace);
        if (isClusterScoped(c, obj) || ns === 'flux-system') {
          expect(owned(c, objName), `setup[${i}] ${objName} must be ${name} or start with ${name}-`).toBe(true);
        } else {
          expect(owned(c, ns ?? ''), `setup[${i}].metadata.namespace must be ${name} or start with ${name}-`).toBe(
            true,
          );
        }
      }
    });

    it('reads Secrets and ConfigMaps that setup creates in flux-system', () => {
      const setupNames = new Set(
        setupOf(c)
          .filter((o) => isObj(o.metadata) && o.metadata.namespace === 'flux-system')
          .map((o) => `${String(o.kind)}/${String((o.metadata as Obj).name)}`),
      );
      for (const k of kustomizationsOf(c)) {
        const spec = k.spec as Obj;
        const decryption = isObj(spec.decryption) ? spec.decryption : undefined;
        if (decryption) {
          expect(decryption.provider).toBe('sops');
          const ref = isObj(decryption.secretRef) ? str(decryption.secretRef.name) : undefined;
          expect(setupNames.has(`Secret/${ref}`), `${String(k.name)}: decryption secret ${ref} in setup`).toBe(true);
        }
        const from =
          isObj(spec.postBuild) && Array.isArray(spec.postBuild.substituteFrom) ? spec.postBuild.substituteFrom : [];
        for (const ref of from.filter(isObj)) {
          if (ref.optional === true) continue;
          const key = `${String(ref.kind)}/${String(ref.name)}`;
          expect(setupNames.has(key), `${String(k.name)}: substituteFrom ${key} in setup`).toBe(true);
        }
      }
    });

    it('has well-formed steps whose files stay inside tree/', () => {
      const files = new Set(treeFiles(c).keys());
      for (const [i, step] of stepsOf(c).entries()) {
        expect(Object.keys(step), `steps[${i}] has one action`).toHaveLength(1);
        const [action] = Object.keys(step);
        expect(['git', 'drift', 'noop'], `steps[${i}]`).toContain(action);
        if (action === 'noop') expect(step.noop).toEqual({});
        if (action === 'drift') {
          const d = step.drift as Obj;
          expect(isObj(d), `steps[${i}].drift`).toBe(true);
          for (const field of ['apiVersion', 'kind', 'name'])
            expect(str(d[field]), `steps[${i}].drift.${field}`).toBeTruthy();
          expect(isObj(d.patch), `steps[${i}].drift.patch is a JSON merge patch`).toBe(true);
          if (isClusterScoped(c, d)) expect(d).not.toHaveProperty('namespace');
          else expect(owned(c, str(d.namespace) ?? ''), `steps[${i}].drift.namespace`).toBe(true);
        }
        if (action === 'git') {
          const g = step.git as Obj;
          expect(isObj(g), `steps[${i}].git`).toBe(true);
          expect(Object.keys(g).filter((k) => k !== 'write' && k !== 'delete')).toEqual([]);
          const write = g.write === undefined ? {} : (g.write as Obj);
          const del = g.delete === undefined ? [] : (g.delete as unknown[]);
          expect(isObj(write) && Array.isArray(del)).toBe(true);
          expect(Object.keys(write).length + del.length, `steps[${i}].git changes something`).toBeGreaterThan(0);
          for (const [file, text] of Object.entries(write)) {
            expect(insideRoot(file), `steps[${i}].git.write ${file}`).toBe(true);
            expect(typeof text, `steps[${i}].git.write ${file} is the file's content`).toBe('string');
            if (isYaml(file)) expect(() => documents(text as string, file)).not.toThrow();
            files.add(normalize(file));
          }
          for (const file of del) {
            expect(
              typeof file === 'string' && files.has(normalize(file)),
              `steps[${i}].git.delete ${String(file)} exists`,
            ).toBe(true);
            files.delete(normalize(file as string));
          }
        }
      }
    });

    it('refers in every kustomization.yaml, at every step, only to files that exist', () => {
      for (const { label, files } of statesOf(c)) {
        const missing = [...files.entries()]
          .filter(([file]) => /(^|\/)kustomization\.ya?ml$/.test(file))
          .flatMap(([file, text]) => missingReferences(file, text, files));
        expect(missing, `missing at ${label}`).toEqual([]);
      }
    });

    it('has only YAML files that parse', () => {
      for (const [file, text] of treeFiles(c)) if (isYaml(file)) expect(() => documents(text, file)).not.toThrow();
    });

    it('names its namespaces and cluster-scoped objects after the case', () => {
      const rewritten = namespacesRewritten(c);
      for (const m of allManifests(c)) {
        const objName = str(m.metadata?.name) ?? '';
        const where = `${m.file}: ${String(m.kind)} ${objName}`;
        if (isNamespace(m)) expect(owned(c, objName), where).toBe(true);
        else if (groupKind(m.apiVersion, m.kind) === 'apiextensions.k8s.io/CustomResourceDefinition') {
          expect(str(m.spec?.group), where).toBe(`${name}.parity.example.com`);
          expect(objName.endsWith(`.${name}.parity.example.com`), where).toBe(true);
        } else if (isClusterScoped(c, m)) expect(owned(c, objName), where).toBe(true);
        const ns = str(m.metadata?.namespace);
        if (ns !== undefined && ns !== 'flux-system' && !rewritten && !m.file.startsWith('setup')) {
          expect(owned(c, ns), `${where} is in namespace ${ns}`).toBe(true);
        }
        if (ns === 'flux-system') expect(owned(c, objName), `${where} in flux-system`).toBe(true);
      }
    });
  });
});

it('finds the corpus directory', () => {
  expect(existsSync(CORPUS)).toBe(true);
});
