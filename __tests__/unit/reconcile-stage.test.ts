import { describe, expect, it } from 'vitest';
import { ObjectError } from '../../src/objects/errors.js';
import { prefixed, SecretRegistry, type Logger } from '../../src/reconcile/context.js';
import { failureOf, rootCause, STAGE_REASONS, StageError, type Stage } from '../../src/reconcile/errors.js';
import { combine, outcomeOf, skippedReport } from '../../src/reconcile/report.js';
import { countReport, reportOf, type Report } from '../../src/report/model.js';
import { SopsError } from '../../src/sops/types.js';
import { ApiError } from '../../src/cluster/errors.js';
import { SpecError } from '../../src/flux/fields.js';
import { CelSyntaxError } from '../../src/kstatus/cel.js';
import { PathError } from '../../src/kustomize/paths.js';
import { BadPattern } from '../../src/source/glob.js';
import { EnvsubstError } from '../../src/substitute/envsubst/errors.js';
import { isUserError, UserError } from '../../src/util/user-error.js';
import { settingsOf } from '../../src/options/settings.js';
import { specFromInputs } from '../../src/flux/from-inputs.js';

const settings = settingsOf({ kubeconfig: { kind: 'path', path: '/dev/null' }, root: '/tmp', path: 'app' });
const spec = specFromInputs({ path: 'app', source: 'github.com/acme/app', wait: false, prune: true, force: false });

describe('StageError', () => {
  // kustomize-controller's Ready reason where the same step fails (internal/controller/kustomization_controller.go).
  it.each<[Stage, string]>([
    ['resolve', 'ArtifactFailed'],
    ['render', 'BuildFailed'],
    ['plan', 'ReconciliationFailed'],
    ['apply', 'ReconciliationFailed'],
    ['health', 'HealthCheckFailed'],
    ['prune', 'PruneFailed'],
    ['record', 'ReconciliationFailed'],
    ['dependency', 'DependencyNotReady'],
  ])('a failure in %s has the reason %s', (stage, reason) => {
    expect(new StageError(stage, 'boom').failure).toEqual({ stage, reason, message: 'boom' });
    expect(failureOf(stage, 'boom').reason).toBe(reason);
    expect(STAGE_REASONS[stage]).toBe(reason);
  });

  it.each([
    ['an Error', new Error('no such file'), 'no such file', undefined],
    ['a string', 'plain text', 'plain text', undefined],
    ['an error about one object', new ObjectError('ConfigMap/ns/a', 'bad'), 'ConfigMap/ns/a: bad', 'ConfigMap/ns/a'],
    [
      'a SOPS error about one object',
      new SopsError('Secret/ns/s: failed', { subject: 'Secret/ns/s' }),
      'Secret/ns/s: failed',
      'Secret/ns/s',
    ],
  ])('wraps %s keeping its message, its subject and its cause', (_, thrown, message, subject) => {
    const err = StageError.of('render', thrown);
    expect(err.message).toBe(message);
    expect(err.stage).toBe('render');
    expect(err.subject).toBe(subject);
    expect(rootCause(err)).toBe(thrown);
  });

  it('keeps the stage of an error already tagged', () => {
    const inner = new StageError('health', 'unhealthy');
    expect(StageError.of('apply', inner)).toBe(inner);
  });

  it('takes a location and a reason of its own', () => {
    const err = StageError.of('resolve', new Error('lock'), {
      reason: 'ReconciliationFailed',
      file: 'ks.yaml',
      line: 3,
    });
    expect(err.failure.reason).toBe('ReconciliationFailed');
    expect([err.file, err.line]).toEqual(['ks.yaml', 3]);
  });
});

describe('outcomeOf', () => {
  const failed = (stage: Stage): Report => skippedReport(settings, spec, `${stage} went wrong`, stage);
  it.each<[string, Report, { ok: boolean; reason: string }]>([
    ['a success', { ...failed('apply'), ok: true }, { ok: true, reason: 'ReconciliationSucceeded' }],
    ['a skipped dependency', failed('dependency'), { ok: false, reason: 'DependencyNotReady' }],
    ['a failed build', failed('render'), { ok: false, reason: 'BuildFailed' }],
    ['a failed health check', failed('health'), { ok: false, reason: 'HealthCheckFailed' }],
    ['a wrong source', failed('resolve'), { ok: false, reason: 'ArtifactFailed' }],
  ])('gives %s the Ready reason Flux would', (_, report, expected) => {
    expect(outcomeOf(report)).toMatchObject(expected);
  });

  it('reads the reason from the failure, not from the text of the error', () => {
    const report = skippedReport(settings, spec, 'health check failed? no: skipped: in the text only', 'render');
    expect(outcomeOf(report).reason).toBe('BuildFailed');
  });
});

