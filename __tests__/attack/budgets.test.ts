// Budgets cover all the tree can make the runner do (issue 47, class 8). A pull request makes the
// runner spend disk, time and memory through the routes the run budget did not cover: a git
// repository whose small pack checks out to a gigabyte (or to more files than the run allows), a
// git server that trickles a byte every few seconds or never answers under `spec.timeout: 6h`,
// YAML that costs the parser gigabytes (nested flow sequences and mappings, compact `- - -`
// sequences, a Kustomization file that is itself a bomb, millions of empty documents), and CEL
// expressions whose cost is exponential (nested comprehensions, strings and lists doubled at each
// level). Each case runs the bundled action in preview on a pull_request event and got through when
// the run did not end by itself (the test's kill), when the scratch space or the memory passed its
// bound, or when the run did not say which bound refused what.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'vitest';
import { freshNamespace } from '../helpers/cluster.js';
import { baseTree, cm, ks } from '../helpers/flux-trees.js';
import { gitHttpServer } from '../helpers/git-http.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  previewFixture,
  runHostile,
  type Files,
  type HostileRun,
} from '../helpers/hostile.js';

const MiB = 1024 * 1024;

interface Ctx {
  ns: string;
  /** A git URL the case's server answers (a bomb repository, a trickle). */
  url: string;
  /** What the case's server saw. */
  seen: { connections: number; closedByClient: number };
}

interface BudgetCase {
  id: string;
  title: string;
  /** A git server for the case: its URL, and how to stop it. */
  server?: (ctx: Pick<Ctx, 'seen'>) => Promise<{ url: string; close: () => Promise<unknown> }>;
  head: (ctx: Ctx) => Files;
  inputs?: Record<string, string>;
  /** What the run must say (each a pattern found in the log, summary or comment). */
  says: RegExp[];
  /** Bounds on the run, beside ending by itself. */
  maxScratch?: number;
  maxRss?: number;
  judge?: (run: HostileRun, ctx: Ctx) => string[];
}

const gitRepo = (ns: string, name: string, url: string, extra = '') =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  timeout: 6h
  url: ${url}
  ref: {branch: main}
${extra}`;

const fromGit = (name: string) => `{kind: GitRepository, name: ${name}}`;

/** A bare repository made by `fill` (in a work tree) and served by git's http-backend on loopback. */
async function servedRepository(
  fill: (work: string) => Promise<void>,
): Promise<{ url: string; close: () => Promise<unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'atk-git-bomb-'));
  const work = join(dir, 'work');
  await mkdir(work);
  const git = (...args: string[]) =>
    // gc.auto=0: a commit of 21,000 files starts git's gc in the background, still writing when rm runs.
    execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'gc.auto=0', ...args], {
      stdio: 'ignore',
    });
  git('init', '-q', '-b', 'main');
  await fill(work);
  git('add', '-A');
  git('commit', '-q', '-m', 'bomb');
  execFileSync('git', ['clone', '-q', '--bare', work, join(dir, 'r.git')], { stdio: 'ignore' });
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
  const fileUrl = pathToFileURL(join(dir, 'r.git')).href;
  const server = await gitHttpServer(fileUrl);
  return {
    url: server.urlOf(fileUrl),
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A git server that answers every request with 200 and a git content type, then sends one byte every
 * `everyMs` (or, with `everyMs` undefined, nothing at all) and never ends.
 */
async function tricklingServer(
  seen: Ctx['seen'],
  everyMs: number | undefined,
): Promise<{ url: string; close: () => Promise<unknown> }> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    if (everyMs !== undefined) {
      const t = setInterval(() => res.write('0'), everyMs);
      timers.add(t);
      res.on('close', () => {
        clearInterval(t);
        timers.delete(t);
      });
    }
    req.socket.on('close', () => {
      seen.closedByClient++;
    });
  });
  server.on('connection', (s: Socket) => {
    seen.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/org/slow.git`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** A Kustomization of ./apps/<dir> and the file there. */
const manifest = (ns: string, name: string, text: string): Files => ({
  [`clusters/prod/${name}.yaml`]: ks(ns, name, `./apps/${name}`),
  [`apps/${name}/objects.yaml`]: text,
});

/** `depth` comprehensions nested over a list of `width`. */
const nested = (depth: number, width: number): string => {
  const list = `[${Array.from({ length: width }, (_, i) => i).join(', ')}]`;
  let body = 'true';
  for (let i = depth; i > 0; i--) body = `${list}.all(x${i}, ${body})`;
  return body;
};
/** A string doubled at each of `depth` nested map levels. */
const doubling = (depth: number): string => {
  let expr = `["ab"]`;
  for (let i = 0; i < depth; i++) expr = `${expr}.map(s${i}, s${i} + s${i})`;
  return `size(${expr}[0]) > 0`;
};
/** A list doubled at each of `depth` nested levels. */
const listDoubling = (depth: number): string => {
  let expr = `[1]`;
  for (let i = 0; i < depth; i++) expr = `[${expr}].map(l${i}, l${i} + l${i})[0]`;
  return `size(${expr}) > 0`;
};
/** A Kustomization `name` that depends on app with `readyExpr`. */
const dependent = (ns: string, name: string, readyExpr: string) =>
  ks(
    ns,
    name,
    './apps/app',
    undefined,
    `  dependsOn:\n    - name: app\n      readyExpr: '${readyExpr.replace(/'/g, "''")}'\n`,
  );

