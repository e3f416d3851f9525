// Secret slices, terminal escapes and chosen masks (issue 47, class 2's API errors and class 10),
// through the bundled action in preview on a pull_request event against the test cluster. Each case
// writes reports/attack/<case>.json for scripts/attack-summary.mjs; a case fails when its attack got
// through.
//
// The rules the cases expect:
// - a value that came from a Secret (substituteFrom, secret-vars, SOPS) never reaches a published
//   channel (log, summary, outputs, PR comment, check run), whole, as base64, or as any 3-character
//   slice: the API server quotes what it refuses (`Unsupported value: "qxz"`), and in an untrusted
//   run an error about an object holding secret-derived values shows the field and the reason, never
//   the value (src/ssa/error-redaction.ts);
// - raw terminal escapes from the tree (a name, a path, a kustomize error) reach neither the log nor
//   the summary (src/util/terminal.ts);
// - a value the pull request encrypted itself (a data key no base file holds) registers no mask:
//   it cannot hide an object's name in the report; a value of a SOPS file of the base still does
//   (src/source/base-keys.ts).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { CHECKOUT, cm, ks } from '../helpers/flux-trees.js';
import { runAction } from '../helpers/action.js';
import { createSopsToolkit, type AgeKey, type SopsToolkit } from '../helpers/sops-fixtures.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  prWorkspace,
  pullRequestEvent,
  putSecret,
  runHostile,
  runnerView,
  type Canary,
  type Files,
  type HostileRun,
  publishedChannels,
} from '../helpers/hostile.js';

const TOKEN = `ghs_kr${randomBytes(16).toString('hex')}`;

/**
 * A secret of letters that English, hex and the action's own words rarely put together, so that a
 * 3-character slice of it found in the output is the slice and not a coincidence.
 */
function rareSecret(n = 12): string {
  const letters = 'qxzjvkw';
  return Array.from(randomBytes(n), (b) => letters[b % letters.length]).join('');
}

/** Every 3-character slice of `s`. */
const slices = (s: string) => [...new Set(Array.from({ length: s.length - 2 }, (_, i) => s.slice(i, i + 3)))];

/** Evidence of any 3-character slice of `secret` in a published channel (raw text: no decoding). */
function sliceEvidence(run: HostileRun, secret: string): string[] {
  const out: string[] = [];
  for (const [what, text] of publishedChannels(run)) {
    for (const s of slices(secret)) {
      const at = text.indexOf(s);
      if (at >= 0)
        out.push(`slice ${JSON.stringify(s)} in ${what}: ${JSON.stringify(text.slice(Math.max(0, at - 80), at + 40))}`);
    }
  }
  return out;
}

/**
 * A kustomization that reads a borrowed encrypted dotenv file with a secretGenerator and copies its
 * data into a ConfigMap whole and cut into pieces at characters of its base64 (replacements'
 * `options.delimiter`: an attacker tries many; the test picks ones the value has).
 */
function borrowedKustomization(ns: string, secret: string): string {
  const b64 = Buffer.from(secret).toString('base64');
  const cuts = [...new Set([b64[3]!, b64[8]!])];
  const target = (key: string, options: string) =>
    `  - select: {kind: ConfigMap, name: app-settings}\n    fieldPaths: [data.${key}]\n    options: {create: true${options}}\n`;
  return (
    `namespace: ${ns}\nresources: [cm.yaml]\nsecretGenerator:\n- name: borrowed\n  envs: [borrowed.enc.env]\n  options: {disableNameSuffixHash: true}\n` +
    `replacements:\n- source: {kind: Secret, name: borrowed, fieldPath: data.PASSWORD}\n  targets:\n` +
    target('whole', '') +
    cuts
      .flatMap((c, i) => [0, 1].map((n) => target(`cut${i}${n}`, `, delimiter: ${JSON.stringify(c)}, index: ${n}`)))
      .join('')
  );
}

