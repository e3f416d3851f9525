import { describe, expect, it } from 'vitest';
import { ANNOTATIONS_PER_REQUEST, annotationBatches, checkAnnotations } from '../../src/report/annotations.js';
import type { Problem } from '../../src/report/problems.js';

describe('checkAnnotations', () => {
  it.each<[string, Problem, ReturnType<typeof checkAnnotations>]>([
    ['a problem without a file has no annotation', { subject: 'ConfigMap/ns/a', message: 'bad' }, []],
    [
      'a problem with a file and line is annotated there',
      { subject: 'ConfigMap/ns/a', message: 'bad', file: 'apps/a.yaml', line: 7 },
      [
        {
          path: 'apps/a.yaml',
          start_line: 7,
          end_line: 7,
          annotation_level: 'failure',
          title: 'ConfigMap/ns/a',
          message: 'bad',
        },
      ],
    ],
    [
      'a problem without a line goes on the first line',
      { subject: 'ConfigMap/ns/a', message: 'bad', file: 'apps/a.yaml' },
      [
        {
          path: 'apps/a.yaml',
          start_line: 1,
          end_line: 1,
          annotation_level: 'failure',
          title: 'ConfigMap/ns/a',
          message: 'bad',
        },
      ],
    ],
  ])('%s', (_, problem, want) => {
    expect(checkAnnotations([problem])).toEqual(want);
  });

  it('cuts the title to 255 and the message to 64,000 characters', () => {
    const [a] = checkAnnotations([{ subject: 's'.repeat(300), message: 'm'.repeat(70_000), file: 'f.yaml' }]);
    expect(a?.title.length).toBe(255);
    expect(a?.message.length).toBe(64_000);
  });
});

describe('annotationBatches', () => {
  const one = checkAnnotations([{ subject: 's', message: 'm', file: 'f.yaml' }])[0]!;
  it.each([
    [0, []],
    [1, [1]],
    [ANNOTATIONS_PER_REQUEST, [ANNOTATIONS_PER_REQUEST]],
    [ANNOTATIONS_PER_REQUEST + 1, [ANNOTATIONS_PER_REQUEST, 1]],
    [2 * ANNOTATIONS_PER_REQUEST + 3, [ANNOTATIONS_PER_REQUEST, ANNOTATIONS_PER_REQUEST, 3]],
  ])('%i annotations go in batches of %j', (n, sizes) => {
    expect(annotationBatches(Array.from({ length: n }, () => one)).map((b) => b.length)).toEqual(sizes);
  });
});
