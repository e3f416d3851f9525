#!/usr/bin/env node
// `npm run workflows`: checks every workflow this repository has or prints. actionlint (built by
// test/act/build.sh) runs over .github/workflows/ and over each YAML block of README.md and docs/
// that is a workflow (a mapping with `on` and `jobs`), extracted from the Markdown as it is, so that
// what a user copies is what is checked. Then act runs the README's workflows and
// .github/workflows/ on this machine against test clusters and the GitHub emulator
// (test/act/run.ts); each run's whole log goes to reports/workflows/. One line per workflow and per
// run, then `workflows: N passed, N failed`; exits 1 when any failed.
//
// KR_WORKFLOWS_NESTED=1 (set by the runs for the workflows they run): only actionlint, since the CI
// workflow's test command is this one and would run the runs inside themselves.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const ACTIONLINT = join(REPO, 'test/act/bin/actionlint');

/** Markdown files that may print workflows: the README and everything under docs/. */
function markdownFiles() {
  const out = [join(REPO, 'README.md')];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(REPO, 'docs'));
  return out;
}

/** The fenced YAML blocks of a Markdown text that are workflows, with the line each starts on. */
export function workflowBlocks(text) {
  const blocks = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ya?ml)\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(indent));
    const yaml = body.join('\n');
    let doc;
    try {
      doc = parse(yaml);
    } catch {
      doc = undefined;
    }
    if (doc && typeof doc === 'object' && 'jobs' in doc && ('on' in doc || true in doc)) {
      blocks.push({ line: i + 2, yaml: `${yaml}\n`, name: typeof doc.name === 'string' ? doc.name : '' });
    }
    i = j;
  }
  return blocks;
}

async function main() {
  const lint = actionlint();
  let { passed, failed } = lint;
  if (process.env.KR_WORKFLOWS_NESTED) {
    console.log('workflows: the act runs are skipped inside a workflow run of npm run workflows (they are running it)');
  } else {
    const { runWorkflows } = await import('../test/act/run.ts');
    const runs = await runWorkflows((line) => console.log(line), {
      only: process.env.KR_WORKFLOWS_ONLY,
      logs: join(REPO, 'reports/workflows'),
    });
    passed += runs.passed;
    failed += runs.failed;
  }
  console.log(`workflows: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

/** actionlint over every workflow: counts of the files that passed and failed. */
function actionlint() {
  if (!existsSync(ACTIONLINT)) {
    console.log(`workflows: ${relative(REPO, ACTIONLINT)} is missing: run bash test/act/build.sh`);
    return { passed: 0, failed: 1 };
  }
  const dir = mkdtempSync(join(tmpdir(), 'kr-workflows-'));
  const checks = [];
  try {
    const own = join(REPO, '.github/workflows');
    for (const f of readdirSync(own)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()) {
      checks.push({ what: `.github/workflows/${f}`, file: join(own, f) });
    }
    for (const md of markdownFiles()) {
      workflowBlocks(readFileSync(md, 'utf8')).forEach((b, n) => {
        const file = join(dir, `${relative(REPO, md).replace(/[/.]/g, '_')}-${n + 1}.yml`);
        writeFileSync(file, b.yaml);
        checks.push({
          what: `${relative(REPO, md)}:${b.line}${b.name ? ` (${b.name})` : ''}`,
          file,
          // actionlint's line numbers are the block's: shown as the Markdown file's.
          at: (line) => `${relative(REPO, md)}:${b.line + line - 1}`,
        });
      });
    }
    let failed = 0;
    for (const c of checks) {
      // -shellcheck= and -pyflakes= : the script checks need tools this machine may not have; the
      // rest (expressions, contexts, needs, matrices, action inputs, permissions) is actionlint's own.
      const r = spawnSync(ACTIONLINT, ['-no-color', '-shellcheck=', '-pyflakes=', c.file], {
        cwd: REPO,
        encoding: 'utf8',
      });
      const ok = r.status === 0;
      if (!ok) failed++;
      console.log(`workflows: ${c.what}: actionlint ${ok ? 'ok' : 'failed'}`);
      if (ok) continue;
      const names = [c.file, relative(REPO, c.file)];
      for (const l of `${r.stdout}${r.stderr}`.trim().split('\n')) {
        const m = /^(.*?):(\d+):(\d+): (.*)$/.exec(l);
        const located =
          m && names.includes(m[1]) ? `${c.at ? c.at(Number(m[2])) : `${c.what}:${m[2]}`}:${m[3]}: ${m[4]}` : l;
        console.log(`  ${located}`);
      }
    }
    return { passed: checks.length - failed, failed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Not a top-level await: test/act/readme-runs.ts imports this module's workflowBlocks, and a module
// awaiting its own importer never finishes loading.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  void main().then((code) => {
    process.exitCode = code;
  });
}
