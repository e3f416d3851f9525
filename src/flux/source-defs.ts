/**
 * The Flux source objects a repository defines: GitRepository, OCIRepository and Bucket (source.toolkit.fluxcd.io), and ArtifactGenerator
 * (source.extensions.fluxcd.io), whose artifacts are the ExternalArtifacts Kustomizations name.
 * Only the fields that decide what is fetched are kept; the rest of a definition is Flux's business.
 */
import { parseDuration } from '../util/duration.js';

/** Where a definition was found. */
export interface DefinedAt {
  namespace: string;
  name: string;
  /** The file it is defined in, relative to the root. */
  file: string;
  /** spec.timeout in milliseconds, when set (Flux's default for fetching is 60s). */
  timeoutMs?: number;
}

/** A GitRepository (source.toolkit.fluxcd.io/v1) found in the repository. */
export interface GitRepositoryDef extends DefinedAt {
  url: string;
  /** spec.ref: which revision of the repository it follows. */
  ref?: { branch?: string; tag?: string; semver?: string; name?: string; commit?: string };
  /** spec.ignore: .sourceignore lines added to the artifact's. */
  ignore?: string;
  /** spec.secretRef.name: the Secret with its credentials. */
  secretRef?: string;
  /** spec.include: other GitRepositories' artifacts copied into this one (`fromPath` of theirs to `toPath`). */
  include?: { name: string; fromPath?: string; toPath?: string }[];
}

/** An OCIRepository (source.toolkit.fluxcd.io/v1). */
export interface OCIRepositoryDef extends DefinedAt {
  kind: 'OCIRepository';
  /** spec.url: `oci://host[:port]/repository`. */
  url: string;
  /** spec.ref: digest > semver > tag; Flux's default is tag `latest`. */
  ref?: { tag?: string; semver?: string; semverFilter?: string; digest?: string };
  /** spec.layerSelector: which layer is the content, and whether it is extracted or copied. */
  layerSelector?: { mediaType?: string; operation?: 'extract' | 'copy' };
  /** spec.secretRef.name: a kubernetes.io/dockerconfigjson Secret. */
  secretRef?: string;
  /** spec.provider: generic (default), aws, azure, gcp. */
  provider?: string;
  /** spec.insecure: plain HTTP. */
  insecure?: boolean;
  /** spec.ignore: .sourceignore lines applied to the extracted content. */
  ignore?: string;
  /** spec.verify is set (cosign/notation signatures). */
  verify?: boolean;
}

/** A Bucket (source.toolkit.fluxcd.io/v1). */
export interface BucketDef extends DefinedAt {
  kind: 'Bucket';
  /** spec.provider: generic (default), aws, gcp, azure. */
  provider: string;
  bucketName: string;
  /** spec.endpoint: host[:port], without a scheme. */
  endpoint: string;
  /** spec.insecure: plain HTTP. */
  insecure?: boolean;
  region?: string;
  /** spec.prefix: only keys under it are fetched (and it is kept in the paths). */
  prefix?: string;
  /** spec.secretRef.name: a Secret with accesskey and secretkey. */
  secretRef?: string;
  /** spec.ignore: .sourceignore lines. */
  ignore?: string;
}

/** One copy operation of an ArtifactGenerator artifact. */
export interface CopyOperation {
  /** `@alias/pattern`. */
  from: string;
  /** `@artifact/path`. */
  to: string;
  exclude: string[];
  strategy: 'Overwrite' | 'Merge' | 'Extract';
}

/** A source an ArtifactGenerator reads, by alias. */
export interface GeneratorSource {
  alias: string;
  kind: 'GitRepository' | 'OCIRepository' | 'Bucket' | 'HelmChart' | 'ExternalArtifact';
  name: string;
  namespace: string;
}

/** An ArtifactGenerator (source.extensions.fluxcd.io/v1beta1). */
export interface ArtifactGeneratorDef extends DefinedAt {
  kind: 'ArtifactGenerator';
  sources: GeneratorSource[];
  artifacts: {
    name: string;
    /** `@alias`: the artifact's revision is that source's. */
    revision?: string;
    /** `@alias`: that source's revision is recorded as the origin revision. */
    originRevision?: string;
    copy: CopyOperation[];
  }[];
  /** spec.pathPattern is set (directory discovery), which is not generated here yet. */
  pathPattern?: string;
  /** What makes the definition unusable, naming it and the fields (reported when it is needed). */
  problem?: string;
}

/** Every source definition of one kind, found in the repository. */
export interface SourceDefs {
  oci: OCIRepositoryDef[];
  buckets: BucketDef[];
  generators: ArtifactGeneratorDef[];
}

type Raw = Record<string, unknown>;
const isRaw = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** `{a: b}` without the undefined values. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The OCIRepository, Bucket or ArtifactGenerator a parsed YAML document defines, or undefined;
 * `problem` says what makes an ArtifactGenerator unusable (reported when a Kustomization needs it).
 */
