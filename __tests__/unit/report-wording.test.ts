// Issue 34: counts and wording. Failed and skipped Kustomizations counted apart; a preview's job
// summary in the words of what would happen; a Kustomization column where objects of several are
// listed in one table; each object's health once per rendering; refused objects counted as objects.
import { describe, expect, it } from 'vitest';
import { UnservedKindError, type Discovery } from '../../src/cluster/discovery.js';
import type { HealthResult } from '../../src/kstatus/wait.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { healthCounts } from '../../src/reconcile/phases.js';
import { renderCheckOutput, renderComment } from '../../src/report/comment.js';
import { countReport, type Failure, type PrunedObject, type Report } from '../../src/report/model.js';
import { closingLines, renderSummary } from '../../src/report/render.js';
import { namedInError, tally } from '../../src/report/words.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { prevalidate, refusal } from '../../src/ssa/prevalidate.js';

const entry = (subject: string, action: ChangeSetEntry['action']): ChangeSetEntry => ({
  subject,
  action,
  apiVersion: 'v1',
  kind: subject.split('/')[0]!,
  name: subject.split('/').at(-1)!,
});

function report(changeset: ChangeSetEntry[], extra: Partial<Report> = {}): Report {
  return {
    mode: 'preview',
    kustomization: 'flux-system/apps',
    path: 'apps',
    notes: [],
    server: 'https://k',
    ok: true,
    changeset,
    counts: countReport(changeset, extra.pruned),
    durationMs: 1000,
    ...extra,
  };
}

const failure = (stage: Failure['stage']): Failure => ({ stage, reason: 'X', message: 'x' });
const ok = (name: string, changeset: ChangeSetEntry[] = [], extra: Partial<Report> = {}) =>
  report(changeset, { kustomization: name, ...extra });
const failed = (name: string) =>
  report([], { kustomization: name, ok: false, error: 'boom', failure: failure('apply') });
const skipped = (name: string) =>
  report([], {
    kustomization: name,
    ok: false,
    error: "skipped: dependency 'ns/a' is not ready",
    failure: failure('dependency'),
  });

/** As src/reconcile/report.ts combines several Kustomizations' reports. */
function combined(parts: Report[], extra: Partial<Report> = {}): Report {
  const changeset = parts.flatMap((r) => r.changeset);
  const pruned = parts.flatMap((r) => r.pruned ?? []);
  const health = parts.flatMap((r) => r.health ?? []);
  const bad = parts.filter((r) => !r.ok);
  return report(changeset, {
    kustomization: parts.map((r) => r.kustomization).join(', '),
    ok: bad.length === 0,
    kustomizations: parts,
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(health.length > 0 ? { health } : {}),
    ...(bad.length > 0 ? { error: bad.map((r) => `Kustomization ${r.kustomization}: ${r.error}`).join('\n') } : {}),
    ...extra,
  });
}

describe('failed and skipped Kustomizations are counted apart', () => {
  it.each<{ why: string; parts: Report[]; tally: string | undefined; line: RegExp }>([
    {
      why: '1 failed, 2 skipped for it, 1 fine',
      parts: [failed('ns/a'), skipped('ns/b'), skipped('ns/c'), ok('ns/d')],
      tally: '1 failed, 2 skipped of 4 Kustomizations',
      line: /^Failed: 1 failed, 2 skipped of 4 Kustomizations, after 0 created, .* in 1\.0s: Kustomization ns\/a: boom$/m,
    },
    {
      why: 'all failed',
      parts: [failed('ns/a'), failed('ns/b')],
      tally: '2 failed of 2 Kustomizations',
      line: /^Failed: 2 failed of 2 Kustomizations, after /,
    },
    {
      why: 'only skipped (a dependency failed in another job)',
      parts: [skipped('ns/b'), ok('ns/d')],
      tally: '1 skipped of 2 Kustomizations',
      line: /^Failed: 1 skipped of 2 Kustomizations, after /,
    },
    {
      why: 'none failed',
      parts: [ok('ns/a'), ok('ns/b')],
      tally: undefined,
      line: /^Preview of 2 Kustomizations: 0 created, 0 configured, 0 deleted, 0 unchanged in 1\.0s$/,
    },
  ])('$why', ({ parts, tally: want, line }) => {
    const r = combined(parts);
    expect(tally(r)).toBe(want);
    expect(closingLines(r).at(-1)).toMatch(line);
    if (want !== undefined) expect(renderSummary(r)).toContain(`**Failed:** ${want}`);
  });

  it('a skipped Kustomization is ⏭️ in the summary, the comment and the check run, a failed one ❌', () => {
    const r = combined([failed('ns/a'), skipped('ns/b')]);
    const comment = renderComment(r, { marker: '<!-- m -->' }).body;
    const check = renderCheckOutput(r, {}).summary;
    for (const md of [renderSummary(r), comment, check]) {
      expect(md).toMatch(/\| `ns\/a` \| ❌ boom \|/);
      expect(md).toMatch(/\| `ns\/b` \| ⏭️ skipped: dependency 'ns\/a' is not ready \|/);
    }
  });
});

