// Kustomization trees written the way public repositories write them, from a seed, for the
// differential tests of the in-process build (src/kustomize/overlay.ts): an app base of a
// Deployment (env, envFrom, volumes from a ConfigMap and a Secret, probes, resources), a Service,
// a ServiceAccount and a ConfigMap; overlays/<env> over it with any mix of namespace, namePrefix,
// nameSuffix, commonLabels, commonAnnotations, labels, images, replicas, strategic-merge patches
// (inline, files, patchesStrategicMerge), JSON 6902 patch files, configMapGenerator,
// secretGenerator, generatorOptions and components; sometimes a second app or an overlay over an
// overlay. Odd values that kustomize reads its own way turn up now and then.
import { random } from './plain-trees.js';

type Random = ReturnType<typeof random>;

const deployment = (app: string, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${app}
  labels:
    app.kubernetes.io/name: ${app}
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${app}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${app}
    spec:
      serviceAccountName: ${app}
      containers:
        - name: ${app}
          image: ${image}
          ports:
            - name: http
              containerPort: 8080
              protocol: TCP
          env:
            - name: LOG_LEVEL
              value: info
            - name: API_KEY
              valueFrom:
                secretKeyRef:
                  name: ${app}-secret
                  key: api-key
          envFrom:
            - configMapRef:
                name: ${app}-config
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
          resources:
            requests:
              cpu: 100m
              memory: 64Mi
          volumeMounts:
            - name: config
              mountPath: /etc/${app}
      volumes:
        - name: config
          configMap:
            name: ${app}-config
        - name: tls
          secret:
            secretName: ${app}-secret
`;

const service = (app: string) => `apiVersion: v1
kind: Service
metadata:
  name: ${app}
  labels:
    app.kubernetes.io/name: ${app}
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: ${app}
  ports:
    - name: http
      port: 80
      targetPort: http
      protocol: TCP
`;

const serviceAccount = (app: string) => `apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${app}
`;

const IMAGES = ['nginx:1.27', 'ghcr.io/stefanprodan/podinfo:6.7.0', 'registry.example.com:5000/team/api:v2', 'busybox'];

function base(r: Random, files: Record<string, string>, app: string): void {
  const dir = `apps/base/${app}`;
  const resources = ['deployment.yaml', 'service.yaml'];
  files[`${dir}/deployment.yaml`] = deployment(app, r.pick(IMAGES));
  files[`${dir}/service.yaml`] = service(app);
  if (r.chance(0.7)) {
    files[`${dir}/serviceaccount.yaml`] = serviceAccount(app);
    resources.push('serviceaccount.yaml');
  }
  const lines = ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', 'resources:'];
  lines.push(...resources.map((f) => `  - ${f}`));
  if (r.chance(0.5)) {
    files[`${dir}/config.properties`] = `greeting=hello\nport=8080\n`;
    lines.push('configMapGenerator:', `  - name: ${app}-config`, '    files:', '      - config.properties');
    if (r.chance(0.5)) lines.push('    literals:', '      - MODE=base');
  } else {
    files[`${dir}/configmap.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${app}-config\ndata:\n  MODE: base\n`;
    lines.splice(3 + resources.length, 0, '  - configmap.yaml');
  }
  if (r.chance(0.6)) {
    lines.push('secretGenerator:', `  - name: ${app}-secret`, '    literals:', '      - api-key=s3cr3t');
  } else {
    files[`${dir}/secret.yaml`] =
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${app}-secret\ntype: Opaque\nstringData:\n  api-key: s3cr3t\n`;
    lines.splice(3 + resources.length, 0, '  - secret.yaml');
  }
  if (r.chance(0.3)) lines.push('commonLabels:', `  app.kubernetes.io/part-of: ${app}`);
  files[`${dir}/kustomization.yaml`] = `${lines.join('\n')}\n`;
}

const smp = (app: string, r: Random) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${app}
spec:
  replicas: ${1 + r.int(4)}
  template:
    spec:
      containers:
        - name: ${app}
          resources:
            limits:
              memory: ${r.pick(['128Mi', '256Mi'])}
          env:
            - name: LOG_LEVEL
              value: ${r.pick(['debug', 'warn'])}
