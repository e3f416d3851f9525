// Markup from a hostile tree in the reports (issue 33, item 3). A pull request's tree, or the report
// files of a fan-out's jobs, put Markdown in every text they control (a component path, a spec.path
// quoted in an error, a dependsOn name, a file name, notes, reasons, health messages, source refs,
// subjects); the PR comment, the check run and the job summary the bundled action writes must show
// that text and nothing else: no link, image, emphasis, heading, raw HTML, @-mention, issue
// reference, autolink or math from it. The judge renders the Markdown with `marked` (GFM) roughly
// the way GitHub does, and checks GitHub's own text filters (mentions, references) on the text nodes.
// Each case writes reports/attack/<case>.json, which scripts/attack-summary.mjs counts.
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Marked, type Token } from 'marked';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { baseTree, FROM_CHECKOUT, ks } from '../helpers/flux-trees.js';
import { attackCase, cleanupRun, runHostile, type Files } from '../helpers/hostile.js';
import { entry, fileText, jobReport, kustomization, webDeployment } from '../helpers/report-files.js';

// ---- the attacker's text -----------------------------------------------------------------------

/** A host nothing listens on: a link or image there is a beacon (GitHub's image proxy would fetch it). */
const BEACON = 'http://127.0.0.1:9';

/** The text of the issue: a bold link with a mention, and an image. */
const BRIEF = `none **✅ Security review passed — [approved by @octocat](${BEACON}/a)** ![b](${BEACON}/b.png)`;

/** Every other inline construct GitHub renders, on one line. */
const MORE =
  `more <b>bold-html</b> <img src="${BEACON}/c.png"> _underlined_ ~~struck~~ *starred* fixes #1 and GH-2 ` +
  `see ${BEACON}/d or www.example.org, mail security@example.org, <${BEACON}/e> $\\color{red}{Approved}$ ` +
  `| cell \`code\` :+1: [ref]: ${BEACON}/f`;

/** Block constructs, for texts that may start a line (notes of a report file, errors with newlines). */
const BLOCK = `# ✅ All checks passed\n\n> approved by @octocat\n\n- [x] reviewed\n\n| a | b |\n| - | - |\n| c | d |`;

/** Words only the attacker's text has: markup around them is the attacker's. */
const WORDS = [
  'Security review',
  'approved by',
  'bold-html',
  'underlined',
  'struck',
  'starred',
  'All checks passed',
  'reviewed',
  'Approved',
  '@octocat',
];

// ---- the judge -----------------------------------------------------------------------------------

