/**
 * The objects of one plain YAML file as kustomize v5 prints them and our parser reads them back,
 * computed without kustomize, for the documents where that is provably the same answer, and
 * undefined for any other. kustomize reads a resource with kyaml (yaml.v3), prints it through
 * `Resource.AsYAML`: yaml.v3 decodes the node into Go values, encoding/json encodes them, and
 * sigs.k8s.io/yaml re-reads that JSON with yaml.v2 and writes it with yaml.v2 (every mapping's keys
 * sorted in yaml.v2's order). Our parser (the `yaml` package, YAML 1.2 core schema) then reads that
 * text. So a value survives unchanged when yaml.v3 and our parser read its scalar alike (yaml.v3
 * mixes in YAML 1.1: `017` is 15, `2001-12-14` a timestamp, `1_000` a number) and yaml.v2 writes
 * back a text our parser reads as the same value (it quotes every string that YAML 1.1 reads as
 * something else, a superset of YAML 1.2's); only the key order changes. This module accepts only
 * scalars of the forms where both readings are known to agree, and refuses everything else
 * (anchors, aliases, tags, merge keys, directives, document end markers, multi-line flow scalars,
 * unusual escapes and characters, non-ASCII keys): the build then runs kustomize.
 */
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, Scalar, type Document } from 'yaml';
import type { KubeObject } from '../objects/kube.js';
import { MAX_ALIAS_COUNT, treeProblem } from '../objects/yaml.js';
import { linesDocuments } from './plain-lines.js';
import { CORE_BOOL, CORE_NULL, keyProblem, PLAIN_NUMBER, v3MayReadAsNonString } from './plain-scalars.js';

/**
 * Characters yaml.v3 reads and our parser reads alike: tab, line feed and the printable ones,
 * without NEL, the line and paragraph separators, the byte order mark, U+FFFD (a file that is not
 * UTF-8 decodes to it) and the noncharacters U+FFFE/U+FFFF. Surrogates come in pairs (astral
 * characters), as decoding UTF-8 gives them.
 */
const REFUSED_CHARS = /[^\t\n\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uD800-\uDFFF\uE000-\uFEFE\uFF00-\uFFFC]/;

/**
 * Lines that kyaml and our parser could split into documents differently: kyaml splits at any line
 * starting with `---` (and refuses content after it other than a comment), ours only at `---`
 * followed by a space or the line's end; a `...` document end or a `%` directive line.
 */