${
  r.chance(0.4)
    ? `        - name: sidecar
          image: busybox:1.36
          args: ["sleep", "infinity"]
`
    : ''
}`;

const json6902 = (r: Random) =>
  r.pick([
    `- op: replace\n  path: /spec/replicas\n  value: 3\n`,
    `- op: add\n  path: /metadata/annotations\n  value:\n    team: payments\n`,
    `- op: add\n  path: /spec/template/spec/containers/0/args\n  value: ["--verbose"]\n`,
  ]);

/** A tree of one or two app bases and an overlay (sometimes over another overlay), built at `path`. */
export function repoTree(seed: number): { files: Record<string, string>; path: string } {
  const r = random(seed);
  const files: Record<string, string> = {};
  const apps = r.chance(0.3) ? ['podinfo', 'api'] : [r.pick(['podinfo', 'web', 'api'])];
  for (const app of apps) base(r, files, app);
  const env = r.pick(['production', 'staging']);
  const dir = `apps/overlays/${env}`;
  const lines = ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization'];
  if (r.chance(0.7)) lines.push(`namespace: ${env}`);
  if (r.chance(0.4)) lines.push(`namePrefix: ${r.pick(['prod-', 'team-a-'])}`);
  if (r.chance(0.2)) lines.push(`nameSuffix: ${r.pick(['-v2', '-blue'])}`);
  if (r.chance(0.5)) lines.push('commonLabels:', `  environment: ${env}`);
  if (r.chance(0.4)) lines.push('commonAnnotations:', `  owner: ${r.pick(['platform', 'team-a'])}`);
  if (r.chance(0.4)) {
    lines.push('labels:', '  - pairs:', `      tier: ${r.pick(['frontend', 'backend'])}`);
    if (r.chance(0.5)) lines.push(`    includeSelectors: ${r.pick(['true', 'false'])}`);
    if (r.chance(0.3)) lines.push(`    includeTemplates: ${r.pick(['true', 'false'])}`);
  }
  lines.push('resources:', ...apps.map((a) => `  - ../../base/${a}`));
  if (r.chance(0.3)) {
    files[`${dir}/namespace.yaml`] = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${env}\n`;
    lines.push('  - namespace.yaml');
  }
  const app = apps[0]!;
  if (r.chance(0.5)) {
    lines.push('images:', `  - name: ${r.pick(IMAGES).split(/:(?=[^:/]+$)/)[0]}`);
    if (r.chance(0.5)) lines.push(`    newName: ${r.pick(['ghcr.io/acme/app', 'quay.io/x/y'])}`);
    lines.push(
      r.chance(0.8) ? `    newTag: "${r.pick(['1.2.3', 'v6.7.1', 'latest'])}"` : `    digest: sha256:${'a'.repeat(64)}`,
    );
  }
  if (r.chance(0.3)) lines.push('replicas:', `  - name: ${app}`, `    count: ${2 + r.int(3)}`);
  const patches: string[] = [];
  if (r.chance(0.5)) {
    files[`${dir}/deployment-patch.yaml`] = smp(app, r);
    patches.push(
      r.chance(0.5)
        ? '  - path: deployment-patch.yaml'
        : `  - path: deployment-patch.yaml\n    target:\n      kind: Deployment\n      name: ${app}`,
    );
  }
  if (r.chance(0.3)) {
    files[`${dir}/replicas-patch.yaml`] = json6902(r);
    patches.push(`  - path: replicas-patch.yaml\n    target:\n      kind: Deployment\n      name: ${app}`);
  }
  if (r.chance(0.2)) {
    patches.push(
      `  - patch: |-\n      apiVersion: v1\n      kind: Service\n      metadata:\n        name: ${app}\n      spec:\n        type: LoadBalancer`,
    );
  }
  if (patches.length > 0) lines.push('patches:', ...patches);
  if (r.chance(0.15)) {
    files[`${dir}/psm.yaml`] = smp(app, r);
    lines.push('patchesStrategicMerge:', '  - psm.yaml');
  }
  if (r.chance(0.4)) {
    lines.push('configMapGenerator:', `  - name: ${app}-config`, `    behavior: ${r.pick(['merge', 'replace'])}`);
    lines.push('    literals:', `      - MODE=${env}`);
  }
  if (r.chance(0.3)) {
    files[`${dir}/.env`] = `DB_HOST=db.${env}.svc\n# comment\nDB_PORT=5432\n`;
    lines.push('secretGenerator:', '  - name: db', '    envs:', '      - .env');
  }
  if (r.chance(0.2)) lines.push('generatorOptions:', '  disableNameSuffixHash: true');
  if (r.chance(0.3)) {
    const c = 'apps/components/monitoring';
    files[`${c}/kustomization.yaml`] =
      `apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n  - path: patch.yaml\n    target:\n      kind: Deployment\n`;
    files[`${c}/patch.yaml`] =
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\n  annotations:\n    prometheus.io/scrape: "true"\n`;
    lines.push('components:', '  - ../../components/monitoring');
  }
  files[`${dir}/kustomization.yaml`] = `${lines.join('\n')}\n`;
  if (r.chance(0.2)) {
    // An overlay over the overlay, as clusters/<name> directories often are.
    files['clusters/prod/kustomization.yaml'] =
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../${dir}\n${r.chance(0.5) ? 'commonLabels:\n  cluster: prod\n' : 'namespace: cluster-prod\n'}`;
    return { files, path: 'clusters/prod' };
  }
  return { files, path: dir };
}
