// A report of many Kustomizations as a reviewer reads it (src/report/standing.ts and its renderings):
// changed ones first with their diffs, unchanged ones folded into one line, failures split into those
// the change causes and those that failed before it (the inventory's record: Report.before), notes
// several Kustomizations share said once, within GitHub's limit in every tier.
import { describe, expect, it } from 'vitest';
import { commentMarker, COMMENT_LIMIT, renderCheckOutput, renderComment, type Tier } from '../../src/report/comment.js';
import { exitStatusOf } from '../../src/report/exit.js';
import { mergeReports } from '../../src/report/merge.js';
import { reportOf, type Report } from '../../src/report/model.js';
import { renderSummary } from '../../src/report/render.js';
import {
  failuresApart,
  inReadingOrder,
  sharedNotes,
  standingCounts,
  standingOf,
  tallyLine,
  unexplainedError,
  type SharedNote,
  type Standing,
} from '../../src/report/standing.js';
import { failingOnMain, tellingLine } from '../../src/report/words.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { golden } from '../helpers/golden.js';
import {
  ACTING_NOTE,
  CHANGED,
  MONOREPO_KEY,
  MONOREPO_REVISION,
  monorepoReport,
  NEW_FAILURES,
  OLD_FAILURES,
  VOLSYNC_NOTE,
} from '../helpers/monorepo-report.js';
import { named } from '../helpers/report-files.js';

const MARKER = commentMarker(MONOREPO_KEY);
const RUN_URL = 'https://github.com/acme/home-ops/actions/runs/42';

const entry = (action: ChangeSetEntry['action']): ChangeSetEntry => ({
  subject: `ConfigMap/a/${action}`,
  action,
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'a',
  name: action,
});

function k(name: string, changeset: ChangeSetEntry[], extra: Partial<Report> = {}): Report {
  return reportOf({
    mode: 'preview',
    kustomization: name,
    path: `./${name}`,
    server: '',
    changeset,
    durationMs: 1,
    notes: [],
    ...extra,
  });
}
const failed = (name: string, error: string, extra: Partial<Report> = {}): Report =>
  k(name, [], { error, failure: { stage: 'apply', reason: 'ReconciliationFailed', message: error }, ...extra });
const BEFORE = { result: 'Failed', since: '2026-11-02T08:14:51.000Z' } as const;

describe('standingOf', () => {
  it.each<{ why: string; r: Report; want: Standing }>([
    { why: 'an object to create', r: k('a/x', [entry('created')]), want: 'changed' },
    { why: 'an object to configure', r: k('a/x', [entry('configured'), entry('unchanged')]), want: 'changed' },
    {
      why: 'an object to prune',
      r: k('a/x', [], { pruned: [{ subject: 'ConfigMap/a/old', action: 'deleted' }] }),
      want: 'changed',
    },
    {
      why: 'an object handed over',
      r: k('a/x', [], { pruned: [{ subject: 'ConfigMap/a/m', action: 'moved', movedTo: 'a/y' }] }),
      want: 'changed',
    },
    { why: 'only unchanged objects', r: k('a/x', [entry('unchanged')]), want: 'unchanged' },
    { why: 'only skipped objects', r: k('a/x', [entry('skipped')]), want: 'unchanged' },
    {
      why: 'a prune skipped',
      r: k('a/x', [], { pruned: [{ subject: 'ConfigMap/a/old', action: 'skipped' }] }),
      want: 'unchanged',
    },
    { why: 'nothing at all', r: k('a/x', []), want: 'unchanged' },
    { why: 'failed, nothing recorded before', r: failed('a/x', 'boom'), want: 'failed' },
    { why: 'failed, and failed before', r: failed('a/x', 'boom', { before: BEFORE }), want: 'failing-before' },
    {
      why: 'skipped for a dependency',
      r: k('a/x', [], {
        error: 'skipped',
        failure: { stage: 'dependency', reason: 'DependencyNotReady', message: 'x' },
      }),
      want: 'skipped',
    },
    {
      why: 'skipped, and failed before',
      r: k('a/x', [], {
        error: 'skipped',
        failure: { stage: 'dependency', reason: 'DependencyNotReady', message: 'x' },
        before: BEFORE,
      }),
      want: 'failing-before',
    },
    {
      why: 'succeeded, though it failed before',
      r: k('a/x', [entry('configured')], { before: BEFORE }),
      want: 'changed',
    },
  ])('$why → $want', ({ r, want }) => {
    expect(standingOf(r)).toBe(want);
  });
});

