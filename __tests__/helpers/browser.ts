// The job summary and the PR comment as a reviewer sees them: their Markdown rendered to HTML (marked,
// GitHub-flavoured: tables, <details>) with a plain GitHub-like style, then loaded in headless
// Chromium (Debian's package, installed by scripts/setup.sh), which gives back the text it shows and
// a screenshot.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { marked } from 'marked';

const run = promisify(execFile);
export const CHROMIUM = '/usr/bin/chromium';

/** Flags that keep Chromium off the network and quiet on a closed machine (see the env notes). */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
];

const STYLE = `body{font:14px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;max-width:880px;margin:16px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d1d9e0;padding:4px 10px}th{background:#f6f8fa}
code{background:#eff1f3;border-radius:4px;padding:1px 4px;font-size:90%}pre{background:#f6f8fa;padding:10px;border-radius:6px;overflow:auto}
pre code{background:none;padding:0}.del{background:#ffebe9;display:block}.add{background:#dafbe1;display:block}.hunk{color:#59636e;display:block}
summary{cursor:pointer}details{margin:6px 0}`;

/** A diff block's lines coloured as GitHub colours them (`-` red, `+` green, `@@` grey). */
function colourDiffs(html: string): string {
  return html.replace(/<pre><code class="language-diff">([\s\S]*?)<\/code><\/pre>/g, (_, body: string) => {
    const lines = body.replace(/\n$/, '').split('\n');
    const coloured = lines.map((l) =>
      l.startsWith('-')
        ? `<span class="del">${l}</span>`
        : l.startsWith('+')
          ? `<span class="add">${l}</span>`
          : l.startsWith('@@')
            ? `<span class="hunk">${l}</span>`
            : `${l}\n`,
    );
    return `<pre><code class="language-diff">${coloured.join('')}</code></pre>`;
  });
}

/** The Markdown as a standalone HTML page. */
export function pageOf(markdown: string, title: string): string {
  const body = colourDiffs(marked.parse(markdown, { async: false, gfm: true }));
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** Loads `html` in headless Chromium: the text it renders (innerText of the body) and, when asked, a PNG. */
export async function inChromium(
  html: string,
  opts: { screenshot?: string; width?: number; height?: number } = {},
): Promise<{ text: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-browser-'));
  try {
    const page = join(dir, 'page.html');
    await writeFile(page, html);
    const common = [...FLAGS, `--user-data-dir=${join(dir, 'profile')}`];
    const size = `--window-size=${opts.width ?? 1000},${opts.height ?? 1400}`;
    if (opts.screenshot) {
      await run(CHROMIUM, [...common, size, `--screenshot=${opts.screenshot}`, `file://${page}`], { timeout: 60_000 });
    }
    // The text as rendered: a script writes document.body.innerText into the DOM Chromium dumps.
    const probe = join(dir, 'probe.html');
    await writeFile(
      probe,
      html.replace(
        '</body>',
        '<script>document.title="";const t=document.body.innerText;document.body.innerHTML="";const p=document.createElement("pre");p.id="text";p.textContent=t;document.body.appendChild(p);</script></body>',
      ),
    );
    const { stdout } = await run(CHROMIUM, [...common, '--dump-dom', `file://${probe}`], {
      timeout: 60_000,
      maxBuffer: 16 << 20,
    });
    const m = /<pre id="text">([\s\S]*?)<\/pre>/.exec(stdout);
    const text = (m?.[1] ?? '').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    return { text };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A PNG's width and height, from its IHDR chunk. */
export async function pngSize(file: string): Promise<{ width: number; height: number }> {
  const b = await readFile(file);
  if (b.toString('latin1', 1, 4) !== 'PNG') throw new Error(`${file} is not a PNG`);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}
