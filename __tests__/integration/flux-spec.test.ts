// Flux Kustomization files end to end: the CLI's build over the fixtures, and a Kustomization
// with build fields applied to the real cluster through the action.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree } from '../helpers/cluster.js';
import { KUSTOMIZE, REPO } from '../helpers/paths.js';
import { createSopsToolkit } from '../helpers/sops-fixtures.js';

const build = (cwd: string, ...args: string[]) =>
  runNode('dist/cli.js', ['build', '--kustomize-path', KUSTOMIZE, ...args], { cwd });

function docs(text: string): { kind: string; metadata: { name: string; namespace?: string } }[] {
  return parseAllDocuments(text).map(
    (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } },
  );
}

describe('build --kustomizations', () => {
  it('prints a Flux Kustomization’s objects in apply order', async () => {
    const res = await build(REPO, '--kustomizations', '__fixtures__/flux/infrastructure.yaml');
    expect(res.code, res.stderr).toBe(0);
    expect(docs(res.stdout).map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'Namespace/cert-manager',
      'Namespace/ingress-nginx',
      'Deployment/cert-manager',
      'Deployment/ingress-nginx-controller',
    ]);
  });

  it('reports every problem of every file at once, naming file, document, Kustomization and field', async () => {
    const res = await build(REPO, '--kustomizations', '__fixtures__/flux/*.yaml');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      '__fixtures__/flux/invalid.yaml, document 1, Kustomization flux-system/broken: spec.interval: "10 minutes" is not a duration',
    );
    expect(res.stderr).toContain(
      'spec.sourceRef.kind: "HelmRepository" is not one of GitRepository, OCIRepository, Bucket, ExternalArtifact',
    );
  });

  it('builds apps.yaml offline: inline variables substituted, substituteFrom skipped with a note', async () => {
    const res = await build(REPO, '--kustomizations', '__fixtures__/flux/apps.yaml');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      'Kustomization flux-system/apps (__fixtures__/flux/apps.yaml, document 1): spec.postBuild.substituteFrom skipped: no cluster to read it from',
    );
    const frontend = parseAllDocuments(res.stdout)
      .map(
        (d) =>
          d.toJS() as {
            kind: string;
            metadata: { name: string; namespace?: string; labels?: Record<string, string> };
            spec?: { replicas?: number; template?: { spec: { containers: { image: string }[] } } };
          },
      )
      .find((d) => d.kind === 'Deployment');
    expect(frontend?.metadata).toMatchObject({
      name: 'frontend',
      namespace: 'apps',
      labels: { environment: 'production', 'app.kubernetes.io/part-of': 'shop' },
    });
    // spec.patches (kustomize) run before substitution: the patch's 2 replaced ${replicas:=1} first.
    expect(frontend?.spec?.replicas).toBe(2);
    expect(frontend?.spec?.template?.spec.containers[0]?.image).toBe('ghcr.io/example/frontend:v1.4.2');
  });

  it('refuses a spec field whose stage is not built yet instead of ignoring it', async () => {
    const root = await writeTree({
      'ks.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: tenant, namespace: flux-system}
spec: {interval: 5m, prune: true, path: ./app, sourceRef: {kind: GitRepository, name: repo}, decryption: {provider: sops, serviceAccountName: kms}}
`,
      'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n',
    });
    const res = await runNode(
      'dist/cli.js',
      ['diff', '--kustomizations', 'ks.yaml', '--kustomize-path', KUSTOMIZE, '--kubeconfig', kubeconfigPath()],
      { cwd: root },
    );
    expect(res.code).toBe(2);
    expect(res.stdout).toContain(
      'Kustomization flux-system/tenant (ks.yaml, document 1): spec.decryption.serviceAccountName: decryption with the credentials of a ServiceAccount',
    );
  });

  it('masks as flux build does: SOPS-encrypted Secret values; owner labels; a header per Kustomization', async () => {
    const sops = createSopsToolkit();
    try {
      const key = sops.ageKey();
      const encrypted = sops.encrypt(
        'apiVersion: v1\nkind: Secret\nmetadata: {name: sealed, namespace: a}\nstringData: {token: s0ps-plaintext}\n',
        'yaml',
        { age: [key.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
      );
      const root = await writeTree({
        'ks.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: one, namespace: flux-system}
spec: {interval: 5m, prune: false, path: ./one, sourceRef: {kind: GitRepository, name: repo}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: two, namespace: flux-system}
spec: {interval: 5m, prune: false, path: ./two, sourceRef: {kind: GitRepository, name: repo}, targetNamespace: other}
`,
        'one/secret.yaml':
          'apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: a}\nstringData: {password: in-git-in-clear}\n',
        'one/sealed.yaml': encrypted,
        'two/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: a}\ndata: {k: v}\n',
        'age.txt': key.identity,
      });
      const masked = await build(root, '--kustomizations', 'ks.yaml');
      expect(masked.code, masked.stderr).toBe(0);
      expect(masked.stdout).toContain('# Kustomization flux-system/one\n');
      expect(masked.stdout).toContain('# Kustomization flux-system/two\n');
      const out = docs(masked.stdout) as unknown as {
        kind: string;
        metadata: { name: string; namespace?: string; labels?: Record<string, string> };
        stringData?: Record<string, string>;
        sops?: unknown;
      }[];
      expect(out.map((d) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`)).toEqual([
        'Secret/a/creds',
        'Secret/a/sealed',
        'ConfigMap/other/settings',
      ]);
      expect(out.map((d) => d.metadata.labels)).toEqual([
        { 'kustomize.toolkit.fluxcd.io/name': 'one', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
        { 'kustomize.toolkit.fluxcd.io/name': 'one', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
        { 'kustomize.toolkit.fluxcd.io/name': 'two', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
      ]);
      // Written in clear in the repository: printed as it is there, as flux build does.
      expect(out[0]?.stringData).toEqual({ password: 'in-git-in-clear' });
      // SOPS-encrypted: Flux's mask, and neither the ciphertext nor the sops metadata.
      expect(out[1]?.stringData).toEqual({ token: '**SOPS**' });
      expect(out[1]?.sops).toBeUndefined();
      expect(masked.stdout).not.toContain('ENC[');

      const shown = await build(root, '--kustomizations', 'ks.yaml', '--show-secrets', '--sops-age-key', 'age.txt');
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain('token: s0ps-plaintext');
      expect(shown.stdout).toContain('password: in-git-in-clear');
    } finally {
      sops.cleanup();
    }
  });
});

// Cases from Flux's own tests (kustomization_patch_delete_test.go) and CRD (spec.images needs only `name`).
describe('build --kustomizations: what Flux accepts', () => {
  const CONFIGMAPS = ['cm1', 'cm2', 'cm3']
    .map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: default}\ndata: {key: v}\n`)
    .join('---\n');
  const DELETE_CM1_CM2 =
    '$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\n  namespace: default\n---\n' +
    '$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n  namespace: default';
  const ks = (spec: string) => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec: {interval: 5m, prune: true, path: ./app, sourceRef: {kind: GitRepository, name: repo}, ${spec}}
`;

  it.each([
    ['in spec.patches', { 'ks.yaml': ks(`patches: [{patch: ${JSON.stringify(DELETE_CM1_CM2)}}]`) }],
    [
      'in a patch file of kustomization.yaml',
      {
        'ks.yaml': ks('wait: false'),
        'app/kustomization.yaml': 'resources: [configmaps.yaml]\npatches: [{path: delete.yaml}]\n',
        'app/delete.yaml': DELETE_CM1_CM2,
      },
    ],
  ])('applies a patch holding several $patch: delete documents %s', async (_, files) => {
    const root = await writeTree({ 'app/configmaps.yaml': CONFIGMAPS, ...files });
    const res = await build(root, '--kustomizations', 'ks.yaml');
    expect(res.code, res.stderr).toBe(0);
    expect(docs(res.stdout).map((d) => d.metadata.name)).toEqual(['cm3']);
  });

  // TestGenerator_NameTransformer and TestGenerator_BuildMetadata_EmptySpec in fluxcd/pkg/kustomize: Flux gives a
  // kustomization.yaml without resources originAnnotations, which then stay on the objects it applies.
  it('keeps the origin annotation Flux adds for a kustomization.yaml without resources', async () => {
    const root = await writeTree({
      'ks.yaml': ks('targetNamespace: test-namespace, namePrefix: prefix-, nameSuffix: -suffix'),
      'app/kustomization.yaml':
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nconfigMapGenerator:\n' +
        '  - name: test-configmap\n    literals: [foo=bar, baz=qux]\n',
    });
    const res = await build(root, '--kustomizations', 'ks.yaml');
    expect(res.code, res.stderr).toBe(0);
    const [cm] = parseAllDocuments(res.stdout).map(
      (d) => d.toJS() as { metadata: { name: string; namespace: string; annotations?: Record<string, string> } },
    );
    expect(cm?.metadata.name).toMatch(/^prefix-test-configmap-suffix-/);
    expect(cm?.metadata.namespace).toBe('test-namespace');
    expect(cm?.metadata.annotations?.['config.kubernetes.io/origin']).toContain('configuredIn: kustomization.yaml');
  });

  it('takes a spec.path with a leading slash as relative to the source root, as Flux joins it', async () => {
    const root = await writeTree({
      'ks.yaml': ks('wait: false').replace('path: ./app', 'path: /app'),
      'app/configmaps.yaml': CONFIGMAPS,
    });
    const res = await build(root, '--kustomizations', 'ks.yaml');
    expect(res.code, res.stderr).toBe(0);
    expect(docs(res.stdout).map((d) => d.metadata.name)).toEqual(['cm1', 'cm2', 'cm3']);
  });

  it('takes an image entry with only a name, and kustomize leaves that image as it is', async () => {
    const root = await writeTree({
      'ks.yaml': ks('images: [{name: nginx}, {name: redis, newTag: "7"}]'),
      'app/deploy.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}, {name: cache, image: "redis:6"}]}
`,
    });
    const res = await build(root, '--kustomizations', 'ks.yaml');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('image: nginx:1.27\n');
    expect(res.stdout).toContain('image: redis:7\n');
  });
});