/** Evidence of `secret` whole, as base64 (a Secret's data, a copy of it) or in 3-character slices, in a published channel. */
function copyEvidence(run: HostileRun, secret: string): string[] {
  // Any 6 characters of its base64 (the pieces a delimiter cuts): a random text repeats none.
  const b64 = Buffer.from(secret).toString('base64').replace(/=+$/, '');
  const pieces = [...new Set(Array.from({ length: b64.length - 5 }, (_, i) => b64.slice(i, i + 6)))];
  const found = publishedChannels(run).flatMap(([what, text]) =>
    pieces.filter((p) => text.includes(p)).map((p) => `${JSON.stringify(p)} of the secret's base64 in ${what}`),
  );
  return [...found, ...sliceEvidence(run, secret)];
}

/** Evidence that the server did not refuse the objects (the attack needs the refusals to read). */
function refused(run: HostileRun, fields: readonly string[]): string[] {
  const said = publishedChannels(run)
    .map(([, t]) => t)
    .join('\n');
  const out: string[] = [];
  if (run.code !== 2) out.push(`the preview did not fail (exit ${run.code}): the server refused nothing`);
  if (!said.includes('dry-run failed')) out.push('no dry-run failed: the objects never reached the server');
  for (const f of fields) if (!said.includes(f)) out.push(`no error names the field ${f}`);
  return out;
}

/** The values the run registered with the runner, as it reads them. */
function masksOf(run: HostileRun): string[] {
  const un = (d: string) => d.replaceAll('%0D', '\r').replaceAll('%0A', '\n').replaceAll('%25', '%');
  return [...runnerView(run.stdout, 'stdout').commands, ...runnerView(run.stderr, 'stderr').commands]
    .filter((c) => c.name === 'add-mask')
    .map((c) => un(c.data));
}

/** Evidence that the run did not fail with an error saying `expected` (the escapes had to be printed). */
function failedWith(run: HostileRun, expected: RegExp): string[] {
  if (run.code !== 2) return [`the run did not fail (exit ${run.code})`];
  return expected.test(`${run.stdout}\n${run.stderr}`) ? [] : [`no error matching ${String(expected)} was printed`];
}

/** Raw terminal controls left in a channel (tab, LF and CR of CRLF are text). */
function escapesIn(run: HostileRun): string[] {
  const out: string[] = [];
  for (const [what, text] of [
    ['stdout (raw)', run.stdout],
    ['stderr (raw)', run.stderr],
    ['the job summary', run.summary],
  ] as const) {
    // eslint-disable-next-line no-control-regex
    const m = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/.exec(text);
    if (m)
      out.push(
        `a raw control ${JSON.stringify(m[0])} in ${what}: ${JSON.stringify(text.slice(Math.max(0, m.index - 60), m.index + 30))}`,
      );
  }
  return out;
}

/** The base: the checkout and Kustomization app of `ns` (substituting from the Secret app-vars), a ConfigMap. */
const base = (ns: string, more: Files = {}): Files => ({
  'clusters/prod/flux-system.yaml': CHECKOUT,
  'clusters/prod/app.yaml': ks(
    ns,
    'app',
    './apps/app',
    undefined,
    '  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: app-vars}\n',
  ),
  'apps/app/cm.yaml': cm(ns, 'app-settings'),
  ...more,
});

