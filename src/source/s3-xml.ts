/**
 * The XML answers of the S3 API that reading a bucket meets (ListObjectsV2 pages, `<Error>`, the
 * GetBucketLocation answer), read as minio-go reads them. The server is whatever spec.endpoint
 * names, so the reading is linear in the answer's length whatever it holds. Pure.
 */

/** The region of a bucket without a location, and of requests before it is known. */
export const DEFAULT_REGION = 'us-east-1';

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Entities and character references decoded (text outside CDATA). */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#')) {
      const cp = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
    }
    return ENTITIES[name] ?? whole;
  });
}

/** Character data of an element: entities and character references decoded, CDATA kept as is. */
export function xmlText(raw: string): string {
  // indexOf, not a lazy regex: an answer full of unterminated `<![CDATA[` stays linear.
  let out = '';
  let i = 0;
  for (;;) {
    const start = raw.indexOf('<![CDATA[', i);
    const end = start < 0 ? -1 : raw.indexOf(']]>', start + 9);
    if (end < 0) return out + decodeEntities(raw.slice(i));
    out += decodeEntities(raw.slice(i, start)) + raw.slice(start + 9, end);
    i = end + 3;
  }
}

const isXmlSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/**
 * The `<tag>` elements of `xml` in order, each as the offsets of its raw content and of the whole
 * element (attributes allowed, `<tag/>` empty), up to the first one left unclosed. Found with
 * indexOf, each character looked at a bounded number of times: the answer comes from a server
 * the tree names, and a lazy regular expression over 16 MiB of unclosed tags would take hours.
 */
function elements(xml: string, tag: string, max = Infinity): { content: [number, number]; whole: [number, number] }[] {
  const found: { content: [number, number]; whole: [number, number] }[] = [];
  const open = `<${tag}`;
  const close = `</${tag}`;
  let from = 0;
  for (;;) {
    const at = found.length < max ? xml.indexOf(open, from) : -1;
    if (at < 0) return found;
    from = at + open.length;
    const next = xml[from];
    if (next !== '>' && next !== '/' && !isXmlSpace(next)) continue; // another tag: <KeyCount> for Key
    const gt = xml.indexOf('>', from);
    if (gt < 0) return found;
    if (xml[gt - 1] === '/') {
      found.push({ content: [gt, gt], whole: [at, gt + 1] });
      from = gt + 1;
      continue;
    }
    if (next === '/') {
      from = gt + 1; // `<tag/x>`: not this element
      continue;
    }
    let end = xml.indexOf(close, gt + 1);
    for (;;) {
      if (end < 0) return found;
      let k = end + close.length;
      while (isXmlSpace(xml[k])) k++;
      if (xml[k] === '>') {
        found.push({ content: [gt + 1, end], whole: [at, k + 1] });
        from = k + 1;
        break;
      }
      end = xml.indexOf(close, end + 1);
    }
  }
}

/** The text of the first `<tag>` element of `xml` (attributes allowed, `<tag/>` is empty), or undefined. */
function element(xml: string, tag: string): string | undefined {
  const first = elements(xml, tag, 1)[0];
  return first === undefined ? undefined : xmlText(xml.slice(...first.content));
}

/** minio-go's trimEtag: one pair of surrounding quotes removed. */
export function trimEtag(etag: string): string {
  return etag.replace(/^"/, '').replace(/"$/, '');
}

/** Go's url.QueryUnescape: `+` is a space, `%XX` a byte; throws on a malformed escape. */
function queryUnescape(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

export interface ListedObject {
  key: string;
  /** Quotes trimmed. */
  etag: string;
  size: number;
}

export interface ListPage {
  objects: ListedObject[];
  truncated: boolean;
  nextToken?: string;
}

/** One ListObjectsV2 answer; keys decoded (`encoding-type=url` when the answer says so). Throws when it is none. */
export function parseListObjectsV2(xml: string): ListPage {
  if (!/<ListBucketResult[\s>/]/.test(xml)) throw new Error('the answer is not a ListBucketResult');
  const contents = elements(xml, 'Contents');
  let outer = '';
  let last = 0;
  for (const c of contents) {
    outer += xml.slice(last, c.whole[0]);
    last = c.whole[1];
  }
  outer += xml.slice(last);
  const urlEncoded = (element(outer, 'EncodingType') ?? '').trim().toLowerCase() === 'url';
  const objects: ListedObject[] = [];
  for (const c of contents) {
    const inner = xml.slice(...c.content);
    const raw = element(inner, 'Key');
    if (raw === undefined) throw new Error('the listing holds an object without a Key');
    let key = raw;
    if (urlEncoded) {
      try {
        key = queryUnescape(raw);
      } catch {
        throw new Error(`the listing holds a malformed URL-encoded key ${JSON.stringify(raw)}`);
      }
    }
    const size = Number((element(inner, 'Size') ?? '0').trim());
    objects.push({
      key,
      etag: trimEtag((element(inner, 'ETag') ?? '').trim()),
      size: Number.isFinite(size) && size >= 0 ? size : 0,
    });
  }
  const truncated = (element(outer, 'IsTruncated') ?? '').trim().toLowerCase() === 'true';
  const token = element(outer, 'NextContinuationToken');
  return { objects, truncated, ...(token ? { nextToken: token } : {}) };
}

export interface S3ErrorBody {
  code?: string;
  message?: string;
  /** Given with AuthorizationHeaderMalformed and the like: the bucket's region. */
  region?: string;
}

/** The `<Error>` an S3 server answers with, or empty when the body is none. */
export function parseS3Error(xml: string): S3ErrorBody {
  if (!/<Error[\s>]/.test(xml)) return {};
  const out: S3ErrorBody = {};
  const code = element(xml, 'Code')?.trim();
  const message = element(xml, 'Message')?.trim();
  const region = element(xml, 'Region')?.trim();
  if (code) out.code = code;
  if (message) out.message = message;
  if (region) out.region = region;
  return out;
}

/** The region of a GetBucketLocation answer: empty is us-east-1, `EU` is eu-west-1 (minio-go). */
export function parseLocation(xml: string): string {
  const loc = (element(xml, 'LocationConstraint') ?? '').trim();
  if (loc === '') return DEFAULT_REGION;
  return loc === 'EU' ? 'eu-west-1' : loc;
}