// Under Flux a Kustomization file inside another one's build is applied by it: kustomize gives it its
// namespace. The namespace we load it in must be the one the real kustomize build gives the object.
describe('build --kustomizations: the namespace and name of a Kustomization built by another', () => {
  const ks = (name: string, namespace: string | undefined, spec: string) => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}${namespace === undefined ? '' : `, namespace: ${namespace}`}}
spec: {interval: 5m, prune: true, sourceRef: {kind: GitRepository, name: repo}, ${spec}}
`;
  const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default}\n';

  it.each<{ why: string; files: Record<string, string>; want: string[] }>([
    {
      why: "a parent's targetNamespace, over the child's own namespace, two levels deep",
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', 'path: ./tenants, targetNamespace: tenant-a'),
        'tenants/apps.yaml': ks('apps', 'flux-system', 'path: ./apps, targetNamespace: shop'),
        'apps/web.yaml': ks('web', undefined, 'path: ./web'),
        'apps/db.yaml': ks('db', 'data', 'path: ./web'),
        'web/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'tenant-a/apps', 'shop/web', 'shop/db'],
    },
    {
      why: "a kustomization.yaml's namespace; a file it does not list and one outside keep their own",
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', 'path: ./tenants'),
        'tenants/kustomization.yaml': 'namespace: team-b\nresources: [apps.yaml]\n',
        'tenants/apps.yaml': ks('apps', undefined, 'path: ./web'),
        'tenants/unlisted.yaml': ks('unlisted', 'own', 'path: ./web'),
        'elsewhere/free.yaml': ks('free', undefined, 'path: ./web'),
        'web/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'team-b/apps', 'own/unlisted', 'flux-system/free'],
    },
    {
      why: "a parent's namePrefix and nameSuffix, and those of a kustomization.yaml inside its build",
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', 'path: ./tenants, namePrefix: dev-, nameSuffix: -eu'),
        'tenants/kustomization.yaml': 'resources: [apps.yaml, sub]\n',
        'tenants/apps.yaml': ks('apps', 'flux-system', 'path: ./web'),
        'tenants/sub/kustomization.yaml': 'namePrefix: inner-\nresources: [db.yaml]\n',
        'tenants/sub/db.yaml': ks('db', 'flux-system', 'path: ./web'),
        'web/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'flux-system/dev-apps-eu', 'flux-system/dev-inner-db-eu'],
    },
  ])('$why', async ({ files, want }) => {
    const root = await writeTree(files);
    const res = await build(root, '--kustomizations', '**/*.yaml');
    expect(res.code, res.stderr).toBe(0);
    const headers = [...res.stdout.matchAll(/^# Kustomization (\S+)$/gm)].map((m) => m[1]);
    expect([...headers].sort()).toEqual([...want].sort());
    // Every Kustomization object a parent's kustomize build emits is one we loaded, in the same namespace.
    const built = docs(res.stdout.replace(/^# .*\n/gm, ''))
      .filter((d) => d.kind === 'Kustomization')
      .map((d) => `${d.metadata.namespace ?? '(none)'}/${d.metadata.name}`);
    expect(built.length).toBeGreaterThan(0);
    for (const object of built) expect(headers).toContain(object);
  });
});

describe('a Flux Kustomization applied through the action', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('honours targetNamespace, namePrefix, patches, images and commonMetadata on the cluster', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({
      'clusters/dev/app.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 10m
  prune: false
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./apps/web
  targetNamespace: ${ns}
  namePrefix: dev-
  commonMetadata:
    labels: {team: web}
  images:
    - {name: nginx, newTag: "1.27"}
  patches:
    - target: {kind: Deployment, name: web}
      patch: |
        - op: replace
          path: /spec/replicas
          value: 3
`,
      'apps/web/kustomization.yaml': 'resources: [deployment.yaml]\n',
      'apps/web/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.25"}]
`,
    });
    // No GITHUB_STEP_SUMMARY: the run must still succeed (a local runner may not set it).
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), kustomizations: 'clusters/dev/*.yaml' },
      { summary: false },
    );
    expect(res.stdout).toContain('No job summary written: GITHUB_STEP_SUMMARY is not set');
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain(`Deployment/${ns}/dev-web created`);
    const d = await client.request<{
      metadata: { labels: Record<string, string> };
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
    }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/dev-web`);
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.containers[0]!.image).toBe('nginx:1.27');
    expect(d.metadata.labels).toEqual({
      team: 'web',
      'kustomize.toolkit.fluxcd.io/name': 'app',
      'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
    });
  });
});
