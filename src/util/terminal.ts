/**
 * Terminal control sequences out of text on its way to the log or the job summary. A name, a path or
 * a kustomize error from the tree can carry raw escapes: the runner's log viewer and any terminal
 * that replays the log (`gh run view --log`) interpret them, so a tree could colour a failure green,
 * erase a line (`ESC[2K`, `ESC[1A`), rewrite the window title or plant a hyperlink (OSC 8), or hide
 * text with backspaces and carriage returns. Pure.
 */

/**
 * A control sequence: CSI (`ESC [` or U+009B, parameters, intermediates, a final byte); OSC, DCS, SOS,
 * PM and APC strings (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _` or their C1 forms) up to BEL or ST
 * (`ESC \` or U+009C), or to the end of the text when unterminated; any other escape (`ESC` with
 * intermediates and one final character).
 */
const SEQUENCE =
  // eslint-disable-next-line no-control-regex
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?/g;

/** Other C0 controls but tab and line feed (backspace, BEL, a lone ESC…), DEL and the C1 controls. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]/g;

/**
 * `text` without terminal control sequences or control characters, tab and line feed kept. A
 * carriage return not followed by a line feed (which lets a terminal write over what the line said)
 * becomes a line feed: the runner already ends a line there, so nothing the log shows changes.
 */
export function stripTerminalControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text)) return text;
  return text
    .replace(SEQUENCE, '')
    .replace(/\r(?!\n)/g, '\n')
    .replace(CONTROL, '');
}
