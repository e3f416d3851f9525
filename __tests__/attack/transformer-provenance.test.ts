// Secret-derived values carried by kustomize's transformers (issue 47, class 2), through the bundled
// action in preview on a pull_request event against the test cluster. Each case writes
// reports/attack/<case>.json for scripts/attack-summary.mjs; a case fails when its attack got through.
//
// The BASE commit has a Kustomization that decrypts (spec.decryption, the workflow's age key) a
// secretGenerator of a SOPS dotenv file and a SOPS binary file holding real secrets. The pull
// request keeps that Kustomization and its encrypted files, and changes only the kustomization
// around them, to have kustomize carry the decrypted values where no value mask matches: a
// replacement of the generated Secret's base64 data into a ConfigMap, generators reading the
// decrypted files, slices by `options.delimiter` into labels, annotations and names, name hashes
// of what the slices fill, other kinds' fields.
//
// The rule the cases expect: a value decrypted before the build never reaches what is published
// (the log as the runner shows it, the job summary, the outputs, the PR comment and check run),
// neither whole, nor as base64, nor any three characters of it; the fields it reaches are shown as
// changed without their text, and names it reaches are shown with the derived part hidden. The
// positive control shows that a plain ConfigMap of the same decrypting build is still shown as text.
import { randomBytes, randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { baseTree, cm, FROM_CHECKOUT, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  runHostile,
  runnerView,
  type Files,
  type HostileRun,
  publishedChannels,
} from '../helpers/hostile.js';
import { createSopsToolkit, type AgeKey, type SopsToolkit } from '../helpers/sops-fixtures.js';

const TOKEN = `ghs_kr${randomBytes(16).toString('hex')}`;

/**
 * Letters that never meet in the run's own text: not hex (shas, uids), not kustomize's hash
 * alphabet, no English triple (with a dash either); so any three of them in an output came from the
 * secret. The password's groups are split by dashes, the API key's halves by a dot: the delimiters
 * the slicing cases split on.
 */
const RARE = 'jqvwx';
const DELIMITER = '-';
const rare = (n: number) => Array.from({ length: n }, () => RARE[randomInt(RARE.length)]).join('');

/** The secrets of the base commit: a password of dash-separated groups (to be split), and an API key. */
interface Secrets {
  password: string;
  apiKey: string;
}

const fresh = (): Secrets => ({
  // one k, the only one: where case 6 cuts it
  password: [rare(5), `${rare(2)}k${rare(2)}`, rare(5), rare(5)].join(DELIMITER),
  apiKey: `${rare(10)}.${rare(17)}`,
});

/** What must not be published of `value`: itself, its base64, every three characters of it. */
function forbidden(value: string): { what: string; text: string }[] {
  const out = [
    { what: 'the value', text: value },
    { what: 'its base64', text: Buffer.from(value).toString('base64') },
  ];
  for (let i = 0; i + 3 <= value.length; i++)
    out.push({ what: `its characters ${i}-${i + 2}`, text: value.slice(i, i + 3) });
  return out;
}

/** Evidence of any form of any secret on any surface (quoted around the place, the secret starred). */
function leaks(run: HostileRun, s: Secrets): string[] {
  const out: string[] = [];
  for (const [where, text] of publishedChannels(run)) {
    for (const [name, value] of [
      ['password', s.password],
      ['api key', s.apiKey],
    ] as const) {
      for (const f of forbidden(value)) {
        const at = text.indexOf(f.text);
        if (at === -1) continue;
        const around = text.slice(Math.max(0, at - 60), at + f.text.length + 60).replaceAll(f.text, '<HERE>');
        out.push(`${name}: ${f.what} in ${where}: ${JSON.stringify(around)}`);
        break;
      }
    }
  }
  return out;
}

/**
 * kustomize's name hash of a generated object (the first 10 hex digits of a SHA-256, 0 1 3 a e
 * spelt g h k m t): a function of the secret, so a guess of a short slice can be checked against it.
 */
const HASHED = /\b(?:db|env|whole|probe)-[245-9bcdfghkmt]{10}\b/;

/** Evidence of a generated name's hash of a decrypted value on any surface. */
function hashes(run: HostileRun): string[] {
  const out: string[] = [];
  for (const [where, text] of publishedChannels(run)) {
    const m = HASHED.exec(text);
    if (m) out.push(`the name hash ${m[0]} (a function of the secret) in ${where}`);
  }
  return out;
}

/** Evidence that the run did not get as far as the decrypting build (then it proves nothing). */
function reachedBuild(run: HostileRun): string[] {
  if (/Decrypted \d+ SOPS file\(s\) before the build/.test(run.stdout)) return [];
  return [`the run never decrypted the base's SOPS files (exit ${run.code}): the case proves nothing`];
}

const SEC = 'apps/sec';

/** The base's kustomization of the decrypting Kustomization (the head rewrites it). */
const secKustomization = (ns: string, more = '') =>
  `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${ns}
secretGenerator:
- name: db
  envs: [secret.enc.env]
  files: [api-key=key.txt]
${more}`;

/** A ConfigMap the replacements write into. */
const target = (name: string, extra = '') =>
  `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  annotations: {copied: x, s0: x, s1: x, s2: x, s3: x}
  labels: {copied: x, s0: x, s1: x, s2: x, s3: x}
data: {copied: x, key: x, keyslice: x, s0: x, s1: x, s2: x, s3: x}
${extra}`;

/** A replacement from the generated Secret (base64 data) or ConfigMap, optionally a slice. */
const replacement = (
  source: { kind: string; name: string; field: string; delimiter?: string; index?: number },
  targets: { kind: string; name: string; paths: string[]; delimiter?: string; index?: number }[],
) =>
  `- source:
    kind: ${source.kind}
    name: ${source.name}
    fieldPath: ${source.field}
${source.delimiter !== undefined ? `    options: {delimiter: "${source.delimiter}", index: ${source.index ?? 0}}\n` : ''}  targets:
${targets
  .map(
    (t) =>
      `  - select: {kind: ${t.kind}, name: ${t.name}}
    fieldPaths: [${t.paths.map((p) => JSON.stringify(p)).join(', ')}]
${t.delimiter !== undefined ? `    options: {delimiter: "${t.delimiter}", index: ${t.index ?? 0}}\n` : ''}`,
  )
  .join('')}`;

/** The decrypted env file parsed into a ConfigMap without a hash, for slicing plain text. */
const PARSED = `configMapGenerator:
- name: parsed
  envs: [secret.enc.env]
  files: [apikey=key.txt]
  options: {disableNameSuffixHash: true}
`;

/** A core/v1 object the cluster holds before the run, so that the preview shows a diff of its fields. */
interface Live {
  resource: 'configmaps' | 'services';
  object: Record<string, unknown>;
}

const liveMap = (ns: string, name: string, data: Record<string, string>): Live => ({
  resource: 'configmaps',
  object: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, annotations: { copied: 'x' }, labels: { copied: 'x' } },
    data,
  },
});

