// Regular expressions a tree supplies outside src/source/: a Kustomization's spec.ignore targets and
// a SOPS file's encrypted_regex and the like. Both are Go regular expressions (RE2) where Flux and
// sops read them, and are matched here in linear time: `^(a+)+$` against 5,000 a and a `!` takes a
// backtracking RegExp longer than the universe has existed, so a row fails by its timeout if it does.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { parseMetadata } from '../../src/sops/metadata.js';
import { ruleMatches } from '../../src/ssa/ignore.js';

const long = 'a'.repeat(5000);
const object = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

describe('spec.ignore target regexes (ssa/ignore.ts)', () => {
  it.each<[string, string, string, boolean]>([
    ['nested quantifiers, no match', '(a+)+', `${long}!`, false],
    ['nested quantifiers, a match', '(a+)+', long, true],
    ['30 optional groups', `${'(a?)'.repeat(30)}${'a'.repeat(30)}`, 'a'.repeat(30), true],
    ['Go syntax: \\pL', '\\pL+', 'web', true],
    ['Go syntax: (?i)', '(?i)WEB', 'web', true],
  ])('%s', (_, name, objectName, want) => {
    expect(ruleMatches({ paths: [], target: { name } }, object(objectName))).toBe(want);
  });

  it.each([
    ['(?=a)', 'a lookahead'],
    ['(a)\\1', 'a backreference'],
  ])('refuses %s (%s), as Go does, naming the field', (name) => {
    expect(() => ruleMatches({ paths: [], target: { name } }, object('a'))).toThrow(
      /^invalid name regex ".*" in ignore target: /,
    );
  });
});

describe("a SOPS file's regexes (sops/metadata.ts)", () => {
  const meta = (rules: Record<string, string>) => parseMetadata({ age: [{ recipient: 'x', enc: 'y' }], ...rules });

  it.each<[string, string, string, string, boolean]>([
    ['encrypted_regex, nested quantifiers', 'encrypted_regex', '^(a+)+$', `${long}!`, false],
    ['encrypted_regex, a match', 'encrypted_regex', '^(a+)+$', long, true],
    ['unencrypted_regex, unanchored', 'unencrypted_regex', 'pass', 'my_password', true],
    ['encrypted_comment_regex, Go flags', 'encrypted_comment_regex', '(?i)^SOPS:', 'sops: encrypt', true],
  ])('%s', (_, rule, source, key, want) => {
    const m = meta({ [rule]: source });
    const re =
      rule === 'encrypted_regex'
        ? m.encryptedRegex
        : rule === 'unencrypted_regex'
          ? m.unencryptedRegex
          : m.encryptedCommentRegex;
    expect(re?.test(key)).toBe(want);
  });

  it('refuses what Go refuses, naming the field', () => {
    expect(() => meta({ encrypted_regex: '(?<=x)y' })).toThrow(
      /^invalid sops metadata: encrypted_regex is not a valid regular expression \(Go syntax\): /,
    );
  });
});