export function sourceDefOf(
  value: unknown,
  file: string,
): OCIRepositoryDef | BucketDef | ArtifactGeneratorDef | undefined {
  if (!isRaw(value) || typeof value['apiVersion'] !== 'string') return undefined;
  const apiVersion = value['apiVersion'];
  const metadata = isRaw(value['metadata']) ? value['metadata'] : {};
  const spec = isRaw(value['spec']) ? value['spec'] : {};
  const name = str(metadata['name']);
  if (name === undefined) return undefined;
  const namespace = str(metadata['namespace']) ?? 'flux-system';
  const secretRef = isRaw(spec['secretRef']) ? str(spec['secretRef']['name']) : undefined;
  const ignore = typeof spec['ignore'] === 'string' ? spec['ignore'] : undefined;
  const timeoutMs = typeof spec['timeout'] === 'string' ? parseDuration(spec['timeout']) : undefined;
  const at = { namespace, name, file, ...(timeoutMs !== undefined && timeoutMs > 0 ? { timeoutMs } : {}) };
  if (apiVersion.startsWith('source.toolkit.fluxcd.io/') && value['kind'] === 'OCIRepository') {
    const url = str(spec['url']);
    if (url === undefined) return undefined;
    const ref = isRaw(spec['ref'])
      ? defined({
          tag: str(spec['ref']['tag']),
          semver: str(spec['ref']['semver']),
          semverFilter: str(spec['ref']['semverFilter']),
          digest: str(spec['ref']['digest']),
        })
      : undefined;
    const ls = isRaw(spec['layerSelector']) ? spec['layerSelector'] : undefined;
    const operation = ls?.['operation'] === 'copy' ? 'copy' : ls?.['operation'] === 'extract' ? 'extract' : undefined;
    return defined({
      kind: 'OCIRepository' as const,
      ...at,
      url,
      ref: ref && Object.keys(ref).length > 0 ? ref : undefined,
      layerSelector: ls
        ? defined<NonNullable<OCIRepositoryDef['layerSelector']>>({ mediaType: str(ls['mediaType']), operation })
        : undefined,
      secretRef,
      provider: str(spec['provider']),
      insecure: spec['insecure'] === true ? true : undefined,
      ignore,
      verify: spec['verify'] !== undefined && spec['verify'] !== null ? true : undefined,
    });
  }
  if (apiVersion.startsWith('source.toolkit.fluxcd.io/') && value['kind'] === 'Bucket') {
    const bucketName = str(spec['bucketName']);
    const endpoint = str(spec['endpoint']);
    if (bucketName === undefined || endpoint === undefined) return undefined;
    return defined({
      kind: 'Bucket' as const,
      ...at,
      provider: str(spec['provider']) ?? 'generic',
      bucketName,
      endpoint,
      insecure: spec['insecure'] === true ? true : undefined,
      region: str(spec['region']),
      prefix: str(spec['prefix']),
      secretRef,
      ignore,
    });
  }
  if (apiVersion.startsWith('source.extensions.fluxcd.io/') && value['kind'] === 'ArtifactGenerator') {
    return generatorOf(spec, at);
  }
  return undefined;
}

const SOURCE_KINDS = ['GitRepository', 'OCIRepository', 'Bucket', 'HelmChart', 'ExternalArtifact'] as const;
const STRATEGIES = ['Overwrite', 'Merge', 'Extract'] as const;
const ALIAS = /^[a-zA-Z0-9_-]+$/;