const REFUSED_LINES = /^(?:---(?![ \t]*(?:#.*)?$)|\.\.\.|%)/m;

/** Why a scalar is refused, or undefined when yaml.v3 and our parser read it alike (see the module comment). */
function scalarProblem(node: Scalar, text: string, isKey: boolean, flow: boolean): string | undefined {
  const raw = text.slice(node.range?.[0] ?? 0, node.range?.[1] ?? 0);
  const value: unknown = node.value;
  switch (node.type) {
    case 'PLAIN':
      if (raw !== node.source || raw.includes('\n')) return 'a multi-line plain scalar';
      if (typeof value === 'string') return v3MayReadAsNonString(raw) ? `the plain scalar ${raw}` : undefined;
      if (isKey) return 'a key that is not a string';
      if (typeof value === 'boolean') return CORE_BOOL.has(raw) ? undefined : `the boolean ${raw}`;
      // yaml.v3 reads an empty value in a flow collection (`{a: }`) as an empty string.
      if (value === null) return CORE_NULL.has(raw) && !(flow && raw === '') ? undefined : `the null ${raw}`;
      if (typeof value === 'number') {
        if (!PLAIN_NUMBER.test(raw) || !Number.isFinite(value) || Object.is(value, -0)) return `the number ${raw}`;
        // An integer past 2^53 is exact in Go (int64) and not here: the same text both ways, but refused.
        if (!/[.eE]/.test(raw) && !Number.isSafeInteger(value)) return `the integer ${raw}`;
        return undefined;
      }
      return `the plain scalar ${raw}`;
    case 'QUOTE_SINGLE':
      return raw.includes('\n') ? 'a multi-line quoted scalar' : undefined;
    case 'QUOTE_DOUBLE':
      if (raw.includes('\n')) return 'a multi-line quoted scalar';
      // Only the escapes every reader takes alike (no \x, \U, \N, \_, \L, \P, \/, \0, \e, line joins).
      for (const m of raw.matchAll(/\\(u[0-9a-fA-F]{4}|[^])/g)) {
        const e = m[1]!;
        if (e.length === 5 ? /^u[dD][89a-fA-F]/.test(e) : !'\\"ntr'.includes(e)) return 'an unusual escape';
      }
      return undefined;
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED':
      if (isKey) return 'a block scalar key';
      // No explicit indentation indicator.
      return /^[|>][-+]?[ \t]*(?:#.*)?$/.test(raw.slice(0, raw.indexOf('\n') === -1 ? raw.length : raw.indexOf('\n')))
        ? undefined
        : 'a block scalar header with an indentation indicator';
    default:
      return 'an unknown scalar style';
  }
}

/** The first node of a document's tree that is refused (see the module comment), as a phrase. */
function nodeProblem(root: unknown, text: string): string | undefined {
  const stack: { node: unknown; key: boolean; flow: boolean }[] = [{ node: root, key: false, flow: false }];
  while (stack.length > 0) {
    const { node, key, flow } = stack.pop()!;
    if (isAlias(node)) return 'an alias';
    const n = node as { anchor?: string; tag?: string } | null;
    if (n === null || typeof n !== 'object') return 'a missing value';
    if (n.anchor !== undefined) return 'an anchor';
    if (n.tag !== undefined) return 'a tag';
    if (isScalar(node)) {
      const problem = scalarProblem(node, text, key, flow);
      if (problem !== undefined) return problem;
      if (key) {
        if (typeof node.value !== 'string') return 'a key that is not a string';
        const kp = keyProblem(node.value);
        if (kp !== undefined) return kp;
      }
    } else if (isMap(node)) {
      if (key) return 'a key that is not a scalar';
      const inFlow = flow || node.flow === true;
      for (const pair of node.items) {
        stack.push({ node: pair.key, key: true, flow: inFlow }, { node: pair.value, key: false, flow: inFlow });
      }
    } else if (isSeq(node)) {
      if (key) return 'a key that is not a scalar';
      for (const item of node.items) {
        // kustomize refuses null list items.
        if (item === null || (isScalar(item) && item.value === null)) return 'an empty list item';
        stack.push({ node: item, key: false, flow: flow || node.flow === true });
      }
    } else {
      return 'an unknown node';
    }
  }
  return undefined;
}

/** An ASCII letter or digit, as Go's unicode.IsLetter and IsDigit judge ASCII. */
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * yaml.v2's order of two string map keys (sorter.go, keyList.Less, as in go.yaml.in/yaml/v2
 * v2.4.2, which sigs.k8s.io/yaml writes kustomize's output with): at the first difference two
 * letters compare by code, a letter and a non-letter put the non-letter first, other pairs compare
 * their digit runs as numbers, then the runs' lengths. For ASCII keys whose digit runs are at most
 * 15 digits long (keyProblem), where the numbers are exact.
 */
export function v2KeyLess(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    const al = isLetter(ca);
    const bl = isLetter(cb);
    if (al && bl) return ca < cb;
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ca === 48 || cb === 48) {
      for (let j = i - 1; j >= 0 && isDigit(a.charCodeAt(j)); j--) {
        if (a.charCodeAt(j) !== 48) {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < a.length && isDigit(a.charCodeAt(ai)); ai++) an = an * 10 + (a.charCodeAt(ai) - 48);
    let bi = i;
    for (; bi < b.length && isDigit(b.charCodeAt(bi)); bi++) bn = bn * 10 + (b.charCodeAt(bi) - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ca < cb;
  }
  return a.length < b.length;
}

/** Keys sorted past this many are not checked pair by pair (the check is quadratic): refused. */
const MAX_SORTED_KEYS = 512;

/**
 * `keys` in yaml.v2's order, or undefined when that order is not certain: Go sorts them with
 * sort.Sort, which is not stable, so the comparison must order every pair of them one way (checked
 * here pair by pair; then every correct sort gives this order).
 */
function sortKeys(keys: string[]): string[] | undefined {
  if (keys.length > MAX_SORTED_KEYS) return undefined;
  const sorted = keys.sort((x, y) => (v2KeyLess(x, y) ? -1 : v2KeyLess(y, x) ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      if (!v2KeyLess(sorted[i]!, sorted[j]!) || v2KeyLess(sorted[j]!, sorted[i]!)) return undefined;
    }
  }
  return sorted;
}

/** `value` with every mapping's keys in yaml.v2's order (new objects), or undefined when not certain. */
function v2Ordered(value: unknown): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const v = v2Ordered(item);
      if (v === undefined) return undefined;
      out.push(v);
    }
    return out;
  }
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  const keys = sortKeys(Object.keys(obj));
  if (keys === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = v2Ordered(obj[k]);
    if (v === undefined) return undefined;
    out[k] = v;
  }
  return out;
}

/**
 * Annotation and label keys (and API groups) in kustomize's domains, which it reads or strips:
 * config.kubernetes.io (origin, local-config, function), internal.config.kubernetes.io,
 * kustomize.config.k8s.io (behavior, needs-hash, id), config.k8s.io.
 */
const KUSTOMIZE_KEY = /(?:^|\.)config\.(?:kubernetes\.io|k8s\.io)\//;

function stringMapProblem(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `metadata.${field} is not a map`;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') return `metadata.${field}.${k} is not a string`;
    if (KUSTOMIZE_KEY.test(k)) return `metadata.${field}.${k} is read by kustomize`;
  }
  return undefined;
}

/**
 * Why kustomize might treat the object differently from any other (or refuse it), or undefined:
 * apiVersion, kind and metadata.name are non-empty strings, metadata.namespace one when present;
 * no List (kustomize inlines its items), no kustomize or KRM function kind; apiVersion split as
 * kustomize splits it, its group and version free of the characters its sort strings join with;
 * labels and annotations maps of strings, none of kustomize's own.
 */
function objectProblem(obj: Record<string, unknown>): string | undefined {
  const { apiVersion, kind, metadata } = obj;
  if (typeof apiVersion !== 'string' || apiVersion === '') return 'no apiVersion';
  if (typeof kind !== 'string' || kind === '') return 'no kind';
  // Flux's Kustomization is an object like any other to kustomize (the parent/children layout's build).
  const flux = kind === 'Kustomization' && apiVersion.startsWith('kustomize.toolkit.fluxcd.io/');
  if (kind.endsWith('List') || (kind === 'Kustomization' && !flux) || kind === 'Component') return `kind ${kind}`;
  if (apiVersion.split('/').length > 2 || apiVersion === 'builtin' || /[~_]/.test(apiVersion)) {
    return `apiVersion ${apiVersion}`;
  }
  if (KUSTOMIZE_KEY.test(apiVersion)) return `apiVersion ${apiVersion}`;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return 'no metadata';
  const m = metadata as Record<string, unknown>;
  if (typeof m['name'] !== 'string' || m['name'] === '') return 'no metadata.name';
  if (m['namespace'] !== undefined && (typeof m['namespace'] !== 'string' || m['namespace'] === '')) {
    return 'metadata.namespace is not a name';
  }
  return stringMapProblem(m['labels'], 'labels') ?? stringMapProblem(m['annotations'], 'annotations');
}

/**
 * The objects of one plain YAML file as the kustomize build of a plain directory gives them (after
 * the origin annotation, switched on only to learn each object's file, is taken off: an
 * annotations map left empty goes with it), or undefined when that is not certain. Empty documents
 * (comments only, nothing between separators) add nothing, as in kustomize.
 */
export function plainObjects(text: string): KubeObject[] | undefined {
  const read = readPlain(text);
  return typeof read === 'string' ? undefined : read;
}

/** {@link plainObjects}, or why the file is left to kustomize (a phrase, for tests and debugging). */
export function readPlain(text: string): KubeObject[] | string {
  if (REFUSED_CHARS.test(text)) return 'a character outside the plain set';
  if (REFUSED_LINES.test(text)) return 'a document marker or directive line';
  // The common block-style file, read line by line; anything else through the yaml package.
  const fast = linesDocuments(text);
  return fast !== undefined ? finish(fast) : readDocuments(text);
}

/** The documents through the yaml package's document model, each checked node by node. */
function readDocuments(text: string): KubeObject[] | string {
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, { uniqueKeys: false, logLevel: 'error' }) as Document.Parsed[];
  } catch {
    return 'a parse failure';
  }
  if (!Array.isArray(docs)) return [];
  const values: Record<string, unknown>[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0 || doc.warnings.length > 0) return 'a YAML error or warning';
    if (doc.contents === null) continue;
    if (isScalar(doc.contents) && doc.contents.value === null && doc.contents.source === '' && !doc.contents.tag) {
      continue;
    }
    // A document is a non-empty mapping (kustomize drops `{}` and refuses other values: left to it).
    if (!isMap(doc.contents) || doc.contents.items.length === 0) return 'a document that is not a non-empty mapping';
    const tree = treeProblem(doc.contents);
    if (tree !== undefined) return tree;
    const node = nodeProblem(doc.contents, text);
    if (node !== undefined) return node;
    values.push(doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as Record<string, unknown>);
  }
  return finish(values);
}

