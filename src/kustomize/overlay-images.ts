/**
 * kustomize's image tag transformer (the `images` field, Flux's spec.images merged in at the top)
 * for the in-process overlay build. Each entry, in order, runs kustomize's two filters on every
 * object but a CustomResourceDefinition: the legacy one (every `containers` and `initContainers`
 * list at any depth, each element's `image`), then the images field specs (spec/containers,
 * initContainers and image volumes, and the same under spec/template). An image matches an entry
 * when it is the entry's name (a regular expression in kustomize) followed by an optional tag and
 * an optional sha256 digest; it is split at the first `:` or `@` after its first slash, the entry's
 * newName, newTag, digest or tagSuffix replace their parts, and the parts are joined again. An
 * image may be rewritten by both filters, as in kustomize.
 */
import { isRecord } from '../util/record.js';
import { applyFieldSpecs, IMAGES } from './overlay-fieldspecs.js';
import { v3MayReadAsNonString } from './plain-scalars.js';
import type { Built, FieldReader } from './overlay-types.js';

interface Image {
  name: string;
  newName: string;
  newTag: string;
  digest: string;
  tagSuffix: string;
}

const IMAGE_FIELDS = ['name', 'newName', 'newTag', 'digest', 'tagSuffix'] as const;

/**
 * Names whose regular expression means the same to Go's regexp and JavaScript's and matches only
 * image references: letters, digits and the separators of a reference (a `.` matches any character
 * in both, as in kustomize).
 */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/;
/** Parts of a reference this build writes: printable ASCII without spaces, quotes or YAML indicators. */
const PART = /^[A-Za-z0-9._/:@{}+-]*$/;
/** What an image in an object may hold to be matched and rewritten here. */
const VALUE = /^[\x21-\x7E]*$/;

/** One `images` entry, or undefined. */
function entry(i: unknown): Image | undefined {
  if (!isRecord(i) || Object.keys(i).some((f) => !(IMAGE_FIELDS as readonly string[]).includes(f))) return undefined;
  const out: Partial<Record<(typeof IMAGE_FIELDS)[number], string>> = {};
  for (const f of IMAGE_FIELDS) {
    const v = i[f] ?? '';
    if (typeof v !== 'string' || !PART.test(v)) return undefined;
    out[f] = v;
  }
  const image = out as Image;
  return NAME.test(image.name) ? image : undefined;
}

/** kustomize's image.Split: name, tag and digest, looking for `:` and `@` after the first slash only. */
export function splitImage(image: string): [name: string, tag: string, digest: string] {
  let slash = image.indexOf('/');
  let search = image;
  if (slash > 0) search = image.slice(slash);
  else slash = 0;
  let at = search.indexOf('@');
  let colon = search.indexOf(':');
  if (colon < 0 && at < 0) return [image, '', ''];
  if (at >= 0 && (at < colon || colon < 0)) {
    at += slash;
    return [image.slice(0, at), '', image.slice(at + 1)];
  }
  if (at >= 0 && colon >= 0) {
    at += slash;
    colon += slash;
    return [image.slice(0, colon), image.slice(colon + 1, at), image.slice(at + 1)];
  }
  colon += slash;
  return [image.slice(0, colon), image.slice(colon + 1), ''];
}

/**
 * The image after `img` (kustomize's imageTagUpdater), the same string when it does not match, or
 * undefined when this build cannot tell kustomize's answer.
 */
export function updateImage(value: string, img: Image): string | undefined {
  if (!VALUE.test(value)) return undefined;
  const pattern = new RegExp(`^${img.name}(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$`);
  if (!pattern.test(value)) return value;
  let [name, tag, digest] = splitImage(value);
  if (img.newName !== '') name = img.newName;
  if (img.newTag !== '' && img.digest !== '') {
    tag = img.newTag;
    digest = img.digest;
  } else if (img.newTag !== '') {
    tag = img.newTag;
    digest = '';
  } else if (img.digest !== '') {
    tag = '';
    digest = img.digest;
  } else if (img.tagSuffix !== '') {
    tag += img.tagSuffix;
    digest = '';
  }
  let out = name;
  if (tag !== '') out += `:${tag}`;
  if (digest !== '') out += `@${digest}`;
  // The new scalar keeps the old one's style: a plain one YAML reads as a number would become one.
  return out === '' || v3MayReadAsNonString(out) ? undefined : out;
}

/** Sets `parent[key]` (an image) to its update; false when it is not a string or cannot be told. */
function setImage(parent: Record<string, unknown>, key: string, img: Image): boolean {
  const value = parent[key];
  if (typeof value !== 'string') return false;
  const next = updateImage(value, img);
  if (next === undefined) return false;
  parent[key] = next;
  return true;
}

/** kustomize's legacy filter: every `containers`/`initContainers` list anywhere, each element's image. */
function legacy(node: unknown, img: Image): boolean {
  if (Array.isArray(node)) return node.every((el) => legacy(el, img));
  if (!isRecord(node)) return true;
  for (const [key, value] of Object.entries(node)) {
    if (!legacy(value, img)) return false;
    if (key !== 'containers' && key !== 'initContainers') continue;
    // Not a list: kustomize's legacy filter skips it, its field specs might not.
    if (!Array.isArray(value)) return false;
    for (const c of value) {
      if (!isRecord(c)) return false;
      if (c['image'] !== undefined && !setImage(c, 'image', img)) return false;
    }
  }
  return true;
}

function transform(b: Built, img: Image): boolean {
  if (b.obj.kind === 'CustomResourceDefinition') return true;
  if (!legacy(b.obj, img)) return false;
  return applyFieldSpecs(b.obj, IMAGES, 'none', (parent, key) => setImage(parent, key, img));
}

/** `images`: one transformer per entry, in order. */
export const imagesReader: FieldReader = {
  fields: ['images'],
  read(k) {
    const list = k['images'];
    if (!Array.isArray(list)) return undefined;
    const images = list.map(entry);
    if (images.some((i) => i === undefined)) return undefined;
    return (built) => {
      for (const img of images as Image[]) {
        if (!built.every((b) => transform(b, img))) return undefined;
      }
      return built;
    };
  },
};
