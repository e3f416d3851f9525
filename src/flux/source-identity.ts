/**
 * A source is its definition, not its name. A cluster holds one GitRepository (OCIRepository,
 * Bucket, ArtifactGenerator) per namespace/name; a repository may define one name several times
 * (once per cluster directory, checkout.ts `nearest`), and each Kustomization picks the definition
 * nearest to it. Two Kustomizations of one run (one cluster) that pick two different definitions of
 * one name are what Flux cannot have: one of them would be built from the other's repository. So
 * such a run refuses both, naming both files; and the per-run cache of fetched trees is keyed by the
 * whole definition (`planIdentity`), never by the name alone. Pure.
 */
import { nearest, type FetchedPlan, type SourcePlan, type SourceVerdict } from './checkout.js';
import type { DefinedAt, GitRepositoryDef } from './source-defs.js';
import type { KustomizationSpec } from './types.js';

/** `value` as JSON with every object's keys sorted, so that two equal definitions give one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  // JSON.stringify gives undefined for undefined (a value left out above, in a list it is null).
  const text = JSON.stringify(value) as string | undefined;
  return text ?? 'null';
}

/** A definition without where it was found: two files that say the same thing define one object. */
export function definitionIdentity(kind: string, def: DefinedAt): string {
  const { file: _file, ...fields } = def as DefinedAt & Record<string, unknown>;
  return canonicalJson({ ...fields, kind });
}

/**
 * What decides a planned source's content: the whole definition, with what it includes or is made
 * from (each by its own identity). The key of the per-run cache of fetched trees (fetched.ts).
 */
export function planIdentity(plan: SourcePlan): string {
  switch (plan.kind) {
    case 'checkout':
      return 'checkout';
    case 'GitRepository':
      return canonicalJson({
        def: definitionIdentity('GitRepository', plan.def),
        checkout: plan.checkout === true,
        include: (plan.include ?? []).map((i) => ({
          name: i.name,
          fromPath: i.fromPath,
          toPath: i.toPath,
          source: planIdentity(i.source),
        })),
      });
    case 'OCIRepository':
    case 'Bucket':
      return definitionIdentity(plan.kind, plan.def);
    case 'ExternalArtifact':
      return canonicalJson({
        artifact: `${plan.namespace}/${plan.name}`,
        generator: definitionIdentity('ArtifactGenerator', plan.generator),
        inputs: Object.fromEntries(Object.entries(plan.inputs).map(([alias, p]) => [alias, planIdentity(p)])),
      });
  }
}

/** One definition a run uses: `Kind namespace/name`, its identity, its file, and who uses it. */
export interface UsedDefinition {
  object: string;
  identity: string;
  file: string;
  /** The Kustomization (namespace/name) whose source needs it. */
  by: string;
}

/** Every definition a planned source uses: itself, what it includes, what it is made from. */
export function definitionsOf(plan: FetchedPlan, by: string): UsedDefinition[] {
  const out: UsedDefinition[] = [];
  const visit = (p: SourcePlan): void => {
    switch (p.kind) {
      case 'checkout':
        return;
      case 'GitRepository':
        out.push(used('GitRepository', p.def, by));
        for (const inc of p.include ?? []) visit(inc.source);
        return;
      case 'OCIRepository':
      case 'Bucket':
        out.push(used(p.kind, p.def, by));
        return;
      case 'ExternalArtifact':
        out.push(used('ArtifactGenerator', p.generator, by));
        for (const input of Object.values(p.inputs)) visit(input);
        return;
    }
  };
  visit(plan);
  return out;
}

const used = (kind: string, def: DefinedAt, by: string): UsedDefinition => ({
  object: `${kind} ${def.namespace}/${def.name}`,
  identity: definitionIdentity(kind, def),
  file: def.file,
  by,
});

/**
 * The definitions each Kustomization's source uses (by `namespace/name` of the Kustomization):
 * what a fetch verdict plans, and, for a GitRepository taken to be this checkout, the one
 * definition nearest to the Kustomization's file (it decides that this checkout is the source).
 */
export function definitionsUsed(
  specs: readonly KustomizationSpec[],
  verdicts: ReadonlyMap<string, SourceVerdict>,
  gitDefinitions: readonly GitRepositoryDef[],
): UsedDefinition[] {
  const out: UsedDefinition[] = [];
  for (const spec of specs) {
    const key = `${spec.namespace}/${spec.name}`;
    const verdict = verdicts.get(key);
    if (verdict?.kind === 'fetch') {
      out.push(...definitionsOf(verdict.source, key));
      continue;
    }
    const ref = spec.sourceRef;
    if (verdict?.kind !== 'checkout' || ref?.kind !== 'GitRepository') continue;
    const namespace = ref.namespace ?? spec.namespace;
    const from = spec.origin.kind === 'file' ? spec.origin.file : '';
    const found = nearest(
      gitDefinitions.filter((d) => d.namespace === namespace && d.name === ref.name),
      from,
    );
    if (found.length === 1) out.push(used('GitRepository', found[0]!, key));
  }
  return out;
}

/**
 * Why each Kustomization cannot be built (by `namespace/name`): a source object its source needs
 * is used by this run with two different definitions. The message names the object, both files
 * and a Kustomization that uses each.
 */
export function conflictingDefinitions(usedDefs: readonly UsedDefinition[]): Map<string, string> {
  const byObject = new Map<string, UsedDefinition[]>();
  for (const u of usedDefs) byObject.set(u.object, [...(byObject.get(u.object) ?? []), u]);
  const problems = new Map<string, string>();
  for (const [object, uses] of byObject) {
    const identities = [...new Set(uses.map((u) => u.identity))];
    if (identities.length < 2) continue;
    // One file and one user per different definition, in the order the run met them.
    const shown = identities.map((id) => uses.find((u) => u.identity === id)!);
    const files = [...new Set(shown.map((u) => u.file))];
    const list = shown.map((u) => `${u.file} (used by Kustomization ${u.by})`).join(' and ');
    const message =
      `${object} is defined differently in ${list}; a cluster holds one ${object.split(' ')[0]} per namespace/name, ` +
      `so one of these Kustomizations would be built from the other's source: keep one definition` +
      (files.length < shown.length ? ' (one file defines it more than once)' : '');
    for (const u of uses) if (!problems.has(u.by)) problems.set(u.by, message);
  }
  return problems;
}

/** `verdicts` with each Kustomization that needs a conflicting definition refused (conflictingDefinitions). */
export function refuseConflicts(
  specs: readonly KustomizationSpec[],
  verdicts: ReadonlyMap<string, SourceVerdict>,
  gitDefinitions: readonly GitRepositoryDef[],
): Map<string, SourceVerdict> {
  const problems = conflictingDefinitions(definitionsUsed(specs, verdicts, gitDefinitions));
  const out = new Map(verdicts);
  for (const [key, problem] of problems) out.set(key, { kind: 'other', problem });
  return out;
}
