/**
 * Which cluster a Kustomization file belongs to in a repository that drives several: Flux's
 * convention is one directory per cluster, `clusters/<name>/`, holding that cluster's
 * Kustomization files (flux bootstrap's `--path=clusters/<name>`). A file below a directory named
 * `clusters` (at any depth; the first one on the path) belongs to the cluster its next directory
 * names; any other file to the one cluster of a repository without that layout (`''`). Pure.
 */
export function clusterOf(file: string): string {
  const parts = file.split('/');
  const at = parts.indexOf('clusters');
  // clusters/<name>/<file>: the name is a directory, not the file itself.
  if (at < 0 || at + 2 >= parts.length) return '';
  return parts[at + 1]!;
}

/**
 * The name of the repository secret that holds a cluster's kubeconfig in the documented workflow,
 * `KUBECONFIG_<NAME>`: GitHub secret names are letters, digits and underscores (and compared
 * without case), so anything else becomes `_`. The one cluster of a plain repository: `KUBECONFIG`.
 */
export function kubeconfigSecretName(cluster: string): string {
  if (cluster === '') return 'KUBECONFIG';
  return `KUBECONFIG_${cluster.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}
