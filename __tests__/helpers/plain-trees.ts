// Plain trees (YAML files of Kubernetes objects, no kustomization file) for the differential tests of
// the plain build (src/kustomize/plain.ts): the benchmark's tree, and random trees from a seed with
// the YAML that kustomize and our parser might read differently.
import { mkdir, mkdtemp, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

/** A small seeded generator (mulberry32), so a failing case can be made again from its seed. */
export function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Random = ReturnType<typeof random>;

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** A new temporary directory (by its real path, as a build resolves it) holding `files`. */
export async function tempTree(prefix: string, files: Record<string, string>): Promise<string> {
  const root = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  await writeFiles(root, files);
  return root;
}

const CORPUS = fileURLToPath(new URL('../../test/parity/corpus/', import.meta.url));

/** Every directory of the parity corpus's trees, each as the tree's root and a path in it. */
export async function corpusDirs(): Promise<{ root: string; path: string }[]> {
  const dirs: { root: string; path: string }[] = [];
  const walk = async (root: string, rel: string) => {
    dirs.push({ root, path: rel });
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      if (e.isDirectory()) await walk(root, rel === '.' ? e.name : `${rel}/${e.name}`);
    }
  };
  for (const c of await readdir(CORPUS)) {
    const root = join(CORPUS, c, 'tree');
    if ((await stat(root).catch(() => undefined))?.isDirectory()) await walk(await realpath(root), '.');
  }
  return dirs;
}

/** The benchmark's tree (bench/run/tree.ts writeTree): N objects, one a file, Namespaces, a CRD and its CRs. */
export function benchTree(n: number): Record<string, string> {
  const group = 'kr.bench.example.com';
  const namespaces = Array.from({ length: Math.max(1, Math.round(n / 200)) }, (_, i) => `kr-bench-${i}`);
  const files: Record<string, string> = {
    '00-namespaces.yaml': namespaces
      .map((name) => stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }))
      .join('---\n'),
    '01-crd.yaml': stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    }),
  };
  const kinds = ['ConfigMap', 'Secret', 'Service', 'Deployment', 'ConfigMap'];
  const crs = Math.floor(n / 20);
  for (let i = 0; i < n - namespaces.length - 1; i++) {
    const kind = i < crs ? 'Widget' : kinds[i % kinds.length]!;
    const name = `${kind.toLowerCase()}-${i}`;
    const metadata = {
      name,
      namespace: namespaces[i % namespaces.length],
      labels: { app: name, 'bench.kustomize-reconcile/tier': 'a' },
    };
    const body =
      kind === 'Widget'
        ? { apiVersion: `${group}/v1`, kind, metadata, spec: { size: 1, color: 'blue', tags: ['bench', name] } }
        : kind === 'Secret'
          ? { apiVersion: 'v1', kind, metadata, type: 'Opaque', stringData: { token: `t-${name}` } }
          : kind === 'Service'
            ? {
                apiVersion: 'v1',
                kind,
                metadata,
                spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
              }
            : kind === 'Deployment'
              ? {
                  apiVersion: 'apps/v1',
                  kind,
                  metadata,
                  spec: {
                    replicas: 1,
                    selector: { matchLabels: { app: name } },
                    template: {
                      metadata: { labels: { app: name } },
                      spec: {
                        containers: [
                          {
                            name: 'app',
                            image: 'ghcr.io/stefanprodan/podinfo:6.7.1',
                            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
                            readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 10 },
                          },
                        ],
                      },
                    },
                  },
                }
              : {
                  apiVersion: 'v1',
                  kind,
                  metadata,
                  data: { generation: '1', 'app.properties': `x=${name}\ny=${'v'.repeat(64)}\n` },
                };
    files[`${name}.yaml`] = stringify(body);
  }
  return files;
}