/** An ArtifactGenerator's spec, read as source-watcher validates it; `problem` names what is wrong. */
function generatorOf(spec: Raw, at: DefinedAt): ArtifactGeneratorDef {
  const where = `ArtifactGenerator ${at.namespace}/${at.name} (${at.file})`;
  const problems: string[] = [];
  const sources: GeneratorSource[] = [];
  const rawSources = Array.isArray(spec['sources']) ? spec['sources'] : [];
  rawSources.forEach((s: unknown, i) => {
    const r = isRaw(s) ? s : {};
    const alias = str(r['alias']);
    const kind = SOURCE_KINDS.find((k) => k === r['kind']);
    const name = str(r['name']);
    if (alias === undefined || !ALIAS.test(alias)) {
      problems.push(`spec.sources[${i}].alias must be letters, digits, "-" or "_"`);
    } else if (sources.some((x) => x.alias === alias)) {
      problems.push(`spec.sources[${i}].alias ${JSON.stringify(alias)} is used twice`);
    }
    if (kind === undefined) problems.push(`spec.sources[${i}].kind must be one of ${SOURCE_KINDS.join(', ')}`);
    if (name === undefined) problems.push(`spec.sources[${i}].name is required`);
    if (alias !== undefined && kind !== undefined && name !== undefined) {
      sources.push({ alias, kind, name, namespace: str(r['namespace']) ?? at.namespace });
    }
  });
  if (rawSources.length === 0) problems.push('spec.sources is empty');
  const artifacts: ArtifactGeneratorDef['artifacts'] = [];
  const rawArtifacts = Array.isArray(spec['artifacts']) ? spec['artifacts'] : [];
  rawArtifacts.forEach((a: unknown, i) => {
    const r = isRaw(a) ? a : {};
    const name = str(r['name']);
    if (name === undefined) problems.push(`spec.artifacts[${i}].name is required`);
    const copy: CopyOperation[] = [];
    const rawCopy = Array.isArray(r['copy']) ? r['copy'] : [];
    if (rawCopy.length === 0) problems.push(`spec.artifacts[${i}].copy is empty`);
    rawCopy.forEach((c: unknown, j) => {
      const o = isRaw(c) ? c : {};
      const from = str(o['from']);
      const to = str(o['to']);
      const at2 = `spec.artifacts[${i}].copy[${j}]`;
      if (from === undefined || !/^@[^/]+\/./.test(from)) problems.push(`${at2}.from must be @alias/path`);
      if (to === undefined || !to.startsWith('@artifact/')) problems.push(`${at2}.to must start with @artifact/`);
      const strategy = o['strategy'] === undefined ? 'Overwrite' : STRATEGIES.find((s) => s === o['strategy']);
      if (strategy === undefined) problems.push(`${at2}.strategy must be one of ${STRATEGIES.join(', ')}`);
      const exclude = Array.isArray(o['exclude']) ? o['exclude'].filter((e): e is string => typeof e === 'string') : [];
      if (from !== undefined && to !== undefined && strategy !== undefined) copy.push({ from, to, exclude, strategy });
    });
    for (const field of ['revision', 'originRevision'] as const) {
      const v = r[field];
      if (v !== undefined && (typeof v !== 'string' || !/^@[a-zA-Z0-9_-]+$/.test(v))) {
        problems.push(`spec.artifacts[${i}].${field} must be @alias`);
      }
    }
    if (name !== undefined) {
      artifacts.push(defined({ name, revision: str(r['revision']), originRevision: str(r['originRevision']), copy }));
    }
  });
  const aliases = new Set(sources.map((s) => s.alias));
  for (const a of artifacts) {
    const used = [
      ...a.copy.map((c) => /^@([^/]+)\//.exec(c.from)?.[1]),
      a.revision?.slice(1),
      a.originRevision?.slice(1),
    ];
    for (const alias of used) {
      if (alias !== undefined && !aliases.has(alias))
        problems.push(`artifact ${a.name} names source alias @${alias}, which spec.sources does not define`);
    }
  }
  const pathPattern = str(spec['pathPattern']);
  return defined({
    kind: 'ArtifactGenerator' as const,
    ...at,
    sources,
    artifacts,
    pathPattern,
    problem: problems.length > 0 ? `${where}: ${problems.join('; ')}` : undefined,
  });
}

/** The GitRepository a parsed YAML document defines, or undefined. */
export function gitRepositoryOf(value: unknown, file: string): GitRepositoryDef | undefined {
  const o = value as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
    spec?: { url?: unknown; ref?: unknown; ignore?: unknown; secretRef?: { name?: unknown }; include?: unknown };
  } | null;
  if (o === null || typeof o !== 'object' || o.kind !== 'GitRepository') return undefined;
  if (typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith('source.toolkit.fluxcd.io/')) return undefined;
  const name = o.metadata?.name;
  const url = o.spec?.url;
  if (typeof name !== 'string' || typeof url !== 'string') return undefined;
  const namespace = typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : 'flux-system';
  const ref = refOf(o.spec?.ref);
  const ignore = typeof o.spec?.ignore === 'string' ? o.spec.ignore : undefined;
  const secretRef = typeof o.spec?.secretRef?.name === 'string' ? o.spec.secretRef.name : undefined;
  const include = includeOf(o.spec?.include);
  const timeout = (o.spec as { timeout?: unknown } | undefined)?.timeout;
  const timeoutMs = typeof timeout === 'string' ? parseDuration(timeout) : undefined;
  return {
    namespace,
    name,
    url,
    file,
    ...(ref ? { ref } : {}),
    ...(ignore !== undefined ? { ignore } : {}),
    ...(secretRef !== undefined ? { secretRef } : {}),
    ...(include.length > 0 ? { include } : {}),
    ...(timeoutMs !== undefined && timeoutMs > 0 ? { timeoutMs } : {}),
  };
}

/** spec.include's entries that name a repository: `{repository: {name}, fromPath?, toPath?}`. */
function includeOf(value: unknown): NonNullable<GitRepositoryDef['include']> {
  if (!Array.isArray(value)) return [];
  const out: NonNullable<GitRepositoryDef['include']> = [];
  for (const e of value as unknown[]) {
    const o = e as { repository?: { name?: unknown }; fromPath?: unknown; toPath?: unknown } | null;
    const name = o?.repository?.name;
    if (typeof name !== 'string' || name === '') continue;
    out.push({
      name,
      ...(typeof o?.fromPath === 'string' && o.fromPath !== '' ? { fromPath: o.fromPath } : {}),
      ...(typeof o?.toPath === 'string' && o.toPath !== '' ? { toPath: o.toPath } : {}),
    });
  }
  return out;
}

/** The string fields of a GitRepository's spec.ref that choose a revision. */
function refOf(value: unknown): GitRepositoryDef['ref'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: NonNullable<GitRepositoryDef['ref']> = {};
  for (const k of ['branch', 'tag', 'semver', 'name', 'commit'] as const) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