describe('inReadingOrder', () => {
  it.each<{ given: [string, Standing][]; want: string[] }>([
    { given: [], want: [] },
    {
      given: [
        ['a', 'unchanged'],
        ['b', 'failing-before'],
        ['c', 'failed'],
        ['d', 'changed'],
        ['e', 'skipped'],
      ],
      want: ['d', 'c', 'e', 'b', 'a'],
    },
    {
      given: [
        ['a', 'unchanged'],
        ['b', 'changed'],
        ['c', 'unchanged'],
        ['d', 'changed'],
      ],
      want: ['b', 'd', 'a', 'c'],
    },
  ])('$given.length items', ({ given, want }) => {
    const standing = new Map(given);
    expect(inReadingOrder([...standing.keys()], (x) => standing.get(x)!)).toEqual(want);
  });
});

describe('tallyLine', () => {
  it.each<{ standings: Standing[]; planned: boolean; want: string }>([
    {
      standings: ['changed', 'failed', 'failed', 'failing-before', 'unchanged', 'unchanged'],
      planned: true,
      want: '🔄 **1** would change · ❌ **2** fail with this change · ⚠️ **1** already failing on main · ✅ **2** unchanged',
    },
    { standings: ['failed', 'unchanged'], planned: true, want: '❌ **1** fails with this change · ✅ **1** unchanged' },
    {
      standings: ['changed', 'failed', 'skipped'],
      planned: false,
      want: '🔄 **1** changed · ❌ **1** failed · ⏭️ **1** skipped',
    },
    { standings: ['unchanged'], planned: true, want: '✅ **1** unchanged' },
  ])('$standings (planned: $planned)', ({ standings, planned, want }) => {
    expect(tallyLine(standingCounts(standings), planned)).toBe(want);
  });
});

describe('sharedNotes', () => {
  const names = new Set(['a/x', 'a/y', 'a/z']);
  it.each<{ why: string; notes: string[]; want: SharedNote[] }>([
    { why: 'none', notes: [], want: [] },
    {
      why: 'one Kustomization’s note keeps its owner',
      notes: ['[a/x] suspended'],
      want: [{ text: 'suspended', owners: ['a/x'] }],
    },
    {
      why: 'the same note of three is said once, where it first came',
      notes: ['[a/x] acting as sa', '[a/x] other', '[a/y] acting as sa', '[a/z] acting as sa'],
      want: [
        { text: 'acting as sa', owners: ['a/x', 'a/y', 'a/z'] },
        { text: 'other', owners: ['a/x'] },
      ],
    },
    {
      why: 'a note of a report file or of the whole run is never merged',
      notes: ['[reports/a.json] late', '[reports/b.json] late', 'no matrix given'],
      want: [
        { text: '[reports/a.json] late', owners: [] },
        { text: '[reports/b.json] late', owners: [] },
        { text: 'no matrix given', owners: [] },
      ],
    },
    {
      why: 'a Kustomization’s note given twice names it once',
      notes: ['[a/x] n', '[a/x] n'],
      want: [{ text: 'n', owners: ['a/x'] }],
    },
  ])('$why', ({ notes, want }) => {
    expect(sharedNotes(notes, names)).toEqual(want);
  });
});

describe('unexplainedError', () => {
  const a = { error: 'boom' };
  const b = { error: 'line one:\nline two' };
  it.each<{ why: string; error: string | undefined; failed: { error?: string }[]; want: string }>([
    { why: 'no error', error: undefined, failed: [], want: '' },
    { why: 'every line is a Kustomization’s', error: 'Kustomization a/x: boom', failed: [a], want: '' },
    {
      why: 'a shared line and a multi-line error',
      error: 'Kustomizations a/x, a/y: boom\nKustomization a/z: line one:\nline two',
      failed: [a, a, b],
      want: '',
    },
    {
      why: 'what the run added stays',
      error: 'Kustomization a/x: boom\nlooking for removed Kustomizations failed: forbidden',
      failed: [a],
      want: 'looking for removed Kustomizations failed: forbidden',
    },
    {
      why: 'an error that only starts like one is not taken',
      error: 'Kustomization a/x: boom and more',
      failed: [a],
      want: 'Kustomization a/x: boom and more',
    },
    {
      why: 'no Kustomization failed',
      error: 'reports/x.json: unreadable',
      failed: [],
      want: 'reports/x.json: unreadable',
    },
  ])('$why', ({ error, failed: f, want }) => {
    expect(unexplainedError(error, f)).toBe(want);
  });
});

describe('failingOnMain', () => {
  it.each<{ since: string | undefined; want: string }>([
    { since: '2026-11-02T08:14:51.000Z', want: 'also failing on main since 2026-11-02 08:14 UTC' },
    { since: '2026-11-02T10:14:51+02:00', want: 'also failing on main since 2026-11-02 08:14 UTC' },
    { since: undefined, want: 'also failing on main' },
    { since: 'yesterday', want: 'also failing on main' },
  ])('$since', ({ since, want }) => {
    expect(failingOnMain({ result: 'Failed', ...(since !== undefined ? { since } : {}) })).toBe(want);
  });
});

