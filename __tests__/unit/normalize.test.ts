// normalizeForApply against what Flux's fluxcd/pkg/ssa v0.76.2 normalize.UnstructuredList (the version
// kustomize-controller v1.9.6 builds with) made of the same inputs: each `want` was checked against the
// output of a Go program calling it, except where a comment says we differ on purpose.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../../src/objects/kube.js';
import { normalizeForApply } from '../../src/ssa/normalize.js';

const y = (text: string) => parse(text) as KubeObject;
const pod = (extra = '') => `{containers: [{name: c, image: x, ports: [{containerPort: 80}]}]${extra}}`;
const tcp = [{ containerPort: 80, protocol: 'TCP' }];

describe('normalizeForApply', () => {
  it.each([
    {
      why: 'metadata.creationTimestamp and status are dropped from any object',
      input:
        'apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: f, creationTimestamp: null}\nspec: {a: {}}\nstatus: {b: 1}',
      want: { apiVersion: 'example.com/v1', kind: 'Foo', metadata: { name: 'f' }, spec: { a: {} } },
    },
    {
      why: 'a CRD keeps its status (kstatus reads it)',
      input:
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nstatus: {x: 1}',
      want: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'a.b' },
        status: { x: 1 },
      },
    },
    {
      why: "a PriorityClass's false globalDefault is dropped (omitempty), a true one kept (found by the parity suite)",
      input:
        'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 10\nglobalDefault: false',
      want: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'p' }, value: 10 },
    },
    {
      why: 'an rbac Role is left exactly as it is',
      input:
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r, labels: {}}\nrules: []\nstatus: {x: 1}',
      want: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'r', labels: {} },
        rules: [],
        status: { x: 1 },
      },
    },
    {
      why: 'a Namespace gets an empty spec',
      input: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\nstatus: {phase: Active}',
      want: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, spec: {} },
    },
    {
      why: 'a Secret: stringData becomes base64 data (UTF-8), winning over a data key of the same name',
      input:
        'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: YQ==, c: Yw==}\nstringData: {a: "é", b: two}',
      want: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'w6k=', b: 'dHdv', c: 'Yw==' } },
    },
    {
      why: 'a Secret: empty data, stringData and labels are not sent',
      input: 'apiVersion: v1\nkind: Secret\nmetadata: {name: s, labels: {}}\ntype: Opaque\ndata: {}\nstringData: {}',
      want: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque' },
    },
    {
      why: 'a ConfigMap: empty data and annotations are not sent, the rest is untouched',
      input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {}}\ndata: {}\nbinaryData: {k: dg==}',
      want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, binaryData: { k: 'dg==' } },
    },
    {
      // Flux sends targetPort 0, which the server defaults to the port: we send the port (same field, same value).
      why: 'a Service: ports get protocol TCP and a targetPort; given ones are kept',
      input:
        'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}, {port: 53, protocol: UDP, targetPort: dns}]',
      want: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: {
          ports: [
            { port: 80, protocol: 'TCP', targetPort: 80 },
            { port: 53, protocol: 'UDP', targetPort: 'dns' },
          ],
        },
      },
    },
    {
      why: 'a Service without spec gets an empty one',
      input: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}',
      want: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: {} },
    },
    {
      why: 'a Deployment: strategy, container resources and protocols; empty lists and env values dropped; init container ports untouched',
      input: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {}}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      initContainers: [{name: i, image: x, ports: [{containerPort: 80}]}]
      containers: [{name: c, image: x, args: [], env: [{name: A, value: ""}], ports: [{containerPort: 80}]}]