/** The objects of a file's documents, each as kustomize prints it. */
function finish(values: Record<string, unknown>[]): KubeObject[] | string {
  const out: KubeObject[] = [];
  for (const value of values) {
    const printed = asPrinted(value);
    if (typeof printed === 'string') return printed;
    out.push(printed);
  }
  return out;
}

/**
 * `value` as kustomize prints an object and our parser reads it back (a new object), or why that
 * is not certain (a phrase): checked as an object (objectProblem), every mapping's keys in
 * yaml.v2's order, and an annotations map left empty once the build took off the origin annotation
 * it switched on gone with it.
 */
export function asPrinted(value: Record<string, unknown>): KubeObject | string {
  const object = objectProblem(value);
  if (object !== undefined) return object;
  const sorted = v2Ordered(value) as KubeObject | undefined;
  if (sorted === undefined) return 'keys whose order is not certain';
  const annotations = sorted.metadata.annotations;
  if (annotations !== undefined && Object.keys(annotations).length === 0) delete sorted.metadata.annotations;
  return sorted;
}

/** {@link readPlain} through the yaml package alone (the differential test's reference). */
export function readPlainSlow(text: string): KubeObject[] | string {
  if (REFUSED_CHARS.test(text)) return 'a character outside the plain set';
  if (REFUSED_LINES.test(text)) return 'a document marker or directive line';
  return readDocuments(text);
}
