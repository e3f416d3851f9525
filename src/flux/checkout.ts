/**
 * Where each Kustomization's files come from, decided before anything is fetched (pure). Flux builds
 * a Kustomization from the artifact of its spec.sourceRef: here the GitRepository that is this
 * checkout (the `source` input, or the one whose URL and branch are this checkout's) is the
 * workspace; any other source defined in the repository is fetched or made (src/source/); one that
 * cannot be had fails its Kustomization with the reason, and it is never built from the workspace
 * instead.
 */
import { repositoryId, sameSource } from '../objects/names.js';
import type {
  ArtifactGeneratorDef,
  BucketDef,
  DefinedAt,
  GitRepositoryDef,
  OCIRepositoryDef,
  SourceDefs,
} from './source-defs.js';
import type { KustomizationSpec } from './types.js';

/**
 * Where a Kustomization's files come from: this checkout; another GitRepository, fetched with git
 * (src/source/git.ts); an OCIRepository or a Bucket, fetched from its registry or store; or an
 * ExternalArtifact, made here by the ArtifactGenerator that defines it from its own sources.
 */
export type SourcePlan =
  | { kind: 'checkout' }
  | {
      kind: 'GitRepository';
      def: GitRepositoryDef;
      /** The GitRepository is this checkout, fetched only to add its includes. */
      checkout?: true;
      /** Its spec.include, each with where the included repository comes from. */
      include?: IncludePlan[];
    }
  | { kind: 'OCIRepository'; def: OCIRepositoryDef }
  | { kind: 'Bucket'; def: BucketDef }
  | {
      kind: 'ExternalArtifact';
      namespace: string;
      name: string;
      generator: ArtifactGeneratorDef;
      /** Each of the generator's sources, by alias. */
      inputs: Record<string, SourcePlan>;
    };

/** One spec.include entry of a GitRepository, planned. */
export interface IncludePlan {
  /** The included GitRepository's name (same namespace). */
  name: string;
  /** The directory of its artifact copied (`''`: all of it). */
  fromPath: string;
  /** Where it goes in the including artifact (default: the included repository's name). */
  toPath: string;
  /** The included repository: this checkout or fetched. */
  source: SourcePlan;
}

/** A source that is not this checkout. */
export type FetchedPlan = Exclude<SourcePlan, { kind: 'checkout' }>;

/**
 * How a Kustomization's source is had: this checkout; fetched or made (`source`); or not at all
 * (the Kustomization fails, with the reason). `note`: a source taken to be this checkout without proof.
 */
export type SourceVerdict =
  | { kind: 'checkout'; note?: string }
  | { kind: 'fetch'; source: FetchedPlan; notes?: string[] }
  | { kind: 'other'; problem: string };

export interface CheckoutFacts {
  /** This run's repository (Settings.run.source); `local:…` when it has no remote. */
  source: string;
  /**
   * The source that is this checkout, from the `source` input: `namespace/name` of a GitRepository,
   * or `OCIRepository/namespace/name`, `Bucket/namespace/name`, `ExternalArtifact/namespace/name`
   * (checkoutSourceOf).
   */
  explicit?: string;
  /** The branch checked out (a pull request's base branch, which a preview is for), when known. */
  branch?: string;
  definitions: readonly GitRepositoryDef[];
  /** The other source objects the repository defines. */
  others?: SourceDefs;
}

/** What a Flux kind is called in messages: `spec.sourceRef GitRepository flux-system/x`. */
const refName = (at: string, kind: string, key: string) => `${at} ${kind} ${key}`;

/** Whether `spec` is built from this checkout, from another source, or cannot be built; pure. */
export function sourceVerdict(spec: KustomizationSpec, facts: CheckoutFacts): SourceVerdict {
  const ref = spec.sourceRef;
  if (ref === undefined) return { kind: 'checkout' };
  const from = spec.origin.kind === 'file' ? spec.origin.file : '';
  return refVerdict(
    { kind: ref.kind, name: ref.name, namespace: ref.namespace ?? spec.namespace },
    facts,
    'spec.sourceRef',
    [],
    from,
  );
}

/**
 * The definitions of one object that apply to a reference from file `from`: a repository that
 * drives several clusters defines the same source once per cluster directory (clusters/staging,
 * clusters/production), and the one a cluster has is the one beside its Kustomizations. So the
 * definitions whose directory shares the longest leading path with `from` win; identical ones
 * count as one.
 */
