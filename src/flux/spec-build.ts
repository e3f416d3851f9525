/*
 * The spec fields that shape the build: patches (and their target selectors), images, components,
 * commonMetadata and the ignore rules of server-side apply.
 */

import { jsonPatchProblem } from '../kustomize/jsonpatch.js';
import { parseYamlStream } from '../objects/yaml.js';
import {
  Problems,
  child,
  isAbsent,
  quote,
  readList,
  readMapping,
  readCheckedString,
  readString,
  readStringMap,
  withoutUndefined,
} from './fields.js';
import type { IgnoreRule, Image, KustomizationSpec, Patch, Selector } from './types.js';
import { normalizeSourcePath } from './values.js';

const SELECTOR_FIELDS = [
  'group',
  'version',
  'kind',
  'name',
  'namespace',
  'labelSelector',
  'annotationSelector',
] as const;
/** kustomize's remote-resource prefixes, which Flux refuses in spec.components (IsLocalRelativePath). */
const REMOTE_PREFIXES = ['git::', 'gh:', 'ssh://', 'https://', 'http://', 'git@', 'github.com:', 'github.com/'];

function readSelector(p: Problems, value: unknown, at: string): Selector | undefined {
  const raw = readMapping(p, value, at, SELECTOR_FIELDS);
  if (raw === undefined) return undefined;
  const selector: Selector = {};
  for (const key of SELECTOR_FIELDS) {
    const text = readString(p, raw[key], child(at, key));
    if (text !== undefined) selector[key] = text;
  }
  return selector;
}

export function readPatch(p: Problems, value: unknown, at: string): Patch | undefined {
  const raw = readMapping(p, value, at, ['patch', 'target'], { required: true });
  if (raw === undefined) return undefined;
  const patch = readString(p, raw.patch, child(at, 'patch'), { required: true, multiline: true });
  const target = readSelector(p, raw.target, child(at, 'target'));
  if (patch !== undefined) {
    // kustomize would fail on this later with less context; both patch forms are YAML.
    const docs = parseYamlStream(patch, 'patch');
    const bad = docs.find((d) => d.error !== undefined);
    if (bad?.error !== undefined) {
      p.add(child(at, 'patch'), `is not valid YAML or JSON: ${bad.error.replace(/^patch(, document \d+)?: /, '')}`);
      return undefined;
    }
    const problem = jsonPatchProblem(docs[0]?.value);
    if (problem !== undefined) {
      p.add(child(at, 'patch'), problem);
      return undefined;
    }
  }
  return patch === undefined ? undefined : withoutUndefined({ patch, target });
}

export function readImage(p: Problems, value: unknown, at: string): Image | undefined {
  const raw = readMapping(p, value, at, ['name', 'newName', 'newTag', 'digest'], { required: true });
  if (raw === undefined) return undefined;
  const name = readString(p, raw.name, child(at, 'name'), { required: true });
  const newName = readString(p, raw.newName, child(at, 'newName'));
  const newTag = readString(p, raw.newTag, child(at, 'newTag'));
  const digest = readString(p, raw.digest, child(at, 'digest'));
  // Flux's CRD requires only `name`: an entry with nothing else is legal, and kustomize leaves the image as it is.
  // An empty name is refused although the CRD lets it through: it matches no image, so it is always a slip.
  return name === undefined ? undefined : withoutUndefined({ name, newName, newTag, digest });
}

/** Why a component path is refused, or undefined; `path` is the normalised spec.path it is relative to. */
function componentProblem(component: string, path: string | undefined): string | undefined {
  const lower = component.toLowerCase();
  const remote = REMOTE_PREFIXES.find((prefix) => prefix.length < component.length && lower.startsWith(prefix));
  if (remote !== undefined) {
    return `${quote(component)} is a remote component (${remote}); components must be local paths relative to spec.path`;
  }
  if (component.startsWith('/') || lower.replace(/^file:\/\//, '').startsWith('/')) {
    return `${quote(component)} is an absolute path; components must be relative to spec.path`;
  }
  if (path !== undefined && normalizeSourcePath(`${path}/${component}`) === undefined) {
    return `${quote(component)} climbs out of the source root from spec.path ${quote(path)}`;
  }
  return undefined;
}

export function readComponents(p: Problems, value: unknown, path: string | undefined): string[] {
  return readList(p, value, 'spec.components', (entry, at) =>
    readCheckedString(p, entry, at, { required: true }, (component) => componentProblem(component, path)),
  );
}

/** Why `text` is not an RFC 6901 JSON pointer into an object, or undefined. */
function jsonPointerProblem(text: string): string | undefined {
  if (!text.startsWith('/'))
    return `${quote(text)} is not a JSON pointer (it must start with "/", e.g. /spec/replicas)`;
  if (/~(?![01])/.test(text))
    return `${quote(text)} has a "~" not followed by 0 or 1 (write ~0 for "~" and ~1 for "/")`;
  return undefined;
}

export function readIgnoreRule(p: Problems, value: unknown, at: string): IgnoreRule | undefined {
  const raw = readMapping(p, value, at, ['paths', 'target'], { required: true });
  if (raw === undefined) return undefined;
  const pathsAt = child(at, 'paths');
  const paths = readList(p, raw.paths, pathsAt, (entry, entryAt) =>
    readCheckedString(p, entry, entryAt, { required: true }, jsonPointerProblem),
  );
  if (isAbsent(raw.paths) || (Array.isArray(raw.paths) && raw.paths.length === 0)) {
    p.add(pathsAt, 'is required: list at least one JSON pointer, e.g. /spec/replicas');
  }
  const target = readSelector(p, raw.target, child(at, 'target'));
  return paths.length === 0 ? undefined : withoutUndefined({ paths, target });
}

export function readCommonMetadata(p: Problems, value: unknown): KustomizationSpec['commonMetadata'] {
  const at = 'spec.commonMetadata';
  const raw = readMapping(p, value, at, ['labels', 'annotations']);
  if (raw === undefined) return undefined;
  return withoutUndefined({
    labels: readStringMap(p, raw.labels, child(at, 'labels')),
    annotations: readStringMap(p, raw.annotations, child(at, 'annotations')),
  });
}