/** apiVersion and kind pairs: cluster-scoped, namespaced, the legacy order's first and last, custom. */
const TYPES: readonly [string, string][] = [
  ['v1', 'Namespace'],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
  ['rbac.authorization.k8s.io/v1', 'Role'],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
  ['v1', 'PersistentVolume'],
  ['storage.k8s.io/v1', 'StorageClass'],
  ['scheduling.k8s.io/v1', 'PriorityClass'],
  ['v1', 'ConfigMap'],
  ['v1', 'Secret'],
  ['v1', 'Service'],
  ['v1', 'ServiceAccount'],
  ['apps/v1', 'Deployment'],
  ['apps/v1', 'StatefulSet'],
  ['batch/v1', 'CronJob'],
  ['batch/v1', 'Job'],
  ['policy/v1', 'PodDisruptionBudget'],
  ['networking.k8s.io/v1', 'Ingress'],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
  ['example.com/v1', 'Widget'],
  ['example.com/v1beta1', 'Widget'],
  ['other.example.com/v1', 'Widget'],
  ['zeta.io/v2', 'Apple'],
  ['a.io/v1', 'Zebra'],
  ['coordination.k8s.io/v1', 'Lease'],
];
const NAMES = ['a', 'b', 'web', 'web-1', 'web-10', 'web-2', 'x.y', 'Z', 'db', 'é-name', 'a|b', 'aa'];
const NAMESPACES = [undefined, undefined, 'default', 'apps', 'apps-2', 'zz', 'a'];

/** Scalars as written (plain unless quoted in the text), the readers' disagreements among them. */
const ODD_SCALARS = [
  'yes',
  'no',
  'on',
  'Off',
  'y',
  'n',
  '0x10',
  '0o17',
  '017',
  '08',
  '1e3',
  '1E-7',
  '1_000',
  '.5',
  '1.',
  '+1',
  '-0',
  '-0.0',
  '0.0',
  '1.0',
  '3.25',
  '-12',
  '0',
  '42',
  '9007199254740993',
  '123456789012345678901',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '2001-12-14 21:59:43.10',
  '12:30',
  '1:20',
  '~',
  'null',
  'Null',
  'NULL',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  '.inf',
  '-.Inf',
  '.NaN',
  '<<',
  '=',
  '-',
  '0b101',
  '0xFFp3',
  '500m',
  '128Mi',
  '1h30m',
  '1.2.3',
  'v1.2.3',
  'nginx:1.25',
  'a b',
  'trailing ',
  ' leading',
  'x: y',
  'x #y',
  '#x',
  '@at',
  '`tick',
  '%pct',
  '!bang',
  '&amp',
  '*star',
  '- dash',
  '? q',
  '[x',
  '{x',
  '"q"',
  "'s'",
  'back\\slash',
  'tab\there',
  'héllo ☺ 😀',
  '日本語',
  'a\u00a0b',
  'line\u2028sep',
  'nel\u0085x',
  'bom\ufeffx',
  'ctl\u0007x',
  'multi\nline',
  'multi\nline\n',
  'trailing\n\n',
  '\nleading newline',
  '  indented\nfirst',
  'spaces  \nend',
  'x'.repeat(120),
  `${'word '.repeat(30)}end`,
  '',
];
const KEYS = [
  'a',
  'b',
  'A',
  'Z',
  'z',
  '_x',
  'x_y',
  'x-y',
  'x.y',
  'x/y',
  'a10',
  'a9',
  'a01',
  'a1',
  'a0',
  'a00',
  '1a',
  '1',
  '10',
  '02',
  'ab',
  'aB',
  'yes',
  'on',
  'y',
  'null',
  'true',
  'é',
  'key with space',
  'app.kubernetes.io/name',
  'x9y',
  'x10y',
  '9',
  '-',
  '~',
];

type Style = 'plain' | 'single' | 'double' | 'block';

/** Plain scalars every reader takes alike (so the plain build takes them): numbers, words, odd strings. */
const PLAIN_ALIKE = [
  ...['42', '-12', '0', '3.25', '1.0', '0.5', '1e3', '-2.5E-3', '9007199254740991', 'true', 'false', 'null', '~', ''],
  ...['yes', 'no', 'on', 'Off', 'y', 'n', 'tRUE', 'app', 'x-1', 'hello world', '500m', '128Mi', '1h30m', 'v1.2.3'],
  ...['nginx:1.25', '12:30', '1:20', 'héllo ☺ 😀', '日本語', 'a\u00a0b', 'back\\slash', 'x'.repeat(120)],
  `${'word '.repeat(30)}end`,
];

