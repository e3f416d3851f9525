// npm run workflows checks what the README and docs print as workflows: which fenced blocks those are.
import { describe, expect, it } from 'vitest';
import { workflowBlocks } from '../../scripts/workflows.mjs';

const fence = (lang: string, body: string, indent = '') =>
  [`${indent}\`\`\`${lang}`, ...body.split('\n').map((l) => `${indent}${l}`), `${indent}\`\`\``].join('\n');
const workflow = 'name: deploy\non:\n  push:\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: [{run: "true"}]';

describe('workflowBlocks', () => {
  it.each<[string, string, { line: number; name: string }[]]>([
    ['a workflow', `# Title\n\n${fence('yaml', workflow)}\n`, [{ line: 4, name: 'deploy' }]],
    ['yml as the language', fence('yml', workflow), [{ line: 2, name: 'deploy' }]],
    ['a Kustomization is not one', fence('yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}'), []],
    ['a list item’s indented block', `1. Copy:\n\n${fence('yaml', workflow, '   ')}\n`, [{ line: 4, name: 'deploy' }]],
    ['other languages are not read', fence('sh', 'on: x\njobs: y'), []],
    ['YAML that does not parse', fence('yaml', 'on: [\njobs:'), []],
  ])('%s', (_, text, blocks) => {
    expect(workflowBlocks(text).map((b) => ({ line: b.line, name: b.name }))).toEqual(blocks);
  });

  it('gives the block as it is printed, without the list indentation', () => {
    const [block] = workflowBlocks(fence('yaml', workflow, '   '));
    expect(block?.yaml).toBe(`${workflow}\n`);
  });

  it('finds every workflow the README prints', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(workflowBlocks(readme).map((b) => b.name)).toEqual([
      'deploy',
      'preview',
      'drift',
      'deploy',
      'deploy-eks',
      'deploy-gke',
      'deploy-aks',
    ]);
  });
});