/**
 * The ServiceAccount the preview acts as, allowed everything in the case's namespace: a preview
 * reads, compares and shows a live object it does not own only as an account that may (so the
 * field diffs, where the values would show, are there to look at).
 */
const ACCOUNT = 'kr-preview';

async function previewAccount(client: ClusterClient, ns: string): Promise<void> {
  const meta = { name: ACCOUNT, namespace: ns };
  await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
  });
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  await client.request('POST', `${rbac}/roles`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta,
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    },
  });
  await client.request('POST', `${rbac}/rolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ACCOUNT },
      subjects: [{ kind: 'ServiceAccount', name: ACCOUNT, namespace: ns }],
    },
  });
}

interface Case {
  id: string;
  title: string;
  control?: boolean;
  head: (ns: string) => Files;
  live?: (ns: string) => Live[];
  judge?: (run: HostileRun, ns: string, marker: string) => string[];
}

const CASES: Case[] = [
  {
    id: '47c-1-replacement-copies-secret-data-base64',
    title: "a replacement copies the generated Secret's base64 data into a ConfigMap's data and annotation",
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `resources: [leak.yaml]
replacements:
${replacement({ kind: 'Secret', name: 'db', field: 'data.PASSWORD' }, [
  { kind: 'ConfigMap', name: 'leak', paths: ['data.copied', 'metadata.annotations.copied'] },
])}${replacement({ kind: 'Secret', name: 'db', field: 'data.api-key' }, [
          { kind: 'ConfigMap', name: 'leak', paths: ['data.key'] },
        ])}`,
      ),
      [`${SEC}/leak.yaml`]: target('leak'),
    }),
    live: (ns) => [liveMap(ns, 'leak', { copied: 'x', key: 'x' })],
  },
  {
    id: '47c-2-generators-read-decrypted-files',
    title: 'configMapGenerators read the decrypted files: whole (files) and parsed (envs), with name hashes',
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `configMapGenerator:
- name: whole
  files: [secret.enc.env, key.txt]
- name: env
  envs: [secret.enc.env]
- name: unhashed
  envs: [secret.enc.env]
  files: [key.txt]
  options: {disableNameSuffixHash: true}
`,
      ),
    }),
    live: (ns) => [liveMap(ns, 'unhashed', { PASSWORD: 'x', USER: 'x', 'key.txt': 'x' })],
  },
  {
    id: '47c-3-delimiter-slices-into-labels-annotations-data',
    title: 'replacements copy slices (options.delimiter/index) of the decrypted values into labels, annotations, data',
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `${PARSED}resources: [leak.yaml]
replacements:
${[0, 1, 2, 3]
  .map((i) =>
    replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.PASSWORD', delimiter: DELIMITER, index: i }, [
      { kind: 'ConfigMap', name: 'leak', paths: [`metadata.labels.s${i}`, `metadata.annotations.s${i}`, `data.s${i}`] },
    ]),
  )
  .join('')}${replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.apikey', delimiter: '.', index: 1 }, [
          { kind: 'ConfigMap', name: 'leak', paths: ['data.keyslice'] },
        ])}`,
      ),
      [`${SEC}/leak.yaml`]: target('leak'),
    }),
    live: (ns) => [liveMap(ns, 'leak', { copied: 'x', key: 'x' }), liveMap(ns, 'parsed', { PASSWORD: 'x' })],
  },
  {
    id: '47c-4-slices-into-names-and-name-hashes',
    title:
      "slices of the decrypted value become part of objects' names, and fill a generated ConfigMap whose name hash is an oracle",
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `${PARSED}- name: probe
  literals: [x=0]
