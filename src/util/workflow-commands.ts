/**
 * Text on its way to stdout or stderr that must not become a workflow command. The Actions runner
 * reads every line a step prints (both streams; a line ends at `\n`, `\r` or `\r\n`) and runs it as
 * a command when, after leading whitespace, it starts with `::` (`::add-mask::`, `::stop-commands::`,
 * `::error file=…::`), or when it holds `##[` anywhere (the older form, still run for the commands
 * the runner registers). A path, a file name, an object or a server's message with a line break in
 * it could otherwise issue commands in the action's name, the worst of them `::stop-commands::`,
 * after which the runner ignores every `::add-mask::` of the step.
 *
 * `CommandGuard` rewrites what could start a command the way the toolkit escapes command data
 * (`:` as `%3A`, `[` as `%5B`), and nothing else: a text that holds no command prints unchanged.
 * It keeps, between writes, whether the line written so far is only whitespace, so a command split
 * across two writes is caught as well.
 */

/** What .NET's String.TrimStart takes away (Char.IsWhiteSpace), and a little more. */
// eslint-disable-next-line no-control-regex
const SPACE = /^[\s\u0085\u001c-\u001f]*$/;
const isSpace = (c: string): boolean => SPACE.test(c);

export class CommandGuard {
  /** Nothing but whitespace has been written on the current line. */
  private lineStart = true;

  /** `text` with every place that could start a workflow command escaped. */
  write(text: string): string {
    let out = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\n' || c === '\r') {
        this.lineStart = true;
        out += c;
        continue;
      }
      if (c === '#' && text[i + 1] === '#' && (text[i + 2] === '[' || i + 2 === text.length)) {
        // `##[`, or `##` at the end of a write that the next write could complete.
        out += '#%23';
        i += 1;
        this.lineStart = false;
        continue;
      }
      if (c === '#' && i + 1 === text.length) {
        out += '%23';
        this.lineStart = false;
        continue;
      }
      if (this.lineStart && c === ':' && (text[i + 1] === ':' || i + 1 === text.length)) {
        // `::` after nothing but whitespace, or a `:` there that the next write could complete.
        out += '%3A';
        this.lineStart = false;
        continue;
      }
      if (!isSpace(c)) this.lineStart = false;
      out += c;
    }
    return out;
  }
}

/** `text` (whole lines) with nothing in it that the runner would take as a workflow command. */
export function neutraliseCommands(text: string): string {
  return new CommandGuard().write(text);
}