describe('tellingLine', () => {
  it.each<{ error: string; want: string }>([
    { error: 'boom', want: 'boom' },
    { error: 'boom\nmore', want: 'boom' },
    {
      error:
        '1 object of the apply stage failed the dry-run; nothing of the stage was applied:\nDeployment/a/x dry-run failed',
      want: 'Deployment/a/x dry-run failed',
    },
    { error: 'introduces nothing:', want: 'introduces nothing:' },
    { error: 'introduces a blank line:\n\nthen text', want: 'introduces a blank line:' },
    { error: 'health check failed:\r\n  Deployment/a/x status: Failed', want: 'Deployment/a/x status: Failed' },
  ])('$error', ({ error, want }) => {
    expect(tellingLine(error)).toBe(want);
  });
});

describe('failuresApart', () => {
  it('splits the error in reading order: what this change makes fail (and what the run added), what failed before', () => {
    const r = reportOf({
      ...k('all', []),
      error: 'Kustomization a/old: was broken\nKustomization a/new: broken now\nremoving a/gone failed',
      kustomizations: [failed('a/old', 'was broken', { before: BEFORE }), failed('a/new', 'broken now')],
    });
    expect(failuresApart(r)).toEqual({
      caused: 'Kustomization a/new: broken now\nremoving a/gone failed',
      before: 'Kustomization a/old: was broken',
    });
  });
});

