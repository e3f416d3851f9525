/**
 * Reading kustomization files and the YAML they name for the in-process overlay build
 * (overlay.ts): only text whose every node kustomize's YAML readers (yaml.v2 for kustomization
 * files and patches, yaml.v3 in kyaml) and the yaml package here read alike gives a value; any other
 * gives undefined and the build runs kustomize.
 */
import { isMap, isScalar, isSeq, parseDocument, Scalar, type Node } from 'yaml';
import { v3MayReadAsNonString, PLAIN_NUMBER } from './plain-scalars.js';

/** YAML 1.1 words yaml.v2 (which reads kustomization files and patches) takes for booleans. */
const V2_WORDS = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;
/** Plain scalars read as the same string everywhere: no indicator first, nothing YAML would read (a `:` inside, as in `sha256:…`, is text to all). */
// A leading `-` before a letter (`nameSuffix: -prod`) is text everywhere; before a digit, a dot or a space it is not.
const PLAIN_TEXT = /^(?:[A-Za-z0-9_./]|-(?=[A-Za-z_]))[A-Za-z0-9_./=+:@ -]*(?<![ :])$/;
/** Quoted text every reader takes alike: printable ASCII, no escapes. */
const QUOTED_TEXT = /^[\x20-\x7E]*$/;

/**
 * The value of a one-document YAML text whose every node every reader involved (yaml.v2 and
 * yaml.v3 in kustomize, the yaml package here) reads alike, or undefined: no anchors, aliases,
 * tags or comments that could hide a document, scalars of the safe forms (safeNode).
 */
export function safeYaml(text: string): unknown {
  if (!QUOTED_TEXT.test(text.replaceAll('\n', ' '))) return undefined;
  if (/^(?:---|\.\.\.|%)/m.test(text)) return undefined;
  const doc = parseDocument(text, { uniqueKeys: true, logLevel: 'error' });
  if (doc.errors.length > 0 || doc.warnings.length > 0 || doc.contents === null) return undefined;
  if (!safeNode(doc.contents, false, text)) return undefined;
  return doc.toJS();
}

function safeNode(node: Node, isKey: boolean, text: string): boolean {
  if (node.anchor !== undefined || node.tag !== undefined) return false;
  if (isMap(node)) {
    if (isKey) return false;
    return node.items.every(
      (pair) =>
        isScalar(pair.key) &&
        typeof pair.key.value === 'string' &&
        // Our objects would take it for their prototype; kustomize for a key.
        pair.key.value !== '__proto__' &&
        safeNode(pair.key, true, text) &&
        pair.value !== null &&
        isNodeLike(pair.value) &&
        safeNode(pair.value, false, text),
    );
  }
  if (isSeq(node)) return !isKey && node.items.every((item) => isNodeLike(item) && safeNode(item, false, text));
  if (!isScalar(node)) return false;
  return safeScalar(node, isKey, text);
}

function isNodeLike(v: unknown): v is Node {
  return isMap(v) || isSeq(v) || isScalar(v);
}

function safeScalar(node: Scalar, isKey: boolean, text: string): boolean {
  const { value, source } = node as Scalar & { source?: string };
  const raw = text.slice(node.range?.[0] ?? 0, node.range?.[1] ?? 0);
  if (node.type !== 'BLOCK_LITERAL' && raw.includes('\n')) return false;
  switch (node.type) {
    case 'PLAIN':
      if (typeof value === 'string') {
        return source === value && PLAIN_TEXT.test(value) && !v3MayReadAsNonString(value) && !V2_WORDS.test(value);
      }
      if (isKey) return false;
      if (typeof value === 'boolean') return source === 'true' || source === 'false';
      if (typeof value === 'number') {
        return (
          typeof source === 'string' &&
          PLAIN_NUMBER.test(source) &&
          !/[.eE]/.test(source) &&
          Number.isSafeInteger(value)
        );
      }
      return false;
    case 'QUOTE_SINGLE':
    case 'QUOTE_DOUBLE':
      // No escapes, no doubled quote: the text between the quotes is the value.
      return typeof value === 'string' && raw === `${raw[0]}${value}${raw[0]}` && !value.includes('\\');
    case 'BLOCK_LITERAL':
      // A patch's text, read again by safeYaml: lines of printable ASCII.
      return !isKey && typeof value === 'string' && /^[\x20-\x7E\n]*$/.test(value);
    default:
      return false;
  }
}
