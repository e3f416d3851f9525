/**
 * The status of one live object as Flux's health check sees it: kstatus `status.Compute`
 * (sigs.k8s.io/cli-utils pkg/kstatus/status) with Flux's Job reader (fluxcd/pkg runtime/statusreaders/job.go)
 * in place of the legacy Job rule. Pure: no cluster access; `now` only matters for unschedulable Pods.
 */

export type Status = 'InProgress' | 'Current' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';

export interface StatusResult {
  status: Status;
  message: string;
}

type Obj = Record<string, unknown>;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** Raised for what kstatus reports as an error; the poller then reports status Unknown. */
class StatusError extends Error {}

/** How long a Pod may stay unschedulable before it counts as Failed (kstatus ScheduleWindow). */
const SCHEDULE_WINDOW_MS = 15_000;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function field(obj: Obj, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** kstatus GetIntField: integers only; anything else (missing, string, fraction) gives the default. */
function int(obj: Obj, path: string, def: number): number {
  const v = field(obj, path);
  return typeof v === 'number' && Number.isInteger(v) ? v : def;
}

/** kstatus GetStringField: strings only, else the default. */
function str(obj: Obj, path: string, def: string): string {
  const v = field(obj, path);
  return typeof v === 'string' ? v : def;
}

/** unstructured.NestedInt64: undefined when absent, an error when present but not an integer. */
function nestedInt(obj: Obj, path: string): number | undefined {
  const v = field(obj, path);
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new StatusError(
      `looking up ${path} from resource: ${path} accessor error: ${JSON.stringify(v)} is not an integer`,
    );
  }
  return v;
}

/** GetObjectWithConditions: a malformed conditions list is an error, as the unstructured converter makes it. */
function conditions(obj: Obj): Condition[] {
  const status = obj['status'];
  if (status === undefined || status === null) return [];
  if (!isObj(status)) throw new StatusError('status is not an object');
  const list = status['conditions'];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new StatusError('status.conditions is not a list');
  return list.map((c: unknown) => {
    if (!isObj(c)) throw new StatusError('status.conditions has an entry that is not an object');
    const s = (k: string) => {
      const v = c[k];
      if (v === undefined || v === null) return '';
      if (typeof v !== 'string') throw new StatusError(`status.conditions[].${k} is not a string`);
      return v;
    };
    return { type: s('type'), status: s('status'), reason: s('reason'), message: s('message') };
  });
}

const current = (message: string): StatusResult => ({ status: 'Current', message });
const inProgress = (message: string): StatusResult => ({ status: 'InProgress', message });
const failed = (message: string): StatusResult => ({ status: 'Failed', message });

function kindOf(obj: Obj): string {
  return typeof obj['kind'] === 'string' ? obj['kind'] : '';
}

/** The legacy-rule key kstatus uses: `group/Kind`, or just `Kind` for the core group. */
function groupKind(obj: Obj): string {
  const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
  const slash = apiVersion.indexOf('/');
  const group = slash === -1 ? '' : apiVersion.slice(0, slash);
  return group === '' ? kindOf(obj) : `${group}/${kindOf(obj)}`;
}

/** checkGenericProperties: deletion, observed generation, then the Reconciling and Stalled conditions. */
function generic(obj: Obj): StatusResult | undefined {
  const deletion = field(obj, 'metadata.deletionTimestamp');
  if (typeof deletion === 'string' && deletion !== '')
    return { status: 'Terminating', message: 'Resource scheduled for deletion' };

  const generation = nestedInt(obj, 'metadata.generation');
  if (generation !== undefined) {
    const observed = nestedInt(obj, 'status.observedGeneration');
    if (observed !== undefined && observed !== generation) {
      return inProgress(`${kindOf(obj)} generation is ${generation}, but latest observed generation is ${observed}`);
    }
  }

  for (const c of conditions(obj)) {
    if (c.type === 'Reconciling' && c.status === 'True') return inProgress(c.message);
    if (c.type === 'Stalled' && c.status === 'True') return failed(c.message);
  }
  return undefined;
}

function deployment(obj: Obj): StatusResult {
  // Without progressDeadlineSeconds the controller never sets Progressing, so it is not awaited.
  let progressing = int(obj, 'spec.progressDeadlineSeconds', 2147483647) === 2147483647;
  let available = false;
  for (const c of conditions(obj)) {
    if (c.type === 'Progressing') {
      if (c.reason === 'ProgressDeadlineExceeded') return failed('Progress deadline exceeded');
      if (c.status === 'True' && c.reason === 'NewReplicaSetAvailable') progressing = true;
    } else if (c.type === 'Available' && c.status === 'True') {
      available = true;
    }
  }
  const spec = int(obj, 'spec.replicas', 1);
  const replicas = int(obj, 'status.replicas', 0);
  const updated = int(obj, 'status.updatedReplicas', 0);
  const ready = int(obj, 'status.readyReplicas', 0);
  const availableReplicas = int(obj, 'status.availableReplicas', 0);

  if (spec > replicas) return inProgress(`Replicas: ${replicas}/${spec}`);
  if (spec > updated) return inProgress(`Updated: ${updated}/${spec}`);
  if (replicas > spec) return inProgress(`Pending termination: ${replicas - spec}`);
  if (updated > availableReplicas) return inProgress(`Available: ${availableReplicas}/${updated}`);
  if (spec > ready) return inProgress(`Ready: ${ready}/${spec}`);
  if (!progressing) return inProgress('ReplicaSet not Available');
  if (!available) return inProgress('Deployment not Available');
  return current(`Deployment is available. Replicas: ${replicas}`);
}

