// Planted build-cache entries (issue 49, item 3: the build cache on by default, kept across runs).
// kustomize's output is kept by the hash of its whole input (src/kustomize/cache.ts), so an entry
// found is used as it is: whoever can put a file where the action looks can choose what a build
// gives. A pull request's tree is what an attacker writes, so it must never be where the action
// looks. Each case first runs the preview once to learn the exact name the Kustomization's build is
// kept under (the attacker can compute it: the hash of files it wrote and of a public kustomize
// release), then plants an entry of that name whose output holds ConfigMap forged-<ns> instead of
// real-<ns>: in the tree at the default directory's name, and in the tree where a workflow's relative
// build-cache input points. The attack got through when forged-<ns> was planned, or when the
// misconfigured run built instead of refusing. The control puts the same entry in the directory the
// action does read (RUNNER_TEMP, which only the workflow's own steps write): it is used, so the
// entries the cases plant would be, had they reached it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { freshNamespace } from '../helpers/cluster.js';
import { CHECKOUT, cm, ks } from '../helpers/flux-trees.js';
import { attackCase, cleanupRun, evidenceOf, previewFixture, runHostile, type HostileRun } from '../helpers/hostile.js';

/** The directory the action keeps builds in under RUNNER_TEMP (src/action/build-cache.ts). */
const DIR = 'kustomize-reconcile-builds';

/** A Kustomization of ConfigMap real-<ns> with a replacement: a build only kustomize makes, so it is kept. */
const tree = (ns: string): Record<string, string> => ({
  'clusters/prod/flux-system.yaml': CHECKOUT,
  'clusters/prod/app.yaml': ks(ns, 'app', './apps/app'),
  'apps/app/kustomization.yaml': [
    'resources: [cm.yaml]',
    'replacements:',
    `- source: {kind: ConfigMap, name: real-${ns}, fieldPath: data.a}`,
    `  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.copy], options: {create: true}}]`,
    '',
  ].join('\n'),
  'apps/app/cm.yaml': cm(ns, `real-${ns}`),
});

interface PlantCase {
  id: string;
  title: string;
  control?: boolean;
  /** Where the PR's tree carries the entry (relative to the workspace), if it does. */
  planted?: string;
  inputs?: Record<string, string>;
  /** The run must refuse, saying this. */
  refusal?: RegExp;
}

const CASES: PlantCase[] = [
  {
    id: '49-3a-entry-in-the-tree-at-the-default-name',
    title: `the PR's tree carries ${DIR}/<shard>/<key>, the entry of its own build's input with a forged output`,
    planted: DIR,
  },
  {
    id: '49-3b-build-cache-input-inside-the-workspace',
    title: `the workflow sets build-cache: ${DIR} (relative: inside the workspace), and the PR's tree carries the entry there`,
    planted: DIR,
    inputs: { 'build-cache': DIR },
    refusal: /build-cache .* is inside the (source root|workspace)/,
  },
  {
    id: '49-3-control-entry-in-runner-temp',
    title:
      'control: the same entry in the directory the action reads (RUNNER_TEMP, written by the workflow only) is used',
    control: true,
  },
];

describe('planted build-cache entries (preview on a pull_request event, bundled action)', () => {
  const fixture = previewFixture();

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    const { client, github, kubeconfig, githubToken } = fixture;
    const runs: HostileRun[] = [];
    const temps: string[] = [];
    await attackCase(
      c,
      async (evidence, result) => {
        const ns = await freshNamespace(client, 'atk');
        const inputs = {
          kubeconfig,
          mode: 'preview',
          kustomizations: 'clusters/prod/*.yaml',
          'github-token': githubToken,
        };
        const base = tree(ns);
        // kustomize's environment is part of the key: both runs get one TMPDIR (the harness makes one a run).
        const shared = await mkdtemp(join(tmpdir(), 'atk-tmpdir-'));
        temps.push(shared);
        // The probe: the name and text the build is kept under.
        const probe = await runHostile({
          client,
          github,
          number: 4930 + 2 * index,
          base,
          head: {},
          inputs,
          env: { TMPDIR: shared },
        });
        runs.push(probe);
        const cacheDir = join(probe.runnerTemp, DIR);
        const shard = (await readdir(cacheDir).catch(() => [] as string[]))[0];
        const key = shard === undefined ? undefined : (await readdir(join(cacheDir, shard)))[0];
        if (shard === undefined || key === undefined) {
          evidence.push(`the probe kept no build in ${DIR} under RUNNER_TEMP (exit ${probe.code})`);
          return;
        }
        const forged = (await readFile(join(cacheDir, shard, key), 'utf8')).replaceAll(`real-${ns}`, `forged-${ns}`);
        const entry = { [`${c.planted ?? '.unused'}/${shard}/${key}`]: forged };
        const env: NodeJS.ProcessEnv = { TMPDIR: shared };
        if (c.control) {
          const temp = await mkdtemp(join(tmpdir(), 'atk-runner-temp-'));
          temps.push(temp);
          await mkdir(join(temp, DIR, shard), { recursive: true });
          await writeFile(join(temp, DIR, shard, key), forged);
          env['RUNNER_TEMP'] = temp;
        }
        const run = await runHostile({
          client,
          github,
          number: 4931 + 2 * index,
          base,
          head: c.planted ? entry : {},
          inputs: { ...inputs, ...c.inputs },
          env,
        });
        runs.push(run);
        const shown = [run.stdout, run.summary, ...run.github].join('\n');
        Object.assign(result, { exitCode: run.code, log: run.stdout.split('\n').slice(-40).join('\n') });
        evidence.push(...evidenceOf({ run, canaries: [], listeners: [], namespace: ns }));
        const used = shown.includes(`forged-${ns}`);
        if (c.control) {
          if (!used) evidence.push(`the entry in RUNNER_TEMP was not used: forged-${ns} was not planned`);
          return;
        }
        if (used) evidence.push(`the planted entry was used: ConfigMap forged-${ns} was planned`);
        if (c.refusal) {
          if (run.code !== 2 || !c.refusal.test(shown)) evidence.push(`the run did not refuse the build-cache input`);
        } else if (!shown.includes(`real-${ns}`)) {
          evidence.push(`kustomize's own output (ConfigMap real-${ns}) was not planned`);
        }
      },
      async () => {
        for (const run of runs) await cleanupRun(run);
        for (const temp of temps) await rm(temp, { recursive: true, force: true });
      },
    );
  });
});