/** A scalar's text in `style` (a block scalar only for text with line breaks, at `indent`). */
function scalarText(value: string, style: Style, indent: string): string {
  if (style === 'single' && !value.includes('\n')) return `'${value.replaceAll("'", "''")}'`;
  if (style === 'double') return JSON.stringify(value);
  if (style === 'block' && value.includes('\n')) {
    const trailing = value.length - value.replace(/\n+$/, '').length;
    const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
    const lines = (trailing === 0 ? value : value.slice(0, -1)).split('\n');
    const folded = value.length % 3 === 0 && !/\n[ \t]/.test(value);
    return `${folded ? '>' : '|'}${chomp}\n${lines.map((l) => (l === '' ? '' : `${indent}  ${l}`)).join('\n')}`;
  }
  return value;
}

/**
 * A random scalar's text. Mostly one the readers take alike (plain from PLAIN_ALIKE, any odd
 * string quoted or as a block); with probability `hostile`, any odd scalar in any style.
 */
function scalar(r: Random, indent: string, hostile: number, flow = false): string {
  let text: string;
  if (r.chance(hostile)) {
    text = scalarText(r.pick(ODD_SCALARS), r.pick<Style>(['plain', 'single', 'double', 'block']), indent);
  } else if (r.chance(0.5)) {
    text = r.pick(PLAIN_ALIKE);
  } else {
    const value = r.pick(ODD_SCALARS.filter((v) => !/[\u0085\u2028\ufeff]/.test(v) && !v.startsWith('ctl')));
    const block = value.includes('\n') && !/^\s/.test(value) && !flow && r.chance(0.6);
    text = scalarText(value, block ? 'block' : value.includes('\n') || r.chance(0.6) ? 'double' : 'single', indent);
  }
  return r.chance(0.1) && !text.includes('\n') && !flow ? `${text} # note` : text;
}

/** Keys the readers take alike as plain keys (strings, printable ASCII). */
const PLAIN_KEYS = KEYS.filter((k) => /^[a-zA-Z_][\x20-\x7e]*$/.test(k) && !['null', 'true'].includes(k));

/** A key as written: plain when the readers take it alike, else quoted; any key when hostile. */
function key(r: Random, used: Set<string>, hostile: number): string {
  const anything = r.chance(hostile);
  let k = r.pick(KEYS);
  for (let i = 0; used.has(k) && i < 5; i++) k = r.pick(KEYS);
  if (used.has(k) && !anything) k = `${k}${used.size}`;
  used.add(k);
  if (anything) return r.pick([k, JSON.stringify(k), `'${k}'`]);
  if (/[^\x20-\x7e]/.test(k)) return JSON.stringify(`k${used.size}`);
  return PLAIN_KEYS.includes(k) && r.chance(0.7) ? k : r.chance(0.5) ? JSON.stringify(k) : `'${k}'`;
}

/** The lines of a random value under a key at `indent`, as `key: ...` continuations. */
function valueLines(r: Random, indent: string, depth: number, hostile: number): { inline: string; lines: string[] } {
  const roll = r.next();
  if (depth > 3 || roll < 0.55) return { inline: scalar(r, indent, hostile), lines: [] };
  if (roll < 0.65) {
    // A flow collection.
    const used = new Set<string>();
    const n = r.int(3);
    if (r.chance(0.5)) {
      return { inline: `[${Array.from({ length: n }, () => scalar(r, '', hostile, true)).join(', ')}]`, lines: [] };
    }
    return {
      inline: `{${Array.from({ length: n }, () => `${key(r, used, hostile)}: ${scalar(r, '', hostile, true)}`).join(', ')}}`,
      lines: [],
    };
  }
  if (roll < 0.8) {
    const lines: string[] = [];
    for (let i = 0; i < 1 + r.int(3); i++) {
      if (r.chance(0.3)) {
        const used = new Set<string>();
        const inner = mapLines(r, `${indent}  `, depth + 1, used, 1 + r.int(3), hostile);
        lines.push(`${indent}- ${inner[0]!.trimStart()}`, ...inner.slice(1));
      } else {
        const { inline, lines: more } = valueLines(r, `${indent}  `, depth + 1, hostile);
        lines.push(`${indent}- ${inline}`, ...more);
      }
    }
    return { inline: '', lines };
  }
  return { inline: '', lines: mapLines(r, `${indent}  `, depth + 1, new Set(), 1 + r.int(4), hostile) };
}

function mapLines(r: Random, indent: string, depth: number, used: Set<string>, n: number, hostile: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    if (r.chance(0.08)) lines.push(`${r.chance(0.5) ? indent : ''}# a comment`);
    const k = key(r, used, hostile);
    const { inline, lines: more } = valueLines(r, indent, depth, hostile);
    const after = inline === '' && r.chance(0.15) ? ' # before the nested lines' : '';
    lines.push(inline === '' ? `${indent}${k}:${after}` : `${indent}${k}: ${inline}`, ...more);
  }
  return lines;
}