describe('a preview’s job summary says what would happen, like its comment', () => {
  const parts = [ok('ns/a', [entry('ConfigMap/x/a', 'created')]), ok('ns/b', [entry('ConfigMap/x/b', 'configured')])];
  it.each<{ mode: Report['mode']; drift?: Report['drift']; has: string[]; lacks: string[] }>([
    {
      mode: 'preview',
      has: [
        '**1** to create · **1** to configure · **0** to delete · **0** unchanged',
        '| Kustomization | Result | To create | To configure | To delete | Unchanged |',
        '| `ns/a` | 🔄 would change | 1 | 0 | 0 | 0 |',
        '| `ns/a` | `ConfigMap/x/a` | would create |',
        '| `ns/b` | `ConfigMap/x/b` | would configure |',
      ],
      lacks: ['| ok |', '** created', '| Created |', '| created |'],
    },
    {
      mode: 'drift',
      drift: { detected: true, corrected: false },
      has: ['**1** to create', '🔄 would change', '| would create |'],
      lacks: ['| ok |', '| created |'],
    },
    {
      mode: 'drift',
      drift: { detected: true, corrected: true },
      has: ['**1** created · **1** configured · **0** deleted', '🔄 changed', '| created |'],
      lacks: ['would'],
    },
    {
      mode: 'apply',
      has: [
        '**1** created · **1** configured · **0** deleted · **0** unchanged',
        '| Kustomization | Result | Created | Configured | Deleted | Unchanged |',
        '| `ns/b` | 🔄 changed | 0 | 1 | 0 | 0 |',
        '| `ns/a` | `ConfigMap/x/a` | created |',
      ],
      lacks: ['would', '| ok |'],
    },
  ])('$mode $drift', ({ mode, drift, has, lacks }) => {
    const md = renderSummary(combined(parts, { mode, ...(drift ? { drift } : {}) }));
    for (const s of has) expect(md).toContain(s);
    for (const s of lacks) expect(md).not.toContain(s);
  });

  it('Kustomizations without changes read ✅ unchanged, not ok, folded into one line', () => {
    const md = renderSummary(combined([ok('ns/a', [entry('ConfigMap/x/a', 'unchanged')]), ok('ns/b')]));
    expect(md).toContain('<details><summary><b>✅ 2 Kustomizations unchanged</b></summary>\n\n`ns/a` · `ns/b`');
    expect(md).not.toContain('| ok |');
  });
});

describe('a Kustomization column wherever objects of several Kustomizations share a table', () => {
  const prune = (subject: string, extra: Partial<PrunedObject> = {}): PrunedObject => ({
    subject,
    action: 'deleted',
    ...extra,
  });
  const health = (subject: string): HealthResult => ({ subject, status: 'Current', message: 'ready' });
  it.each<{ why: string; r: Report; has: string[]; lacks: string[] }>([
    {
      why: 'several Kustomizations: each table names them, on the first row of each',
      r: combined(
        [
          ok('ns/a', [entry('ConfigMap/x/a1', 'created'), entry('ConfigMap/x/a2', 'created')], {
            pruned: [prune('ConfigMap/x/old')],
            health: [health('ConfigMap/x/a1')],
          }),
          ok('ns/b', [entry('ConfigMap/x/b', 'configured'), entry('ConfigMap/x/same', 'unchanged')], {
            health: [health('ConfigMap/x/b')],
          }),
        ],
        { mode: 'apply' },
      ),
      has: [
        '| Kustomization | Object | Action |',
        '| `ns/a` | `ConfigMap/x/a1` | created |\n|  | `ConfigMap/x/a2` | created |\n| `ns/b` | `ConfigMap/x/b` | configured |',
        '| Kustomization | Pruned | Result | Reason |',
        '| `ns/a` | `ConfigMap/x/old` | deleted |',
        '| Kustomization | Health | Status | Message |',
        '| `ns/a` | `ConfigMap/x/a1` | Current | ready |\n| `ns/b` | `ConfigMap/x/b` | Current | ready |',
        '- `ConfigMap/x/same` (`ns/b`)',
      ],
      lacks: [],
    },
    {
      why: 'one Kustomization: no column',
      r: report([entry('ConfigMap/x/a', 'created')], { health: [health('ConfigMap/x/a')] }),
      has: ['\n| Object | Action |', '\n| Health | Status | Message |'],
      lacks: ['| Kustomization |'],
    },
    {
      why: 'one Kustomization and the objects of one removed from the repository: the prune table names both',
      r: report([], {
        pruned: [prune('ConfigMap/x/old'), prune('ConfigMap/y/gone', { removedWith: 'ns/gone' })],
      }),
      has: [
        '| Kustomization | ⚠️ Would prune | Result | Reason |',
        '| `flux-system/apps` | `ConfigMap/x/old` | would delete |',
        '| `ns/gone` (removed) | `ConfigMap/y/gone` | would delete |',
      ],
      lacks: [],
    },
  ])('$why', ({ r, has, lacks }) => {
    const md = renderSummary(r);
    for (const s of has) expect(md).toContain(s);
    for (const s of lacks) expect(md).not.toContain(s);
  });
});

