// The PR comment and the job summary of a preview, rendered from Markdown to HTML and opened in
// headless Chromium, read as a reviewer reads them: what Chromium shows comes in the right order
// (the deletion first and flagged, then what is created, then the YAML diff, open), no Secret value
// shows, and the screenshots in docs/screenshots/ are of this very rendering (UPDATE_SCREENSHOTS=1
// writes them).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commentMarker, renderComment } from '../../src/report/comment.js';
import { countReport, type Report } from '../../src/report/model.js';
import { renderSummary } from '../../src/report/render.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { diffObjects } from '../../src/ssa/diff.js';
import { yamlDiff } from '../../src/ssa/yaml-diff.js';
import { CHROMIUM, inChromium, pageOf, pngSize } from '../helpers/browser.js';
import { ACTING_NOTE, CHANGED, MONOREPO_KEY, MONOREPO_REVISION, monorepoReport } from '../helpers/monorepo-report.js';
import { REPO } from '../helpers/paths.js';

const SECRET = 'correct-horse-battery-staple';

function configured(before: Record<string, unknown>, after: Record<string, unknown>, subject: string): ChangeSetEntry {
  const meta = after['metadata'] as { name: string; namespace?: string };
  return {
    subject,
    action: 'configured',
    apiVersion: String(after['apiVersion']),
    kind: String(after['kind']),
    name: meta.name,
    ...(meta.namespace ? { namespace: meta.namespace } : {}),
    diff: diffObjects(before, after),
    yamlDiff: yamlDiff(before, after)!,
  };
}

/** A preview of the podinfo app: a new ConfigMap, a new image, a rotated Secret, and an old stack pruned. */
function preview(): Report {
  const web = (image: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'podinfo', namespace: 'podinfo' },
    spec: {
      replicas: 2,
      template: { spec: { containers: [{ name: 'podinfo', image, ports: [{ containerPort: 9898 }] }] } },
    },
  });
  const secret = (password: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'podinfo' },
    data: { password: Buffer.from(password).toString('base64'), user: 'YWRtaW4=' },
  });
  const changeset: ChangeSetEntry[] = [
    {
      subject: 'ConfigMap/podinfo/podinfo-settings',
      action: 'created',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'podinfo',
      name: 'podinfo-settings',
    },
    configured(
      web('ghcr.io/stefanprodan/podinfo:6.7.0'),
      web('ghcr.io/stefanprodan/podinfo:6.8.0'),
      'Deployment/podinfo/podinfo',
    ),
    configured(secret('hunter2'), secret(SECRET), 'Secret/podinfo/db'),
    {
      subject: 'Service/podinfo/podinfo',
      action: 'unchanged',
      apiVersion: 'v1',
      kind: 'Service',
      namespace: 'podinfo',
      name: 'podinfo',
    },
  ];
  const pruned = [
    { subject: 'Namespace/ingress-nginx', action: 'deleted' as const },
    { subject: 'Deployment/ingress-nginx/ingress-nginx-controller', action: 'deleted' as const },
    { subject: 'Service/ingress-nginx/ingress-nginx-controller', action: 'deleted' as const },
  ];
  return {
    mode: 'preview',
    kustomization: 'flux-system/apps',
    path: './apps/staging',
    server: 'https://k8s.example.com',
    ok: true,
    changeset,
    pruned,
    counts: countReport(changeset, pruned),
    durationMs: 2100,
    notes: [],
    source: {
      ref: 'ExternalArtifact flux-system/apps',
      revision: `latest@sha256:${'0a1b2c3d'.repeat(8)}`,
      originRevision: `main@sha1:${'3f2c1a9e'.repeat(5)}`,
    },
  };
}