export function nearest<T extends DefinedAt>(found: readonly T[], from: string): T[] {
  if (found.length <= 1) return [...found];
  const dirs = (file: string) => file.split('/').slice(0, -1);
  const at = dirs(from);
  const shared = (d: T) => {
    const own = dirs(d.file);
    let n = 0;
    while (n < own.length && n < at.length && own[n] === at[n]) n++;
    return n;
  };
  const best = Math.max(...found.map(shared));
  const closest = found.filter((d) => shared(d) === best);
  const same = (a: T, b: T) => JSON.stringify({ ...a, file: '' }) === JSON.stringify({ ...b, file: '' });
  return closest.every((d) => same(d, closest[0]!)) ? [closest[0]!] : closest;
}

/** The verdict on one source reference; `seen` holds the ExternalArtifacts being made (cycles). */
function refVerdict(
  ref: { kind: string; name: string; namespace: string },
  facts: CheckoutFacts,
  at: string,
  seen: readonly string[],
  from: string,
): SourceVerdict {
  const key = `${ref.namespace}/${ref.name}`;
  const named = refName(at, ref.kind, key);
  const others = facts.others ?? { oci: [], buckets: [], generators: [] };
  /** The one definition of the reference among `defs`, or why there is none to fetch. */
  const one = <T extends DefinedAt>(defs: readonly T[], kind: string): { def: T } | { problem: string } => {
    const found = nearest(
      defs.filter((d) => d.namespace === ref.namespace && d.name === ref.name),
      from,
    );
    if (found.length === 1) return { def: found[0]! };
    if (found.length > 1)
      return { problem: `${named} is defined more than once (${found.map((d) => d.file).join(', ')}): keep one` };
    return {
      problem:
        `${named} is not defined in the repository, so there is nothing to fetch it from (this action reads a ${kind} from the repository's YAML files); building this repository instead is never done` +
        ` unless the source input (--source on the CLI) says it is this checkout: ${kind}/${key}`,
    };
  };
  // The source input names this source: it is this checkout, whatever its kind.
  const mine = facts.explicit === undefined ? undefined : checkoutRef(facts.explicit);
  if (mine !== undefined && mine.kind !== 'GitRepository' && mine.kind === ref.kind && mine.key === key) {
    return { kind: 'checkout' };
  }
  switch (ref.kind) {
    case 'GitRepository':
      return gitVerdict(key, named, facts, from);
    case 'OCIRepository': {
      const d = one(others.oci, 'OCIRepository');
      return 'def' in d
        ? { kind: 'fetch', source: { kind: 'OCIRepository', def: d.def } }
        : { kind: 'other', problem: d.problem };
    }
    case 'Bucket': {
      const d = one(others.buckets, 'Bucket');
      return 'def' in d
        ? { kind: 'fetch', source: { kind: 'Bucket', def: d.def } }
        : { kind: 'other', problem: d.problem };
    }
    case 'ExternalArtifact':
      return artifactVerdict(ref, named, facts, seen, from);
    default:
      return { kind: 'other', problem: `${named}: ${ref.kind} sources are not fetched by this action` };
  }
}

