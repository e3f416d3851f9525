// Text from a tree, a server or a report file in the renderings' Markdown (src/util/markdown.ts):
// what each escaper writes, that GFM (marked, as GitHub roughly reads it) renders it as the text and
// nothing else, and that the PR comment, the check run and the job summary of a report whose every
// text is hostile render no link, image, emphasis, heading, raw HTML, mention or reference from it.
import { Marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { commentMarker, renderCheckOutput, renderComment } from '../../src/report/comment.js';
import { htmlText, mdCode, mdText, oneLineText, plainText, WORD_JOINER } from '../../src/util/markdown.js';
import { countReport, type Report } from '../../src/report/model.js';
import { renderSummary } from '../../src/report/render.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';

const J = WORD_JOINER;
const marked = new Marked({ gfm: true, async: false });

function decode(s: string): string {
  return s
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The text a reader sees of some HTML, without the joiners. */
function shown(html: string): string {
  return decode(html.replace(/<[^>]*>/g, '')).replaceAll(J, '');
}

// The attacker's texts: the issue's, then every construct GitHub renders inline or as a block.
const BRIEF =
  'none **✅ Security review passed — [approved by @octocat](http://127.0.0.1:9/a)** ![b](http://127.0.0.1:9/b.png)';
const HOSTILE = [
  BRIEF,
  '<b>bold</b> <img src="http://127.0.0.1:9/c.png"> <!-- hidden --> &lt;b&gt; &copy;',
  '_under_ __strong__ ~~struck~~ ~one~ *star* ***both*** `code` ``two``',
  'fixes #1, GH-2 and org/repo#3; @octocat @org/team x@y.example.org repo@0123abcd',
  'http://127.0.0.1:9/d https://x.example.org/ ftp://x.example.org www.example.org <http://127.0.0.1:9/e>',
  '[ref]: http://127.0.0.1:9/f',
  '[x] reviewed',
  '[^1]: a footnote',
  '# heading',
  '> quote',
  '- item',
  '+ item',
  '1. ordered',
  '2) ordered',
  '===',
  '---',
  '    indented',
  '$\\color{red}{Approved}$ and $$x$$',
  'a | b \\| c \\\\| d',
  'line one\nline two\r\n\r\n# heading\u2028next\u2029last',
  'trailing backslash \\',
  '\\*not bold\\*',
  '[link](http://127.0.0.1:9/g "title") [ref][x] [x]: y',
  'back\\slash and `tick` at the end`',
];

describe('mdText', () => {
  it.each([
    ['plain words', 'Ignored missing component(s): ../shared', 'Ignored missing component(s): ../shared'],
    ['a name with underscores', 'my_app_v2', 'my_app_v2'],
    ['emphasis', '*a* _b_ ~c~', '\\*a\\* \\_b\\_ \\~c\\~'],
    ['underscores at a word end', '__init__ a_', '\\_\\_init\\_\\_ a\\_'],
    ['a bracketed name', '[flux-system/apps] note', '[flux-system/apps] note'],
    ['a link', '[a](http://x/y)', `[a\\](http:${J}//x/y)`],
    ['an image', '![b](x.png)', '![b\\](x.png)'],
    ['a reference', '[a][b] [c]: d', '[a\\][b] [c\\]: d'],
    ['a task box at the start', '[x] done', '\\[x] done'],
    ['a bracket at the end', 'a [b]', 'a [b\\]'],
    ['HTML', '<b>x</b> & &amp;', '&lt;b&gt;x&lt;/b&gt; &amp; &amp;amp;'],
    ['a code span', 'a `b` c', 'a \\`b\\` c'],
    ['a pipe and a backslash', 'a|b\\c', 'a\\|b\\\\c'],
    ['math', '$x$', '&#36;x&#36;'],
    ['a mention', '@octocat hi', `@${J}octocat hi`],
    ['a team mention', '(@org/team)', `(@${J}org/team)`],
    ['a mail address', 'a@b.example', `a@${J}b.example`],
    ['a commit reference', 'org/repo@0123abcd', `org/repo@${J}0123abcd`],
    ['a revision', 'main@sha1:0123abc', 'main@sha1:0123abc'],
    ['an issue reference', 'fixes #12', `fixes #${J}12`],
    ['a GH reference', 'GH-7', `GH${J}-7`],
    ['a URL', 'see https://x.example', `see https:${J}//x.example`],
    ['a www address', 'www.x.example', `www${J}.x.example`],
    ['a heading at the start', '# x', '\\# x'],
    ['a hash inside', 'a # b', 'a # b'],
    ['a list item at the start', '- x', '\\- x'],
    ['an ordered item at the start', '12. x', '12\\. x'],
    ['a setext underline', '===', '\\==='],
    ['line breaks', 'a\nb\r\n\r\nc  \n d', 'a b c d'],
    ['controls and bidi overrides', 'a\u0000b\u202ec\td', 'a\uFFFDb\uFFFDc d'],
    ['an emoji shortcode', ':+1: ✅', ':+1: ✅'],
  ])('%s', (_why, input, want) => {
    expect(mdText(input)).toBe(want);
  });

  it.each(HOSTILE)('renders %j as its text, in a paragraph and in a table cell', (s) => {
    const want = oneLineText(s);
    const html = marked.parse(`x ${mdText(s)}`) as string;
    expect(html).not.toMatch(/<(a|img|strong|em|del|h\d|blockquote|ul|ol|li|input|b|code|hr|pre)\b/);
    expect(shown(html).trim()).toBe(`x ${want}`.trim());
    const table = marked.parse(`| a | b |\n| --- | --- |\n| ${mdText(s)} | z |\n`) as string;
    const cells = [...table.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
    expect(cells).toHaveLength(2);
    expect(shown(cells[0]!)).toBe(want.trim());
    expect(cells[1]).toBe('z');
  });

  it.each(HOSTILE)('keeps %j from being a mention, reference or URL to GitHub’s text filters', (s) => {
    const text = shown((marked.parse(mdText(s)) as string).replaceAll(J, '\u0001'));
    expect(text).not.toMatch(/(?:^|[^\w])@[a-z0-9]/i);
    expect(text).not.toMatch(/#\d|GH-\d|:\/\/|www\./i);
  });
});

describe('mdCode', () => {
  it.each([
    ['a name', 'flux-system/apps', 'text', '`flux-system/apps`'],
    ['backticks', 'a`b``c', 'text', '```a`b``c```'],
    ['a backtick at an end', '`x', 'text', '`` `x ``'],
    ['spaces at both ends', ' a ', 'text', '`  a  `'],
    ['nothing', '', 'text', '` `'],
    ['a pipe outside a table', 'a|b', 'text', '`a|b`'],
    ['a pipe in a table cell', 'a|b', 'cell', '`a\\|b`'],
    ['a backslash before a pipe in a cell', 'a\\|b', 'cell', `\`a\\${J}\\|b\``],
    ['a line break', 'a\nb', 'text', '`a b`'],
  ] as const)('%s', (_why, input, where, want) => {
    expect(mdCode(input, where)).toBe(want);
  });

  it.each(HOSTILE)('shows %j as code, in a list item and in a table cell', (s) => {
    const want = oneLineText(s);
    const item = marked.parse(`- ${mdCode(s)}`) as string;
    const code = [...item.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => m[1]!);
    expect(code).toHaveLength(1);
    expect(decode(code[0]!)).toBe(want);
    const table = marked.parse(`| a | b |\n| --- | --- |\n| ${mdCode(s, 'cell')} | z |\n`) as string;
    const cells = [...table.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
    expect(cells).toHaveLength(2);
    expect(cells[0]).toMatch(/^<code>[\s\S]*<\/code>$/);
    expect(shown(cells[0]!)).toBe(want);
    expect(cells[1]).toBe('z');
  });
});

describe('htmlText and plainText', () => {
  it.each([
    ['tags', '</summary></details><img src=x>', '&lt;/summary&gt;&lt;/details&gt;&lt;img src=x&gt;'],
    ['quotes and ampersands', `"a" & 'b'`, '&quot;a&quot; &amp; &#39;b&#39;'],
    ['Markdown, shown as it is there', '**a** [b](c) a|b', '**a** [b](c) a|b'],
    ['a mention and a URL', '@octocat http://x', `@${J}octocat http:${J}//x`],
    ['line breaks', 'a\n\nb', 'a b'],
  ])('htmlText: %s', (_why, input, want) => {
    expect(htmlText(input)).toBe(want);
  });

  it.each([
    ['text', 'spec.path "apps/x" does not exist', 'spec.path "apps/x" does not exist'],
    ['Markdown, shown as it is', '**a** [b](c) <i>', '**a** [b](c) <i>'],
    ['a mention, a reference, a URL', '@octocat #1 http://x', `@${J}octocat #${J}1 http:${J}//x`],
    ['line breaks', 'a\r\nb', 'a b'],
  ])('plainText: %s', (_why, input, want) => {
    expect(plainText(input)).toBe(want);
  });
});

// ---- the renderings of a hostile report -----------------------------------------------------------

const ATTACK = `${BRIEF} <img src="http://127.0.0.1:9/c.png"> _underlined_ ~~struck~~ fixes #1 www.example.org $\\color{red}{x}$`;
const WORDS = ['Security review', 'approved by', 'underlined', 'struck', 'All checks passed', 'reviewed'];
const BLOCK = '# ✅ All checks passed\n\n> approved by @octocat\n\n- [x] reviewed';

function entry(subject: string, action: ChangeSetEntry['action'], extra: Partial<ChangeSetEntry> = {}): ChangeSetEntry {
  return { subject, action, apiVersion: 'v1', kind: 'ConfigMap', namespace: 'apps', name: 'x', ...extra };
}

function hostileReport(): Report {
  const changeset = [
    entry(`ConfigMap/apps/${ATTACK}`, 'created', { note: ATTACK }),
    entry(`ConfigMap/apps/${ATTACK}|`, 'configured', {
      diff: [{ path: `/data/${ATTACK}`, kind: 'changed', before: ATTACK, after: `${ATTACK}\n\`\`\`\n${BLOCK}` }],
    }),
    entry(`ConfigMap/apps/${ATTACK}`, 'skipped'),
    entry(`ConfigMap/apps/${ATTACK}`, 'unchanged'),
  ];
  const pruned = [{ subject: `ConfigMap/apps/${ATTACK}`, action: 'deleted' as const, reason: ATTACK }];
  const k: Report = {
    mode: 'preview',
    kustomization: `flux-system/${ATTACK}`,
    cluster: `prod ${ATTACK}`,
    path: `./apps/${ATTACK}`,
    server: 'https://k8s.example.com',
    ok: false,
    error: `${ATTACK}\n${BLOCK}`,
    changeset,
    counts: countReport(changeset, pruned),
    durationMs: 1000,
    notes: [ATTACK, BLOCK],
    pruned,
    health: [{ subject: `Deployment/apps/${ATTACK}`, status: 'InProgress', message: ATTACK }],
    source: { ref: `OCIRepository flux-system/${ATTACK}`, revision: `latest@sha256:${ATTACK}` },
  };
  const removed = {
    kustomization: `flux-system/${ATTACK}`,
    inventory: `flux-system/${ATTACK}`,
    objects: 1,
    deletionPolicy: 'Delete' as const,
    action: 'deleted' as const,
    reason: ATTACK,
    cluster: `prod ${ATTACK}`,
  };
  return {
    ...k,
    kustomizations: [k],
    removed: [removed],
    notes: [BLOCK, ATTACK],
  };
}

/** Live markup from the attacker's text in `markdown`, as GitHub would render it (roughly). */
function live(markdown: string): string[] {
  const out: string[] = [];
  const html = marked.parse(markdown) as string;
  for (const m of html.matchAll(/<a\b[^>]*href="([^"]*)"/g))
    if (!m[1]!.startsWith('https://github.com/acme/')) out.push(`link ${m[1]}`);
  for (const m of html.matchAll(/<(img|input|b|i)\b[^>]*>/g)) out.push(`tag ${m[0]}`);
  // The renderings' own headings and bold hold the text escaped; the attacker's would start with it.
  for (const m of html.matchAll(/<(strong|em|del|h[1-6]|blockquote)>\s*(?:<p>)?([\s\S]*?)<\/\1>/g))
    if (
      WORDS.some((w) => m[2]!.replace(/<code>[\s\S]*?<\/code>/g, '').includes(w)) &&
      !/^(❌|Cluster|<code>)/.test(m[2]!)
    )
      out.push(`${m[1]} ${m[2]!.slice(0, 60)}`);
  const text = decode(html.replace(/<(pre|code)\b[\s\S]*?<\/\1>/g, ' ').replace(/<[^>]*>/g, ' '));
  for (const m of text.matchAll(/(?:^|\W)(@octocat|#1\b|www\.|:\/\/)/g)) out.push(`filter ${m[1]}`);
  return out;
}

describe('a report whose every text is hostile', () => {
  const r = hostileReport();
  const runUrl = 'https://github.com/acme/fleet/actions/runs/1';

  it.each([
    ['the PR comment', () => renderComment(r, { marker: commentMarker('k'), runUrl }).body],
    ['the PR comment (list tier)', () => renderComment(r, { marker: commentMarker('k'), runUrl, limit: 9000 }).body],
    ['the check run summary', () => renderCheckOutput(r, { runUrl }).summary],
    ['the check run text', () => renderCheckOutput(r, { runUrl }).text],
    ['the job summary', () => renderSummary(r)],
    ['the job summary of one Kustomization', () => renderSummary(r.kustomizations![0]!)],
    [
      'the PR comment of one Kustomization',
      () => renderComment(r.kustomizations![0]!, { marker: commentMarker('k'), runUrl }).body,
    ],
  ])('%s renders it inert', (_what, render) => {
    const md = render();
    expect(md).toContain('Security review');
    expect(live(md)).toEqual([]);
  });

  it('the judge sees the markup when the text is not escaped (a control)', () => {
    expect(live(`- ${ATTACK}\n\n${BLOCK}`)).toEqual(
      expect.arrayContaining([
        'link http://127.0.0.1:9/a',
        'tag <img src="http://127.0.0.1:9/b.png" alt="b">',
        expect.stringMatching(/^strong /),
        expect.stringMatching(/^em /),
        expect.stringMatching(/^del /),
        expect.stringMatching(/^h1 /),
        expect.stringMatching(/^blockquote /),
        'filter #1',
      ]),
    );
    expect(live('@octocat and https://x.example')).toEqual(['link https://x.example', 'filter @octocat']);
  });

  it('the check run title is one plain line that mentions no one', () => {
    const { title } = renderCheckOutput(r, { runUrl });
    expect(title).not.toMatch(/[\r\n]/);
    expect(title).toContain(`@${J}octocat`);
    expect(title).not.toMatch(/\\\*/);
  });
});