const svc = (ns: string, name: string, ports: string, extra = '') =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ${ns}}\nspec:\n  selector: {app: x}\n${extra}  ports:\n${ports}`;

interface Env {
  ns: string;
  secret: string;
  sops: SopsToolkit;
  age: AgeKey;
  kubeconfig: string;
  client: ClusterClient;
}

interface Case {
  id: string;
  title: string;
  control?: boolean;
  /** Needs the sops and age tools (a file encrypted for the workflow's key). */
  sops?: boolean;
  base?: (e: Env) => Files;
  head: (e: Env) => Files;
  inputs?: (e: Env) => Record<string, string>;
  /** Runs before the preview, given the base's files (an apply of the base, say). */
  before?: (e: Env, base: Files) => Promise<void>;
  judge: (run: HostileRun, e: Env) => string[];
}

const ESC = '\x1b';

const CASES: Case[] = [
  {
    id: '47-2a-secret-slices-enum-fields',
    title:
      'a substituteFrom Secret sliced 3 characters at a time (${v:o:3}) into enum fields of several Services: the server quotes each refused slice',
    head: ({ ns }) => ({
      'apps/app/svc.yaml': [
        svc(ns, 'one', '  - {port: 80, protocol: "${SECRET:0:3}"}\n  - {port: 81, protocol: "${SECRET:3:3}"}\n'),
        svc(ns, 'two', '  - {port: 80, protocol: TCP}\n', '  sessionAffinity: "${SECRET:6:3}"\n'),
        svc(ns, 'three', '  - {port: 80}\n', '  type: "${SECRET:9:3}"\n'),
        svc(ns, 'four', '  - {port: 80}\n', '  externalTrafficPolicy: "${SECRET:1:3}"\n  type: NodePort\n'),
      ].join('---\n'),
    }),
    judge: (run, e) => [...refused(run, ['protocol', 'sessionAffinity']), ...sliceEvidence(run, e.secret)],
  },
  {
    id: '47-2b-secret-vars-slices-quoted-values',
    title:
      'a secret-vars value sliced into a target port, a pod template label, a container name and an image pull policy: Invalid and Unsupported values quoted by the server',
    inputs: ({ secret }) => ({ 'secret-vars': JSON.stringify({ PASS: secret }) }),
    head: ({ ns }) => ({
      'apps/app/svc.yaml': svc(ns, 'web', '  - {port: 80, targetPort: "${PASS:0:3}-"}\n'),
      'apps/app/deploy.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, slice: "\${PASS:3:3}!"}}
    spec:
      containers:
      - name: "\${PASS:6:3}_c"
        image: nginx
        imagePullPolicy: "\${PASS:9:3}"
`,
    }),
    judge: (run, e) => [...refused(run, ['targetPort', 'imagePullPolicy']), ...sliceEvidence(run, e.secret)],
  },
  {
    id: '47-2c-secret-slices-hosts-numbers-and-a-secret',
    title:
      'a substituteFrom Secret sliced into an Ingress host, an ExternalName, a replica count and a dockerconfigjson Secret: DNS, numeric and JSON errors',
    head: ({ ns }) => ({
      'apps/app/more.yaml': `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ${ns}}
spec:
  rules:
  - host: "\${SECRET:0:3}_.example.com"
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: ${ns}}
spec: {type: ExternalName, externalName: "\${SECRET:4:3}_x"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: count, namespace: ${ns}}
spec:
  replicas: "\${SECRET:8:3}"
  selector: {matchLabels: {app: c}}
  template:
    metadata: {labels: {app: c}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Secret
metadata: {name: pull, namespace: ${ns}}
type: kubernetes.io/dockerconfigjson
stringData: {.dockerconfigjson: "\${SECRET:2:3}"}
`,
    }),
    judge: (run, e) => [...refused(run, ['host', 'externalName']), ...sliceEvidence(run, e.secret)],
  },
  {
    id: '47-2d-secret-whole-and-sliced-in-one-field',
    title:
      'the whole secret, its slices and its upper-cased copy (${v^^}) in refused port names and protocols of Services',
    head: ({ ns }) => ({
      'apps/app/svc.yaml': [
        svc(ns, 'whole', '  - {port: 80, name: "${SECRET}_"}\n'),
        svc(ns, 'parts', '  - {port: 80, name: "${SECRET:0:3}."}\n  - {port: 81, name: "${SECRET:5:3}."}\n'),
        svc(ns, 'upper', '  - {port: 80, protocol: "${SECRET^^}"}\n'),
      ].join('---\n'),
    }),
    judge: (run, e) => [
      ...refused(run, ['name']),
      ...sliceEvidence(run, e.secret),
      ...sliceEvidence(run, e.secret.toUpperCase()),
    ],
  },
  {
    id: '47-2e-sops-secret-sliced-through-substitute-from',
    sops: true,
    title:
      'a SOPS-encrypted Secret of the base, applied and read back by substituteFrom, sliced into a protocol, a DNS name and a port name of Services',
    base: ({ ns, sops, age, secret }) => ({
      ...base(ns),
      'clusters/prod/app.yaml': ks(
        ns,
        'app',
        './apps/app',
        undefined,
        '  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: app-vars}\n    - {kind: Secret, name: sops-vars, optional: true}\n',
      ),
      'apps/app/vars.yaml': sops.encrypt(
        `apiVersion: v1\nkind: Secret\nmetadata: {name: sops-vars, namespace: ${ns}}\ntype: Opaque\nstringData: {SOPSVAL: ${secret}}\n`,
        'yaml',
        { age: [age.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
      ),
    }),
    before: applyBase,
    inputs: ({ age }) => ({ 'sops-age-key': age.identity }),
    head: ({ ns }) => ({
      'apps/app/svc.yaml': [
        svc(ns, 'p', '  - {port: 80, protocol: "${SOPSVAL:0:3}"}\n  - {port: 81, protocol: "${SOPSVAL:4:3}"}\n'),
        svc(ns, 'e', '', '  type: ExternalName\n  externalName: "${SOPSVAL:8:3}_"\n'),
        svc(ns, 'n', '  - {port: 80, name: "${SOPSVAL:2:3}_"}\n'),
      ].join('---\n'),
    }),
    judge: (run, e) => [...refused(run, ['protocol', 'externalName']), ...sliceEvidence(run, e.secret)],
  },
  {
    id: '47-10a-ansi-escapes-in-a-name',
    title: 'an object name with terminal escapes (colour, erase line, cursor up, OSC title): refused, its name quoted',
    head: ({ ns }) => ({
      'apps/app/bad.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "ok\\e[2K\\e[1A\\e[32mReady\\e]0;pwned\\a\\b\\b", namespace: ${ns}}\ndata: {a: b}\n`,
    }),
    judge: (run) => [...escapesIn(run), ...failedWith(run, /metadata\.name|not a valid name/)],
  },
  {
    id: '47-10b-ansi-escapes-in-a-path',
    title:
      'a file whose name carries escapes (OSC 8 hyperlink, CSI, a carriage return) and fails to parse: its path is printed',
    head: () => ({
      [`apps/app/x${ESC}]8;;https://evil.example${ESC}\\link${ESC}]8;;${ESC}\\${ESC}[31m\rok.yaml`]:
        'kind: [unclosed\n',
    }),
    judge: (run) => [...escapesIn(run), ...failedWith(run, /apps\/app\/x/)],
  },
  {
    id: '47-10c-ansi-escapes-in-a-kustomize-error',
    title: 'a kustomization naming a missing resource and a bad patch with escapes: kustomize quotes them in its error',
    head: ({ ns }) => ({
      'clusters/prod/app.yaml': ks(ns, 'app', './apps/kz'),
      'apps/kz/kustomization.yaml': `resources:\n- "missing\\e[2K\\e[1A\\e]0;title\\a\\b.yaml"\n- cm.yaml\n`,
      'apps/kz/cm.yaml': cm(ns, 'kz'),
    }),
    judge: (run) => [...escapesIn(run), ...failedWith(run, /missing/)],
  },
  {
    id: '47-10d-encrypted-value-hides-a-pruned-name',
    sops: true,
    title:
      'the pull request encrypts, with the workflow’s public key, a value equal to the name of the object it prunes: masked, it hid the name in the would-delete list',
    base: ({ ns }) => base(ns, { 'apps/app/legacy.yaml': cm(ns, 'legacy-settings-kr') }),
    before: applyBase,
    head: ({ ns, sops, age }) => ({
      'apps/app/legacy.yaml': null,
      'apps/app/enc.yaml': sops.encrypt(cm(ns, 'chosen', 'pick: legacy-settings-kr'), 'yaml', {
        age: [age.recipient],
        flags: ['--encrypted-regex', '^data$'],
      }),
    }),
    inputs: ({ age }) => ({ 'sops-age-key': age.identity }),
    judge: (run) => chosenMaskEvidence(run, 'legacy-settings-kr', true),
  },
  {
    id: '47-10e-encrypted-value-hides-report-words',
    sops: true,
    title:
      'the pull request encrypts (a JSON resource and a dotenv file of a secretGenerator) values equal to words of the report (an object name, "configured"): masked, they hid what changes',
    head: ({ ns, sops, age }) => ({
      'clusters/prod/app.yaml': ks(ns, 'app', './apps/gen'),
      'apps/gen/kustomization.yaml': `namespace: ${ns}\nresources: [cm.yaml, enc.json]\nsecretGenerator:\n- name: gen\n  envs: [words.enc.env]\n  options: {disableNameSuffixHash: true}\n`,
      'apps/gen/cm.yaml': cm(ns, 'app-settings', 'a: changed-kr'),
      'apps/gen/enc.json': sops.encrypt(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'j', namespace: ns },
          data: { w: 'app-settings' },
        }),
        'json',
        { age: [age.recipient], flags: ['--encrypted-regex', '^data$'] },
      ),
      'apps/gen/words.enc.env': sops.encrypt('W1=configured\nW2=app-settings\n', 'dotenv', { age: [age.recipient] }),
    }),
    inputs: ({ age }) => ({ 'sops-age-key': age.identity }),
    before: applyBase,
    judge: (run) => [
      ...chosenMaskEvidence(run, 'app-settings', false),
      ...chosenMaskEvidence(run, 'configured', false, false),
    ],
  },
  {
    id: '47-10f-another-repositorys-sops-file-copied-in',
    sops: true,
    title:
      'the pull request copies in a SOPS ConfigMap of another repository encrypted for the same recipient (its data key is on no base file): decrypted and unmasked, its password would be shown in the diff',
    base: ({ ns }) => base(ns),
    before: applyBase,
    head: ({ ns, sops, age, secret }) => ({
      'apps/app/borrowed.yaml': sops.encrypt(cm(ns, 'borrowed', `password: ${secret}`), 'yaml', {
        age: [age.recipient],
        flags: ['--encrypted-regex', '^data$'],
      }),
    }),
    inputs: ({ age }) => ({ 'sops-age-key': age.identity }),
    judge: (run, e) => [
      ...(run.code === 2 ? [`the preview failed: ${run.stdout.slice(-600)}`] : []),
      ...(run.github.join('\n').includes('borrowed') ? [] : ['the borrowed ConfigMap is not in the preview']),
      ...copyEvidence(run, e.secret),
    ],
  },
  {
    id: '47-10g-another-repositorys-env-file-read-by-a-generator',
    sops: true,
    title:
      'the pull request copies in another repository’s encrypted dotenv file, has a secretGenerator read it and replacements copy it into a ConfigMap, whole and cut at characters of its base64',
    base: ({ ns }) => base(ns),
    before: applyBase,
    head: ({ ns, sops, age, secret }) => ({
      'apps/app/kustomization.yaml': borrowedKustomization(ns, secret),
      'apps/app/borrowed.enc.env': sops.encrypt(`PASSWORD=${secret}\n`, 'dotenv', { age: [age.recipient] }),
    }),
    inputs: ({ age }) => ({ 'sops-age-key': age.identity }),
    judge: (run, e) => [
      ...(run.code === 2 ? [`the preview failed: ${run.stdout.slice(-600)}`] : []),
      ...copyEvidence(run, e.secret),
    ],
  },
  {
    id: '47-10-control-base-encrypted-value-stays-masked',
    sops: true,
    control: true,
    title: 'control: a value of a SOPS file the base commit holds is still masked and hidden everywhere',
    base: ({ ns, sops, age, secret }) =>
      base(ns, {
        'apps/app/db.yaml': sops.encrypt(cm(ns, 'db-conf', `password: ${secret}`), 'yaml', {
          age: [age.recipient],
          flags: ['--encrypted-regex', '^data$'],
        }),
      }),
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed') }),
    inputs: ({ age }) => ({ 'sops-age-key': age.identity }),
    judge: (run, e) => {
      const out: string[] = [];
      if (run.code === 2) out.push('the preview failed');
      if (!masksOf(run).includes(e.secret)) out.push('the base file’s decrypted value was not masked');
      return out;
    },
  },
];

