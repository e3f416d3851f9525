import { controllerOf, untouched } from '../../src/kstatus/wait.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { computeStatus, type Status } from '../../src/kstatus/status.js';

const NOW = new Date('2024-01-01T00:00:30Z');

interface Row {
  why: string;
  yaml: string;
  status: Status;
  message: string;
}

const DEPLOY = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 1}';
const DEPLOY_OK = `${DEPLOY}
spec: {replicas: 3}
status:
  observedGeneration: 1
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  conditions:
    - {type: Available, status: 'True'}
    - {type: Progressing, status: 'True', reason: NewReplicaSetAvailable}`;
const STS = 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}';
const DS = 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, generation: 2}';
const RS = 'apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}';
const POD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: "2024-01-01T00:00:00Z"}';
const JOB = 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}';
const CRD = 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.example.com}';
const CR = 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, generation: 1}';

const rows: Row[] = [
  // generic pre-checks
  {
    why: 'deletionTimestamp → Terminating',
    yaml: DEPLOY_OK.replace('generation: 1}', 'generation: 1, deletionTimestamp: "2024-01-01T00:00:00Z"}'),
    status: 'Terminating',
    message: 'Resource scheduled for deletion',
  },
  {
    why: 'observedGeneration behind generation → InProgress',
    yaml: DEPLOY_OK.replace('observedGeneration: 1', 'observedGeneration: 0').replace(
      'generation: 1}',
      'generation: 2}',
    ),
    status: 'InProgress',
    message: 'Deployment generation is 2, but latest observed generation is 0',
  },
  {
    why: 'generation without observedGeneration is not checked',
    yaml: `${CR}\nstatus: {}`,
    status: 'Current',
    message: 'Resource is current',
  },
  {
    why: 'non-integer generation → Unknown (kstatus error)',
    yaml: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, generation: "1"}',
    status: 'Unknown',
    message: 'looking up metadata.generation from resource: metadata.generation accessor error: "1" is not an integer',
  },
  {
    why: 'Reconciling=True overrides the kind rule',
    yaml: `${DEPLOY_OK}\n    - {type: Reconciling, status: 'True', message: rolling}`,
    status: 'InProgress',
    message: 'rolling',
  },
  {
    why: 'Stalled=True → Failed with its message',
    yaml: `${CR}\nstatus:\n  conditions: [{type: Stalled, status: 'True', message: broken}]`,
    status: 'Failed',
    message: 'broken',
  },
  {
    why: 'malformed conditions → Unknown',
    yaml: `${CR}\nstatus: {conditions: nope}`,
    status: 'Unknown',
    message: 'status.conditions is not a list',
  },
  // Deployment
  { why: 'Deployment available', yaml: DEPLOY_OK, status: 'Current', message: 'Deployment is available. Replicas: 3' },
  {
    why: 'Deployment ProgressDeadlineExceeded → Failed',
    yaml: DEPLOY_OK.replace(
      "{type: Progressing, status: 'True', reason: NewReplicaSetAvailable}",
      "{type: Progressing, status: 'False', reason: ProgressDeadlineExceeded}",
    ),
    status: 'Failed',
    message: 'Progress deadline exceeded',
  },
  {
    why: 'Deployment too few replicas',
    yaml: DEPLOY_OK.replace('replicas: 3\n  updated', 'replicas: 1\n  updated'),
    status: 'InProgress',
    message: 'Replicas: 1/3',
  },
  {
    why: 'Deployment too few updated',
    yaml: DEPLOY_OK.replace('updatedReplicas: 3', 'updatedReplicas: 1'),
    status: 'InProgress',
    message: 'Updated: 1/3',
  },
  {
    why: 'Deployment pods pending termination',
    yaml: DEPLOY_OK.replace('replicas: 3\n  updated', 'replicas: 4\n  updated'),
    status: 'InProgress',
    message: 'Pending termination: 1',
  },
  {
    why: 'Deployment updated > available',
    yaml: DEPLOY_OK.replace('availableReplicas: 3', 'availableReplicas: 2'),
    status: 'InProgress',
    message: 'Available: 2/3',
  },
  {
    why: 'Deployment too few ready',
    yaml: DEPLOY_OK.replace('readyReplicas: 3', 'readyReplicas: 1'),
    status: 'InProgress',
    message: 'Ready: 1/3',
  },
  {
    why: 'Deployment with progressDeadlineSeconds waits for NewReplicaSetAvailable',
    yaml: DEPLOY_OK.replace('{replicas: 3}', '{replicas: 3, progressDeadlineSeconds: 600}').replace(
      'reason: NewReplicaSetAvailable',
      'reason: ReplicaSetUpdated',
    ),
    status: 'InProgress',
    message: 'ReplicaSet not Available',
  },
  {
    why: 'Deployment without Available=True',
    yaml: DEPLOY_OK.replace("{type: Available, status: 'True'}", "{type: Available, status: 'False'}"),
    status: 'InProgress',
    message: 'Deployment not Available',
  },
  {
    why: 'Deployment spec.replicas defaults to 1',
    yaml: `${DEPLOY}\nstatus: {replicas: 0}`,
    status: 'InProgress',
    message: 'Replicas: 0/1',
  },
  // StatefulSet
  {
    why: 'StatefulSet OnDelete → Current',
    yaml: `${STS}\nspec: {replicas: 3, updateStrategy: {type: OnDelete}}`,
    status: 'Current',
    message: 'StatefulSet is using the ondelete update strategy',
  },
  {
    why: 'StatefulSet too few replicas',
    yaml: `${STS}\nspec: {replicas: 3}\nstatus: {replicas: 2}`,
    status: 'InProgress',
    message: 'Replicas: 2/3',
  },
  {
    why: 'StatefulSet too few ready',
    yaml: `${STS}\nspec: {replicas: 3}\nstatus: {replicas: 3, readyReplicas: 1}`,
    status: 'InProgress',
    message: 'Ready: 1/3',
  },
  {
    why: 'StatefulSet pods pending termination',
    yaml: `${STS}\nspec: {replicas: 3}\nstatus: {replicas: 5, readyReplicas: 3}`,
    status: 'InProgress',
    message: 'Pending termination: 2',
  },
  {
    why: 'StatefulSet partition rollout in progress',
    yaml: `${STS}\nspec: {replicas: 3, updateStrategy: {rollingUpdate: {partition: 1}}}\nstatus: {replicas: 3, readyReplicas: 3, updatedReplicas: 1}`,
    status: 'InProgress',
    message: 'updated: 1/2',
  },
  {
    why: 'StatefulSet partition rollout complete',
    yaml: `${STS}\nspec: {replicas: 3, updateStrategy: {rollingUpdate: {partition: 1}}}\nstatus: {replicas: 3, readyReplicas: 3, updatedReplicas: 2}`,
    status: 'Current',
    message: 'Partition rollout complete. updated: 2',
  },
  {
    why: 'StatefulSet too few current',
    yaml: `${STS}\nspec: {replicas: 3}\nstatus: {replicas: 3, readyReplicas: 3, currentReplicas: 2}`,
    status: 'InProgress',
    message: 'current: 2/3',
  },
  {
    why: 'StatefulSet revision mismatch',
    yaml: `${STS}\nspec: {replicas: 3}\nstatus: {replicas: 3, readyReplicas: 3, currentReplicas: 3, currentRevision: a, updateRevision: b}`,
    status: 'InProgress',
    message: 'Waiting for updated revision to match current',
  },
  {
    why: 'StatefulSet rolled out',
    yaml: `${STS}\nspec: {replicas: 3}\nstatus: {replicas: 3, readyReplicas: 3, currentReplicas: 3, currentRevision: a, updateRevision: a}`,
    status: 'Current',
    message: 'All replicas scheduled as expected. Replicas: 3',
  },
  // DaemonSet
  {
    why: 'DaemonSet needs metadata.generation',
    yaml: 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nstatus: {observedGeneration: 1}',
    status: 'InProgress',
    message: 'DaemonSet metadata.generation not found',
  },
  {
    why: 'DaemonSet needs status.observedGeneration',
    yaml: `${DS}\nstatus: {desiredNumberScheduled: 1}`,
    status: 'InProgress',
    message: 'DaemonSet status.observedGeneration not found',
  },
  {
    why: 'DaemonSet without desiredNumberScheduled',
    yaml: `${DS}\nstatus: {observedGeneration: 2}`,
    status: 'InProgress',
    message: 'Missing .status.desiredNumberScheduled',
  },
  {
    why: 'DaemonSet too few scheduled',
    yaml: `${DS}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, currentNumberScheduled: 2}`,
    status: 'InProgress',
    message: 'Current: 2/3',
  },
  {
    why: 'DaemonSet too few updated',
    yaml: `${DS}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 1}`,
    status: 'InProgress',
    message: 'Updated: 1/3',
  },
  {
    why: 'DaemonSet too few available',
    yaml: `${DS}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 0}`,
    status: 'InProgress',
    message: 'Available: 0/3',
  },
  {
    why: 'DaemonSet too few ready',
    yaml: `${DS}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 2}`,
    status: 'InProgress',
    message: 'Ready: 2/3',
  },
  {
    why: 'DaemonSet rolled out',
    yaml: `${DS}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 3}`,
    status: 'Current',
    message: 'All replicas scheduled as expected. Replicas: 3',
  },
  // ReplicaSet
  {
    why: 'ReplicaSet ReplicaFailure=True',
    yaml: `${RS}\nstatus: {conditions: [{type: ReplicaFailure, status: 'True'}]}`,
    status: 'InProgress',
    message: 'Replica Failure condition. Check Pods',
  },
  {
    why: 'ReplicaSet too few labelled',
    yaml: `${RS}\nspec: {replicas: 2}\nstatus: {fullyLabeledReplicas: 1}`,
    status: 'InProgress',
    message: 'Labelled: 1/2',
  },
  {
    why: 'ReplicaSet too few available',
    yaml: `${RS}\nspec: {replicas: 2}\nstatus: {fullyLabeledReplicas: 2, availableReplicas: 1}`,
    status: 'InProgress',
    message: 'Available: 1/2',
  },
  {
    why: 'ReplicaSet too few ready',
    yaml: `${RS}\nspec: {replicas: 2}\nstatus: {fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 0}`,
    status: 'InProgress',
    message: 'Ready: 0/2',
  },
  {
    why: 'ReplicaSet pods pending termination',
    yaml: `${RS}\nspec: {replicas: 2}\nstatus: {replicas: 3, fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 2}`,
    status: 'InProgress',
    message: 'Pending termination: 1',
  },
  {
    why: 'ReplicaSet available',
    yaml: `${RS}\nspec: {replicas: 2}\nstatus: {replicas: 2, fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 2}`,
    status: 'Current',
    message: 'ReplicaSet is available. Replicas: 2',
  },
  // Pod
  {
    why: 'Pod Succeeded',
    yaml: `${POD}\nstatus: {phase: Succeeded}`,
    status: 'Current',
    message: 'Pod has completed successfully',
  },
  {
    why: 'Pod Failed still counts as completed',
    yaml: `${POD}\nstatus: {phase: Failed}`,
    status: 'Current',
    message: 'Pod has completed, but not successfully',
  },
  {
    why: 'Pod Running and Ready',
    yaml: `${POD}\nstatus: {phase: Running, conditions: [{type: Ready, status: 'True'}]}`,
    status: 'Current',
    message: 'Pod is Ready',
  },
  {
    why: 'Pod crash looping → Failed',
    yaml: `${POD}
status:
  phase: Running
  containerStatuses:
    - {name: a, state: {waiting: {reason: CrashLoopBackOff}}}
    - {name: b, state: {running: {}}}
    - {name: c, state: {waiting: {reason: CrashLoopBackOff}}}`,
    status: 'Failed',
    message: 'Containers in CrashLoop state: a,c',
  },
  {
    why: 'Pod Running but not Ready',
    yaml: `${POD}\nstatus: {phase: Running, conditions: [{type: Ready, status: 'False'}]}`,
    status: 'InProgress',
    message: 'Pod is running but is not Ready',
  },
  {
    why: 'Pod unschedulable within 15s',
    yaml: `${POD.replace('00:00:00Z', '00:00:20Z')}\nstatus: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}`,
    status: 'InProgress',
    message: 'Pod has not been scheduled',
  },
  {
    why: 'Pod unschedulable after 15s → Failed',
    yaml: `${POD}\nstatus: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}`,
    status: 'Failed',
    message: 'Pod could not be scheduled',
  },
  {
    why: 'Pod Pending',
    yaml: `${POD}\nstatus: {phase: Pending}`,
    status: 'InProgress',
    message: 'Pod is in the Pending phase',
  },
  { why: 'Pod with no phase', yaml: POD, status: 'InProgress', message: 'Pod phase not available' },
  {
    why: 'Pod with an unknown phase → Unknown',
    yaml: `${POD}\nstatus: {phase: Unknown}`,
    status: 'Unknown',
    message: 'unknown phase Unknown',
  },
  // PersistentVolumeClaim
  {
    why: 'PVC Bound',
    yaml: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: v}\nstatus: {phase: Bound}',
    status: 'Current',
    message: 'PVC is Bound',
  },
  {
    why: 'PVC Pending',
    yaml: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: v}\nstatus: {phase: Pending}',
    status: 'InProgress',
    message: 'PVC is not Bound. phase: Pending',
  },
  {
    why: 'PVC without status',
    yaml: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: v}',
    status: 'InProgress',
    message: 'PVC is not Bound. phase: unknown',
  },
  // Service
  {
    why: 'Service ClusterIP',
    yaml: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: 10.0.0.1}',
    status: 'Current',
    message: 'Service is ready',
  },
  {
    why: 'LoadBalancer without clusterIP',
    yaml: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}',
    status: 'InProgress',
    message: 'ClusterIP not set. Service type: LoadBalancer',
  },
  {
    why: 'LoadBalancer with clusterIP but no ingress IP is Current',
    yaml: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer, clusterIP: 10.0.0.1}\nstatus: {loadBalancer: {}}',
    status: 'Current',
    message: 'Service is ready',
  },
  // Job (Flux reader)
  {
    why: 'Job suspended',
    yaml: `${JOB}\nspec: {suspend: true}`,
    status: 'Current',
    message: 'Job is suspended',
  },
  {
    why: 'Job complete',
    yaml: `${JOB}\nspec: {completions: 2}\nstatus: {succeeded: 2, startTime: x, conditions: [{type: Complete, status: 'True'}]}`,
    status: 'Current',
    message: 'Job Completed. succeeded: 2/2',
  },
  {
    why: 'Job failed',
    yaml: `${JOB}\nspec: {parallelism: 3}\nstatus: {failed: 1, startTime: x, conditions: [{type: Failed, status: 'True'}]}`,
    status: 'Failed',
    message: 'Job Failed. failed: 1/3',
  },
  {
    why: 'Job not started',
    yaml: `${JOB}\nspec: {parallelism: 2}`,
    status: 'InProgress',
    message: 'Job not started. active: 0/2',
  },
  {
    why: 'Job running is not yet healthy',
    yaml: `${JOB}\nstatus: {startTime: x, active: 1, succeeded: 0, failed: 1}`,
    status: 'InProgress',
    message: 'Job in progress. success:0, active: 1, failed: 1',
  },
  {
    why: 'Job reader skips the generic checks (deletionTimestamp)',
    yaml: `${JOB.replace('{name: j}', '{name: j, deletionTimestamp: x}')}\nstatus: {conditions: [{type: Complete, status: 'True'}]}`,
    status: 'Current',
    message: 'Job Completed. succeeded: 0/1',
  },
  // always ready kinds
  {
    why: 'CronJob always ready',
    yaml: 'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}',
    status: 'Current',
    message: 'Resource is always ready',
  },
  {
    why: 'ConfigMap always ready',
    yaml: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}',
    status: 'Current',
    message: 'Resource is always ready',
  },
  {
    why: 'Secret always ready',
    yaml: 'apiVersion: v1\nkind: Secret\nmetadata: {name: c}',
    status: 'Current',
    message: 'Resource is always ready',
  },
  {
    why: 'PodDisruptionBudget',
    yaml: 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}',
    status: 'Current',
    message: 'AllowedDisruptions has been computed.',
  },
  // CustomResourceDefinition
  {
    why: 'CRD established',
    yaml: `${CRD}\nstatus: {conditions: [{type: NamesAccepted, status: 'True'}, {type: Established, status: 'True'}]}`,
    status: 'Current',
    message: 'CRD is established',
  },
  {
    why: 'CRD names not accepted',
    yaml: `${CRD}\nstatus: {conditions: [{type: NamesAccepted, status: 'False', reason: MultipleNames, message: conflict}]}`,
    status: 'Failed',
    message: 'conflict',
  },
  {
    why: 'CRD not established for another reason',
    yaml: `${CRD}\nstatus: {conditions: [{type: Established, status: 'False', reason: NotAccepted, message: no}]}`,
    status: 'Failed',
    message: 'no',
  },
  {
    why: 'CRD installing',
    yaml: `${CRD}\nstatus: {conditions: [{type: Established, status: 'False', reason: Installing}]}`,
    status: 'InProgress',
    message: 'Install in progress',
  },
  { why: 'CRD without conditions', yaml: CRD, status: 'InProgress', message: 'Install in progress' },
  // generic resources
  {
    why: 'CR Ready=True',
    yaml: `${CR}\nstatus: {observedGeneration: 1, conditions: [{type: Ready, status: 'True'}]}`,
    status: 'Current',
    message: 'Resource is Ready',
  },
  {
    why: 'CR Ready=False',
    yaml: `${CR}\nstatus: {conditions: [{type: Ready, status: 'False', message: waiting}]}`,
    status: 'InProgress',
    message: 'waiting',
  },
  {
    why: 'CR Ready=Unknown',
    yaml: `${CR}\nstatus: {conditions: [{type: Ready, status: Unknown, message: progressing}]}`,
    status: 'InProgress',
    message: 'progressing',
  },
  { why: 'CR without status is Current', yaml: CR, status: 'Current', message: 'Resource is current' },
  {
    why: 'Namespace uses the generic rule',
    yaml: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\nstatus: {phase: Active}',
    status: 'Current',
    message: 'Resource is current',
  },
  {
    why: 'a Deployment in another group is generic',
    yaml: 'apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3}',
    status: 'Current',
    message: 'Resource is current',
  },
];

