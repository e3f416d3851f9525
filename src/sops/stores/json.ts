/** JSON and binary (`stores/json/store.go`): an order-keeping parser, and Go's `json.Indent` output with tabs. */
import { INT64_MAX, INT64_MIN } from '../cipher.js';
import {
  isCommentLike,
  leaf,
  MAX_DEPTH,
  NULL_NODE,
  toPlainJs,
  type MapEntry,
  type MapNode,
  type TreeNode,
} from '../tree.js';
import { SopsError, type DecryptOptions } from '../types.js';
import { decryptLoaded } from '../walk.js';

class JsonParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parseDocument(): MapNode {
    this.ws();
    if (this.text[this.pos] !== '{') {
      throw new SopsError('SOPS only supports JSON files with a top-level object');
    }
    const node = this.value(0);
    this.ws();
    if (this.pos < this.text.length) this.fail('unexpected data after the top-level object');
    return node as MapNode;
  }

  private fail(what: string): never {
    throw new SopsError(`invalid JSON at offset ${this.pos}: ${what}`);
  }

  private ws(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  private value(depth: number): TreeNode {
    if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
    this.ws();
    const c = this.text[this.pos];
    if (c === '{') {
      const items = this.items('}', () => {
        this.ws();
        if (this.text[this.pos] !== '"') this.fail('expected a string key');
        const key = this.string();
        this.ws();
        if (this.text[this.pos] !== ':') this.fail("expected ':'");
        this.pos++;
        return { t: 'entry', key, value: this.value(depth + 1) } satisfies MapEntry;
      });
      return { t: 'map', items };
    }
    if (c === '[') return { t: 'list', items: this.items(']', () => this.value(depth + 1)) };
    if (c === '"') return leaf(this.string());
    for (const [word, node] of [
      ['true', leaf(true)],
      ['false', leaf(false)],
      ['null', NULL_NODE],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return node;
      }
    }
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = this.pos;
    const num = m.exec(this.text);
    if (!num) this.fail('unexpected character');
    this.pos += num[0].length;
    // `normalizeJSONNumber`: an int when it fits in int64, else a float64
    if (/^-?\d+$/.test(num[0])) {
      const n = BigInt(num[0]);
      if (n >= INT64_MIN && n <= INT64_MAX) return leaf(n);
    }
    return leaf(Number(num[0]));
  }

  /** The comma-separated items of an object or array, from its opening bracket to `close`. */
  private items<T>(close: '}' | ']', item: () => T): T[] {
    const items: T[] = [];
    this.pos++;
    this.ws();
    if (this.text[this.pos] === close) {
      this.pos++;
      return items;
    }
    for (;;) {
      items.push(item());
      this.ws();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      if (this.text[this.pos] === close) {
        this.pos++;
        return items;
      }
      this.fail(`expected ',' or '${close}'`);
    }
  }

  private string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) this.fail('unterminated string');
      if (c === '\\') {
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (c === '"') break;
    }
    try {
      return JSON.parse(this.text.slice(start, this.pos)) as string;
    } catch {
      this.pos = start;
      this.fail('invalid string');
    }
  }
}

/** Go's `encoding/json` string encoding (HTML-safe, `\b` and `\f` short escapes since Go 1.22). */
function goJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) {
      out += '\\u' + c.toString(16).padStart(4, '0');
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && /[\udc00-\udfff]/.test(s[i + 1]!)) {
      out += ch + s[i + 1]!;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd';
    else out += ch;
  }
  return out + '"';
}

function goJsonValue(node: TreeNode, level: number): string {
  const indent = (n: number): string => '\t'.repeat(n);
  switch (node.t) {
    case 'null':
      return 'null';
    case 'leaf': {
      const v = node.value;
      if (typeof v === 'string') return goJsonString(v);
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) throw new SopsError('cannot write a NaN or infinite float as JSON');
        return Object.is(v, -0) ? '-0' : String(v);
      }
      return String(v);
    }
    case 'list': {
      const items = node.items.filter((i) => !isCommentLike(i)) as TreeNode[];
      if (items.length === 0) return '[]';
      return `[\n${items.map((i) => indent(level + 1) + goJsonValue(i, level + 1)).join(',\n')}\n${indent(level)}]`;
    }
    case 'map': {
      const entries = node.items.filter((i): i is MapEntry => i.t === 'entry' && !isCommentLike(i.value));
      if (entries.length === 0) return '{}';
      const body = entries.map((e) => `${indent(level + 1)}${goJsonString(e.key)}: ${goJsonValue(e.value, level + 1)}`);
      return `{\n${body.join(',\n')}\n${indent(level)}}`;
    }
  }
}

/** Removes the top-level `sops` entries (`ExtractMetadata`) and returns the metadata as plain JS. */
function extractSopsEntry(branch: MapNode): { branch: MapNode; meta: unknown } {
  const sops = branch.items.filter((i): i is MapEntry => i.t === 'entry' && i.key === 'sops');
  if (sops.length > 1) throw new SopsError('found duplicate sops entry');
  const first = sops[0];
  if (!first) throw new SopsError('sops metadata not found');
  if (first.value.t !== 'map') throw new SopsError('found sops entry that is not a mapping');
  return {
    branch: { t: 'map', items: branch.items.filter((i) => i !== first) },
    meta: toPlainJs(first.value),
  };
}

/** Decrypts a JSON document and writes it with Go's `json.Indent` layout (tabs), as `sops decrypt` does. */
export async function decryptJson(text: string, opts: DecryptOptions): Promise<string> {
  const { branch, meta } = extractSopsEntry(new JsonParser(text).parseDocument());
  await decryptLoaded([branch], meta, opts);
  return goJsonValue(branch, 0) + '\n';
}

/** Decrypts a binary file (a JSON document whose `data` holds the content) and returns the content. */
export async function decryptBinary(text: string, opts: DecryptOptions): Promise<string> {
  const { branch, meta } = extractSopsEntry(new JsonParser(text).parseDocument());
  await decryptLoaded([branch], meta, opts);
  const data = branch.items.find((i): i is MapEntry => i.t === 'entry' && i.key === 'data');
  if (data?.value.t !== 'leaf' || typeof data.value.value !== 'string') {
    throw new SopsError("the binary SOPS document has no string 'data' entry");
  }
  return data.value.value;
}
