// Masks and aliases (issue 33, items 8 and 9), through the bundled action in preview on a
// pull_request event against the test cluster. Each case writes reports/attack/<case>.json for
// scripts/attack-summary.mjs; a case fails when its attack got through.
//
// The rules the cases expect:
// - a YAML file the build reads (a resource of a plain directory or of a kustomization, a
//   replacements file) whose aliases recurse ends the Kustomization with an error naming the file
//   and its line, before kustomize runs: no Go stack dump, no JavaScript stack overflow, well within
//   the run's time;
// - the kubeconfig input is masked by its secret values (tokens, keys) and as a whole, never line by
//   line: no `::add-mask::` is a structural line of it (`apiVersion: v1`, `kind: Config`,
//   `- name: …`, `current-context: …`), which the runner would hide in every later step (a
//   `kind: ConfigMap` shown as `***Map`), and none is shorter than 4 characters.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { baseTree, cm, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  runHostile,
  runnerView,
  type Canary,
  type Files,
  type HostileRun,
} from '../helpers/hostile.js';

const TOKEN = `ghs_kr${randomBytes(16).toString('hex')}`;

/** A ConfigMap whose data refers to itself: yaml.v3 (kustomize) recurses until its stack is gone. */
const LOOP = (ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop, namespace: ${ns}}\ndata: &self\n  again: *self\n`;

/** A replacements file whose first item holds itself. */
const LOOP_REPLACEMENT = '- &r\n  source: {kind: ConfigMap, name: app-settings, fieldPath: data.a}\n  targets: [*r]\n';

/** What shows that the build ended in a crash rather than with an error naming the file. */
const CRASH = /goroutine \d+ \[|runtime stack:|fatal error: stack overflow|goroutine stack exceeds|Maximum call stack/;

/** An `::add-mask::` value as the runner reads it (the toolkit escapes %, CR and LF). */
const unescape = (data: string) => data.replaceAll('%0D', '\r').replaceAll('%0A', '\n').replaceAll('%25', '%');

/** The values the run registered with the runner, as it reads them. */
function masksOf(run: HostileRun): string[] {
  return [...runnerView(run.stdout, 'stdout').commands, ...runnerView(run.stderr, 'stderr').commands]
    .filter((c) => c.name === 'add-mask')
    .map((c) => unescape(c.data));
}

/** Text as the runner shows it once `masks` are registered: every occurrence of each replaced by `***`. */
function masked(text: string, masks: readonly string[]): string {
  let out = text;
  for (const m of [...masks].filter((v) => v !== '').sort((a, b) => b.length - a.length)) {
    out = out.split(m).join('***');
  }
  return out;
}

interface Case {
  id: string;
  title: string;
  head: (ns: string) => Files;
  /** The kubeconfig input (the test cluster's, unless the case plants its own). */
  kubeconfig?: (plain: string) => { text: string; canaries: Canary[] };
  timeoutMs?: number;
  judge: (run: HostileRun, ns: string, canaries: readonly Canary[], kubeconfig: string) => string[];
}

/** Evidence that the run did not end with an error naming each of `files` (and its line). */
function namesFiles(run: HostileRun, files: readonly string[]): string[] {
  const out: string[] = [];
  const said = `${run.stdout}\n${run.stderr}\n${run.summary}\n${run.github.join('\n')}`;
  if (run.timedOut === true) out.push('the run did not end within its time budget (killed)');
  else if (run.code === 0) out.push('the run succeeded: the recursive alias was not refused');
  for (const f of files) {
    const line = said.split('\n').find((l) => l.includes(f) && /alias/i.test(l));
    if (line === undefined) out.push(`no error names ${f} and its alias`);
    else if (!/line \d+/.test(line)) out.push(`the error naming ${f} gives no line: ${line.slice(0, 300)}`);
  }
  const crash = CRASH.exec(said);
  if (crash) {
    const at = said.indexOf(crash[0]);
    out.push(`a crash shows in the output: ${JSON.stringify(said.slice(Math.max(0, at - 200), at + 200))}`);
  }
  return out;
}

const CASES: Case[] = [
  {
    id: '33-9a-recursive-alias-plain-directory',
    title: 'a resource of a plain directory (generated kustomization) whose alias holds itself',
    head: (ns) => ({ 'apps/app/loop.yaml': LOOP(ns) }),
    timeoutMs: 60_000,
    judge: (run) => namesFiles(run, ['apps/app/loop.yaml']),
  },
  {
    id: '33-9b-recursive-alias-kustomize-files',
    title: 'a kustomization resource and a replacements file whose aliases hold themselves',
    head: (ns) => ({
      'clusters/prod/res.yaml': ks(ns, 'res', './apps/res'),
      'apps/res/kustomization.yaml': 'resources: [cm.yaml, loop.yaml]\n',
      'apps/res/cm.yaml': cm(ns, 'res'),
      'apps/res/loop.yaml': LOOP(ns),
      'clusters/prod/repl.yaml': ks(ns, 'repl', './apps/repl'),
      'apps/repl/kustomization.yaml': 'resources: [cm.yaml]\nreplacements:\n- path: replace.yaml\n',
      'apps/repl/cm.yaml': cm(ns, 'app-settings'),
      'apps/repl/replace.yaml': LOOP_REPLACEMENT,
    }),
    timeoutMs: 90_000,
    judge: (run) => namesFiles(run, ['apps/res/loop.yaml', 'apps/repl/replace.yaml']),
  },
  {
    id: '33-8-kubeconfig-masks-structural-lines',
    title: 'the kubeconfig input masked line by line: structural lines hidden in every later step',
    head: (ns) => ({
      'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed'),
      'apps/app/new.yaml': cm(ns, 'added', 'kind: ConfigMap'),
    }),
    kubeconfig: (plain) => {
      const hex = (n: number) => randomBytes(n).toString('hex');
      const c = (where: string, value: string): Canary => ({ where: `kubeconfig ${where}`, value });
      const token = c('users[canary].user.token', `krkubetoken${hex(12)}`);
      const password = c('users[basic].user.password', `krkubepass${hex(12)}`);
      const access = c('auth-provider access-token', `krkubeaccess${hex(12)}`);
      const refresh = c('auth-provider refresh-token', `krkuberefresh${hex(12)}`);
      const envSecret = c('exec env value', `krkubeexecenv${hex(12)}`);
      const extra = [
        '- name: canary',
        '  user:',
        `    token: ${token.value}`,
        '- name: basic',
        '  user:',
        '    username: admin',
        `    password: ${password.value}`,
        '- name: oidc',
        '  user:',
        '    auth-provider:',
        '      name: oidc',
        '      config:',
        `        access-token: ${access.value}`,
        `        refresh-token: ${refresh.value}`,
        '- name: exec',
        '  user:',
        '    exec:',
        '      apiVersion: client.authentication.k8s.io/v1',
        '      command: kr-missing-plugin',
        '      interactiveMode: Never',
        '      env:',
        '      - name: KR_SECRET',
        `        value: ${envSecret.value}`,
        '',
      ].join('\n');
      return { text: `${plain.trimEnd()}\n${extra}`, canaries: [token, password, access, refresh, envSecret] };
    },
    judge: (run, _ns, canaries, kubeconfig) => {
      const out: string[] = [];
      if (run.code !== 0 && run.code !== 1) out.push(`the preview failed (exit ${run.code})`);
      const masks = masksOf(run);
      const secretValues = [
        ...canaries.map((c) => c.value),
        ...[...kubeconfig.matchAll(/client-(?:key|certificate)-data: (\S+)/g)].map((m) => m[1]!),
      ];
      const structural = new Set(
        kubeconfig
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l !== '' && !secretValues.some((v) => l.includes(v))),
      );
      for (const l of [...structural]) if (l.startsWith('- ')) structural.add(l.slice(2));
      for (const m of new Set(masks)) {
        if (structural.has(m.trim())) out.push(`::add-mask:: of a structural kubeconfig line: ${JSON.stringify(m)}`);
        else if (m.trim().length < 4) out.push(`::add-mask:: of ${m.trim().length} characters: ${JSON.stringify(m)}`);
      }
      for (const c of canaries) if (!masks.includes(c.value)) out.push(`${c.where} was not masked`);
      const sample = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: admin\n';
      const seen = masked(sample, masks);
      if (seen !== sample) out.push(`the runner would show ${JSON.stringify(sample)} as ${JSON.stringify(seen)}`);
      for (const [what, text] of [
        ['the job summary', run.summary],
        ['the PR comment / check run', run.github.join('\n')],
      ] as const) {
        const at = text.search(/\*\*\*(Map|: v1)/);
        if (at >= 0) out.push(`${what} shows ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 40))}`);
      }
      return out;
    },
  },
];

describe.concurrent('masks and aliases (preview on a pull_request event, bundled action)', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;

  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    github = await startFakeGitHub({
      tokens: { [TOKEN]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  });

  afterAll(async () => {
    await github.close();
    client.close();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    let run: HostileRun | undefined;
    let ns: string | undefined;
    await attackCase(
      c,
      async (evidence, result) => {
        ns = await freshNamespace(client, 'atk');
        const input = c.kubeconfig?.(kubeconfig) ?? { text: kubeconfig, canaries: [] };
        run = await runHostile({
          client,
          github,
          number: 3300 + index,
          base: baseTree(ns),
          head: c.head(ns),
          inputs: {
            kubeconfig: input.text,
            mode: 'preview',
            kustomizations: 'clusters/prod/*.yaml',
            'github-token': TOKEN,
          },
          ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
        });
        Object.assign(result, {
          exitCode: run.code,
          runMs: run.ms,
          timedOut: run.timedOut === true,
          log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-60).join('\n'),
        });
        evidence.push(
          ...evidenceOf({ run, canaries: input.canaries, listeners: [], namespace: ns }),
          ...c.judge(run, ns, input.canaries, input.text),
        );
      },
      async () => {
        if (run) await cleanupRun(run);
        if (ns) await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      },
    );
  });
});
