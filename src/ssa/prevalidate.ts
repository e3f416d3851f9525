import { clip } from '../util/truncate.js';
import { isUnservedKind, type Discovery, type ServerVersion } from '../cluster/discovery.js';
import { subjectOf, type KubeObject } from '../objects/kube.js';
import { groupOf } from '../objects/id.js';
import { ApplyError } from './apply.js';

interface Failure {
  object: KubeObject;
  message: string;
}

/**
 * Checks that need no dry-run, made before the first write of a run: names, namespaces, label and
 * annotation keys the API server would refuse, and kinds it does not serve. Without them a run
 * creates the Namespace of its first stage and then fails on a ConfigMap named `Bad_Name` in its
 * last. The rules are the API server's (apimachinery's ValidateObjectMeta and each kind's name
 * function) for the kinds named below; any other kind only gets the rules every kind has, and the
 * server's dry-run stays the judge of the rest.
 */

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

type NameRule = 'subdomain' | 'label' | 'label1035';

/** `group/Kind` → the name rule its API validation applies, and whether it is namespaced. */
const KINDS = new Map<string, { rule: NameRule; namespaced: boolean; maxLength?: number }>([
  ['/Namespace', { rule: 'label', namespaced: false }],
  // A DNS-1123 label since RelaxedServiceNameValidation (beta, on, in 1.36; GA in 1.37); a DNS-1035
  // label before: serviceRule picks by the server's version.
  ['/Service', { rule: 'label', namespaced: true }],
  ...[
    'ConfigMap',
    'Secret',
    'ServiceAccount',
    'Pod',
    'PodTemplate',
    'PersistentVolumeClaim',
    'Endpoints',
    'LimitRange',
    'ResourceQuota',
    'ReplicationController',
  ].map((k) => [`/${k}`, { rule: 'subdomain' as const, namespaced: true }] as const),
  ...['PersistentVolume', 'Node'].map((k) => [`/${k}`, { rule: 'subdomain' as const, namespaced: false }] as const),
  // A StatefulSet's name becomes its Pods' hostnames: a DNS-1123 label.
  ['apps/StatefulSet', { rule: 'label', namespaced: true }],
  ...['Deployment', 'DaemonSet', 'ReplicaSet'].map(
    (k) => [`apps/${k}`, { rule: 'subdomain' as const, namespaced: true }] as const,
  ),
  ['batch/Job', { rule: 'subdomain', namespaced: true }],
  // The controller appends an 11-character suffix to a CronJob's Jobs, which must stay DNS-1035 labels.
  ['batch/CronJob', { rule: 'subdomain', namespaced: true, maxLength: 52 }],
  ['networking.k8s.io/Ingress', { rule: 'subdomain', namespaced: true }],
  ['networking.k8s.io/NetworkPolicy', { rule: 'subdomain', namespaced: true }],
  ['networking.k8s.io/IngressClass', { rule: 'subdomain', namespaced: false }],
  ['policy/PodDisruptionBudget', { rule: 'subdomain', namespaced: true }],
  ['autoscaling/HorizontalPodAutoscaler', { rule: 'subdomain', namespaced: true }],
  ['storage.k8s.io/StorageClass', { rule: 'subdomain', namespaced: false }],
  ['scheduling.k8s.io/PriorityClass', { rule: 'subdomain', namespaced: false }],
  ['node.k8s.io/RuntimeClass', { rule: 'subdomain', namespaced: false }],
  ['coordination.k8s.io/Lease', { rule: 'subdomain', namespaced: true }],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', { rule: 'subdomain', namespaced: false }],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', { rule: 'subdomain', namespaced: false }],
  // RBAC names are path segments (system:controller:x is valid); only their namespace is checked.
  ['rbac.authorization.k8s.io/Role', { rule: 'subdomain', namespaced: true }],
  ['rbac.authorization.k8s.io/RoleBinding', { rule: 'subdomain', namespaced: true }],
]);
const PATH_SEGMENT_KINDS = new Set([
  // The API server checks no more than the path-segment rules of a PodDisruptionBudget's name.
  'policy/PodDisruptionBudget',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
]);

const RULE_TEXT: Record<NameRule, string> = {
  subdomain:
    'lowercase letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters',
  label: 'lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters',
  label1035:
    'lowercase letters, digits and "-", starting with a letter and ending with a letter or digit, at most 63 characters',
};

function fits(rule: NameRule, name: string): boolean {
  if (rule === 'subdomain') return name.length <= 253 && SUBDOMAIN.test(name);
  return name.length <= 63 && (rule === 'label1035' ? LABEL_1035 : LABEL).test(name);
}

