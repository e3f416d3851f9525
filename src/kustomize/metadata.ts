import type { KubeObject } from '../objects/kube.js';

/**
 * Flux's spec.commonMetadata: after the build, every object's labels and annotations get these
 * keys, overwriting same-named ones. Unlike kustomize's commonLabels, selectors and pod templates
 * are left alone. Returns new objects.
 */
export function applyCommonMetadata(
  objects: readonly KubeObject[],
  common: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined,
): KubeObject[] {
  if (!common || (!common.labels && !common.annotations)) return [...objects];
  return objects.map((obj) => {
    const metadata = { ...obj.metadata };
    if (common.labels && Object.keys(common.labels).length > 0)
      metadata.labels = { ...metadata.labels, ...common.labels };
    if (common.annotations && Object.keys(common.annotations).length > 0)
      metadata.annotations = { ...metadata.annotations, ...common.annotations };
    return { ...obj, metadata };
  });
}
