/**
 * What the documents of a Kustomization file that are not Flux Kustomizations are, for the loader's
 * notes (pure): a short name of each object, and the objects known to generate Kustomizations in the
 * cluster that this action does not expand: the Flux Operator's ResourceSet (its resources, templated
 * over its inputs) and FluxInstance (spec.sync: the cluster's own source and Kustomization).
 */
import { FLUX_GROUP } from '../objects/flux.js';
import { isMapping } from './fields.js';
import type { OtherDocument } from './parse.js';

const OPERATOR_GROUP = 'fluxcd.controlplane.io';

/** A generator of Kustomizations found in a file. */
export interface Generator {
  /** `ResourceSet flux-system/apps`. */
  what: string;
  file: string;
  /** The Kustomizations it generates as written (`namespace/name`, names may hold `<< inputs.x >>`), each with a detail. */
  generates: { key: string; detail?: string }[];
  /** It generates Kustomizations whose names cannot be read here (a resourcesTemplate). */
  unnamed?: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function metadataOf(value: Record<string, unknown>): { name?: string; namespace?: string } {
  const m = isMapping(value.metadata) ? value.metadata : {};
  const name = text(m.name);
  const namespace = text(m.namespace);
  return { ...(name !== undefined ? { name } : {}), ...(namespace !== undefined ? { namespace } : {}) };
}

/** `Kind namespace/name` (or `Kind name`) of a document, or undefined for one that is no Kubernetes object. */
export function objectName(doc: OtherDocument): string | undefined {
  const v = doc.value;
  if (!isMapping(v) || typeof v.kind !== 'string' || v.kind === '') return undefined;
  const { name, namespace } = metadataOf(v);
  const id = name === undefined ? '<no name>' : namespace === undefined ? name : `${namespace}/${name}`;
  // kustomize's own kustomization.yaml (kustomize.config.k8s.io) is also kind Kustomization.
  const kind =
    v.kind === 'Kustomization' && typeof v.apiVersion === 'string' && !v.apiVersion.startsWith(`${FLUX_GROUP}/`)
      ? `${v.apiVersion} Kustomization`
      : v.kind;
  return `${kind} ${id}`;
}

const isOperator = (v: Record<string, unknown>, kind: string) =>
  v.kind === kind && typeof v.apiVersion === 'string' && v.apiVersion.startsWith(`${OPERATOR_GROUP}/`);

const isFluxKustomization = (v: unknown): v is Record<string, unknown> =>
  isMapping(v) &&
  v.kind === 'Kustomization' &&
  typeof v.apiVersion === 'string' &&
  v.apiVersion.startsWith(`${FLUX_GROUP}/`);

/** The generator of Kustomizations a document is, or undefined. */
export function generatorOf(doc: OtherDocument, file: string): Generator | undefined {
  const v = doc.value;
  if (!isMapping(v)) return undefined;
  const { name = '<no name>', namespace } = metadataOf(v);
  const id = namespace === undefined ? name : `${namespace}/${name}`;
  const spec = isMapping(v.spec) ? v.spec : {};
  if (isOperator(v, 'ResourceSet')) {
    const resources = Array.isArray(spec.resources) ? spec.resources : [];
    const generates = resources.filter(isFluxKustomization).map((r) => {
      const m = metadataOf(r);
      const ns = m.namespace ?? namespace;
      const n = m.name ?? '<no name>';
      return { key: ns === undefined ? n : `${ns}/${n}` };
    });
    const template = text(spec.resourcesTemplate);
    const templated =
      template !== undefined && /kind:\s*["']?Kustomization\b/.test(template) && template.includes(FLUX_GROUP);
    if (generates.length === 0 && !templated) return undefined;
    return {
      what: `ResourceSet ${id}`,
      file,
      generates,
      ...(templated ? { unnamed: 'the ones of its spec.resourcesTemplate' } : {}),
    };
  }
  if (isOperator(v, 'FluxInstance') && isMapping(spec.sync)) {
    // The Flux Operator names the sync's source and Kustomization spec.sync.name, else after the namespace.
    const ns = namespace ?? 'flux-system';
    const sync = spec.sync;
    const details = [text(sync.kind), text(sync.path) && `path ${String(sync.path)}`].filter(Boolean).join(', ');
    return {
      what: `FluxInstance ${id}`,
      file,
      generates: [
        { key: `${ns}/${text(sync.name) ?? ns}`, ...(details !== '' ? { detail: `spec.sync: ${details}` } : {}) },
      ],
    };
  }
  return undefined;
}

/**
 * The note on a generator, naming the Kustomizations it generates that are not among `loaded`
 * (`namespace/name` of the Kustomizations this run has); undefined when it generates none else.
 */
export function generatorNote(g: Generator, loaded: ReadonlySet<string>): string | undefined {
  const unseen = g.generates.filter((k) => !loaded.has(k.key));
  if (unseen.length === 0 && g.unnamed === undefined) return undefined;
  const templated = (key: string) => (key.includes('<<') ? ' (once per input)' : '');
  const names = [
    ...unseen.map((k) => `${k.key}${k.detail !== undefined ? ` (${k.detail})` : templated(k.key)}`),
    ...(g.unnamed !== undefined ? [g.unnamed] : []),
  ];
  return (
    `${g.what} in ${g.file} generates Kustomizations that this run does not see: ${names.join(', ')}; ` +
    'this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)'
  );
}