function statefulSet(obj: Obj): StatusResult {
  if (str(obj, 'spec.updateStrategy.type', '') === 'OnDelete') {
    return current('StatefulSet is using the ondelete update strategy');
  }
  const spec = int(obj, 'spec.replicas', 1);
  const ready = int(obj, 'status.readyReplicas', 0);
  const currentReplicas = int(obj, 'status.currentReplicas', 0);
  const updated = int(obj, 'status.updatedReplicas', 0);
  const replicas = int(obj, 'status.replicas', 0);
  const partition = int(obj, 'spec.updateStrategy.rollingUpdate.partition', -1);

  if (spec > replicas) return inProgress(`Replicas: ${replicas}/${spec}`);
  if (spec > ready) return inProgress(`Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress(`Pending termination: ${replicas - spec}`);
  if (partition !== -1) {
    if (updated < spec - partition) return inProgress(`updated: ${updated}/${spec - partition}`);
    return current(`Partition rollout complete. updated: ${updated}`);
  }
  if (spec > currentReplicas) return inProgress(`current: ${currentReplicas}/${spec}`);
  if (str(obj, 'status.currentRevision', '') !== str(obj, 'status.updateRevision', '')) {
    return inProgress('Waiting for updated revision to match current');
  }
  return current(`All replicas scheduled as expected. Replicas: ${replicas}`);
}

function daemonSet(obj: Obj): StatusResult {
  // Unlike the generic check, a DaemonSet must carry both generation fields.
  if (nestedInt(obj, 'metadata.generation') === undefined) {
    return inProgress(`${kindOf(obj)} metadata.generation not found`);
  }
  if (nestedInt(obj, 'status.observedGeneration') === undefined) {
    return inProgress(`${kindOf(obj)} status.observedGeneration not found`);
  }
  const desired = int(obj, 'status.desiredNumberScheduled', -1);
  const scheduled = int(obj, 'status.currentNumberScheduled', 0);
  const updated = int(obj, 'status.updatedNumberScheduled', 0);
  const availableCount = int(obj, 'status.numberAvailable', 0);
  const ready = int(obj, 'status.numberReady', 0);

  if (desired === -1) return inProgress('Missing .status.desiredNumberScheduled');
  if (desired > scheduled) return inProgress(`Current: ${scheduled}/${desired}`);
  if (desired > updated) return inProgress(`Updated: ${updated}/${desired}`);
  if (desired > availableCount) return inProgress(`Available: ${availableCount}/${desired}`);
  if (desired > ready) return inProgress(`Ready: ${ready}/${desired}`);
  return current(`All replicas scheduled as expected. Replicas: ${desired}`);
}

function replicaSet(obj: Obj): StatusResult {
  if (conditions(obj).some((c) => c.type === 'ReplicaFailure' && c.status === 'True')) {
    return inProgress('Replica Failure condition. Check Pods');
  }
  const spec = int(obj, 'spec.replicas', 1);
  const replicas = int(obj, 'status.replicas', 0);
  const ready = int(obj, 'status.readyReplicas', 0);
  const availableCount = int(obj, 'status.availableReplicas', 0);
  const labelled = int(obj, 'status.fullyLabeledReplicas', 0);

  if (spec > labelled) return inProgress(`Labelled: ${labelled}/${spec}`);
  if (spec > availableCount) return inProgress(`Available: ${availableCount}/${spec}`);
  if (spec > ready) return inProgress(`Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress(`Pending termination: ${replicas - spec}`);
  return current(`ReplicaSet is available. Replicas: ${replicas}`);
}

function crashLooping(obj: Obj): string[] {
  const statuses = field(obj, 'status.containerStatuses');
  if (!Array.isArray(statuses)) return [];
  return statuses.flatMap((cs: unknown) => {
    if (!isObj(cs) || typeof cs['name'] !== 'string') return [];
    return field(cs, 'state.waiting.reason') === 'CrashLoopBackOff' ? [cs['name']] : [];
  });
}

function pod(obj: Obj, now: Date): StatusResult {
  const conds = conditions(obj);
  const phase = str(obj, 'status.phase', '');
  switch (phase) {
    case 'Succeeded':
      return current('Pod has completed successfully');
    case 'Failed':
      return current('Pod has completed, but not successfully');
    case 'Running': {
      if (conds.some((c) => c.type === 'Ready' && c.status === 'True')) return current('Pod is Ready');
      const looping = crashLooping(obj);
      if (looping.length > 0) return failed(`Containers in CrashLoop state: ${looping.join(',')}`);
      return inProgress('Pod is running but is not Ready');
    }
    case 'Pending': {
      const scheduled = conds.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      if (scheduled?.reason === 'Unschedulable') {
        const created = Date.parse(str(obj, 'metadata.creationTimestamp', ''));
        // A missing timestamp is the zero time in Go: long past the window.
        const createdMs = Number.isNaN(created) ? -Infinity : created;
        if (now.getTime() - SCHEDULE_WINDOW_MS < createdMs) return inProgress('Pod has not been scheduled');
        return failed('Pod could not be scheduled');
      }
      return inProgress('Pod is in the Pending phase');
    }
    case '':
      return inProgress('Pod phase not available');
    default:
      throw new StatusError(`unknown phase ${phase}`);
  }
}

function pvc(obj: Obj): StatusResult {
  const phase = str(obj, 'status.phase', 'unknown');
  return phase === 'Bound' ? current('PVC is Bound') : inProgress(`PVC is not Bound. phase: ${phase}`);
}

function service(obj: Obj): StatusResult {
  // kstatus waits for a cluster IP only; the load balancer's ingress IP is not awaited.
  if (str(obj, 'spec.type', 'ClusterIP') === 'LoadBalancer' && str(obj, 'spec.clusterIP', '') === '') {
    return inProgress('ClusterIP not set. Service type: LoadBalancer');
  }
  return current('Service is ready');
}

function crd(obj: Obj): StatusResult {
  for (const c of conditions(obj)) {
    if (c.type === 'NamesAccepted' && c.status === 'False') return failed(c.message);
    if (c.type === 'Established') {
      if (c.status === 'False' && c.reason !== 'Installing') return failed(c.message);
      if (c.status === 'True') return current('CRD is established');
    }
  }
  return inProgress('Install in progress');
}

/** Flux's CustomJobStatusReader: healthy only once complete. It replaces Compute, generic checks included. */
function job(obj: Obj): StatusResult {
  if (field(obj, 'spec.suspend') === true) return current('Job is suspended');
  const parallelism = int(obj, 'spec.parallelism', 1);
  const completions = int(obj, 'spec.completions', parallelism);
  const active = int(obj, 'status.active', 0);
  const succeeded = int(obj, 'status.succeeded', 0);
  const failedCount = int(obj, 'status.failed', 0);
  for (const c of conditions(obj)) {
    if (c.type === 'Complete' && c.status === 'True') {
      return current(`Job Completed. succeeded: ${succeeded}/${completions}`);
    }
    if (c.type === 'Failed' && c.status === 'True') return failed(`Job Failed. failed: ${failedCount}/${completions}`);
  }
  if (str(obj, 'status.startTime', '') === '') return inProgress(`Job not started. active: 0/${parallelism}`);
  return inProgress(`Job in progress. success:${succeeded}, active: ${active}, failed: ${failedCount}`);
}

const alwaysReady = (): StatusResult => current('Resource is always ready');

const LEGACY: Record<string, (obj: Obj, now: Date) => StatusResult> = {
  Service: service,
  Pod: pod,
  Secret: alwaysReady,
  ConfigMap: alwaysReady,
  PersistentVolumeClaim: pvc,
  'apps/StatefulSet': statefulSet,
  'apps/DaemonSet': daemonSet,
  'extensions/DaemonSet': daemonSet,
  'apps/Deployment': deployment,
  'extensions/Deployment': deployment,
  'apps/ReplicaSet': replicaSet,
  'extensions/ReplicaSet': replicaSet,
  'policy/PodDisruptionBudget': () => current('AllowedDisruptions has been computed.'),
  'batch/CronJob': alwaysReady,
  'apiextensions.k8s.io/CustomResourceDefinition': crd,
};

function compute(obj: Obj, now: Date): StatusResult {
  const key = groupKind(obj);
  if (key === 'batch/Job') return job(obj);
  const pre = generic(obj);
  if (pre) return pre;
  const rule = LEGACY[key];
  if (rule) return rule(obj, now);
  for (const c of conditions(obj)) {
    if (c.type !== 'Ready') continue;
    if (c.status === 'True') return current('Resource is Ready');
    if (c.status === 'False' || c.status === 'Unknown') return inProgress(c.message);
  }
  return current('Resource is current');
}

/**
 * kstatus status of a live object (undefined when the GET said NotFound). Conditions kstatus reports as an
 * error (malformed conditions, a non-integer generation, an unknown Pod phase) give Unknown with the error text.
 */
export function computeStatus(obj: Record<string, unknown> | undefined, now: Date = new Date()): StatusResult {
  if (obj === undefined) return { status: 'NotFound', message: 'Resource not found' };
  try {
    return compute(obj, now);
  } catch (err) {
    if (err instanceof StatusError) return { status: 'Unknown', message: err.message };
    throw err;
  }
}
