// Trees for the differential tests of namePrefix/nameSuffix, the ConfigMap and Secret generators,
// the hash suffix and name references in the overlay build (src/kustomize/overlay-names.ts,
// overlay-generators.ts, overlay-hash.ts, overlay-namerefs.ts): a realistic app (a base with a
// Deployment, a Service and generators; an overlay with a prefix and generators of its own) and
// random trees from a seed.
import { random } from './plain-trees.js';

type Random = ReturnType<typeof random>;

const K = 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n';

/** A Deployment that names ConfigMaps, Secrets, a ServiceAccount and a PVC in the usual places. */
export function deployment(name: string, refs: { cm: string; secret: string; sa?: string; pvc?: string }): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: ${name}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
${refs.sa ? `      serviceAccountName: ${refs.sa}\n` : ''}      imagePullSecrets:
        - name: ${refs.secret}
      containers:
        - name: ${name}
          image: ghcr.io/stefanprodan/podinfo:6.7.0
          ports:
            - containerPort: 9898
              name: http
          envFrom:
            - configMapRef:
                name: ${refs.cm}
          env:
            - name: PASSWORD
              valueFrom:
                secretKeyRef:
                  name: ${refs.secret}
                  key: password
            - name: LEVEL
              valueFrom:
                configMapKeyRef:
                  name: ${refs.cm}
                  key: LOG_LEVEL
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
          resources:
            limits:
              memory: 128Mi
            requests:
              cpu: 10m
          volumeMounts:
            - name: config
              mountPath: /etc/app
      volumes:
        - name: config
          configMap:
            name: ${refs.cm}
        - name: tls
          secret:
            secretName: ${refs.secret}
        - name: both
          projected:
            sources:
              - configMap:
                  name: ${refs.cm}
              - secret:
                  name: ${refs.secret}
${refs.pvc ? `        - name: data\n          persistentVolumeClaim:\n            claimName: ${refs.pvc}\n` : ''}`;
}

const service = (name: string) =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  selector:\n    app: ${name}\n  ports:\n    - port: 80\n      targetPort: http\n`;

/** The realistic app: base/ with a Deployment, Service and generators, overlays/production over it. */
export function appTree(): Record<string, string> {
  return {
    'base/kustomization.yaml': `${K}resources:
  - deployment.yaml
  - service.yaml
configMapGenerator:
  - name: app-config
    files:
      - config/app.properties
    literals:
      - LOG_LEVEL=info
secretGenerator:
  - name: app-secret
    literals:
      - password=changeme
`,
    'base/deployment.yaml': deployment('podinfo', { cm: 'app-config', secret: 'app-secret' }),
    'base/service.yaml': service('podinfo'),
    'base/config/app.properties': 'server.port=9898\nfeature.x=true\n# a comment\n',
    'overlays/production/kustomization.yaml': `${K}namespace: production
namePrefix: prod-
resources:
  - ../../base
configMapGenerator:
  - name: app-config
    behavior: merge
    literals:
      - LOG_LEVEL=warn
    envs:
      - prod.env
secretGenerator:
  - name: registry
    type: kubernetes.io/dockerconfigjson
    files:
      - .dockerconfigjson=docker.json
`,
    'overlays/production/prod.env': '# production\nREPLICAS=3\n\nREGION=eu-west-1\n  INDENTED=yes\nEMPTY=\n',
    'overlays/production/docker.json': '{"auths":{"ghcr.io":{"auth":"eDp5"}}}\n',
  };
}

const LITERALS = ['A=1', 'B=two', 'C="quoted"', "D='single'", 'E=a=b', 'F=', 'G=with space'];
const ENV_LINES = ['X=1', '# comment', '', 'Y=two words', '  Z=3', 'W', 'V=="q"'];

