import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { readActionSettings } from '../../src/action/inputs.js';
import { main } from '../../src/cli.js';
import { flagName, flagSpelling } from '../../src/options/spelling.js';
import { CLI_ONLY, INPUTS, OPTIONS } from '../../src/options/table.js';
import { COMMANDS, usage } from '../../src/options/usage.js';
import { REPO } from '../helpers/paths.js';

interface ActionInput {
  description?: string;
  default?: string | number | boolean;
  required?: boolean;
}

/** The CLI's stdout and stderr while `run` runs, and what it returned. */
async function capture(run: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const code = await run();
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

describe('the option table and action.yml', () => {
  let inputs: Record<string, ActionInput>;
  beforeAll(async () => {
    const action = parse(await readFile(join(REPO, 'action.yml'), 'utf8')) as { inputs: Record<string, ActionInput> };
    inputs = action.inputs;
  });

  it('has every input of action.yml, in its order, and no other', () => {
    expect(INPUTS.map((o) => o.input)).toEqual(Object.keys(inputs));
  });

  it.each(INPUTS.map((o) => [o.input!, o] as const))(
    '%s: description, default and required as action.yml',
    (name, o) => {
      const want = inputs[name]!;
      expect(o.description, `${name}: the description differs from action.yml's`).toBe(want.description);
      expect(o.default, `${name}: the default differs from action.yml's`).toBe(
        want.default === undefined ? undefined : String(want.default),
      );
      expect(o.required ?? false, `${name}: required differs from action.yml's`).toBe(want.required ?? false);
    },
  );

  it('feeds each settingsOf() field from one option', () => {
    const fields = OPTIONS.flatMap((o) => (o.field ? [o.field] : []));
    expect(new Set(fields).size).toBe(fields.length);
    expect(INPUTS.filter((o) => !o.field)).toEqual([]);
  });

  it('says the values of its enums as settingsOf() takes them', () => {
    expect(INPUTS.find((o) => o.input === 'mode')?.values).toEqual(['apply', 'preview', 'drift', 'plan', 'report']);
    for (const o of OPTIONS.filter((x) => x.kind === 'enum')) expect(o.values?.length, flagName(o)).toBeGreaterThan(1);
  });

  it('masks the credential-bearing inputs, and only those', () => {
    expect(INPUTS.filter((o) => o.secret).map((o) => o.input)).toEqual([
      'kubeconfig',
      'git-credentials',
      'registry-credentials',
      'github-token',
      'sops-age-key',
      'sops-pgp-key',
      'secret-vars',
    ]);
  });
});

describe('every input has its CLI flag', () => {
  it('but the command (mode), the GitHub reporting inputs and the Actions cache, each with the reason', () => {
    const without = INPUTS.filter((o) => !o.flag);
    expect(without.map((o) => o.input)).toEqual(['mode', 'github-token', 'comment', 'check-run', 'actions-cache']);
    for (const o of without) expect(o.noFlag, o.input).toMatch(/\w/);
    expect(INPUTS.filter((o) => o.flag && o.noFlag)).toEqual([]);
  });

  it.each(['wait', 'timeout', 'default-service-account', 'no-cross-namespace-refs', 'secret-vars', 'drift-correction'])(
    '%s has one',
    (input) => {
      expect(INPUTS.find((o) => o.input === input)?.flag).toBeDefined();
    },
  );

  it('has a command for every mode', () => {
    const modes = INPUTS.find((o) => o.input === 'mode')?.values ?? [];
    expect(new Set(COMMANDS.map((c) => c.mode))).toEqual(new Set([...modes, 'build']));
  });

  it('spells each flag once', () => {
    const names = OPTIONS.flatMap((o) => {
      const name = flagName(o);
      return name ? [name, ...(o.flag?.short ? [o.flag.short] : [])] : [];
    });
    expect(new Set(names).size).toBe(names.length);
    expect(CLI_ONLY.every((o) => o.flag?.name)).toBe(true);
  });
});

describe('--help', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('importing the CLI runs nothing', () => {
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('prints the usage generated from the table', async () => {
    const { code, stdout } = await capture(() => main(['--help']));
    expect(code).toBe(0);
    expect(stdout).toBe(usage() + '\n');
  });

  it.each(OPTIONS.filter((o) => o.flag).map((o) => [flagSpelling(o), o] as const))('lists %s', async (spelling) => {
    const { stdout } = await capture(() => main(['-h']));
    expect(stdout.split('\n').some((l) => l.trimStart().startsWith(spelling))).toBe(true);
  });

  it.each(INPUTS.filter((o) => !o.flag).map((o) => o.input!))('says why %s has no flag', (input) => {
    expect(usage()).toMatch(new RegExp(`^  ${input} +\\S`, 'm'));
  });

  it('lists every command, and says apply, diff and drift take several Kustomizations', () => {
    for (const c of COMMANDS) expect(usage()).toMatch(new RegExp(`^  ${c.name} +\\S`, 'm'));
    expect(usage().replace(/\s+/g, ' ')).toContain('apply, diff and drift reconcile all of them in dependsOn order');
    expect(usage()).not.toMatch(/take one/);
  });
});

describe('the action reads its inputs through the table', () => {
  it('asks for every input of the table, and nothing else', () => {
    const asked: string[] = [];
    readActionSettings(
      (name) => {
        asked.push(name);
        return '';
      },
      { GITHUB_WORKSPACE: '/ws' },
    );
    expect(new Set(asked)).toEqual(new Set(INPUTS.map((o) => o.input)));
  });
});

describe('the CLI scrubs as the action does', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('replaces a --secret-var value in an error line', async () => {
    const secret = 'hunter2-is-secret';
    const { code, stderr } = await capture(() =>
      main(['diff', '--root', '/nonexistent', '--secret-var', `pw=${secret}`, '--concurrency', secret]),
    );
    expect(code).toBe(2);
    expect(stderr).toContain('concurrency must be a whole number from 1 to 64; got "***"');
    expect(stderr).not.toContain(secret);
  });
});