describe('the preview as a reviewer sees it in a browser', () => {
  let dir: string;
  const shots = join(REPO, 'docs', 'screenshots');
  const update = process.env['UPDATE_SCREENSHOTS'] === '1';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kr-shots-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('has Chromium', () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: scripts/setup.sh installs the chromium package`).toBe(true);
  });

  it.each([
    [
      'comment',
      () =>
        renderComment(preview(), {
          marker: commentMarker('clusters/staging/*.yaml'),
          runUrl: 'https://github.com/acme/fleet/actions/runs/1',
        }).body,
    ],
    ['summary', () => renderSummary(preview())],
  ])(
    'the %s shows the deletions first, then what is created, then the YAML diff, and no secret',
    async (name, render) => {
      const html = pageOf(render(), `kustomize-reconcile ${name}`);
      const file = update ? join(shots, `preview-${name}.png`) : join(dir, `${name}.png`);
      const { text } = await inChromium(html, { screenshot: file, width: 1000, height: 1600 });
      const order = [
        'flux-system/apps',
        'ExternalArtifact flux-system/apps at latest@sha256:0a1b2c3d0a1b',
        'Namespace/ingress-nginx',
        'a Namespace: everything in it is deleted with it',
        'ConfigMap/podinfo/podinfo-settings',
        'Deployment/podinfo/podinfo',
        '-          image: ghcr.io/stefanprodan/podinfo:6.7.0',
        '+          image: ghcr.io/stefanprodan/podinfo:6.8.0',
        'password: "*** (after)"',
      ];
      let at = -1;
      for (const s of order) {
        const i = text.indexOf(s, at + 1);
        expect(i, `"${s}" shown after what comes before it in:\n${text}`).toBeGreaterThan(at);
        at = i;
      }
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
      expect(text).not.toContain('<details');
      expect(await pngSize(file)).toEqual({ width: 1000, height: 1600 });
    },
    120_000,
  );

  it('the comment of an 80-Kustomization monorepo shows the change first, the unchanged ones in one line, the failures apart', async () => {
    const body = renderComment(monorepoReport(), {
      marker: commentMarker(MONOREPO_KEY),
      runUrl: 'https://github.com/acme/home-ops/actions/runs/42',
      revision: MONOREPO_REVISION,
    }).body;
    const html = pageOf(body, 'kustomize-reconcile comment (monorepo)');
    const file = update ? join(shots, 'preview-comment-monorepo.png') : join(dir, 'monorepo.png');
    const { text } = await inChromium(html, { screenshot: file, width: 1000, height: 1600 });
    const order = [
      '80 Kustomizations',
      '1 would change · ❌ 2 fail with this change · ⚠️ 3 already failing on main · ✅ 74 unchanged',
      CHANGED,
      '✅ 74 Kustomizations unchanged',
      'Would change (1)',
      '-          image: ghcr.io/jellyfin/jellyfin:10.10.3',
      '+          image: ghcr.io/jellyfin/jellyfin:10.10.5',
      'Failing with this change (2)',
      'media/sonarr',
      'network/echo-server',
      'Already failing on main (3)',
      'database/dragonfly-cluster',
      'also failing on main since 2026-10-27 06:41 UTC; not caused by this change.',
      'Notes (3)',
      `${ACTING_NOTE} — 78 Kustomizations:`,
    ];
    let at = -1;
    for (const s of order) {
      const i = text.indexOf(s, at + 1);
      expect(i, `"${s}" shown after what comes before it in:\n${text}`).toBeGreaterThan(at);
      at = i;
    }
    // The changed Kustomization comes before any unchanged one; the unchanged ones are folded (their names hidden).
    expect(text.indexOf(CHANGED)).toBeLessThan(text.indexOf('✅ 74 Kustomizations unchanged'));
    expect(text).not.toContain('observability/kube-prometheus-stack');
    expect(text).not.toContain('✅ no changes');
    // The note said once, not 78 times.
    expect(text.split(ACTING_NOTE)).toHaveLength(2);
    expect(await pngSize(file)).toEqual({ width: 1000, height: 1600 });
  }, 120_000);
});