/** An ExternalArtifact: made by the one ArtifactGenerator in its namespace that lists it. */
function artifactVerdict(
  ref: { name: string; namespace: string },
  named: string,
  facts: CheckoutFacts,
  seen: readonly string[],
  from: string,
): SourceVerdict {
  const key = `${ref.namespace}/${ref.name}`;
  const generators = nearest(
    (facts.others?.generators ?? []).filter(
      (g) => g.namespace === ref.namespace && g.artifacts.some((a) => a.name === ref.name),
    ),
    from,
  );
  if (generators.length > 1) {
    return {
      kind: 'other',
      problem: `${named} is made by more than one ArtifactGenerator (${generators.map((g) => `${g.name} in ${g.file}`).join(', ')}): keep one`,
    };
  }
  if (generators.length === 0) {
    const templated = (facts.others?.generators ?? []).find(
      (g) => g.namespace === ref.namespace && g.pathPattern !== undefined,
    );
    const why =
      templated !== undefined
        ? ` (ArtifactGenerator ${templated.namespace}/${templated.name} in ${templated.file} has a spec.pathPattern, whose artifacts this action does not generate yet)`
        : '';
    return {
      kind: 'other',
      problem: `${named} is not made by any ArtifactGenerator defined in the repository${why}; ExternalArtifacts made by other controllers cannot be had here, and building this repository instead is never done`,
    };
  }
  const generator = generators[0]!;
  if (generator.problem !== undefined) return { kind: 'other', problem: `${named}: ${generator.problem}` };
  if (generator.pathPattern !== undefined) {
    return {
      kind: 'other',
      problem: `${named}: ArtifactGenerator ${generator.namespace}/${generator.name} (${generator.file}) has a spec.pathPattern, which this action does not generate yet`,
    };
  }
  if (seen.includes(key)) {
    return { kind: 'other', problem: `${named} is made from itself (sources ${[...seen, key].join(' → ')})` };
  }
  const inputs: Record<string, SourcePlan> = {};
  const notes: string[] = [];
  for (const s of generator.sources) {
    const at = `ArtifactGenerator ${generator.namespace}/${generator.name} (${generator.file}) source @${s.alias}:`;
    const v = refVerdict(s, facts, at, [...seen, key], generator.file);
    if (v.kind === 'other') return { kind: 'other', problem: `${named} cannot be made: ${v.problem}` };
    if (v.kind === 'checkout') {
      inputs[s.alias] = { kind: 'checkout' };
      if (v.note !== undefined) notes.push(v.note);
    } else {
      inputs[s.alias] = v.source;
      notes.push(...(v.notes ?? []));
    }
  }
  return {
    kind: 'fetch',
    source: { kind: 'ExternalArtifact', namespace: ref.namespace, name: ref.name, generator, inputs },
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/**
 * A GitRepository: this checkout, another repository or revision (fetched), or not to be had; with
 * spec.include, the included GitRepositories are planned too (recursively), and even this checkout
 * is then "fetched": copied, with what it includes added, as source-controller composes the artifact.
 */
function gitVerdict(
  key: string,
  named: string,
  facts: CheckoutFacts,
  from: string,
  seen: readonly string[] = [],
): SourceVerdict {
  const base = gitBase(key, named, facts, from);
  if (base.verdict.kind === 'other') return base.verdict;
  const def =
    base.verdict.kind === 'fetch' && base.verdict.source.kind === 'GitRepository' ? base.verdict.source.def : base.def;
  if (def?.include === undefined || def.include.length === 0) return base.verdict;
  if (seen.includes(key)) {
    return { kind: 'other', problem: `${named} includes itself (spec.include ${[...seen, key].join(' → ')})` };
  }
  const include: IncludePlan[] = [];
  const notes = base.verdict.kind === 'checkout' && base.verdict.note !== undefined ? [base.verdict.note] : [];
  for (const inc of def.include) {
    const incKey = `${def.namespace}/${inc.name}`;
    const at = `GitRepository ${key} (${def.file}) spec.include GitRepository ${incKey}`;
    const defined = facts.definitions.some((d) => `${d.namespace}/${d.name}` === incKey);
    const v: SourceVerdict = defined
      ? gitVerdict(incKey, at, facts, def.file, [...seen, key])
      : { kind: 'other', problem: `${at} is not defined in the repository, so there is nothing to include` };
    if (v.kind === 'other') return { kind: 'other', problem: `${named} cannot be had: ${v.problem}` };
    if (v.kind === 'checkout' && v.note !== undefined) notes.push(v.note);
    if (v.kind === 'fetch') notes.push(...(v.notes ?? []));
    include.push({
      name: inc.name,
      fromPath: inc.fromPath ?? '',
      toPath: inc.toPath ?? inc.name,
      source: v.kind === 'checkout' ? { kind: 'checkout' } : v.source,
    });
  }
  return {
    kind: 'fetch',
    source: {
      kind: 'GitRepository',
      def,
      include,
      ...(base.verdict.kind === 'checkout' ? { checkout: true as const } : {}),
    },
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/** gitVerdict without spec.include, and the definition of the GitRepository when there is one. */
function gitBase(
  key: string,
  named: string,
  facts: CheckoutFacts,
  from: string,
): { verdict: SourceVerdict; def?: GitRepositoryDef } {
  const defs = nearest(
    facts.definitions.filter((d) => `${d.namespace}/${d.name}` === key),
    from,
  );
  const one = defs.length === 1 ? defs[0] : undefined;
  const checkout = (note?: string) => ({
    verdict: { kind: 'checkout' as const, ...(note !== undefined ? { note } : {}) },
    ...(one ? { def: one } : {}),
  });
  /** Another repository or revision: fetched when it can be, never this checkout instead. */
  const fetched = (d: GitRepositoryDef, why: string): { verdict: SourceVerdict } => {
    const refused = unfetchable(d);
    return {
      verdict:
        refused === undefined
          ? { kind: 'fetch', source: { kind: 'GitRepository', def: d } }
          : {
              kind: 'other',
              problem: `${named} (${d.file}) ${why}, and ${refused}; building this repository instead is never done`,
            },
    };
  };
  if (facts.explicit !== undefined) {
    if (facts.explicit === key) return checkout();
    if (one)
      return fetched(one, `is not this checkout (the source input, --source on the CLI, names ${facts.explicit})`);
    return {
      verdict: {
        kind: 'other',
        problem:
          `${named} is not this checkout (the source input, --source on the CLI, names ${facts.explicit}) and ` +
          `${defs.length === 0 ? 'is not defined in the repository' : 'is defined more than once'}, so it cannot be fetched; ` +
          'building this repository instead is never done',
      },
    };
  }
  if (defs.length === 0) {
    return checkout(
      `${named} is not defined in the repository: taken to be this checkout (set the source input, --source on the CLI, to ${key} to say so)`,
    );
  }
  if (facts.source.startsWith('local:')) {
    // Nothing to compare the URL with: only Flux's own GitRepository (flux bootstrap's
    // flux-system/flux-system) is taken to be the checkout; any other is another repository.
    if (key === 'flux-system/flux-system' || defs.length > 1) {
      return checkout(
        `${named} (${defs[0]!.url}) taken to be this checkout: the checkout has no git remote to compare with`,
      );
    }
    return fetched(
      defs[0]!,
      'is not flux-system/flux-system and the checkout has no git remote to compare its URL with, so it is taken to be another repository (set the source input, --source on the CLI, if it is this checkout)',
    );
  }
  if (defs.length > 1) {
    return {
      verdict: {
        kind: 'other',
        problem: `${named} is defined more than once (${defs.map((d) => d.file).join(', ')}): keep one`,
      },
    };
  }
  const d = one!;
  if (!sameSource(repositoryId(d.url), facts.source)) {
    return fetched(d, `points at ${d.url}, not at this repository (${facts.source})`);
  }
  // This repository, but perhaps another revision of it: a tenant's branch, a tag, a commit.
  const revision = d.ref ?? {};
  const pinned = (['commit', 'name', 'semver', 'tag'] as const).find((k) => revision[k] !== undefined);
  const checkedOut = facts.branch === undefined ? 'this checkout' : `this checkout (branch ${facts.branch})`;
  if (pinned !== undefined) {
    return fetched(d, `follows ${pinned} ${JSON.stringify(revision[pinned])} of this repository, not ${checkedOut}`);
  }
  if (revision.branch !== undefined && facts.branch !== undefined && revision.branch !== facts.branch) {
    return fetched(d, `follows branch ${JSON.stringify(revision.branch)} of this repository, not ${checkedOut}`);
  }
  if (revision.branch !== undefined && facts.branch === undefined) {
    return checkout(
      `${named} (branch ${revision.branch}) taken to be this checkout: the branch checked out is not known`,
    );
  }
  return checkout();
}

/** Why `d` cannot be fetched here (a field not supported yet), or undefined. */
export function unfetchable(d: GitRepositoryDef): string | undefined {
  if (!/^(?:https?|file):\/\//.test(d.url)) {
    return `only https:// (and file://) URLs are fetched: ${d.url} needs SSH keys, which this action does not take yet`;
  }
  return undefined;
}

/** The kinds the source input may name; GitRepository is meant when no kind is given. */
export const CHECKOUT_KINDS = ['GitRepository', 'OCIRepository', 'Bucket', 'ExternalArtifact'] as const;

/**
 * The source input in Settings' form: `[KIND/][NAMESPACE/]NAME` (namespace flux-system when left out),
 * a GitRepository as `namespace/name` (the form it has always had), another kind as `Kind/namespace/name`.
 */
export function checkoutSourceOf(text: string): string {
  const parts = text.split('/');
  const kind = (CHECKOUT_KINDS as readonly string[]).includes(parts[0]!) ? parts.shift()! : 'GitRepository';
  const [a, b] = parts.length === 1 ? ['flux-system', parts[0]!] : parts;
  const dns = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
  if (parts.length > 2 || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(a!) || !dns.test(b ?? '')) {
    throw new Error(
      `source must be the source that is this checkout as [KIND/]NAMESPACE/NAME, KIND one of ${CHECKOUT_KINDS.join(', ')} (GitRepository when left out), e.g. flux-system/flux-system or OCIRepository/flux-system/flux-system; got "${text}"`,
    );
  }
  return kind === 'GitRepository' ? `${a}/${b}` : `${kind}/${a}/${b}`;
}

/** The kind and `namespace/name` of the source Settings.source (checkoutSourceOf's form) names. */
export function checkoutRef(explicit: string): { kind: string; key: string } {
  const parts = explicit.split('/');
  return parts.length === 3
    ? { kind: parts[0]!, key: `${parts[1]}/${parts[2]}` }
    : { kind: 'GitRepository', key: explicit };
}
