/**
 * Running kustomize on the prepared copy and reading its output: the environment it gets, the
 * bounds it runs within, what its failures mean (named relative to the source root, never the
 * temporary copy), and each object's source file from its origin annotation.
 */
import { dirname, join, normalize, sep } from 'node:path';
import { objectKey, parseManifests, type KubeObject } from '../objects/kube.js';
import { UserError } from '../util/user-error.js';
import { ORIGIN_ANNOTATION, takeOrigin } from './merge.js';
import { toPosix } from './paths.js';
import { restoreOriginPath } from './references.js';
import { cutStderr, formatBytes, runBounded, type ProcessLimits, type RunResult } from './run.js';

const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

/**
 * The only variables kustomize (and git, which it runs for remote bases) gets from the action's
 * environment: where programs, home, temporary and config directories are, locale, proxies and CA
 * bundles. Never the inputs (`INPUT_*`: the kubeconfig, SOPS keys, secret-vars, the GitHub token),
 * the runner's tokens (`ACTIONS_*`) or cloud credentials: kustomize releases before v5 fill a bare
 * key of a generator's env file from the environment, which would put them into a ConfigMap.
 */
const KUSTOMIZE_ENV =
  /^(?:PATH|PATHEXT|HOME|USERPROFILE|HOMEDRIVE|HOMEPATH|TMPDIR|TMP|TEMP|LANG|LANGUAGE|LC_[A-Z]+|TZ|XDG_CONFIG_HOME|XDG_CACHE_HOME|KUSTOMIZE_PLUGIN_HOME|SYSTEMROOT|SYSTEMDRIVE|WINDIR|COMSPEC|APPDATA|LOCALAPPDATA|PROGRAMDATA|HTTPS?_PROXY|NO_PROXY|ALL_PROXY|SSL_CERT_FILE|SSL_CERT_DIR)$/i;
/** With remote bases allowed, git's own settings as well (credentials, SSH command, ssh-agent). */
const GIT_ENV = /^(?:GIT_[A-Z0-9_]+|SSH_AUTH_SOCK)$/i;

/** The environment kustomize runs with: `env` reduced to KUSTOMIZE_ENV (and GIT_ENV with remote bases). */
export function kustomizeEnv(env: NodeJS.ProcessEnv, allowRemoteBases: boolean): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (KUSTOMIZE_ENV.test(name) || (allowRemoteBases && GIT_ENV.test(name)))) {
      out[name] = value;
    }
  }
  return out;
}

export async function runKustomize(
  bin: string,
  kdir: string,
  copyRoot: string,
  env: NodeJS.ProcessEnv,
  limits: ProcessLimits,
  renamed: ReadonlyMap<string, string>,
): Promise<string> {
  const args = ['build', kdir, '--load-restrictor=LoadRestrictionsRootOnly'];
  // Messages name files in the temporary copy: show them relative to the source root instead, and
  // the copies of files from outside a kustomization's directory as the entries that named them.
  const shorten = (text: string) => {
    let out = text;
    for (const [written, original] of renamed) out = out.replaceAll(written, original);
    return out.replaceAll(`${copyRoot}${sep}`, '').replaceAll(copyRoot, '.').replaceAll(dirname(copyRoot), '<build>');
  };
  const what = `kustomize build ${shorten(kdir)}`;
  let r: RunResult;
  try {
    r = await runBounded(bin, args, { env, limits, maxOutputBytes: MAX_OUTPUT_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new UserError(
        `kustomize binary "${bin}" not found: install kustomize v5 or set the kustomize-path input / --kustomize-path flag`,
        { cause: err },
      );
    }
    throw new Error(`${what} could not start: ${(err as Error).message}`, { cause: err });
  }
  // A tree that builds too long, too big or not at all is the tree's to fix: running again gives the same.
  if (r.stopped === 'timeout') throw new UserError(`${what} ${timeoutAdvice(limits.timeoutMs)}`);
  if (r.stopped === 'memory') {
    throw new UserError(
      `${what} used more than ${formatBytes(limits.memoryBytes)} of memory and was stopped (YAML aliases that expand without end, or a huge generator, do this); if the tree really needs more, raise the build-memory-limit input / --build-memory-limit`,
    );
  }
  if (r.stopped === 'output') {
    throw new UserError(`${what} printed more than ${formatBytes(MAX_OUTPUT_BYTES)} and was stopped`);
  }
  if (r.code !== 0) {
    const dropped = r.stderrDropped > 0 ? `\n(${r.stderrDropped} more bytes of output left out)` : '';
    const detail = cutStderr(shorten(r.stderr)) || `exited with ${r.signal ? `signal ${r.signal}` : `code ${r.code}`}`;
    const failed = `${what} failed: ${detail}${dropped}`;
    throw r.signal ? new Error(failed) : new UserError(failed);
  }
  return r.stdout;
}

/**
 * What a build stopped by build-timeout says after its command: the bound it ran into, and what to
 * set when a big tree needs longer (the action's input, the CLI's flag), with a value twice the bound.
 */
export function timeoutAdvice(timeoutMs: number): string {
  const longer = formatMs(timeoutMs * 2);
  return (
    `did not finish within ${formatMs(timeoutMs)} and was stopped; if the tree is big and needs longer, ` +
    `set the action's input build-timeout (build-timeout: ${longer}) or the CLI's flag --build-timeout ${longer}; ` +
    'a build that never finishes (a remote base that does not answer, a plugin that waits) needs its tree fixed instead'
  );
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.max(1, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}` : `${s}s`;
}

/**
 * The objects of kustomize's output `text` for the directory `relPath`, and each one's source file
 * relative to the root by objectKey: origins name the copies of files from outside a
 * kustomization's directory by the entries that named them (`renamed`), and the annotation is
 * stripped when it was switched on only for this (`addedOrigin`).
 */
export function readOutput(
  text: string,
  relPath: string,
  renamed: ReadonlyMap<string, string>,
  addedOrigin: boolean,
): { objects: KubeObject[]; origins: Map<string, string> } {
  const objects = parseManifests(text, `kustomize build ${relPath}`);
  const origins = new Map<string, string>();
  for (const obj of objects) {
    const annotations = obj.metadata.annotations;
    const raw = annotations?.[ORIGIN_ANNOTATION];
    if (annotations !== undefined && raw !== undefined && renamed.size > 0) {
      annotations[ORIGIN_ANNOTATION] = restoreOriginPath(raw, renamed);
    }
    const origin = takeOrigin(obj, addedOrigin);
    if (origin !== undefined) origins.set(objectKey(obj), toPosix(normalize(join(relPath, origin))));
  }
  return { objects, origins };
}
