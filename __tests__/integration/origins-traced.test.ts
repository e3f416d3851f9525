// kustomize runs without origin annotations unless a consumer needs them (src/kustomize/build.ts,
// origins-needed.ts), and a failure still points at the file of the object at fault: the build is
// traced again for its annotations. The trees use `replacements`, which only kustomize builds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { reconcileTree } from '../helpers/reconcile.js';

const cm = (name: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  ${data}\n`;
const REPLACEMENTS =
  'replacements:\n' +
  '- source: {kind: ConfigMap, name: ok, fieldPath: data.value}\n' +
  '  targets: [{select: {kind: ConfigMap, name: ok}, fieldPaths: [data.copy], options: {create: true}}]\n';

describe('origins of a kustomize build', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('an object the apply refuses is annotated on its file and line', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'app/kustomization.yaml': `namespace: ${ns}\nresources: [ok.yaml, ../base]\n${REPLACEMENTS}`,
      'app/ok.yaml': cm('ok', 'value: fine'),
      'base/kustomization.yaml': 'resources: [bad.yaml]\n',
      'base/bad.yaml': `# two lines first\n# so that the line is not 1\n${cm('bad', '"bad key!": x')}`,
    });
    const report = await reconcileTree(root, { path: 'app' });
    expect(report.failure, report.error).toMatchObject({ stage: 'apply' });
    expect(report.problems).toEqual([
      expect.objectContaining({ subject: `ConfigMap/${ns}/bad`, file: 'base/bad.yaml', line: 6 }),
    ]);
  });

  it('a substitution failure is annotated on the file of the object', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'app/kustomization.yaml': `namespace: ${ns}\nresources: [ok.yaml, broken.yaml]\n${REPLACEMENTS}`,
      'app/ok.yaml': cm('ok', 'value: fine'),
      'app/broken.yaml': cm('broken', 'value: "${missing_variable}"'),
    });
    const report = await reconcileTree(root, { path: 'app', vars: { present: 'yes' } });
    expect(report.failure, report.error).toMatchObject({ stage: 'render' });
    expect(report.error).toContain('missing_variable');
    expect(report.problems).toEqual([
      expect.objectContaining({ subject: `ConfigMap/${ns}/broken`, file: 'app/broken.yaml' }),
    ]);
  });
});
