import { describe, expect, it } from 'vitest';
import { shareRefusal } from '../../src/inventory/plan.js';
import { removalAction, removedOf, setIdentity } from '../../src/inventory/removal.js';

describe('setIdentity', () => {
  it.each([
    [undefined, ['clusters/*.yaml'], 'local:clusters/*.yaml'],
    ['org/repo', ['clusters/*.yaml'], 'org/repo:clusters/*.yaml'],
    ['org/repo', ['b.yaml', './a.yaml'], 'org/repo:a.yaml,b.yaml'],
    ['org/repo', [' a.yaml ', 'a.yaml', ''], 'org/repo:a.yaml'],
    ['org/repo', ['././a.yaml'], 'org/repo:a.yaml'],
  ])('%s %j → %s', (source, patterns, want) => {
    expect(setIdentity(source, patterns)).toBe(want);
  });
  it('tells different pattern sets apart', () => {
    expect(setIdentity('o/r', ['a.yaml'])).not.toBe(setIdentity('o/r', ['a.yaml', 'b.yaml']));
    expect(setIdentity('o/r', ['a.yaml'])).not.toBe(setIdentity('o/s', ['a.yaml']));
  });
});

describe('removalAction', () => {
  it.each([
    ['MirrorPrune', true, 'delete', 'deletionPolicy: MirrorPrune with prune: true'],
    ['MirrorPrune', false, 'orphan', 'deletionPolicy: MirrorPrune with prune: false'],
    ['Delete', false, 'delete', 'deletionPolicy: Delete'],
    ['Delete', true, 'delete', 'deletionPolicy: Delete'],
    ['WaitForTermination', false, 'delete-and-wait', 'deletionPolicy: WaitForTermination'],
    ['Orphan', true, 'orphan', 'deletionPolicy: Orphan'],
  ] as const)('%s with prune %s → %s', (deletionPolicy, prune, action, why) => {
    expect(removalAction({ deletionPolicy, prune })).toEqual({ action, why });
  });
});

describe('removedOf', () => {
  const found = [
    { kustomization: 'ns/c', set: 'S' },
    { kustomization: 'ns/a', set: 'S' },
    { kustomization: 'ns/b', set: 'S' },
    { kustomization: 'ns/x', set: 'T' },
    { kustomization: 'ns/y' },
  ];
  it.each([
    ['nothing present: all of the set, sorted', [], ['ns/a', 'ns/b', 'ns/c']],
    ['present ones are not removed', ['ns/a', 'ns/c'], ['ns/b']],
    ['all present', ['ns/a', 'ns/b', 'ns/c'], []],
    ['other sets and path-mode inventories never count', ['ns/x', 'ns/y'], ['ns/a', 'ns/b', 'ns/c']],
  ])('%s', (_, present, want) => {
    expect(removedOf(found, 'S', new Set(present)).map((f) => f.kustomization)).toEqual(want);
  });
});

describe('shareRefusal', () => {
  const guard = { maxShare: 0.5, allowLarge: false };
  it.each([
    [10, 5, guard, false],
    [10, 6, guard, true],
    [12, 6, guard, false],
    [0, 0, guard, false],
    [100, 60, { maxShare: 0.5, allowLarge: true }, false],
    [100, 60, { maxShare: 1, allowLarge: false }, false],
  ])('%i total, %i deleted → refused: %s', (total, deleting, g, refused) => {
    expect(shareRefusal(total, deleting, g) !== undefined).toBe(refused);
  });
  it('names the numbers and the way out', () => {
    expect(shareRefusal(10, 6, guard)).toBe(
      'pruning would delete 6 of 10 object(s) (60%), more than prune-max-share (50%); nothing was deleted. ' +
        'If that is intended, raise prune-max-share or set allow-large-prune: true for one run',
    );
  });
});