/**
 * The rule a Service's name is held to on a server of this version: Kubernetes 1.34 and 1.35 check a
 * DNS-1035 label (a name like "1a" is refused) unless the alpha RelaxedServiceNameValidation gate is
 * on; 1.36 and later a DNS-1123 label. An unknown version gets the looser rule: the dry-run judges.
 */
export function serviceRule(server: ServerVersion | undefined): NameRule {
  return server && server.major === 1 && server.minor < 36 ? 'label1035' : 'label';
}

function quoted(text: string): string {
  return JSON.stringify(clip(text, 80));
}

function qualifiedNameProblem(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return true;
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2 && (parts[0] === '' || parts[0]!.length > 253 || !SUBDOMAIN.test(parts[0]!))) return true;
  return name.length > 63 || !QUALIFIED_NAME.test(name);
}

/** What the API server would refuse in these objects' metadata, one sentence per problem naming the object and field. */
export function objectProblems(objects: readonly KubeObject[], server?: ServerVersion): string[] {
  return objectFailures(objects, server).map((f) => f.message);
}

/** objectProblems with the object each problem is about (for annotations on its source file). */
export function objectFailures(objects: readonly KubeObject[], server?: ServerVersion): Failure[] {
  const problems: Failure[] = [];
  const forService = serviceRule(server);
  for (const obj of objects) {
    const push = (message: string) => problems.push({ object: obj, message });
    const subject = clip(subjectOf(obj), 200);
    const gk = `${groupOf(obj.apiVersion)}/${obj.kind}`;
    const { name, namespace, labels, annotations } = obj.metadata;
    const kindRule = KINDS.get(gk);
    const known = gk === '/Service' && kindRule ? { ...kindRule, rule: forService } : kindRule;
    if (name === '.' || name === '..') {
      push(`${subject}: metadata.name ${quoted(name)} may not be "." or ".."`);
    } else if (/[/%]/.test(name)) {
      push(`${subject}: metadata.name ${quoted(name)} may not contain "/" or "%"`);
    } else if (known && !PATH_SEGMENT_KINDS.has(gk) && !fits(known.rule, name)) {
      const forKind =
        known.rule === 'subdomain'
          ? ''
          : ` for a ${obj.kind}${known.rule === 'label1035' ? ` on Kubernetes ${server!.major}.${server!.minor}` : ''}`;
      push(`${subject}: metadata.name ${quoted(name)} is not a valid name${forKind}: use ${RULE_TEXT[known.rule]}`);
    } else if (known?.maxLength !== undefined && name.length > known.maxLength) {
      push(
        `${subject}: metadata.name is ${name.length} characters; a ${obj.kind}'s may have at most ${known.maxLength}`,
      );
    }
    if (gk === 'apiextensions.k8s.io/CustomResourceDefinition') {
      const spec = (obj as { spec?: { group?: unknown; names?: { plural?: unknown } } }).spec;
      const want = `${String(spec?.names?.plural)}.${String(spec?.group)}`;
      if (typeof spec?.group === 'string' && typeof spec.names?.plural === 'string' && name !== want) {
        push(`${subject}: metadata.name must be spec.names.plural "." spec.group: "${want}"`);
      }
    }
    if (known?.namespaced && namespace !== undefined && namespace !== '' && !fits('label', namespace)) {
      push(`${subject}: metadata.namespace ${quoted(namespace)} is not a valid namespace name: use ${RULE_TEXT.label}`);
    }
    for (const [key, value] of Object.entries((labels ?? {}) as Record<string, unknown>)) {
      if (qualifiedNameProblem(key)) {
        push(
          `${subject}: metadata.labels key ${quoted(key)} is not a valid label key: use an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "."`,
        );
      } else if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
        push(
          // The value is not quoted: it may have come out of SOPS or a secret variable.
          `${subject}: metadata.labels[${JSON.stringify(key)}] value (${typeof value === 'string' ? `${value.length} characters` : `${value === null ? 'null' : typeof value}, not a text`}) is not a valid label value: use at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`,
        );
      }
    }
    for (const key of Object.keys(annotations ?? {})) {
      if (qualifiedNameProblem(key)) {
        push(
          `${subject}: metadata.annotations key ${quoted(key)} is not a valid annotation key: use an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "."`,
        );
      }
    }
  }
  return problems;
}

/** How many subjects one line of unservedKinds names before it counts the rest. */
const SUBJECTS_SHOWN = 5;

