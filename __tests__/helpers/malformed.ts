// A deterministic generator of malformed inputs (issue #17, finding 9): broken YAML, manifests,
// Flux Kustomization files, kustomization.yaml files, SOPS files, kubeconfigs and variables, each
// mutated in ways a hostile or careless pull request produces: truncation, stray syntax characters,
// bad indentation, duplicate keys, alias bombs, deep nesting, huge maps, NUL and control bytes,
// byte order marks and text in other encodings, garbage after `...`, Lists whose items is not a list,
// wrong types in known fields.

export type Family = 'manifest' | 'flux' | 'kustomization' | 'sops' | 'kubeconfig' | 'vars' | 'var-flags';

export interface Malformed {
  family: Family;
  /** Short, unique, printable: the test's name. */
  name: string;
  /** The input: YAML text, or for var-flags a JSON list of the flags. */
  text: string;
}

/** mulberry32: a small seeded PRNG, so that every run (and CI) sees the same inputs. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASES: Record<Exclude<Family, 'var-flags'>, string> = {
  manifest: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: app
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.25
          ports: [{containerPort: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: app}
data:
  key: value
  other: "quoted"
`,
  flux: `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps/web
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substitute:
      cluster: prod
  patches:
    - patch: |
        - op: replace
          path: /spec/replicas
          value: 3
      target: {kind: Deployment}
`,
  kustomization: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: app
resources:
  - deployment.yaml
  - ../base
patches:
  - path: patch.yaml
    target: {kind: Deployment, name: web}
configMapGenerator:
  - name: settings
    files: [settings.env]
images:
  - name: nginx
    newTag: "1.26"
`,
  sops: `apiVersion: v1
kind: Secret
metadata:
  name: creds
type: Opaque
stringData:
  password: ENC[AES256_GCM,data:3q2+7w==,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]
sops:
  age:
    - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
      enc: |
        -----BEGIN AGE ENCRYPTED FILE-----
        YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSB4eHh4
        -----END AGE ENCRYPTED FILE-----
  lastmodified: "2024-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:AAAA,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]
  encrypted_regex: ^(data|stringData)$
  version: 3.9.0
`,
  kubeconfig: `apiVersion: v1
kind: Config
clusters:
  - name: c
    cluster:
      server: https://127.0.0.1:6443
      insecure-skip-tls-verify: true
users:
  - name: u
    user: {token: abc}
contexts:
  - name: ctx
    context: {cluster: c, user: u}
current-context: ctx
`,
  vars: `cluster_env: production
replicas: 3
region: eu-west-1
`,
};

const STRAY = [':', '[', ']', '{', '}', '"', "'", '&', '*', '!', '%', '@', '`', '|', '>', '#', '-', '?', ',', '\t'];
const CONTROL = ['\0', '\x01', '\x07', '\x1b', '\x7f', '\uFEFF', '\uFFFD', '\u2028', '\u0085'];
const TAGS = ['!!binary', '!!set', '!!omap', '!custom', '!!int', '!!float', '!!null', '!<tag:x>', '!!str'];
const VALUES = ['null', '~', '[]', '{}', '[a, b]', '{a: b}', '123', '-1', '1e400', '0x1F', 'true', '""', '*nope', '&a'];

const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;

function aliasBomb(levels: number, width: number): string {
  const lines = [`l0: &l0 [${Array(width).fill('"lol"').join(', ')}]`];
  for (let i = 1; i < levels; i++)
    lines.push(
      `l${i}: &l${i} [${Array(width)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

/** Mutations of a base text; each returns the new text and a name. */
const MUTATIONS: ((t: string, rnd: () => number) => [string, string])[] = [
  (t, rnd) => {
    const at = Math.floor(rnd() * t.length);
    return [`truncated at ${at}`, t.slice(0, at)];
  },
  (t, rnd) => {
    const at = Math.floor(rnd() * t.length);
    const c = pick(rnd, STRAY);
    return [`${JSON.stringify(c)} inserted at ${at}`, t.slice(0, at) + c + t.slice(at)];
  },
  (t, rnd) => {
    const at = Math.floor(rnd() * t.length);
    return [`character ${at} deleted`, t.slice(0, at) + t.slice(at + 1)];
  },
  (t, rnd) => {
    const lines = t.split('\n');
    const i = Math.floor(rnd() * lines.length);
    lines.splice(i, 0, lines[i]!);
    return [`line ${i + 1} doubled`, lines.join('\n')];
  },
  (t, rnd) => {
    const lines = t.split('\n');
    const i = Math.floor(rnd() * lines.length);
    const n = 1 + Math.floor(rnd() * 3);
    lines[i] = rnd() < 0.5 ? ' '.repeat(n) + lines[i]! : lines[i]!.slice(n);
    return [`line ${i + 1} re-indented`, lines.join('\n')];
  },
  (t, rnd) => {
    const at = Math.floor(rnd() * t.length);
    const c = pick(rnd, CONTROL);
    return [`U+${c.charCodeAt(0).toString(16)} at ${at}`, t.slice(0, at) + c + t.slice(at)];
  },
  (t, rnd) => {
    const lines = t.split('\n');
    const candidates = lines.flatMap((l, i) => (/^\s*[\w.-]+: \S/.test(l) ? [i] : []));
    if (candidates.length === 0) return ['unchanged', t];
    const i = pick(rnd, candidates);
    const v = rnd() < 0.5 ? pick(rnd, VALUES) : `${pick(rnd, TAGS)} ${pick(rnd, VALUES)}`;
    lines[i] = lines[i]!.replace(/: .*$/, `: ${v}`);
    return [`line ${i + 1} set to ${v}`, lines.join('\n')];
  },
  (t) => [`garbage after ...`, `${t}...\nthis: is [not a document\n`],
  (t) => [`scalar after ...`, `${t}...\ngarbage here\n`],
  (t) => ['UTF-8 byte order mark', `\uFEFF${t}`],
  (t) => ['UTF-16 byte order mark read as UTF-8', `\u00FF\u00FE${t.split('').join('\0')}`],
  (t) => ['Latin-1 bytes read as UTF-8', t.replace(/e/g, '\uFFFD')],
  (t) => ['CRLF line ends', t.replace(/\n/g, '\r\n')],
  (t) => ['CR line ends', t.replace(/\n/g, '\r')],
  (t, rnd) => {
    const depth = 300 + Math.floor(rnd() * 5000);
    return [`nested ${depth} deep`, `${t}\ndeep: ${'['.repeat(depth)}${']'.repeat(depth)}\n`];
  },
  (t, rnd) => {
    const depth = 300 + Math.floor(rnd() * 2000);
    return [
      `block nested ${depth} deep`,
      `${t}\n${Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')} x\n`,
    ];
  },
  (t, rnd) => {
    const levels = 5 + Math.floor(rnd() * 6);
    return [`alias bomb of ${levels} levels`, `${t}\n---\n${aliasBomb(levels, 9)}`];
  },
  (t, rnd) => {
    const lines = t.split('\n');
    const i = Math.floor(rnd() * lines.length);
    const m = /^(\s*)([\w.-]+):/.exec(lines[i]!);
    if (!m) return ['unchanged', t];
    lines.splice(i + 1, 0, `${m[1]}${m[2]}: again`);
    return [`duplicate key ${m[2]}`, lines.join('\n')];
  },
  (t, rnd) => {
    const what = pick(rnd, ['"x"', '3', '{a: b}', 'true', '[1, 2]', 'null']);
    return [`a List whose items is ${what}`, `${t}---\napiVersion: v1\nkind: List\nitems: ${what}\n`];
  },
  (t, rnd) => {
    const n = 1 + Math.floor(rnd() * 200_000);
    return [`a ${n}-character line`, `${t}\nlong: ${'x'.repeat(n)}\n`];
  },
  (_t) => ['only a comment', '# nothing here\n'],
  (_t) => ['empty', ''],
  (_t) => ['a lone document marker', '---\n'],
  (_t) => ['a scalar', 'just text\n'],
  (_t) => ['a list', '- a\n- b\n'],
  (t, rnd) => {
    const i = Math.floor(rnd() * 3);
    return [`document marker inside ${i}`, t.replace(/\n/, ['\n--- |\n', '\n--- >\n', '\n---\n--- \n'][i]!)];
  },
  (t) => ['a directive', `%YAML 1.1\n%TAG ! tag:x,2024:\n---\n${t}`],
  (t) => ['an unknown directive', `%FOO bar\n---\n${t}`],
  (t) => ['a merge key', `${t}\nbase: &b {a: 1}\nm:\n  <<: *b\n  <<: *b\n`],
  (t) => ['a complex key', `${t}\n? [a, b]\n: c\n`],
  (t) => ['an alias key', `${t}\nx: &k y\n*k : z\n`],
];

