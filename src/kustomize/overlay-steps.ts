/**
 * The field readers of the in-process overlay build, in kustomize's order (its kusttarget: a
 * kustomization's resources, then its generators, then its components, then its builtin
 * transformers in the order PatchStrategicMerge, Patch, Namespace, Prefix, Suffix, Labels,
 * Annotations, PatchJson6902, ReplicaCount, ImageTag), and the steps run once on the top
 * kustomization's output (hash suffixes, then name references).
 */
import { imagesReader } from './overlay-images.js';
import { annotationsReader, labelsReader } from './overlay-labels.js';
import { namespaceReader } from './overlay-namespace.js';
import { generatorsReader } from './overlay-generators.js';
import { hashSuffixes } from './overlay-hash.js';
import { prefixReader, suffixReader } from './overlay-names.js';
import { nameReferences } from './overlay-namerefs.js';
import { json6902Reader, patchesReader, smpReader } from './overlay-patches.js';
import { replicasReader } from './overlay-replicas.js';
import type { FieldReader, Finish } from './overlay-types.js';

/** Generators: run after a kustomization's resources, before its components. */
export const GENERATORS: readonly FieldReader[] = [generatorsReader];

/** Transformers: run after a kustomization's components, in this order. */
export const TRANSFORMERS: readonly FieldReader[] = [
  smpReader,
  patchesReader,
  namespaceReader,
  prefixReader,
  suffixReader,
  labelsReader,
  annotationsReader,
  json6902Reader,
  replicasReader,
  imagesReader,
];

/** Run once on the whole output of the kustomization built, in this order. */
export const FINISH: readonly Finish[] = [hashSuffixes, nameReferences];

/** Fields of a kustomization the build itself reads; any field neither here nor in a reader goes to kustomize. */
const OWN_FIELDS = ['apiVersion', 'kind', 'resources', 'components'];

/** Every kustomization field the in-process build knows. */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  ...OWN_FIELDS,
  ...[...GENERATORS, ...TRANSFORMERS].flatMap((r) => r.fields),
]);