/** Applies the base tree (a push to main), so that the preview has an inventory to prune from. */
async function applyBase(e: Env, files: Files): Promise<void> {
  const { root, baseSha } = await prWorkspace(files, {});
  const pr = pullRequestEvent(1, baseSha, baseSha);
  const res = await runAction(
    root,
    {
      kubeconfig: e.kubeconfig,
      mode: 'apply',
      kustomizations: 'clusters/prod/*.yaml',
      comment: 'false',
      'check-run': 'false',
      'sops-age-key': e.age.identity,
    },
    { env: { ...pr.env, GITHUB_EVENT_NAME: 'push' }, event: { name: 'push', payload: {} } },
  );
  if (res.code !== 0) throw new Error(`the apply of the base failed (exit ${res.code}): ${res.stdout.slice(-2000)}`);
}

/**
 * Evidence that `word`, a value the pull request encrypted itself, was registered as a mask or
 * hidden in the report; `pruned`: the word names an object of the would-delete list.
 */
function chosenMaskEvidence(run: HostileRun, word: string, pruned: boolean, inReport = true): string[] {
  const out: string[] = [];
  if (run.code === 2) out.push(`the preview failed: ${run.stdout.slice(-600)}`);
  if (masksOf(run).some((m) => m === word || word.includes(m)))
    out.push(`::add-mask:: of the chosen value ${JSON.stringify(word)}`);
  const shown: (readonly [string, string])[] = [
    ['the log (as shown)', runnerView(run.stdout, 'stdout').shown.join('\n')],
    ...(inReport
      ? ([
          ['the job summary', run.summary],
          ['the PR comment / check run', run.github.join('\n')],
        ] as const)
      : []),
  ];
  for (const [what, text] of shown) {
    if (!text.includes(word)) out.push(`${what} does not show ${JSON.stringify(word)}`);
  }
  if (pruned && !/delet|prune/i.test(run.summary)) out.push('the summary lists nothing to delete');
  return out;
}

