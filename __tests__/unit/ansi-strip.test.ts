// Terminal control sequences from the tree never reach the log or the job summary as escapes
// (src/util/terminal.ts), through the stream guard every write passes (src/action/stream-guard.ts).
import { describe, expect, it } from 'vitest';
import { stripTerminalControls } from '../../src/util/terminal.js';
import { guardStream } from '../../src/action/stream-guard.js';

const ESC = '\x1b';

describe('stripTerminalControls', () => {
  it.each([
    ['plain text unchanged', 'ConfigMap/ns/app created', 'ConfigMap/ns/app created'],
    ['tab and line feed kept', 'a\tb\nc\r\nd', 'a\tb\nc\r\nd'],
    ['SGR colour', `${ESC}[32mReady${ESC}[0m`, 'Ready'],
    ['erase line and cursor up', `failed${ESC}[2K${ESC}[1A ok`, 'failed ok'],
    ['private-mode CSI', `${ESC}[?25lhidden cursor`, 'hidden cursor'],
    ['C1 CSI', '\x9b31mred', 'red'],
    ['OSC title ended by BEL', `${ESC}]0;pwned\x07name`, 'name'],
    ['OSC 8 hyperlink ended by ST', `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`, 'click'],
    ['unterminated OSC runs to the end', `name${ESC}]0;rest of line`, 'name'],
    ['DCS string', `${ESC}Pq#0;2;0;0;0${ESC}\\after`, 'after'],
    ['two-character escape (RIS)', `${ESC}cname`, 'name'],
    ['charset designation', `${ESC}(0box`, 'box'],
    ['lone ESC at the end', `name${ESC}`, 'name'],
    ['backspaces', 'rm -rf\b\b\b\b\b\bls', 'rm -rfls'],
    [
      'a carriage return that overwrites becomes a line feed',
      'deleted: prod\rdeleted: none',
      'deleted: prod\ndeleted: none',
    ],
    ['NUL, BEL, DEL and C1 NEL', 'a\x00b\x07c\x7fd\x85e', 'abcde'],
  ])('%s', (_what, text, want) => {
    expect(stripTerminalControls(text)).toBe(want);
  });

  it('leaves no escape in any text', () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join('x');
    // eslint-disable-next-line no-control-regex
    expect(stripTerminalControls(all)).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/);
  });
});

describe('the stream guard', () => {
  it('strips escapes from every write, and still neutralises commands', () => {
    const written: string[] = [];
    const stream = {
      write: (chunk: unknown) => {
        written.push(String(chunk));
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    guardStream(stream);
    stream.write(`${ESC}[2K${ESC}[32mok${ESC}[0m\n`);
    stream.write(`name\r::warning::forged\n`);
    expect(written.join('')).toBe('ok\nname\n%3A:warning::forged\n');
  });
});