resources: [leak.yaml, leak2.yaml]
replacements:
${replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.PASSWORD', delimiter: DELIMITER, index: 0 }, [
  { kind: 'ConfigMap', name: 'leak-x', paths: ['metadata.name'], delimiter: '-', index: 1 },
  { kind: 'ConfigMap', name: 'probe', paths: ['data.x'] },
])}${replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.PASSWORD', delimiter: DELIMITER, index: 2 }, [
          { kind: 'ConfigMap', name: 'other.x.cm', paths: ['metadata.name'], delimiter: '.', index: 1 },
        ])}`,
      ),
      [`${SEC}/leak.yaml`]: target('leak-x'),
      [`${SEC}/leak2.yaml`]: target('other.x.cm'),
    }),
  },
  {
    id: '47c-5-decrypted-values-in-other-kinds',
    title: 'the decrypted values land in a Deployment env, a Service annotation, a Role list and a CronJob args',
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `${PARSED}resources: [kinds.yaml]
replacements:
${replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.PASSWORD' }, [
  { kind: 'Deployment', name: 'web', paths: ['spec.template.spec.containers.[name=web].env.[name=PW].value'] },
  { kind: 'Service', name: 'web', paths: ['metadata.annotations.pw'] },
  { kind: 'CronJob', name: 'job', paths: ['spec.jobTemplate.spec.template.spec.containers.[name=c].args.1'] },
])}${replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.apikey', delimiter: '.', index: 1 }, [
          { kind: 'Role', name: 'reader', paths: ['rules.0.resourceNames.0'] },
        ])}`,
      ),
      [`${SEC}/kinds.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.9
        env: [{name: PW, value: x}]
---
apiVersion: v1
kind: Service
metadata: {name: web, annotations: {pw: x}}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get], resourceNames: [x]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: job}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: registry.k8s.io/pause:3.9, args: [--pw, x]}]
`,
    }),
    live: (ns) => [
      {
        resource: 'services',
        object: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: ns, annotations: { pw: 'x' } },
          spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
        },
      },
    ],
  },
  {
    id: '47c-6-slices-cut-at-letters-of-the-secret',
    title: 'replacements cut the decrypted value at one of its own letters, so that no stand-in splits the same way',
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `${PARSED}resources: [leak.yaml]
replacements:
${[0, 1]
  .map((i) =>
    replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.PASSWORD', delimiter: 'MIDDLE', index: i }, [
      { kind: 'ConfigMap', name: 'leak', paths: [`metadata.labels.s${i}`, `data.s${i}`] },
    ]),
  )
  .join('')}`,
      ),
      [`${SEC}/leak.yaml`]: target('leak'),
    }),
    live: (ns) => [liveMap(ns, 'leak', { copied: 'x', key: 'x' })],
  },
  {
    id: '47c-7-slice-quoted-by-a-kustomize-error',
    title: "a slice is copied, then split past its end: kustomize's error quotes the slice",
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(
        ns,
        `${PARSED}resources: [leak.yaml]
