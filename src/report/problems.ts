/**
 * Problems tied to objects, for annotations on the files they came from (check runs). Pure: the
 * caller reads the files; this finds where in a file an object is defined.
 */
import { LineCounter, parseAllDocuments } from 'yaml';

export interface Problem {
  /** `Kind/namespace/name`. */
  subject: string;
  message: string;
  /** The source file, relative to the repository root (from kustomize's origin annotation). */
  file?: string;
  /** 1-based line of the object's `metadata.name` (or its document's start) in `file`. */
  line?: number;
}

/**
 * The line of the object `kind`/`name` in a multi-document YAML text: the line of its
 * `metadata.name`, or undefined when no document defines it (generated or patched names).
 */
export function locateObject(text: string, kind: string, name: string): number | undefined {
  const counter = new LineCounter();
  let docs;
  try {
    // Without yaml's unique-keys check, which is quadratic in a map's keys (duplicates do not matter here).
    docs = parseAllDocuments(text, { lineCounter: counter, uniqueKeys: false });
  } catch {
    return undefined;
  }
  if (!Array.isArray(docs)) return undefined;
  for (const doc of docs) {
    if (doc.get('kind') !== kind) continue;
    const node = doc.getIn(['metadata', 'name'], true) as
      { value?: unknown; range?: [number, number, number] } | undefined;
    if (node?.value !== name || !node.range) continue;
    return counter.linePos(node.range[0]).line;
  }
  return undefined;
}