status: {replicas: 1}`,
      want: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          selector: { matchLabels: { app: 'd' } },
          strategy: {},
          template: {
            metadata: { labels: { app: 'd' } },
            spec: {
              initContainers: [{ name: 'i', image: 'x', ports: [{ containerPort: 80 }], resources: {} }],
              containers: [{ name: 'c', image: 'x', env: [{ name: 'A' }], ports: tcp, resources: {} }],
            },
          },
        },
      },
    },
    {
      why: 'a Deployment keeps a strategy and resources it has',
      input: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  strategy: {type: Recreate}
  template: {spec: {containers: [{name: c, image: x, resources: {limits: {cpu: 1}}}]}}`,
      want: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          strategy: { type: 'Recreate' },
          template: {
            metadata: {},
            spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: 1 } } }] },
          },
        },
      },
    },
    {
      why: 'a StatefulSet: updateStrategy, an empty serviceName, and its volume claim templates get metadata, spec.resources and status',
      input: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  template: {metadata: {labels: {a: b}}, spec: ${pod()}}
  volumeClaimTemplates: [{spec: {accessModes: [ReadWriteOnce]}}]`,
      want: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 's' },
        spec: {
          updateStrategy: {},
          serviceName: '',
          template: {
            metadata: { labels: { a: 'b' } },
            spec: { containers: [{ name: 'c', image: 'x', ports: tcp, resources: {} }] },
          },
          volumeClaimTemplates: [{ metadata: {}, spec: { accessModes: ['ReadWriteOnce'], resources: {} }, status: {} }],
        },
      },
    },
    {
      why: 'a DaemonSet: updateStrategy',
      input: `apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  template: {spec: ${pod()}}`,
      want: {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'd' },
        spec: {
          updateStrategy: {},
          template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'x', ports: tcp, resources: {} }] } },
        },
      },
    },
    {
      why: 'a Job: template metadata, container resources and protocols',
      input: `apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template: {spec: ${pod()}}`,
      want: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'j' },
        spec: {
          template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'x', ports: tcp, resources: {} }] } },
        },
      },
    },
    {
      why: 'a CronJob: job template and pod template metadata, container resources and protocols',
      input: `apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: j}\nspec:\n  jobTemplate: {spec: {template: {spec: ${pod()}}}}`,
      want: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'j' },
        spec: {
          jobTemplate: {
            metadata: {},
            spec: {
              template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'x', ports: tcp, resources: {} }] } },
            },
          },
        },
      },
    },
    {
      why: 'a Pod: resources and protocols, no template metadata; ephemeral volume claim templates filled in',
      input: `apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: ${pod(', volumes: [{name: e, ephemeral: {volumeClaimTemplate: {spec: {}}}}]')}`,
      want: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {
          containers: [{ name: 'c', image: 'x', ports: tcp, resources: {} }],
          volumes: [{ name: 'e', ephemeral: { volumeClaimTemplate: { metadata: {}, spec: { resources: {} } } } }],
        },
      },
    },
    {
      why: 'a ReplicationController: template metadata and resources, but Flux leaves its port protocols alone',
      input: `apiVersion: v1\nkind: ReplicationController\nmetadata: {name: r}\nspec:\n  template: {spec: ${pod()}}`,
      want: {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'r' },
        spec: {
          template: {
            metadata: {},
            spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80 }], resources: {} }] },
          },
        },
      },
    },
    {
      why: 'a NetworkPolicy: podSelector',
      input:
        'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: n}\nspec: {policyTypes: [Ingress]}',
      want: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'n' },
        spec: { policyTypes: ['Ingress'], podSelector: {} },
      },
    },
    {
      why: 'a PersistentVolumeClaim: spec.resources',
      input: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec: {accessModes: [ReadWriteOnce]}',
      want: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'p' },
        spec: { accessModes: ['ReadWriteOnce'], resources: {} },
      },
    },
    {
      why: 'a custom resource keeps its empty labels and lists (Flux has no Go type for it)',
      input:
        'apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: f, labels: {}}\nspec: {ports: [{port: 1}], l: []}',
      want: {
        apiVersion: 'example.com/v1',
        kind: 'Foo',
        metadata: { name: 'f', labels: {} },
        spec: { ports: [{ port: 1 }], l: [] },
      },
    },
    {
      why: 'kinds without rules of their own only lose what every object loses',
      input: 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, creationTimestamp: null}',
      want: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } },
    },
  ])('$why', ({ input, want }) => {
    const obj = y(input);
    const before = structuredClone(obj);
    expect(normalizeForApply([obj])).toEqual([want]);
    expect(obj).toEqual(before);
  });
});