const CASES: BudgetCase[] = [
  {
    id: '47-8a-git-checkout-bomb',
    title:
      'a GitRepository whose pack is about a MiB and whose tree is a 1 GiB file of zeros (and whose spec.timeout is 6h)',
    server: () =>
      servedRepository(async (work) => {
        execFileSync('truncate', ['-s', '1G', join(work, 'zeros.bin')]);
        await writeFile(join(work, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z}\n');
      }),
    head: ({ ns, url }) => ({
      'clusters/prod/bomb.yaml': `${gitRepo(ns, 'bomb', url)}---\n${ks(ns, 'bomb', './', fromGit('bomb'))}`,
    }),
    says: [/GitRepository [^ ]+\/bomb.*budget for extracted files is spent/],
    maxScratch: 200 * MiB,
    maxRss: 512 * MiB,
  },
  {
    id: '47-8b-git-many-files',
    title: 'a GitRepository whose tree holds 21,000 small files (more than the run may extract)',
    server: () =>
      servedRepository(async (work) => {
        for (let d = 0; d < 21; d++) {
          await mkdir(join(work, `d${d}`));
          await Promise.all(
            Array.from({ length: 1000 }, (_, f) => writeFile(join(work, `d${d}`, `f${f}.txt`), `${d}-${f}\n`)),
          );
        }
      }),
    head: ({ ns, url }) => ({
      'clusters/prod/many.yaml': `${gitRepo(ns, 'many', url)}---\n${ks(ns, 'many', './d0', fromGit('many'))}`,
    }),
    says: [/GitRepository [^ ]+\/many.*budget for extracted files is spent.*20,000 files/],
    maxScratch: 200 * MiB,
  },
  {
    id: '47-8c-git-trickle-under-6h-timeout',
    title: 'a git server that answers, then trickles a byte every 3 s, for a GitRepository with spec.timeout: 6h',
    server: ({ seen }) => tricklingServer(seen, 3_000),
    head: ({ ns, url }) => ({
      'clusters/prod/slow.yaml': `${gitRepo(ns, 'slow', url)}---\n${ks(ns, 'slow', './', fromGit('slow'))}`,
    }),
    says: [/fetching GitRepository [^ ]+\/slow .*failed/],
    judge: (_run, { seen }) =>
      seen.connections > 0 && seen.closedByClient === 0 ? ['the runner never hung up on the trickling server'] : [],
  },
  {
    id: '47-8d-git-silent-server-semver',
    title:
      'a git server that accepts the connection and never answers, for a GitRepository with spec.ref.semver (ls-remote) and spec.timeout: 6h',
    server: ({ seen }) => tricklingServer(seen, undefined),
    head: ({ ns, url }) => ({
      'clusters/prod/silent.yaml':
        gitRepo(ns, 'silent', url).replace('ref: {branch: main}', "ref: {semver: '>=1.0.0'}") +
        '---\n' +
        ks(ns, 'silent', './', fromGit('silent')),
    }),
    inputs: { 'build-timeout': '40s' },
    says: [/fetching GitRepository [^ ]+\/silent .*failed/],
  },
  {
    id: '47-8e-yaml-nested-collections',
    title:
      'manifests of 1.2 MB of nested flow sequences, nested flow mappings, and compact block sequences (`- - - …`), one Kustomization each',
    head: ({ ns }) => ({
      ...manifest(
        ns,
        'flowseq',
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: ${'['.repeat(600_000)}${']'.repeat(600_000)}\n`,
      ),
      ...manifest(ns, 'flowmap', `${'{a: '.repeat(300_000)}1${'}'.repeat(300_000)}\n`),
      ...manifest(ns, 'compact', `${'- '.repeat(600_000)}x\n`),
    }),
    says: [
      /apps\/flowseq\/objects\.yaml.*nested more than 256 levels deep/,
      /apps\/flowmap\/objects\.yaml.*nested more than 256 levels deep/,
      /apps\/compact\/objects\.yaml.*nested more than 256 levels deep/,
    ],
    maxRss: 512 * MiB,
  },
  {
    id: '47-8f-yaml-bomb-in-kustomization-files',
    title: 'the Kustomization file itself is 1.2 MB of compact sequences holding nested flow sequences',
    head: () => ({
      'clusters/prod/zz-bomb.yaml': `${'- '.repeat(300_000)}${'['.repeat(300_000)}\n`,
    }),
    says: [/clusters\/prod\/zz-bomb\.yaml.*nested more than 256 levels deep/],
    maxRss: 512 * MiB,
  },
  {
    id: '47-8g-yaml-empty-documents',
    title:
      'manifests of 4 MB of empty documents (`---` lines) and of 4 MB of document end markers (`...`), and a kustomization.yaml of 4 MB of empty documents',
    head: ({ ns }) => ({
      ...manifest(ns, 'dashes', '---\n'.repeat(1_000_000)),
      ...manifest(ns, 'dots', `${cm(ns, 'dots')}${'...\n'.repeat(1_000_000)}`),
      'clusters/prod/kbomb.yaml': ks(ns, 'kbomb', './apps/kbomb'),
      'apps/kbomb/kustomization.yaml': `resources: [cm.yaml]\n${'---\n'.repeat(1_000_000)}`,
      'apps/kbomb/cm.yaml': cm(ns, 'kbomb'),
    }),
    says: [
      /apps\/dashes\/objects\.yaml.*more than 20,000 documents/,
      /apps\/dots\/objects\.yaml.*more than 20,000 documents/,
      /kustomization\.yaml.*more than 20,000 documents/,
    ],
    maxRss: 512 * MiB,
  },
  {
    id: '47-8h-cel-exponential-readyexpr',
    title:
      'dependsOn readyExprs of exponential cost: four nested comprehensions over 200 items, a string doubled 40 times, a list doubled 40 times, comprehensions over the Kustomization itself',
    head: ({ ns }) => ({
      'clusters/prod/nested.yaml': dependent(ns, 'nested', nested(4, 200)),
      'clusters/prod/strings.yaml': dependent(ns, 'strings', doubling(40)),
      'clusters/prod/lists.yaml': dependent(ns, 'lists', listDoubling(40)),
      'clusters/prod/self.yaml': dependent(
        ns,
        'self',
        "[self, dep, self, dep, self].all(a, [self, dep, self, dep].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, a.kind + b.kind != '')))))))",
      ),
    }),
    says: [
      /nested.*readyExpr .*cost limit/,
      /strings.*readyExpr .*cost limit/,
      /lists.*readyExpr .*cost limit/,
      /self.*readyExpr .*cost limit/,
    ],
    maxRss: 512 * MiB,
  },
];

describe.concurrent(
  'budgets on what a tree makes the runner do (preview on a pull_request event, bundled action)',
  () => {
    const fixture = previewFixture();

    it.each(CASES.map((c, i) => [c.id, c, i] as const))(
      '%s',
      async (_id, c, index) => {
        const { client, github, kubeconfig, githubToken } = fixture;
        let run: HostileRun | undefined;
        const cleanups: (() => Promise<unknown>)[] = [];
        await attackCase(
          c,
          async (evidence, result) => {
            const ns = await freshNamespace(client, 'atk');
            cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
            const seen = { connections: 0, closedByClient: 0 };
            const server = await c.server?.({ seen });
            if (server) cleanups.push(server.close);
            const ctx: Ctx = { ns, url: server?.url ?? '', seen };
            run = await runHostile({
              client,
              github,
              number: 4780 + index,
              base: baseTree(ns),
              head: c.head(ctx),
              inputs: {
                kubeconfig,
                mode: 'preview',
                kustomizations: 'clusters/prod/*.yaml',
                'github-token': githubToken,
                'allow-private-source-hosts': 'true',
                ...c.inputs,
              },
              timeoutMs: 240_000,
            });
            const shown = [run.stdout, run.stderr, run.summary, ...run.github].join('\n');
            Object.assign(result, {
              exitCode: run.code,
              peakScratchMiB: Math.round(run.peakScratch / MiB),
              peakRssMiB: Math.round(run.peakRss / MiB),
              server: seen,
              log: run.stdout.split('\n').slice(-60).join('\n'),
            });
            evidence.push(...evidenceOf({ run, canaries: [], listeners: [], namespace: ns }));
            if (run.timedOut === true) evidence.push('the run did not end by itself: killed by the test');
            if (c.maxScratch !== undefined && run.peakScratch > c.maxScratch) {
              evidence.push(`scratch space reached ${Math.round(run.peakScratch / MiB)} MiB (RUNNER_TEMP + TMPDIR)`);
            }
            if (c.maxRss !== undefined && run.peakRss > c.maxRss) {
              evidence.push(`the action's peak memory (VmHWM) was ${Math.round(run.peakRss / MiB)} MiB`);
            }
            for (const p of c.says) if (!p.test(shown)) evidence.push(`the run did not say ${String(p)}`);
            evidence.push(...(c.judge?.(run, ctx) ?? []));
          },
          async () => {
            if (run) await cleanupRun(run);
            for (const f of cleanups.reverse()) await f().catch(() => undefined);
          },
        );
      },
      300_000,
    );
  },
);
