/** INI (`stores/ini/store.go` over `gopkg.in/ini.v1` with sops's options). */
import { goValToString } from '../goformat.js';
import { unflattenMetadata } from '../metadata.js';
import { leaf, type CommentNode, type MapEntry } from '../tree.js';
import { SopsError, type DecryptOptions } from '../types.js';
import { decryptLoaded } from '../walk.js';

interface IniKey {
  name: string;
  value: string;
  comment: string;
}
interface IniSection {
  name: string;
  comment: string;
  keys: IniKey[];
}

const INI_DEFAULT_SECTION = 'DEFAULT';

/** The subset of go-ini's parser that sops's INI files use: sections, comments, quoted and multi-line values. */
function parseIni(text: string): IniSection[] {
  const source = text.startsWith('\ufeff') ? text.slice(1) : text;
  const lines = source.split(/(?<=\n)/);
  const sections: IniSection[] = [{ name: INI_DEFAULT_SECTION, comment: '', keys: [] }];
  let section = sections[0]!;
  let pendingComment = '';
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.replace(/^\s+/, '');
    if (line === '') continue;
    if (line.startsWith('#') || line.startsWith(';')) {
      pendingComment += line;
      continue;
    }
    if (line.startsWith('[')) {
      const close = line.lastIndexOf(']');
      if (close === -1) throw new SopsError(`invalid INI: unclosed section on line ${n + 1}`);
      const rest = line.slice(close + 1);
      const inline = /[#;]/.exec(rest);
      if (inline) pendingComment += rest.slice(inline.index);
      section = { name: line.slice(1, close), comment: pendingComment.trim(), keys: [] };
      sections.push(section);
      pendingComment = '';
      continue;
    }
    // key name, possibly quoted
    let name: string;
    let offset: number;
    const keyQuote =
      line.startsWith('"""') && line.length > 6 ? '"""' : line.startsWith('"') ? '"' : line.startsWith('`') ? '`' : '';
    if (keyQuote) {
      const end = line.indexOf(keyQuote, keyQuote.length);
      if (end === -1) throw new SopsError(`invalid INI: missing closing key quote on line ${n + 1}`);
      const delim = line.slice(end + keyQuote.length).search(/[=:]/);
      if (delim === -1) throw new SopsError(`invalid INI: no '=' on line ${n + 1}`);
      name = line.slice(keyQuote.length, end).trim();
      offset = end + keyQuote.length + delim + 1;
    } else {
      const delim = line.search(/[=:]/);
      if (delim <= 0) throw new SopsError(`invalid INI: ${delim === 0 ? 'empty key name' : "no '='"} on line ${n + 1}`);
      name = line.slice(0, delim).trim();
      offset = delim + 1;
    }
    // value (`readValue`)
    let value: string;
    const raw = line.slice(offset).replace(/^\s+/, '');
    const valueQuote = raw.length > 3 && raw.startsWith('"""') ? '"""' : raw.startsWith('`') ? '`' : '';
    if (raw === '') {
      value = '';
    } else if (valueQuote) {
      const body = raw.slice(valueQuote.length);
      const end = body.lastIndexOf(valueQuote);
      if (end !== -1) {
        value = body.slice(0, end);
      } else {
        value = body;
        for (;;) {
          n++;
          const next = lines[n];
          if (next === undefined) throw new SopsError(`invalid INI: missing closing quote of the value of '${name}'`);
          const close = next.lastIndexOf(valueQuote);
          if (close === -1) {
            value += next;
            continue;
          }
          value += next.slice(0, close);
          const inline = /[#;]/.exec(next.slice(close));
          if (inline) pendingComment += next.slice(close + inline.index).trim();
          break;
        }
      }
    } else {
      value = raw.trim();
      while (value.endsWith('\\')) {
        // continuation lines
        const next = lines[n + 1]?.trim();
        if (!next) break;
        n++;
        value = value.slice(0, -1) + next;
      }
      const inline = /[#;]/.exec(value);
      if (inline) {
        pendingComment += value.slice(inline.index);
        value = value.slice(0, inline.index).trim();
      }
      for (const q of ["'", '"']) {
        if (value.length >= 2 && value.startsWith(q) && value.endsWith(q) && value.indexOf(q, 1) === value.length - 1) {
          value = value.slice(1, -1);
        }
      }
    }
    const existing = section.keys.find((k) => k.name === name);
    if (existing) {
      existing.value = value;
      existing.comment = pendingComment.trim();
    } else {
      section.keys.push({ name, value, comment: pendingComment.trim() });
    }
    pendingComment = '';
  }
  return sections;
}

/** `stripCommentChar` of sops's INI store. */
function stripIniComment(comment: string): string {
  if (comment.startsWith(';')) return comment.replace(/^[; ]+/, '');
  if (comment.startsWith('#')) return comment.replace(/^[# ]+/, '');
  return comment;
}

/** go-ini's `WriteTo` with its defaults (PrettyFormat, PrettySection), as `sops decrypt` prints INI. */
function writeIni(sections: readonly IniSection[]): string {
  let out = '';
  const formatComment = (line: string, trim: boolean): string => {
    if (line === '') return ';';
    if (line[0] !== '#' && line[0] !== ';') return '; ' + (trim ? line.trim() : line);
    return line[0] + ' ' + line.slice(1).trim();
  };
  sections.forEach((section, i) => {
    if (section.comment)
      out += section.comment
        .split('\n')
        .map((l) => formatComment(l, false) + '\n')
        .join('');
    if (i > 0 || section.name.toUpperCase() !== INI_DEFAULT_SECTION) out += `[${section.name}]\n`;
    else if (section.keys.length === 0) return;
    const quoteKey = (k: string): string => (/["=:]/.test(k) ? '`' + k + '`' : k.includes('`') ? '"""' + k + '"""' : k);
    const align = Math.max(0, ...section.keys.map((k) => Buffer.byteLength(quoteKey(k.name), 'utf8')));
    for (const key of section.keys) {
      if (key.comment)
        out += key.comment
          .split('\n')
          .map((l) => formatComment(l, true) + '\n')
          .join('');
      const name = quoteKey(key.name);
      let value = key.value;
      if (/[\n`]/.test(value)) value = '"""' + value + '"""';
      else if (/[#;]/.test(value)) value = '`' + value + '`';
      else if (value.trim().length !== value.length) value = '"' + value + '"';
      out += `${name}${' '.repeat(align - Buffer.byteLength(name, 'utf8'))} = ${value}\n`;
    }
    if (i < sections.length - 1) out += '\n';
  });
  return out;
}

/** Decrypts an INI file: the `[sops]` section is the flattened metadata; written back with go-ini's layout. */
export async function decryptIni(text: string, opts: DecryptOptions): Promise<string> {
  const parsed = parseIni(text);
  const metaSections = parsed.filter((s) => s.name === 'sops');
  if (metaSections.length > 1) throw new SopsError('found duplicate sops entry');
  const metaSection = metaSections[0];
  if (!metaSection) throw new SopsError('sops metadata not found');
  const sections = parsed.filter((s) => s !== metaSection);
  // the tree: one branch whose entries are sections; a section's comment comes first, a key's comment after it
  const rebuild: (() => IniSection)[] = [];
  const items: MapEntry[] = sections.map((section) => {
    const sectionComment: CommentNode | undefined = section.comment
      ? { t: 'comment', text: stripIniComment(section.comment) }
      : undefined;
    const keyNodes = section.keys.map((key) => ({
      key,
      leaf: leaf(key.value),
      comment: key.comment ? ({ t: 'comment', text: stripIniComment(key.comment) } satisfies CommentNode) : undefined,
    }));
    const sectionItems: (MapEntry | CommentNode)[] = [];
    if (sectionComment) sectionItems.push(sectionComment);
    for (const k of keyNodes) {
      sectionItems.push({ t: 'entry', key: k.key.name, value: k.leaf });
      if (k.comment) sectionItems.push(k.comment);
    }
    rebuild.push(() => ({
      name: section.name,
      comment: sectionComment?.text ?? '',
      keys: keyNodes.map((k) => ({
        name: k.key.name,
        value: goValToString(k.leaf.value),
        comment: k.comment?.text ?? '',
      })),
    }));
    return { t: 'entry', key: section.name, value: { t: 'map', items: sectionItems } };
  });
  const meta = unflattenMetadata(metaSection.keys.map((k) => [k.name, k.value.replaceAll('\\n', '\n')] as const));
  await decryptLoaded([{ t: 'map', items }], meta, opts);
  return writeIni(rebuild.map((r) => r()));
}
