/**
 * The Node.js the action and the CLI need (pure; no imports, so that it loads on any Node): the
 * action runs on `node24` (action.yml), and the code uses what Node 24 has (`glob` of
 * node:fs/promises, the compile cache). On an older Node the entry points say so in one line
 * instead of dying on a missing export.
 */
export const MIN_NODE_MAJOR = 24;

/** Why `version` (process.versions.node, `20.20.2`) cannot run this, or undefined when it can. */
export function nodeVersionProblem(version: string, min = MIN_NODE_MAJOR): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? NaN);
  if (Number.isInteger(major) && major >= min) return undefined;
  return (
    `kustomize-reconcile needs Node.js ${min} or newer; this is Node.js ${version}. ` +
    `Run it with Node ${min} (the action's runs.using is node${min}; npx uses the node first on PATH)`
  );
}
