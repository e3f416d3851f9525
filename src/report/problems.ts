/**
 * Problems tied to objects, for annotations on the files they came from (check runs). Pure: the
 * caller reads the files; this finds where in a file an object is defined.
 */
import { isMap, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from 'yaml';
import { yamlShapeOver } from '../util/yaml-shape.js';

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
  const parsed = documentsOf(text);
  if (parsed === undefined) return undefined;
  const { docs, counter } = parsed;
  for (const doc of docs) {
    if (doc.get('kind') !== kind) continue;
    const node = doc.getIn(['metadata', 'name'], true) as
      { value?: unknown; range?: [number, number, number] } | undefined;
    if (node?.value !== name || !node.range) continue;
    return counter.linePos(node.range[0]).line;
  }
  return undefined;
}

/**
 * The line of `field` (`spec.patches[0].target.kind`) in the `document`-th document (1-based) of a
 * YAML text: the line of its key, or of the nearest enclosing field that is there (a required field
 * left out points at its parent), or the document's first line. Undefined when the text does not parse.
 */
export function locateField(text: string, document: number, field: string | undefined): number | undefined {
  const parsed = documentsOf(text);
  const doc = parsed?.docs[document - 1];
  if (doc === undefined) return undefined;
  let node: unknown = doc.contents;
  let at: number | undefined = (doc.contents as Node | null)?.range?.[0];
  for (const step of fieldPath(field ?? '')) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === step);
      if (pair === undefined) break;
      at = (pair.key as Node | null)?.range?.[0] ?? at;
      node = pair.value;
    } else if (isSeq(node) && typeof step === 'number') {
      const item = node.items[step] as Node | undefined;
      if (item === undefined) break;
      at = item.range?.[0] ?? at;
      node = item;
    } else break;
  }
  return at === undefined ? undefined : parsed!.counter.linePos(at).line;
}

/** `spec.patches[0].target` as ['spec', 'patches', 0, 'target']. */
function fieldPath(field: string): (string | number)[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

/** The documents of a YAML text with a line counter, or undefined when it does not parse. */
function documentsOf(text: string): { docs: Document.Parsed[]; counter: LineCounter } | undefined {
  const counter = new LineCounter();
  // A text past the shape bounds (util/yaml-shape.ts) is not read for line numbers either.
  if (yamlShapeOver(text) !== undefined) return undefined;
  try {
    // Without yaml's unique-keys check, which is quadratic in a map's keys (duplicates do not matter here).
    const docs = parseAllDocuments(text, { lineCounter: counter, uniqueKeys: false });
    return Array.isArray(docs) ? { docs, counter } : undefined;
  } catch {
    return undefined;
  }
}