/** Huge maps: few of them, as each costs real time even when parsing is linear. */
function hugeMap(family: Family, n: number): Malformed {
  const keys = Array.from({ length: n }, (_, i) => `  k${i}: v${i}`).join('\n');
  const text =
    family === 'vars'
      ? `${Array.from({ length: n }, (_, i) => `k${i}: v${i}`).join('\n')}\n`
      : `${BASES[family as Exclude<Family, 'var-flags'>]}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n${keys}\n`;
  return { family, name: `a ${n}-key map`, text };
}

const VAR_FLAGS = [
  '__proto__=x',
  'constructor=x',
  'prototype=x',
  'a=b=c',
  'a=',
  '=a',
  'a',
  '',
  '1a=x',
  'a-b=x',
  'a.b=x',
  'ä=x',
  'a\0b=x',
  'a b=x',
  'a\n=x',
  '_=x',
  'A_1=x',
  'a=\0',
  'a=${b}',
  'a=$(b)',
  `a=${'x'.repeat(100_000)}`,
  `${'n'.repeat(10_000)}=x`,
  'toString=x',
  'hasOwnProperty=x',
];

/** At least `count` malformed inputs, the same on every run for a given seed. */
export function generateMalformed(seed = 17, perFamily = 80): Malformed[] {
  const rnd = prng(seed);
  const out: Malformed[] = [];
  const families = Object.keys(BASES) as Exclude<Family, 'var-flags'>[];
  for (const family of families) {
    const seen = new Set<string>();
    for (let i = 0; out.filter((m) => m.family === family).length < perFamily && i < perFamily * 4; i++) {
      let text = BASES[family];
      const names: string[] = [];
      // One to three mutations stacked.
      const n = 1 + Math.floor(rnd() * 3);
      for (let k = 0; k < n; k++) {
        const [name, next] = pick(rnd, MUTATIONS)(text, rnd);
        names.push(name);
        text = next;
      }
      const name = names.join(', ');
      if (seen.has(name)) continue;
      seen.add(name);
      out.push({ family, name, text });
    }
    out.push(hugeMap(family, 20_000));
  }
  // Huge strings where errors quote: a message must not grow with them (one error was 4.2 MB).
  const huge = 'x'.repeat(1_000_000);
  out.push(
    { family: 'manifest', name: 'a 1 MB duplicate key', text: `${huge}: 1\n${huge}: 2\n` },
    { family: 'manifest', name: 'a 1 MB kind without a name', text: `apiVersion: v1\nkind: ${huge}\nmetadata: {}\n` },
    { family: 'manifest', name: 'a 1 MB name', text: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${huge}}\n` },
    {
      family: 'manifest',
      name: 'a 1 MB label value',
      text: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {a: ${huge}}}\n`,
    },
    { family: 'manifest', name: 'a 1 MB List items text', text: `apiVersion: v1\nkind: List\nitems: ${huge}\n` },
    { family: 'flux', name: 'a 1 MB Kustomization name', text: BASES.flux.replace('name: app', `name: ${huge}`) },
    { family: 'flux', name: 'a 1 MB spec.path', text: BASES.flux.replace('path: ./apps/web', `path: ./${huge}`) },
    { family: 'flux', name: 'a 1 MB interval', text: BASES.flux.replace('interval: 10m', `interval: ${huge}`) },
    {
      family: 'kubeconfig',
      name: 'a 1 MB context name',
      text: BASES.kubeconfig.replace('current-context: ctx', `current-context: ${huge}`),
    },
    { family: 'vars', name: 'a 1 MB variable name', text: `${huge}-: x\n` },
    { family: 'var-flags', name: 'a 1 MB variable name', text: JSON.stringify([`${huge}-=x`]) },
    { family: 'var-flags', name: 'a 1 MB flag without =', text: JSON.stringify([huge]) },
  );
  for (const flag of VAR_FLAGS) {
    out.push({ family: 'var-flags', name: JSON.stringify(flag).slice(0, 60), text: JSON.stringify([flag]) });
  }
  for (let i = 0; i < 20; i++) {
    const flags = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(rnd, VAR_FLAGS));
    out.push({
      family: 'var-flags',
      name: `mix ${i}: ${JSON.stringify(flags).slice(0, 60)}`,
      text: JSON.stringify(flags),
    });
  }
  return out;
}
