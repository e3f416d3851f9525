// A YAML key that is a collection (`{ .fluxns }: x`, a Go template left unquoted) makes the yaml
// library warn through process.emitWarning, which Node prints on stderr: no reader of ours lets a
// library warning through (issue 34). What the key becomes is each reader's business.
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { parseYamlStream } from '../../src/objects/yaml.js';
import { readPlain, readPlainSlow } from '../../src/kustomize/plain-yaml.js';
import { yamlAliasProblem } from '../../src/util/bounded.js';

const TEXT =
  'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\ndata:\n  { .fluxns }: x\n  ref: &r y\n  again: *r\n';

describe('no yaml library warning reaches stderr', () => {
  let warn: MockInstance<typeof process.emitWarning>;
  beforeEach(() => {
    warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => {
    warn.mockRestore();
  });

  it.each([
    ['parseYamlStream (Kustomization files, patches, resources)', () => parseYamlStream(TEXT, 'a.yaml')],
    ['readPlain (the plain-directory build)', () => readPlain(TEXT)],
    ['readPlainSlow', () => readPlainSlow(TEXT)],
    ['yamlAliasProblem', () => yamlAliasProblem(TEXT, 'a.yaml')],
  ])('%s', (_, read) => {
    read();
    expect(warn).not.toHaveBeenCalled();
  });

  it('a control: the library does warn by default', async () => {
    const { parseDocument } = await import('yaml');
    parseDocument(TEXT).toJS();
    expect(warn).toHaveBeenCalled();
  });
});