/** One random object as YAML text: a known or custom type, metadata, a body of odd values. */
function objectText(r: Random, hostile: number): string {
  const [apiVersion, kind] = r.pick(TYPES);
  const name = r.pick(NAMES);
  const ns = r.pick(NAMESPACES);
  const meta = [`  name: ${r.chance(0.2) ? JSON.stringify(name) : name}`];
  if (ns !== undefined) meta.push(`  namespace: ${ns}`);
  if (r.chance(0.3)) meta.push(r.chance(0.2) ? '  labels: {}' : `  labels:\n    app: ${r.pick(['web', '"1"', 'x'])}`);
  if (r.chance(0.3)) {
    meta.push(
      r.pick([
        '  annotations: {}',
        '  annotations:\n    z: "1"\n    a: "yes"',
        '  annotations:\n    note: |\n      two\n      lines',
        ...(r.chance(hostile)
          ? [
              '  annotations:\n    config.kubernetes.io/local-config: "true"',
              '  annotations:\n    kustomize.config.k8s.io/behavior: merge',
            ]
          : []),
      ]),
    );
  }
  const top = [`apiVersion: ${apiVersion}`, `kind: ${kind}`, ['metadata:', ...meta].join('\n')];
  if (r.chance(0.5)) top.reverse();
  const bodyKey = r.pick(['data', 'spec', 'stringData', 'rules', 'zzz', 'items']);
  const body = mapLines(r, '  ', 1, new Set(), 1 + r.int(5), hostile);
  return `${top.join('\n')}\n${bodyKey}:\n${body.join('\n')}\n`;
}

/** A text kustomize may refuse or read specially: the fast path must leave it to kustomize. */
function oddDocument(r: Random): string {
  return r.pick([
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n',
    'apiVersion: v1\nkind: List\nitems: []\n',
    'apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: listed}\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nul}\ndata:\n  list: [a, ~]\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: anchors}\ndata: &d {a: b}\nother: *d\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: merge}\nbase: &b {x: "1"}\ndata:\n  <<: *b\n  y: "2"\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tagged}\ndata: {a: !!str 1, b: !!binary aGk=}\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata: {a: x, a: y}\n',
    '{}\n',
    '[]\n',
    '~\n',
    'just text\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: end}\n...\n',
    '%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: v11}\ndata: {a: yes}\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ver, namespace: ""}\n',
    'apiVersion: apps/v1/extra\nkind: Deployment\nmetadata: {name: slash}\n',
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: k}\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: badlabel\n  labels: {a: 1}\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inf}\ndata: {a: .inf}\n',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: intkey}\ndata: {1: a}\n',
  ]);
}

/**
 * A random plain tree: files (some nested, some multi-document, some not YAML) of random objects;
 * `hostile` is the share of choices (scalars, keys, documents) made from what the readers may take
 * differently or kustomize refuses.
 */
export function randomTree(seed: number, hostile = 0.15): Record<string, string> {
  const r = random(seed);
  const files: Record<string, string> = {};
  const names = ['a.yaml', 'b.yml', 'Z.yaml', '_x.yaml', 'é.yaml', 'a-b.yaml', 'a.b.yaml', '.hidden.yaml', '10.yaml'];
  const dirs = ['', '', 'sub/', 'sub/deeper/', 'Sub/', 'a-dir/', 'sub.d/'];
  for (let i = 0, n = 1 + r.int(5); i < n; i++) {
    const docs: string[] = [];
    for (let j = 0, m = 1 + r.int(3); j < m; j++) {
      if (r.chance(0.1)) docs.push(r.pick(['', '# only a comment\n']));
      docs.push(r.chance(hostile) ? oddDocument(r) : objectText(r, hostile));
    }
    const sep = r.pick(['---\n', '---\n', '--- # next\n', '---\n---\n', '\n---\n']);
    files[`${r.pick(dirs)}${r.pick(names)}`] = `${r.chance(0.2) ? '---\n' : ''}${docs.join(sep)}`;
  }
  if (r.chance(0.1)) files['notes.txt'] = 'not yaml\n';
  if (r.chance(0.1)) files['data.json'] = '{"a": 1}\n';
  return files;
}