describe('the comment of an 80-Kustomization monorepo preview', () => {
  const report = monorepoReport();
  const render = (limit?: number) =>
    renderComment(report, {
      marker: MARKER,
      runUrl: RUN_URL,
      revision: MONOREPO_REVISION,
      ...(limit ? { limit } : {}),
    });
  const unchangedNames = report
    .kustomizations!.filter((x) => standingOf(x) === 'unchanged')
    .map((x) => `\`${x.kustomization}\``);

  it('is the golden comment, in full', () => {
    const { body, tier } = render();
    golden('monorepo-80.md', body);
    expect(tier).toBe('full');
  });

  it('leads with the tally, then the changed Kustomization and its diff; the unchanged ones are one line', () => {
    const { body } = render();
    const lines = body.split('\n');
    expect(lines.slice(0, 6).join('\n')).toContain(
      '🔄 **1** would change · ❌ **2** fail with this change · ⚠️ **3** already failing on main · ✅ **74** unchanged',
    );
    // No wall of errors at the top: each error goes with its Kustomization.
    expect(body).not.toContain('**Error:**');
    const changedAt = body.indexOf(`\`${CHANGED}\``);
    for (const n of unchangedNames) expect(body.indexOf(n)).toBeGreaterThan(changedAt);
    expect(body.indexOf('+          image: ghcr.io/jellyfin/jellyfin:10.10.5')).toBeGreaterThan(changedAt);
    expect(body).not.toContain('✅ no changes');
    expect(body.match(/✅ 74 Kustomizations unchanged/g)).toHaveLength(1);
    const tableRows = lines.filter((l) => l.startsWith('| `'));
    expect(tableRows.map((l) => l.split(' | ')[0])).toEqual([
      `| \`${CHANGED}\``,
      '| `media/sonarr`',
      '| `network/echo-server`',
      '| `database/dragonfly-cluster`',
      '| `media/plex`',
      '| `observability/loki`',
    ]);
  });

  it('puts the failures this change causes before those that failed on main already, each with its error', () => {
    const { body } = render();
    const caused = body.indexOf('### ❌ Failing with this change (2)');
    const before = body.indexOf('### ⚠️ Already failing on main (3)');
    expect(caused).toBeGreaterThan(body.indexOf('### 🔄 Would change (1)'));
    expect(before).toBeGreaterThan(caused);
    for (const [name, error] of Object.entries(NEW_FAILURES)) {
      const at = body.indexOf(`#### \`${name}\``);
      expect(at).toBeGreaterThan(caused);
      expect(at).toBeLessThan(before);
      expect(body.indexOf(error.split('\n').at(-1)!, at)).toBeGreaterThan(at);
    }
    for (const [name, { since }] of Object.entries(OLD_FAILURES)) {
      const at = body.indexOf(`#### \`${name}\``);
      expect(at).toBeGreaterThan(before);
      expect(body.slice(at)).toContain(`${failingOnMain({ result: 'Failed', since })}; not caused by this change.`);
    }
  });

  it('says each repeated note once, with how many Kustomizations gave it', () => {
    const { body } = render();
    expect(body.split(ACTING_NOTE)).toHaveLength(2);
    expect(body).toContain(`${ACTING_NOTE} — _78 Kustomizations:_`);
    expect(body).toContain(`${VOLSYNC_NOTE} — _12 Kustomizations:_`);
    expect(body).toContain('**Notes (3)**');
  });

  it.each<{ limit: number; tier: Tier; diff: boolean }>([
    { limit: COMMENT_LIMIT, tier: 'full', diff: true },
    { limit: 6_000, tier: 'truncated', diff: true },
    { limit: 4_400, tier: 'truncated', diff: true },
    { limit: 3_000, tier: 'summary', diff: false },
    { limit: 1_500, tier: 'summary', diff: false },
  ])('within $limit characters: $tier, still leading with the changed Kustomization', ({ limit, tier, diff }) => {
    const out = render(limit);
    expect(out.body.length).toBeLessThanOrEqual(limit);
    expect(out.tier).toBe(tier);
    expect(out.body.split('\n', 1)[0]).toBe(MARKER);
    const changedAt = out.body.indexOf(`\`${CHANGED}\``);
    expect(changedAt).toBeGreaterThan(0);
    for (const n of unchangedNames) {
      const at = out.body.indexOf(n);
      if (at >= 0) expect(at).toBeGreaterThan(changedAt);
    }
    expect(out.body.includes('ghcr.io/jellyfin/jellyfin:10.10.5')).toBe(diff);
    // The unchanged Kustomizations' names go before any diff is cut.
    if (tier !== 'full') expect(out.body).toContain('**✅ 74 Kustomizations unchanged**');
    if (tier === 'summary') {
      // No sections: the top says what fails with the change, never what failed before first.
      expect(out.body).not.toContain('Kustomization database/dragonfly-cluster:');
    }
  });

  it('every limit down to the marker gives a fitting body that names the changed Kustomization while it can', () => {
    let named = true;
    for (let limit = 7_000; limit > MARKER.length; limit -= 97) {
      const out = render(limit);
      expect(out.body.length).toBeLessThanOrEqual(limit);
      const has = out.body.includes(`\`${CHANGED}\``);
      // Once too small to name it, never named again at a smaller limit.
      if (!named) expect(has).toBe(false);
      named = has;
    }
  });

  it('keeps the exit code: a preview with failures fails, whatever failed before', () => {
    expect(exitStatusOf('action', 'preview', report)).toBe(2);
    const onlyOld = reportOf({
      ...report,
      kustomizations: report.kustomizations!.filter((x) => standingOf(x) !== 'failed'),
    });
    expect(exitStatusOf('action', 'preview', onlyOld)).toBe(2);
  });

  it('gives the check run the same order, and its title the first failure this change causes', () => {
    const check = renderCheckOutput(report, {});
    expect(check.title).toMatch(/^Failed: Kustomization media\/sonarr: kustomize build failed/);
    expect(check.summary).toContain('✅ **74** unchanged');
    expect(check.summary.indexOf(`\`${CHANGED}\``)).toBeLessThan(check.summary.indexOf('`media/sonarr`'));
    expect(check.text.indexOf('### 🔄 Would change (1)')).toBeLessThan(check.text.indexOf('### ❌ Failing'));
  });

  it('gives the job summary the same order and folding, the failures apart', () => {
    const md = renderSummary(report);
    const table = md.slice(0, md.indexOf('Kustomizations unchanged'));
    const rows = table.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows[0]).toContain(`\`${CHANGED}\``);
    expect(rows).toHaveLength(6);
    expect(md).toContain('<details><summary><b>✅ 74 Kustomizations unchanged</b></summary>');
    const caused = md.indexOf('**Failed:** 5 failed of 80 Kustomizations');
    const before = md.indexOf('**Already failing on main:**');
    expect(caused).toBeGreaterThan(md.indexOf('Kustomizations unchanged'));
    expect(md.indexOf('Kustomization media/sonarr:')).toBeGreaterThan(caused);
    expect(md.indexOf('Kustomization media/sonarr:')).toBeLessThan(before);
    expect(md.indexOf('Kustomization media/plex:')).toBeGreaterThan(before);
  });
});

describe('what failed before, through a report file and a merge', () => {
  it('keeps each Kustomization’s before, so that the merged comment splits its failures alike', () => {
    const report = monorepoReport();
    const merged = mergeReports([named('reports/monorepo.json', report)]);
    const plex = merged.kustomizations!.find((x) => x.kustomization === 'media/plex')!;
    expect(plex.before).toEqual({
      result: 'Failed',
      since: OLD_FAILURES['media/plex']!.since,
      message: OLD_FAILURES['media/plex']!.error,
    });
    const body = renderComment(merged, { marker: MARKER }).body;
    expect(body).toContain('### ⚠️ Already failing on main (3)');
    expect(body).toContain('### ❌ Failing with this change (2)');
  });
});