describe('computeStatus', () => {
  it.each(rows)('$why', ({ yaml, status, message }) => {
    expect(computeStatus(parse(yaml) as Record<string, unknown>, NOW)).toEqual({ status, message });
  });

  it('undefined → NotFound', () => {
    expect(computeStatus(undefined)).toEqual({ status: 'NotFound', message: 'Resource not found' });
  });
});

describe('objects no controller has picked up', () => {
  it.each<[string, unknown, boolean]>([
    ['no status', undefined, true],
    ["only Flux's CRD default", { observedGeneration: -1 }, true],
    ['an empty status', {}, true],
    ['an observed generation', { observedGeneration: 1 }, false],
    ['a condition', { observedGeneration: -1, conditions: [{ type: 'Ready', status: 'Unknown' }] }, false],
    ['a generation 0 observed', { observedGeneration: 0 }, false],
  ])('untouched: %s', (_, status, want) => {
    expect(untouched(status)).toBe(want);
  });

  it.each<[string, string | undefined]>([
    ['helm.toolkit.fluxcd.io/v2', 'helm-controller'],
    ['source.toolkit.fluxcd.io/v1', 'source-controller'],
    ['source.extensions.fluxcd.io/v1beta1', 'source-watcher'],
    ['infra.contrib.fluxcd.io/v1alpha2', 'the controller of infra.contrib.fluxcd.io'],
    ['apps/v1', undefined],
    ['v1', undefined],
    ['example.com/v1', undefined],
  ])('controllerOf(%s) = %s', (apiVersion, want) => {
    expect(controllerOf(apiVersion)).toBe(want);
  });
});