describe.concurrent('secret slices, terminal escapes and chosen masks (preview on a pull_request event)', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;
  let sops: SopsToolkit;
  let age: AgeKey;
  let noSops: Error | undefined;

  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    github = await startFakeGitHub({
      tokens: { [TOKEN]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
    // The SOPS cases need the pinned sops and age tools; the others run without them.
    try {
      sops = createSopsToolkit();
      age = sops.ageKey();
    } catch (err) {
      noSops = err as Error;
    }
  });

  afterAll(async () => {
    await github.close();
    client.close();
    if (noSops === undefined) sops.cleanup();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    let run: HostileRun | undefined;
    let ns: string | undefined;
    await attackCase(
      c,
      async (evidence, result) => {
        if (c.sops && noSops) throw noSops;
        ns = await freshNamespace(client, 'atk');
        const secret = rareSecret();
        const e: Env = { ns, secret, sops, age, kubeconfig, client };
        await putSecret(client, ns, 'app-vars', { SECRET: secret });
        const baseFiles = c.base?.(e) ?? base(ns);
        await c.before?.(e, baseFiles);
        run = await runHostile({
          client,
          github,
          number: 4700 + index,
          base: baseFiles,
          head: c.head(e),
          inputs: {
            kubeconfig,
            mode: 'preview',
            kustomizations: 'clusters/prod/*.yaml',
            'github-token': TOKEN,
            ...c.inputs?.(e),
          },
          timeoutMs: 120_000,
        });
        Object.assign(result, {
          exitCode: run.code,
          runMs: run.ms,
          log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-60).join('\n'),
        });
        const canaries: Canary[] = c.control
          ? []
          : [{ where: 'the Secret app-vars SECRET / secret-vars PASS', value: secret }];
        evidence.push(...evidenceOf({ run, canaries, listeners: [], namespace: ns }), ...c.judge(run, e));
      },
      async () => {
        if (run) await cleanupRun(run);
        if (ns) await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      },
    );
  });
});
