/**
 * A check run's annotations: one per problem that names a file, and the batches the Checks API takes
 * them in. Pure: src/github/publish.ts sends them with the check run and its updates.
 */
import type { Problem } from './problems.js';

/** The Checks API takes at most 50 annotations per request. */
export const ANNOTATIONS_PER_REQUEST = 50;
/** GitHub's maximum annotation title and message, in characters. */
const TITLE_MAX = 255;
const MESSAGE_MAX = 64_000;

/** One annotation as the Checks API takes it. */
export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'failure';
  title: string;
  message: string;
}

/**
 * The annotations for `problems`, in their order: a problem without a file has nowhere to go and is
 * left out (the summary has it); one without a line is put on the file's first.
 */
export function checkAnnotations(problems: readonly Problem[]): CheckAnnotation[] {
  return problems.flatMap((p) =>
    p.file === undefined
      ? []
      : [
          {
            path: p.file,
            start_line: p.line ?? 1,
            end_line: p.line ?? 1,
            annotation_level: 'failure' as const,
            title: p.subject.slice(0, TITLE_MAX),
            message: p.message.slice(0, MESSAGE_MAX),
          },
        ],
  );
}

/** `annotations` in batches of at most ANNOTATIONS_PER_REQUEST, the first for the create request. */
export function annotationBatches(annotations: readonly CheckAnnotation[]): CheckAnnotation[][] {
  const batches: CheckAnnotation[][] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST)
    batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  return batches;
}