function generator(r: Random, name: string, dir: string, files: Record<string, string>): string {
  const parts: string[] = [`  - name: ${name}`];
  if (r.chance(0.3)) parts.push(`    behavior: ${r.pick(['create', 'merge', 'replace'])}`);
  if (r.chance(0.7)) {
    const lits = [...new Set(Array.from({ length: 1 + r.int(3) }, () => r.pick(LITERALS)))];
    parts.push('    literals:', ...lits.map((l) => `      - ${l.includes('"') ? `'${l}'` : `"${l}"`}`));
  }
  if (r.chance(0.4)) {
    const f = `${name}.properties`;
    files[`${dir}/${f}`] = r.pick(['k=v\n', 'multi\nline\n', 'no newline', '  leading\ttab\n', '']);
    parts.push('    files:', `      - ${r.chance(0.5) ? `key.${name}=` : ''}${f}`);
  }
  if (r.chance(0.3)) {
    files[`${dir}/${name}.env`] = `${Array.from({ length: 1 + r.int(4) }, () => r.pick(ENV_LINES)).join('\n')}\n`;
    parts.push('    envs:', `      - ${name}.env`);
  }
  if (r.chance(0.2)) parts.push('    options:', `      disableNameSuffixHash: ${r.pick(['true', 'false'])}`);
  if (r.chance(0.15)) parts.push('    options:\n      labels:\n        gen: x\n      immutable: true');
  if (r.chance(0.1)) parts.push(`    namespace: ${r.pick(['ns1', 'other'])}`);
  return parts.join('\n');
}

/** A random tree: a base (and sometimes a second) with objects and generators, an overlay `ov` over it. */
export function randomNamesTree(seed: number): Record<string, string> {
  const r = random(seed);
  const files: Record<string, string> = {};
  const cmName = r.pick(['cfg', 'app', 'web']);
  const secretName = r.pick(['sec', 'creds']);
  const objects = [
    deployment('web', {
      cm: cmName,
      secret: secretName,
      sa: r.chance(0.5) ? 'sa' : undefined,
      pvc: r.chance(0.3) ? 'data' : undefined,
    }),
  ];
  if (r.chance(0.6)) objects.push(service('web'));
  if (r.chance(0.4)) objects.push('apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n');
  if (r.chance(0.3))
    objects.push(
      'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n',
    );
  if (r.chance(0.3))
    objects.push(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${r.pick(['plain', cmName])}\ndata:\n  k: v\n`);
  if (r.chance(0.2)) objects.push('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n');
  if (r.chance(0.2)) {
    objects.push(
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\nrules: []\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: r\n',
    );
  }
  if (r.chance(0.2)) {
    objects.push(
      'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  maxReplicas: 3\n',
    );
  }
  files['b/all.yaml'] = objects.join('---\n');
  const baseFields: string[] = [];
  if (r.chance(0.3)) baseFields.push(`namePrefix: ${r.pick(['b-', 'base-'])}`);
  if (r.chance(0.2)) baseFields.push(`nameSuffix: ${r.pick(['"-b"', "'-v1'", '-b'])}`);
  if (r.chance(0.3)) baseFields.push(`namespace: ${r.pick(['ns1', 'base'])}`);
  const baseGens: string[] = [];
  if (r.chance(0.7)) baseGens.push('configMapGenerator:', generator(r, cmName, 'b', files));
  if (r.chance(0.6)) baseGens.push('secretGenerator:', generator(r, secretName, 'b', files));
  if (r.chance(0.15)) baseGens.push('generatorOptions:\n  disableNameSuffixHash: true\n  labels:\n    global: "yes"');
  files['b/kustomization.yaml'] = `${K}${[...baseFields, 'resources:\n  - all.yaml', ...baseGens].join('\n')}\n`;
  const ovFields: string[] = [];
  if (r.chance(0.6)) ovFields.push(`namePrefix: ${r.pick(['p-', 'prod-', 'x.'])}`);
  if (r.chance(0.3)) ovFields.push(`nameSuffix: ${r.pick(['"-s"', "'-prod'"])}`);
  if (r.chance(0.3)) ovFields.push(`namespace: ${r.pick(['ns1', 'prod'])}`);
  if (r.chance(0.3)) ovFields.push('labels:\n  - pairs:\n      env: prod');
  const ovGens: string[] = [];
  if (r.chance(0.4)) ovGens.push('configMapGenerator:', generator(r, r.pick([cmName, 'extra']), 'ov', files));
  if (r.chance(0.3)) ovGens.push('secretGenerator:', generator(r, r.pick([secretName, 'extra-secret']), 'ov', files));
  const resources = ['  - ../b'];
  if (r.chance(0.2)) {
    files['ov/own.yaml'] = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\ndata:\n  a: b\n';
    resources.push('  - own.yaml');
  }
  files['ov/kustomization.yaml'] =
    `${K}${[...ovFields, `resources:\n${resources.join('\n')}`, ...ovGens].join('\n')}\n`;
  return files;
}