describe('each object’s health once per rendering', () => {
  const health: HealthResult[] = [
    { subject: 'Deployment/ns/web', status: 'InProgress', message: 'Available: 0/1' },
    { subject: 'Deployment/ns/api', status: 'Current', message: 'Available: 1/1' },
  ];
  const error =
    "health check failed after 30s, timeout waiting for 1 object(s):\n  Deployment/ns/web status: 'InProgress': Available: 0/1";
  const failedHealth = report([entry('Deployment/ns/web', 'created'), entry('Deployment/ns/api', 'created')], {
    ok: false,
    mode: 'apply',
    health,
    error,
    failure: failure('health'),
  });
  const count = (text: string, s: string) => text.split(s).length - 1;
  it.each<{ where: string; text: () => string }>([
    { where: 'job summary', text: () => renderSummary(failedHealth) },
    { where: 'PR comment', text: () => renderComment(failedHealth, { marker: '<!-- m -->' }).body },
    {
      where: 'check run',
      text: () => {
        const o = renderCheckOutput(failedHealth, {});
        return o.summary + o.text;
      },
    },
  ])('$where: the unhealthy object once (in the error)', ({ text }) => {
    const t = text();
    expect(count(t, 'Available: 0/1')).toBe(1);
    expect(t).toContain("Deployment/ns/web status: 'InProgress'");
  });

  it('the summary still lists the healthy objects the error does not name', () => {
    const md = renderSummary(failedHealth);
    expect(md).toContain('| `Deployment/ns/api` | Current | Available: 1/1 |');
    expect(md).not.toContain('| `Deployment/ns/web` | InProgress |');
  });

  it('an unhealthy object the error does not name is listed', () => {
    const r = { ...failedHealth, error: 'something else' };
    expect(renderSummary(r)).toContain('| `Deployment/ns/web` | InProgress | Available: 0/1 |');
    expect(renderComment(r, { marker: '<!-- m -->' }).body).toContain(
      '`Deployment/ns/web` — InProgress: Available: 0/1',
    );
  });

  it.each<[string | undefined, string, boolean]>([
    [error, 'Deployment/ns/web', true],
    [error, 'Deployment/ns/we', false],
    [error, 'Deployment/ns/api', false],
    ['Deployment/ns/web: gone', 'Deployment/ns/web', true],
    [undefined, 'Deployment/ns/web', false],
  ])('namedInError(%j, %s) = %s', (e, subject, want) => {
    expect(namedInError(e, subject)).toBe(want);
  });

  it.each<[HealthResult[], string]>([
    [health, '1 InProgress, 1 Current'],
    [[health[1]!, health[1]!], '2 Current'],
    [[], ''],
  ])('the log ends the wait with a count, not a table: %j → %s', (results, want) => {
    expect(healthCounts(results)).toBe(want);
  });
});

describe('refused objects are counted as objects, not as lines', () => {
  const obj = (apiVersion: string, kind: string, name: string, labels?: Record<string, string>): KubeObject => ({
    apiVersion,
    kind,
    metadata: { name, namespace: 'ns', ...(labels ? { labels } : {}) },
  });
  const discovery = {
    mapping: (apiVersion: string, kind: string) =>
      apiVersion === 'example.com/v1' ? Promise.reject(new UnservedKindError(apiVersion, kind)) : Promise.resolve({}),
    serverVersion: () => Promise.resolve(undefined),
  } as unknown as Discovery;
  const refused = async (objects: KubeObject[]): Promise<string> => {
    const err = await prevalidate(objects, discovery).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    return err?.message.split('\n')[0] ?? '';
  };
  it.each<{ why: string; objects: KubeObject[]; head: string }>([
    {
      why: 'one line names three objects of an unserved kind, another one bad name: four objects',
      objects: [
        obj('example.com/v1', 'Widget', 'a'),
        obj('example.com/v1', 'Widget', 'b'),
        obj('example.com/v1', 'Widget', 'c'),
        obj('v1', 'ConfigMap', 'Bad_Name'),
      ],
      head: '4 objects would be refused by the API server (2 problems); nothing was applied:',
    },
    {
      why: 'one object with two problems',
      objects: [obj('v1', 'ConfigMap', 'Bad_Name', { 'bad key!': 'v' })],
      head: 'an object would be refused by the API server (2 problems); nothing was applied:',
    },
    {
      why: 'two objects, a problem each',
      objects: [obj('v1', 'ConfigMap', 'Bad_Name'), obj('v1', 'ConfigMap', 'Also_Bad')],
      head: '2 objects would be refused by the API server; nothing was applied:',
    },
  ])('$why', async ({ objects, head }) => {
    expect(await refused(objects)).toBe(head);
  });

  it.each<[string[], number | undefined, string | undefined]>([
    [[], undefined, undefined],
    [['p'], undefined, 'an object would be refused by the API server; nothing was applied:\n  p'],
    [['p', 'q'], 5, '5 objects would be refused by the API server (2 problems); nothing was applied:\n  p\n  q'],
  ])('refusal(%j, %s)', (problems, objects, want) => {
    expect(refusal(problems, objects)).toBe(want);
  });
});
