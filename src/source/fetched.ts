/**
 * The other GitRepositories of one run (or one build), each fetched once however many
 * Kustomizations name it, and removed at the end; and the settings a Kustomization is built with
 * from such a tree.
 */
import type { GitRepositoryDef } from '../flux/checkout.js';
import type { Settings } from '../settings.js';
import { fetchGitRepository, redactUrl, type Fetched, type FetchOptions } from './git.js';

export class FetchedSources {
  private readonly trees = new Map<string, Promise<Fetched>>();

  constructor(private readonly opts: FetchOptions & { log: (line: string) => void }) {}

  get(repo: GitRepositoryDef): Promise<Fetched> {
    const key = `${repo.namespace}/${repo.name}`;
    let tree = this.trees.get(key);
    if (tree === undefined) {
      this.opts.log(`Fetching GitRepository ${key} (${redactUrl(repo.url)})`);
      tree = fetchGitRepository(repo, this.opts);
      this.trees.set(key, tree);
    }
    return tree;
  }

  async cleanup(): Promise<void> {
    for (const tree of this.trees.values()) await tree.then((t) => t.cleanup()).catch(() => undefined);
  }
}

/** `settings` for a Kustomization built from `tree`: its root, and its revision as the run's. */
export function settingsFor(settings: Settings, tree: Fetched): Settings {
  return { ...settings, root: tree.root, run: { ...settings.run, revision: tree.revision } };
}