describe('combine', () => {
  it('keeps the first failure with the combined message', () => {
    const ok: Report = { ...skippedReport(settings, spec, 'x', 'apply'), ok: true, counts: countReport([]) };
    delete ok.error;
    delete ok.failure;
    const bad = skippedReport(settings, { ...spec, name: 'b' }, 'prune refused: too many', 'prune');
    const report = combine(settings, [ok, bad], 0, 'https://k');
    expect(report.ok).toBe(false);
    expect(report.failure).toEqual({ stage: 'prune', reason: 'PruneFailed', message: report.error });
    expect(report.error).toContain('prune refused: too many');
  });

  it('puts the root cause first: a Kustomization skipped for its dependency comes after it', () => {
    const skipped = skippedReport(
      settings,
      { ...spec, name: 'apps' },
      "skipped: dependency 'flux-system/infra' is not ready",
      'dependency',
    );
    const failed = skippedReport(
      settings,
      { ...spec, name: 'infra' },
      'kustomize build failed: no such file',
      'render',
    );
    const report = combine(settings, [skipped, failed], 0, 'https://k');
    expect(report.error?.split('\n')).toEqual([
      'Kustomization flux-system/infra: kustomize build failed: no such file',
      "Kustomization flux-system/apps: skipped: dependency 'flux-system/infra' is not ready",
    ]);
    expect(report.failure?.stage).toBe('render');
    // The per-Kustomization list keeps the order they were given in.
    expect(report.kustomizations?.map((k) => k.kustomization)).toEqual(['flux-system/apps', 'flux-system/infra']);
  });
});

describe('SecretRegistry', () => {
  it('passes each value on and keeps the ones a scope saw apart', () => {
    const sunk: string[] = [];
    const run = new SecretRegistry((v) => sunk.push(v));
    const scope = run.scoped();
    run.add('run-token');
    scope.add('rendered-secret');
    expect(sunk).toEqual(['run-token', 'rendered-secret']);
    expect([...scope.known]).toEqual(['rendered-secret']);
    expect([...run.known]).toEqual(['run-token', 'rendered-secret']);
  });
});

describe('prefixed', () => {
  it('prefixes lines and group titles, and runs the group', async () => {
    const out: string[] = [];
    const log: Logger = {
      info: (l) => out.push(l),
      group: async (title, fn) => {
        out.push(`> ${title}`);
        return fn();
      },
    };
    const p = prefixed(log, '[ns/app]');
    const value = await p.group('Render', () => {
      p.info('built 3 objects');
      return Promise.resolve(7);
    });
    expect(value).toBe(7);
    expect(out).toEqual(['> [ns/app] Render', '[ns/app] built 3 objects']);
  });
});

describe("a failure in what the run was given is marked the user's", () => {
  it.each<[string, unknown, boolean]>([
    ['a UserError', new UserError('input x must be …'), true],
    ['a Kustomization file that breaks a rule', new SpecError(['spec.interval: is required']), true],
    ['a path outside the root', new PathError('../x', 'leaves the source root'), true],
    ['an unset variable', new EnvsubstError('variable not set (strict mode): "X"', 'X'), true],
    ['a malformed glob', new BadPattern('syntax error in pattern'), true],
    ['a CEL expression that does not parse', new CelSyntaxError('Syntax error'), true],
    ['a UserError a phase wrapped', StageError.of('render', new UserError('kustomize build . failed: …')), true],
    ['a UserError given as the cause', new Error('while building', { cause: new UserError('x') }), true],
    ['the API server refusing', new ApiError(500, 'InternalError', 'etcd timeout'), false],
    ['a plain error', new Error('socket hang up'), false],
    ['a string', 'failed', false],
  ])('%s', (_, err, user) => {
    expect(isUserError(err)).toBe(user);
    const failure = failureOf('render', 'm', err);
    expect(failure.userError).toBe(user ? true : undefined);
    expect(StageError.of('render', err).failure.userError).toBe(user ? true : undefined);
  });

  it('is carried by a Kustomization refused before its build', () => {
    const cause = new SpecError(['spec.path: must be relative']);
    expect(skippedReport(settings, spec, 'refused', 'render', { cause }).failure).toEqual({
      stage: 'render',
      reason: 'BuildFailed',
      message: 'refused',
      userError: true,
    });
    expect(skippedReport(settings, spec, 'skipped', 'dependency').failure).not.toHaveProperty('userError');
  });
});

describe('reportOf: ok and counts derived, never set apart', () => {
  const created = {
    subject: 'ConfigMap/ns/a',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'a',
    action: 'created' as const,
  };
  const parts = { mode: 'apply' as const, kustomization: 'ns/k', path: '.', server: 's', durationMs: 1, notes: [] };
  it.each<[string, Parameters<typeof reportOf>[0], boolean, Partial<Report['counts']>]>([
    ['no error: ok', { ...parts, changeset: [created] }, true, { created: 1, deleted: 0 }],
    ['an error: failed', { ...parts, changeset: [], error: 'x' }, false, { created: 0 }],
    [
      'a deleted prune result counts, a skipped one does not',
      {
        ...parts,
        changeset: [],
        pruned: [
          { subject: 'ConfigMap/ns/b', action: 'deleted' },
          { subject: 'ConfigMap/ns/c', action: 'skipped' },
        ],
      },
      true,
      { deleted: 1 },
    ],
    [
      'a report spread into its parts: its stale ok and counts are derived again',
      { ...parts, changeset: [created], ok: false, counts: countReport([]) } as Parameters<typeof reportOf>[0],
      true,
      { created: 1 },
    ],
  ])('%s', (_, given, ok, counts) => {
    const r = reportOf(given);
    expect(r.ok).toBe(ok);
    expect(r.counts).toMatchObject(counts);
  });
});
