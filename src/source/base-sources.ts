/**
 * The source definitions on the base commit of a change (the edge: git), for the trust rule
 * (trust.ts): every YAML file of the base commit under the root, read from git's object store (the
 * working tree is the change's), bounded as the scan of the working tree is.
 */
import { execFile } from 'node:child_process';
import { trackChild } from '../util/lifecycle.js';
import { MAX_BYTES, MAX_FILES, SKIP, documentValues, sourcesIn } from '../flux/source-files.js';
import { FLUX_GROUP } from '../objects/flux.js';
import { DEFAULT_NAMESPACE } from '../flux/parse.js';
import { credentialScope, substituteScope, type TreeTrust } from './trust.js';
import { secretUseScopesIn } from './secret-uses.js';

type BaseScopes = Extract<TreeTrust, { trusted: false }>['base'];

export function gitBytes(root: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      {
        cwd: root,
        encoding: 'buffer',
        maxBuffer: 256 << 20,
        timeout: 60_000,
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
      },
      (err, stdout, stderr) => {
        if (err) reject(new Error(stderr.toString('utf8').trim().split('\n').pop() || err.message));
        else resolve(stdout);
      },
    );
    trackChild(child, false);
    if (input !== undefined) child.stdin?.end(input);
  });
}

const git = async (root: string, args: string[]): Promise<string> => (await gitBytes(root, args)).toString('utf8');

/** Whether `name` may be passed to git as a commit (a revision's characters; never an option). */
export function isCommitName(name: string): boolean {
  return /^[0-9a-zA-Z._/@^~-]+$/.test(name) && !name.startsWith('-');
}

/**
 * The substituteScope of each Secret a Flux Kustomization of `text` reads through
 * postBuild.substituteFrom (its namespace defaulting to flux-system, as the parser's does).
 */
export function substituteSecretsIn(text: string): string[] {
  if (!/kind:\s*["']?Kustomization\b/.test(text) || !text.includes('substituteFrom')) return [];
  const out: string[] = [];
  for (const v of documentValues(text)) {
    const o = (typeof v === 'object' && v !== null ? v : {}) as {
      apiVersion?: unknown;
      kind?: unknown;
      metadata?: { name?: unknown; namespace?: unknown };
      spec?: { postBuild?: { substituteFrom?: unknown } };
    };
    if (o.kind !== 'Kustomization' || typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith(FLUX_GROUP))
      continue;
    const name = o.metadata?.name;
    const namespace = typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : DEFAULT_NAMESPACE;
    const from = o.spec?.postBuild?.substituteFrom;
    if (typeof name !== 'string' || !Array.isArray(from)) continue;
    for (const entry of from as unknown[]) {
      const ref = (typeof entry === 'object' && entry !== null ? entry : {}) as { kind?: unknown; name?: unknown };
      if (ref.kind === 'Secret' && typeof ref.name === 'string') out.push(substituteScope(namespace, name, ref.name));
    }
  }
  return out;
}

/** The credential scopes of the source definitions at commit `base` under `root`, or why they cannot be read. */
export async function baseScopes(root: string, base: string | undefined): Promise<BaseScopes> {
  if (base === undefined || /^0+$/.test(base)) {
    return { problem: 'the base commit is not known (input base, or the pull request event, names it)' };
  }
  if (!isCommitName(base)) {
    return { problem: `the base ${JSON.stringify(base)} is not a commit name` };
  }
  try {
    await git(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`]);
  } catch {
    return {
      problem: `the base commit ${base} is not in this checkout (actions/checkout with fetch-depth: 0 brings it)`,
    };
  }
  try {
    const listing = await git(root, [
      'ls-tree',
      '-r',
      '-z',
      '--full-name',
      '--long',
      '--end-of-options',
      base,
      '--',
      '.',
    ]);
    const files: { path: string; oid: string }[] = [];
    for (const entry of listing.split('\0')) {
      // <mode> SP <type> SP <object> SP+ <size> TAB <path>
      const m = /^\d+ blob ([0-9a-f]+) +(\d+|-)\t(.+)$/s.exec(entry);
      if (
        !m ||
        !/\.ya?ml$/i.test(m[3]!) ||
        m[3]!
          .split('/')
          .slice(0, -1)
          .some((d) => SKIP.has(d))
      )
        continue;
      if (m[2] === '-' || Number(m[2]) > MAX_BYTES) continue;
      files.push({ oid: m[1]!, path: m[3]! });
      if (files.length >= MAX_FILES) break;
    }
    const scopes = new Set<string>();
    if (files.length === 0) return scopes;
    const out = await gitBytes(root, ['cat-file', '--batch'], files.map((f) => f.oid).join('\n') + '\n');
    let at = 0;
    for (const f of files) {
      const nl = out.indexOf(0x0a, at);
      const size = Number(out.subarray(at, nl).toString('latin1').split(' ')[2]);
      if (nl < 0 || !Number.isInteger(size)) break;
      const text = out.subarray(nl + 1, nl + 1 + size).toString('utf8');
      at = nl + 1 + size + 1;
      // The file is no part of a scope (a definition may move between files): its repository path will do.
      const found = sourcesIn(text, f.path);
      for (const g of found.git) scopes.add(credentialScope({ kind: 'GitRepository', ...g }));
      for (const o of found.others.oci) scopes.add(credentialScope(o));
      for (const b of found.others.buckets) scopes.add(credentialScope(b));
      // Every Secret and secret its Kustomizations use (secret-uses.ts), substituteFrom among them.
      for (const s of secretUseScopesIn(text)) scopes.add(s);
    }
    return scopes;
  } catch (err) {
    return { problem: `the base commit ${base} could not be read: ${(err as Error).message}` };
  }
}
