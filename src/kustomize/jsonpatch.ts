import { parseYamlStream } from '../objects/yaml.js';

/** The operations of RFC 6902; kustomize answers any other with "Unexpected kind: <op>". */
const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * The first problem of a parsed JSON 6902 patch (a list of operations), as a phrase naming the
 * operation and field, or undefined when it is well formed (or not a list: then it is a strategic
 * merge patch). Checked before kustomize, which reports a bad `op` as "Unexpected kind: explode"
 * and takes a `path` without its leading "/" as if it had one.
 */
export function jsonPatchProblem(patch: unknown): string | undefined {
  if (!Array.isArray(patch)) return undefined;
  for (const [i, op] of patch.entries()) {
    const at = `operation ${i + 1}`;
    if (typeof op !== 'object' || op === null || Array.isArray(op)) {
      return `${at} must be a map with op and path`;
    }
    const o = op as Record<string, unknown>;
    if (typeof o['op'] !== 'string' || !OPS.has(o['op'])) {
      return `${at}: op ${JSON.stringify(o['op'] ?? null)} is not one of ${[...OPS].join(', ')}`;
    }
    for (const field of ['path', ...(o['op'] === 'move' || o['op'] === 'copy' ? ['from'] : [])]) {
      const pointer = o[field];
      if (typeof pointer !== 'string')
        return `${at} (${o['op']}): ${field} is missing; give a JSON pointer such as /spec/replicas`;
      if (pointer !== '' && !pointer.startsWith('/')) {
        return `${at} (${o['op']}): ${field} ${JSON.stringify(pointer)} must start with "/" (a JSON pointer such as /spec/replicas)`;
      }
    }
    if ((o['op'] === 'add' || o['op'] === 'replace' || o['op'] === 'test') && !('value' in o)) {
      return `${at} (${o['op']}): value is missing`;
    }
  }
  return undefined;
}

/**
 * The first problem of a patch file's text, as a sentence naming `source`, or undefined. kustomize's
 * PatchTransformer reads the text as strategic-merge patches, any number of documents (several
 * `$patch: delete` documents in one file are normal, as in Flux), or as a JSON 6902 list, which it
 * takes from the first document; only that document is checked as operations.
 */
export function patchTextProblem(text: string, source: string): string | undefined {
  const docs = parseYamlStream(text, source);
  const bad = docs.find((d) => d.error !== undefined);
  if (bad?.error !== undefined) return bad.error;
  const first = docs.find((d) => d.value !== null && d.value !== undefined);
  const problem = jsonPatchProblem(first?.value);
  return problem === undefined ? undefined : `${source}: ${problem}`;
}
