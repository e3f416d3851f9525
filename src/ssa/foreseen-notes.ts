/** The notes of a preview's objects whose Namespace another Kustomization would create (apply.ts). Pure. */

export const kustomizations = (keys: readonly string[]) =>
  `${keys.length > 1 ? 'Kustomizations' : 'Kustomization'} ${keys.join(', ')}`;

/** The note of an object whose Namespace its parent would create (and then apply this Kustomization). */
export const byParent = (namespace: string, keys: readonly string[]) =>
  `its Namespace ${namespace} does not exist yet and would be created first, by ${kustomizations(keys)}, which applies this one`;

/** The note of an object whose Namespace a Kustomization it does not depend on would create. */
export function byOther(namespace: string, keys: readonly string[]): string {
  const one = keys.length > 1 ? 'one of them' : 'that one';
  return (
    `its Namespace ${namespace} does not exist yet and would be created by ${kustomizations(keys)}, ` +
    `which this one does not depend on (under Flux it fails until ${one} has been applied, then succeeds on a retry)`
  );
}