const marked = new Marked({ gfm: true, async: false });

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
function decode(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e.startsWith('#x') || e.startsWith('#X')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/** The text GitHub's filters see: outside code, without tags, entities decoded. */
function textNodes(html: string): string {
  return decode(
    html
      .replace(/<pre\b[\s\S]*?<\/pre>/gi, ' ')
      .replace(/<code\b[\s\S]*?<\/code>/gi, ' ')
      .replace(/<a\b[\s\S]*?<\/a>/gi, ' ')
      .replace(/<[^>]*>/g, ' '),
  );
}

/**
 * What in `markdown` is live markup from the attacker's text, each finding naming `where`:
 * - a link (`<a href>`) to the beacon host, example.org or a mail address (links, autolinks);
 * - an image (the renderings never show one of their own);
 * - emphasis, strike-through, a heading, a quote or raw HTML around the attacker's words; a task list box;
 * - an @-mention of octocat or an issue reference (#1, GH-2) in the text GitHub's filters see;
 * - inline math (`$…$`) in Markdown text.
 */
function liveMarkup(markdown: string, where: string): string[] {
  const out: string[] = [];
  const html = marked.parse(markdown) as string;
  for (const m of html.matchAll(/<a\b[^>]*\bhref="([^"]*)"/gi)) {
    if (/127\.0\.0\.1|example\.org|mailto:|octocat/i.test(decode(m[1]!)))
      out.push(`${where}: a live link to ${decode(m[1]!)}`);
  }
  for (const m of html.matchAll(/<img\b[^>]*>/gi)) out.push(`${where}: an image ${m[0]}`);
  for (const m of html.matchAll(/<(strong|em|del|s|b|i|u|h[1-6]|blockquote|mark|ins)\b[^>]*>([\s\S]*?)<\/\1>/gi)) {
    if (WORDS.some((w) => textNodes(m[2]!).includes(w)))
      out.push(`${where}: <${m[1]!.toLowerCase()}> around the attacker's text: ${m[0].slice(0, 160)}`);
  }
  for (const m of html.matchAll(/<input\b[^>]*>/gi)) out.push(`${where}: a task list box ${m[0]}`);
  const text = textNodes(html);
  for (const m of text.matchAll(/(?:^|[^\w`])(@octocat)\b/g)) out.push(`${where}: a mention ${m[1]}`);
  for (const m of text.matchAll(/(?:^|[^\w&/])(#\d+|GH-\d+)\b/gi)) out.push(`${where}: an issue reference ${m[1]}`);
  const tokens = marked.lexer(markdown);
  void marked.walkTokens(tokens, (t: Token) => {
    if (t.type === 'text' && !('tokens' in t && t.tokens?.length) && /\$\\color/.test(t.raw))
      out.push(`${where}: inline math ${t.raw.slice(0, 80)}`);
  });
  return [...new Set(out)];
}

/** A check run title is plain text: it must be one line and mention no one. */
function titleFindings(title: string, where: string): string[] {
  const out: string[] = [];
  if (/[\r\n]/.test(title)) out.push(`${where}: the title spans lines`);
  if (/(?:^|[^\w`])@octocat\b/.test(title)) out.push(`${where}: a mention in the title`);
  return out;
}

interface CheckRunLike {
  output?: { title?: string | null; summary?: string | null; text?: string | null };
}

/** Every finding in what a run posted: comment bodies, check runs, the job summary. */
function judge(posted: { comments: string[]; checkRuns: CheckRunLike[]; summary: string }): string[] {
  const out: string[] = [];
  posted.comments.forEach((body, i) => out.push(...liveMarkup(body, `PR comment ${i + 1}`)));
  posted.checkRuns.forEach((run, i) => {
    out.push(...titleFindings(run.output?.title ?? '', `check run ${i + 1} title`));
    out.push(...liveMarkup(run.output?.summary ?? '', `check run ${i + 1} summary`));
    out.push(...liveMarkup(run.output?.text ?? '', `check run ${i + 1} text`));
  });
  out.push(...liveMarkup(posted.summary, 'job summary'));
  return out;
}

/** That the attacker's text reached the channel at all (else the case proves nothing). */
function reached(posted: { comments: string[]; checkRuns: CheckRunLike[]; summary: string }, word: string): boolean {
  const all = [...posted.comments, ...posted.checkRuns.map((c) => JSON.stringify(c.output)), posted.summary];
  return all.some((t) => t.includes(word) || t.includes(word.replace(/ /g, '\\u00a0')));
}

// ---- cases -----------------------------------------------------------------------------------------

interface Posted {
  comments: string[];
  checkRuns: CheckRunLike[];
  summary: string;
  /** The end of the action's output, for the result file. */
  log: string;
}

interface Case {
  id: string;
  title: string;
  /** Runs the bundled action and returns what it posted. */
  run: (env: { client: ClusterClient; github: FakeGitHub; kubeconfig: string; number: number }) => Promise<Posted>;
  /** A word of the attacker's text that must reach the renderings (the case is void otherwise). */
  expect: string[];
}

const TOKEN = 'ghs_markup_test_token';

/**
 * One preview of a PR whose HEAD is `head(ns)` on top of the base tree; what the fake GitHub got for
 * it. Its namespace and the run's directories are removed once it is over.
 */
async function preview(env: Parameters<Case['run']>[0], head: (ns: string) => Files): Promise<Posted> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const ns = await freshNamespace(env.client, 'atk');
    cleanups.push(() => env.client.request('DELETE', `/api/v1/namespaces/${ns}`));
    const run = await runHostile({
      client: env.client,
      github: env.github,
      number: env.number,
      base: baseTree(ns),
      head: head(ns),
      inputs: {
        kubeconfig: env.kubeconfig,
        mode: 'preview',
        kustomizations: 'clusters/prod/*.yaml',
        'github-token': TOKEN,
      },
    });
    cleanups.push(() => cleanupRun(run));
    return {
      comments: env.github.comments.filter((c) => c.issue_number === env.number).map((c) => c.body),
      checkRuns: env.github.checkRuns.filter((c) => c.head_sha === run.headSha),
      summary: run.summary,
      log: tail(`${run.stdout}\n${run.stderr}`),
    };
  } finally {
    for (const f of cleanups.reverse()) await f().catch(() => undefined);
  }
}

/** The BASE's Kustomization app, with `extra` lines in its spec. */
const app = (ns: string, extra: string) => ks(ns, 'app', './apps/app', FROM_CHECKOUT, extra);

