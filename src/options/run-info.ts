import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { actionSource, repositoryId } from '../objects/names.js';

export interface RunInfo {
  /** The commit being reconciled (GITHUB_SHA), or the revision of the source a Kustomization is built from. */
  revision?: string;
  /**
   * This repository's commit the run is for (GITHUB_SHA; for the CLI, the checkout's HEAD), whatever
   * source a Kustomization is built from: fan-out jobs compare it to know a dependency is done for it.
   */
  commit?: string;
  /** The revision of the source an ExternalArtifact was made from (its generator's originRevision). */
  originRevision?: string;
  /** The source a Kustomization is built from when it is not this checkout (`GitRepository ns/name`). */
  sourceRef?: string;
  /** The root is an artifact as Flux stores it (OCIRepository, Bucket, ExternalArtifact): built with nothing left out. */
  artifact?: boolean;
  /**
   * The repository, as inventories record it (identity.ts repositoryId): `owner/repo` from
   * GITHUB_REPOSITORY (with the host when not github.com); for the CLI the git remote, else
   * `local:<absolute root>`. Path-mode names are derived from it, and an inventory recorded by
   * another source is never taken over.
   */
  source: string;
  /** Where `source` came from, for the log. */
  sourceFrom?: string;
  /**
   * The branch checked out: a pull request's base branch (what its preview is for), else the pushed
   * branch (GITHUB_REF); for the CLI, git's current branch. Unknown when detached or a tag.
   */
  branch?: string;
  /** Link to the workflow run. */
  url?: string;
  /** Lock holder identity: the run URL and job, or host and process for a local run. */
  holder: string;
}

/**
 * The run as GitHub describes it in the environment; outside Actions, this host and process, and
 * the repository given by the caller (the CLI's git remote) or else the source root.
 */
export function runInfo(
  env: NodeJS.ProcessEnv,
  local: { root: string; remote?: string; branch?: string; commit?: string } = { root: process.cwd() },
): RunInfo {
  const pushed = env['GITHUB_REF']?.startsWith('refs/heads/')
    ? env['GITHUB_REF'].slice('refs/heads/'.length)
    : undefined;
  const branch = baseBranch(env) ?? pushed ?? (env['GITHUB_REPOSITORY'] ? undefined : local.branch);
  const server = env['GITHUB_SERVER_URL'] || 'https://github.com';
  const repo = env['GITHUB_REPOSITORY'];
  const source = repo
    ? { source: actionSource(server, repo), sourceFrom: 'GITHUB_REPOSITORY' }
    : local.remote
      ? { source: repositoryId(local.remote), sourceFrom: 'the git remote origin' }
      : { source: `local:${resolve(local.root)}`, sourceFrom: 'the source root, which has no git remote origin' };
  const runId = env['GITHUB_RUN_ID'];
  const url = repo && runId ? `${server}/${repo}/actions/runs/${runId}` : undefined;
  const attempt = env['GITHUB_RUN_ATTEMPT'] ? ` attempt ${env['GITHUB_RUN_ATTEMPT']}` : '';
  const job = env['GITHUB_JOB'] ? ` job ${env['GITHUB_JOB']}` : '';
  const commit = env['GITHUB_SHA'] || (repo ? undefined : local.commit);
  return {
    ...(env['GITHUB_SHA'] ? { revision: env['GITHUB_SHA'] } : {}),
    ...(commit ? { commit } : {}),
    ...source,
    ...(branch ? { branch } : {}),
    ...(url ? { url } : {}),
    holder: url ? `${url}${attempt}${job}` : `${hostname()} pid ${process.pid}`,
  };
}

/** A pull request's base branch (GITHUB_BASE_REF is set only for pull request events). */
function baseBranch(env: NodeJS.ProcessEnv): string | undefined {
  return env['GITHUB_BASE_REF'] || undefined;
}
