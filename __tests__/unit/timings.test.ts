import { describe, expect, it } from 'vitest';
import { timings } from '../../src/util/timings.js';

/** A clock that advances 10 ms each time it is read. */
const ticking = () => {
  let t = 1000;
  return () => (t += 10);
};

describe('timings', () => {
  it.each([
    [
      'a span that returns',
      async (t: ReturnType<typeof timings>) => {
        t.mark('main');
        expect(await t.span('Render', () => Promise.resolve(7))).toBe(7);
      },
      [
        { name: 'main', at: 1010 },
        { name: 'Render>', at: 1020 },
        { name: 'Render<', at: 1030 },
      ],
    ],
    [
      'a span that throws still ends',
      async (t: ReturnType<typeof timings>) => {
        await expect(t.span('Apply', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
        t.mark('reconciled');
      },
      [
        { name: 'Apply>', at: 1010 },
        { name: 'Apply<', at: 1020 },
        { name: 'reconciled', at: 1030 },
      ],
    ],
    [
      'nested spans (several Kustomizations)',
      async (t: ReturnType<typeof timings>) => {
        await t.span('[ns/a] Render', () => t.span('inner', () => Promise.resolve()));
      },
      [
        { name: '[ns/a] Render>', at: 1010 },
        { name: 'inner>', at: 1020 },
        { name: 'inner<', at: 1030 },
        { name: '[ns/a] Render<', at: 1040 },
      ],
    ],
  ])('%s', async (_, run, marks) => {
    const t = timings(ticking());
    await run(t);
    expect(t.marks).toEqual(marks);
  });
});
