/**
 * The base commit of an untrusted run, found in git (the edge): the commit event-trust.ts chose, or
 * its merge-base (HEAD's without one) with the default branch, fetched from the checkout's `origin`
 * when the checkout lacks it. The remote is the checkout's own configuration: git never takes a
 * `.git` from a tree, so the change under review cannot choose where the fetch goes; submodules
 * (whose URLs a tree's .gitmodules names) are never fetched.
 */
import { gitBytes, isCommitName } from './base-sources.js';

export type BaseCommit = { commit: string } | { problem: string };

const git = async (root: string, args: string[]): Promise<string> =>
  (await gitBytes(root, args)).toString('utf8').trim();

/** A branch name git and this code agree on (the payload's default branch, checked all the same). */
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]+(?<![./])$/;

async function has(root: string, name: string): Promise<boolean> {
  try {
    await git(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${name}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

const shallow = async (root: string) =>
  (await git(root, ['rev-parse', '--is-shallow-repository']).catch(() => 'false')) === 'true';

/** The ref of `branch` this checkout has (origin's, else the local branch), fetching origin's when neither is there. */
async function branchTip(root: string, branch: string): Promise<string> {
  const remote = `refs/remotes/origin/${branch}`;
  if (await has(root, remote)) return remote;
  if (await has(root, `refs/heads/${branch}`)) return `refs/heads/${branch}`;
  await git(root, [
    'fetch',
    '--no-tags',
    '--no-recurse-submodules',
    '--quiet',
    'origin',
    `+refs/heads/${branch}:${remote}`,
  ]);
  return remote;
}

/** `commit` (a name event-trust.ts or the input gave), fetched by name from origin when missing. */
async function present(root: string, commit: string): Promise<void> {
  if (await has(root, commit)) return;
  if (!/^[0-9a-f]{40}$/.test(commit)) return; // only a full commit id can be fetched by name; baseScopes says why
  const depth = (await shallow(root)) ? ['--depth=1'] : [];
  await git(root, ['fetch', '--no-tags', '--no-recurse-submodules', '--quiet', ...depth, 'origin', commit]).catch(
    () => undefined,
  );
}

/** The base commit of `untrusted` under `root`, or why there is none. */
export async function resolveBase(root: string, untrusted: { base?: string; onBranch?: string }): Promise<BaseCommit> {
  const { base, onBranch } = untrusted;
  if (base !== undefined && !isCommitName(base)) {
    return { problem: `the base ${JSON.stringify(base)} is not a commit name` };
  }
  if (onBranch === undefined) {
    if (base === undefined) return { problem: 'the base commit is not known (input base, or the event, names it)' };
    await present(root, base);
    return { commit: base };
  }
  if (!BRANCH.test(onBranch)) return { problem: `the default branch ${JSON.stringify(onBranch)} is not a branch name` };
  const from = base ?? 'HEAD';
  try {
    if (base !== undefined) await present(root, base);
    const tip = await branchTip(root, onBranch);
    const mergeBase = async () => git(root, ['merge-base', '--end-of-options', from, tip]);
    try {
      return { commit: await mergeBase() };
    } catch (err) {
      // A shallow checkout has no common history to find: fetch the rest of it, then ask again.
      if (!(await shallow(root))) throw err;
      await git(root, [
        'fetch',
        '--no-tags',
        '--no-recurse-submodules',
        '--quiet',
        '--unshallow',
        'origin',
        `+refs/heads/${onBranch}:refs/remotes/origin/${onBranch}`,
      ]);
      return { commit: await mergeBase() };
    }
  } catch (err) {
    return {
      problem: `the base (the merge-base of ${from === 'HEAD' ? 'the checked-out commit' : from} with the default branch ${onBranch}) could not be found: ${(err as Error).message || 'no common history'}`,
    };
  }
}