replacements:
${replacement({ kind: 'ConfigMap', name: 'parsed', field: 'data.PASSWORD', delimiter: DELIMITER, index: 0 }, [
  { kind: 'ConfigMap', name: 'leak', paths: ['data.s0'] },
])}${replacement({ kind: 'ConfigMap', name: 'leak', field: 'data.s0', delimiter: DELIMITER, index: 3 }, [
          { kind: 'ConfigMap', name: 'leak', paths: ['data.s1'] },
        ])}`,
      ),
      [`${SEC}/leak.yaml`]: target('leak'),
    }),
    judge: (run) =>
      /out of bounds/.test(run.stdout) ? [] : ['kustomize did not fail on the index: the case proves nothing'],
  },
  {
    id: '47c-control-plain-change-in-decrypting-build',
    title: 'control: a plain ConfigMap of the decrypting build, and one beside it, are still shown as text',
    control: true,
    head: (ns) => ({
      [`${SEC}/kustomization.yaml`]: secKustomization(ns, 'resources: [plain.yaml]\n'),
      [`${SEC}/plain.yaml`]: cm(ns, 'plain', 'shown: visible-MARKER'),
      'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed-MARKER'),
    }),
    live: (ns) => [liveMap(ns, 'plain', { shown: 'old' }), liveMap(ns, 'app-settings', { a: 'b' })],
    judge: (run, _ns, marker) => {
      const out: string[] = [];
      const comment = run.github.join('\n');
      for (const v of [`visible-${marker}`, `changed-${marker}`])
        if (!comment.includes(v)) out.push(`the PR comment does not show ${v} as text`);
      // The generated Secret is listed, its name hash hidden (hashes() looks for the hash itself).
      if (!comment.includes('Secret/') || !/db-\*\*\*/.test(comment))
        out.push('the PR comment does not list the generated Secret with its hash hidden');
      return out;
    },
  },
];

describe.concurrent('secret-derived values carried by kustomize transformers (preview, bundled action)', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;
  let sops: SopsToolkit;
  let key: AgeKey;

  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    github = await startFakeGitHub({
      tokens: { [TOKEN]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
    sops = createSopsToolkit();
    key = sops.ageKey();
  });

  afterAll(async () => {
    await github.close();
    client.close();
    sops.cleanup();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    let run: HostileRun | undefined;
    let ns: string | undefined;
    await attackCase(
      c,
      async (evidence, result) => {
        ns = await freshNamespace(client, 'atk');
        for (const l of c.live?.(ns) ?? [])
          await client.request('POST', `/api/v1/namespaces/${ns}/${l.resource}`, { body: l.object });
        await previewAccount(client, ns);
        const s = fresh();
        const marker = randomBytes(6).toString('hex');
        const base: Files = {
          ...baseTree(ns),
          'clusters/prod/sec.yaml': ks(ns, 'sec', `./${SEC}`, FROM_CHECKOUT, '  decryption: {provider: sops}\n'),
          [`${SEC}/kustomization.yaml`]: secKustomization(ns),
          [`${SEC}/secret.enc.env`]: sops.encrypt(`PASSWORD=${s.password}\nUSER=app\n`, 'dotenv', {
            age: [key.recipient],
          }),
          [`${SEC}/key.txt`]: sops.encrypt(s.apiKey, 'binary', { age: [key.recipient] }),
        };
        // MIDDLE: a letter of this run's password (its only k), to cut it at.
        const head = Object.fromEntries(
          Object.entries(c.head(ns)).map(([f, t]) => [
            f,
            typeof t === 'string' ? t.replaceAll('MARKER', marker).replaceAll('MIDDLE', 'k') : t,
          ]),
        );
        run = await runHostile({
          client,
          github,
          number: 4700 + index,
          base,
          head,
          inputs: {
            kubeconfig,
            mode: 'preview',
            kustomizations: 'clusters/prod/*.yaml',
            'github-token': TOKEN,
            'sops-age-key': key.identity,
            'default-service-account': ACCOUNT,
          },
          timeoutMs: 120_000,
        });
        Object.assign(result, {
          exitCode: run.code,
          runMs: run.ms,
          log: runnerView(`${run.stdout}\n${run.stderr}`, 'stdout').shown.slice(-80).join('\n'),
          comment: run.github[0]?.slice(0, 6000),
        });
        evidence.push(
          ...reachedBuild(run),
          ...leaks(run, s),
          ...hashes(run),
          ...evidenceOf({ run, canaries: [], listeners: [], namespace: ns }),
          ...(c.judge?.(run, ns, marker) ?? []),
        );
      },
      async () => {
        if (run) await cleanupRun(run);
        if (ns) await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      },
    );
  });
});
