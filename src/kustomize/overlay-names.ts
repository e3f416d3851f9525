/**
 * kustomize's prefix and suffix transformers (`namePrefix`, `nameSuffix`, and Flux's spec fields
 * of the same names at the top) for the in-process overlay build: the prefix or suffix joins
 * metadata.name of every object but a CustomResourceDefinition, an APIService of
 * apiregistration.k8s.io and a Namespace (kustomize's skip list, by kind in any group), and the
 * name before it is kept for the name references fixed at the top (overlay-namerefs.ts).
 */
import { groupVersion } from './legacy-order.js';
import type { Built, FieldReader, Step } from './overlay-types.js';

/** The objects kustomize's prefix and suffix transformers leave alone. */
function skipped(b: Built): boolean {
  const { kind } = b.obj;
  if (kind === 'CustomResourceDefinition' || kind === 'Namespace') return true;
  return kind === 'APIService' && groupVersion(b.obj.apiVersion)[0] === 'apiregistration.k8s.io';
}

/** A step that renames every object kustomize renames by `rename`. */
function renaming(rename: (name: string) => string): Step {
  return (built) => {
    for (const b of built) {
      if (skipped(b)) continue;
      b.previousNames = [...(b.previousNames ?? []), b.obj.metadata.name];
      b.obj.metadata.name = rename(b.obj.metadata.name);
    }
    return built;
  };
}

/** A non-empty string field (an empty one leaves the transformer out, whose answer is left to kustomize). */
function text(k: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const v = k[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `namePrefix`: prepended to metadata.name. */
export const prefixReader: FieldReader = {
  fields: ['namePrefix'],
  read(k) {
    const prefix = text(k, 'namePrefix');
    return prefix === undefined ? undefined : renaming((name) => `${prefix}${name}`);
  },
};

/** `nameSuffix`: appended to metadata.name. */
export const suffixReader: FieldReader = {
  fields: ['nameSuffix'],
  read(k) {
    const suffix = text(k, 'nameSuffix');
    return suffix === undefined ? undefined : renaming((name) => `${name}${suffix}`);
  },
};