const CASES: Case[] = [
  {
    id: '33-3a-markup-from-the-tree',
    title:
      'a PR tree puts Markdown in a component path (ignoreMissingComponents), a spec.path quoted in an error: the PR comment, check run and job summary show it as text',
    expect: ['Security review', 'bold-html'],
    run: (env) =>
      preview(env, (ns) => ({
        'clusters/prod/app.yaml': app(
          ns,
          `  ignoreMissingComponents: true\n  components:\n    - ${JSON.stringify(BRIEF)}\n    - ${JSON.stringify(MORE)}\n`,
        ),
        'clusters/prod/other.yaml': ks(ns, 'other', JSON.stringify(`./apps/${BRIEF} ${MORE}`)),
      })),
  },
  {
    id: '33-3b-markup-in-a-file-name',
    title:
      'a PR tree names a Kustomization file with Markdown and leaves it invalid, so that the run fails quoting the name: the error row, the check run title and the job summary show it as text',
    expect: ['@octocat'],
    run: (env) =>
      preview(env, (ns) => ({
        // Invalid beyond what a parent could fix (an unknown field): a file that only leaves fields to a
        // parent is left out with a note when a glob matched it (issue 50), not refused.
        'clusters/prod/**@octocat** [l](www.example.org) ![i](x.png) #1 _u_.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: broken, namespace: ${ns}}\nspec: {interval: 10m, prune: true, path: ./apps, sourceRef: {kind: GitRepository, name: flux-system}, bogus: 1}\n`,
      })),
  },
  {
    id: '33-3d-markup-in-a-dependson-name',
    title:
      'a PR tree puts Markdown in a dependsOn name, so that the run fails quoting it: the error row, the check run title and the job summary show it as text',
    expect: ['Security review'],
    run: (env) =>
      preview(env, (ns) => ({
        'clusters/prod/app.yaml': app(ns, `  dependsOn:\n    - name: ${JSON.stringify(`x ${BRIEF} ${MORE}`)}\n`),
      })),
  },
  {
    id: '33-3c-markup-in-merged-report-files',
    title:
      "report files of a fan-out carry Markdown in notes, errors, reasons, health messages, sources, paths and subjects: mode: report's merged PR comment, check run and job summary show it as text",
    expect: ['Security review', 'All checks passed'],
    run: async (env) => {
      const fake = env.github;
      const attack = `${BRIEF} ${MORE}`;
      const apps = kustomization(
        'flux-system/apps',
        `./apps/${BRIEF}`,
        [
          { ...webDeployment(3, '1.5.0'), subject: `Deployment/apps/${attack}` },
          { ...entry('ConfigMap/apps/web-settings', 'created'), note: attack },
          entry(`Service/apps/${attack}`, 'unchanged'),
        ],
        {
          ok: false,
          error: `${attack}\n${BLOCK}`,
          failure: { stage: 'health', reason: 'HealthCheckFailed', message: attack },
          notes: [attack, BLOCK],
          pruned: [{ subject: `ConfigMap/apps/${attack}`, action: 'deleted', reason: attack }],
          health: [{ subject: `Deployment/apps/${attack}`, status: 'InProgress', message: attack } as never],
          source: { ref: `OCIRepository flux-system/${attack}`, revision: `latest@sha256:${attack}` },
          level: 0,
        },
      );
      const job: Report = {
        ...jobReport([apps], {
          cluster: 'prod **@octocat** [c](x) ![i](y.png) #1',
          removed: [
            {
              r: {
                kustomization: `flux-system/${attack}`,
                inventory: `flux-system/${attack}`,
                objects: 1,
                deletionPolicy: 'Delete',
                action: 'deleted',
                reason: attack,
              },
              pruned: [],
            },
          ],
        }),
        notes: [BLOCK, attack],
      };
      const infra = jobReport(
        [kustomization('flux-system/infra', `./infra/${attack}`, [entry('Namespace/apps', 'created')], { level: 0 })],
        { cluster: 'staging' },
      );
      const workspace = await mkdtemp(join(tmpdir(), 'atk-report-'));
      try {
        for (const [name, r] of Object.entries({ 'prod.apps.json': job, 'staging.infra.json': infra })) {
          const file = join(workspace, 'reports', name);
          await mkdir(dirname(file), { recursive: true });
          await writeFile(file, fileText(r));
        }
        const checksBefore = fake.checkRuns.length;
        const commentsBefore = fake.comments.length;
        const res = await runAction(
          workspace,
          { mode: 'report', reports: 'reports/*.json', kustomizations: 'clusters/*/*.yaml', 'github-token': TOKEN },
          { env: repoEnv(fake), event: prEvent() },
        );
        return {
          comments: fake.comments.slice(commentsBefore).map((c) => c.body),
          checkRuns: fake.checkRuns.slice(checksBefore),
          summary: res.summary,
          log: tail(`exit code ${res.code}\n${res.stdout}\n${res.stderr}`),
        };
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    },
  },
];

// ---- the suite ---------------------------------------------------------------------------------------

describe('markup from a hostile tree or report file in the PR comment, check run and job summary', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;

  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    github = await startFakeGitHub({
      tokens: { [TOKEN]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  }, 60_000);

  afterAll(async () => {
    await github.close();
    client.close();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    await attackCase({ ...c, message: 'the attacker’s markup is live' }, async (evidence, result) => {
      const posted = await c.run({ client, github, kubeconfig, number: 330 + index });
      Object.assign(result, {
        comment: posted.comments.at(-1)?.slice(0, 6000),
        checkTitle: posted.checkRuns.at(-1)?.output?.title,
        log: posted.log,
      });
      if (posted.comments.length === 0) throw new Error(`no PR comment was posted:\n${posted.log}`);
      if (posted.checkRuns.length === 0) throw new Error('no check run was created');
      for (const w of c.expect)
        if (!reached(posted, w)) throw new Error(`the attacker's text (${w}) did not reach the renderings`);
      evidence.push(...judge(posted));
    });
  });
});

/** The last lines of a log, for the result file. */
function tail(text: string): string {
  return text.split('\n').slice(-40).join('\n');
}