/**
 * The kinds among `objects` that the server does not serve (`served` answers from discovery),
 * leaving out those a CustomResourceDefinition of the same objects defines: one line per
 * apiVersion and kind, naming its objects.
 */
export async function unservedKinds(
  objects: readonly KubeObject[],
  served: (apiVersion: string, kind: string) => Promise<boolean>,
): Promise<string[]> {
  return (await unservedFailures(objects, served)).map((u) => u.line).sort();
}

async function unservedFailures(
  objects: readonly KubeObject[],
  served: (apiVersion: string, kind: string) => Promise<boolean>,
): Promise<{ line: string; failures: Failure[] }[]> {
  const defined = new Set<string>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition' || groupOf(o.apiVersion) !== 'apiextensions.k8s.io') continue;
    const spec = (o as { spec?: { group?: unknown; names?: { kind?: unknown }; versions?: unknown } }).spec;
    if (typeof spec?.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
    const versions = Array.isArray(spec.versions) ? spec.versions : [];
    for (const v of versions as { name?: unknown }[]) {
      if (typeof v.name === 'string') defined.add(`${spec.group}/${v.name}/${spec.names.kind}`);
    }
  }
  const byKind = new Map<string, KubeObject[]>();
  for (const o of objects) {
    const key = `${o.apiVersion}/${o.kind}`;
    if (defined.has(key)) continue;
    byKind.set(key, [...(byKind.get(key) ?? []), o]);
  }
  const out: { line: string; failures: Failure[] }[] = [];
  for (const group of byKind.values()) {
    const { apiVersion, kind } = group[0]!;
    if (await served(apiVersion, kind)) continue;
    const subjects = group
      .slice(0, SUBJECTS_SHOWN)
      .map((o) => clip(subjectOf(o), 200))
      .join(', ');
    const more = group.length > SUBJECTS_SHOWN ? ` and ${group.length - SUBJECTS_SHOWN} more` : '';
    const why = `the server has no resource for kind ${clip(kind, 100)} in ${clip(apiVersion, 100)} (is the apiVersion right, or its CustomResourceDefinition installed?)`;
    out.push({
      line: `${subjects}${more}: ${why}`,
      failures: group.map((o) => ({ object: o, message: `${clip(subjectOf(o), 200)}: ${why}` })),
    });
  }
  return out;
}

/** Problems listed in one error before the rest are counted. */
const PROBLEMS_SHOWN = 20;

/**
 * Refuses, before anything is written, objects that the checks above prove invalid: one Error
 * listing every problem (the first PROBLEMS_SHOWN, then a count). Discovery errors other than
 * an unknown kind (the server unreachable) are thrown as they are.
 */
export async function prevalidate(objects: readonly KubeObject[], discovery: Discovery): Promise<void> {
  const failures = objectFailures(objects, await discovery.serverVersion());
  const unserved = await unservedFailures(objects, (apiVersion, kind) =>
    discovery.mapping(apiVersion, kind).then(
      () => true,
      (err: unknown) => {
        if (isUnservedKind(err)) return false;
        throw err;
      },
    ),
  );
  const objectsAtFault = new Set([...failures, ...unserved.flatMap((u) => u.failures)].map((f) => f.object)).size;
  const message = refusal([...failures.map((f) => f.message), ...unserved.map((u) => u.line).sort()], objectsAtFault);
  // An ApplyError with nothing applied: the report locates each object in its source file.
  if (message !== undefined) throw new ApplyError(message, [], [...failures, ...unserved.flatMap((u) => u.failures)]);
}

/**
 * The error for a list of problems (undefined for none): the first PROBLEMS_SHOWN, then a count. It
 * counts `objects`, the objects at fault (one may have several problems, and one line may name
 * several objects of a kind the server does not serve), and the problems apart when they differ.
 */
export function refusal(problems: readonly string[], objects: number = problems.length): string | undefined {
  if (problems.length === 0) return undefined;
  const shown = problems.slice(0, PROBLEMS_SHOWN);
  const rest = problems.length - PROBLEMS_SHOWN;
  const more = rest > 0 ? `\n  and ${rest} more problem${rest === 1 ? '' : 's'}` : '';
  const what = objects === 1 ? 'an object' : `${objects} objects`;
  const problemCount =
    problems.length === objects ? '' : ` (${problems.length} problem${problems.length === 1 ? '' : 's'})`;
  return `${what} would be refused by the API server${problemCount}; nothing was applied:\n  ${shown.join('\n  ')}${more}`;
}
