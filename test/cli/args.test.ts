import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { KeyValueList, parseCommand, usageText, UsageError, type CommandSpec } from '../../src/cli/args.js';
import { RUN_SPEC } from '../../src/cli/run.js';
import { paperclip } from './helpers.js';

const spec: CommandSpec = {
  name: 'example',
  summary: 'an example',
  description: 'Does nothing.',
  flags: z.object({
    tenant: z
      .string()
      .regex(/^[a-z]+$/, 'tenant ids are lower-case')
      .meta({ value: 'tenant', description: 'whose' }),
    count: z.coerce.number().int().min(1).default(3).meta({ value: 'n', description: 'how many' }),
    json: z.boolean().default(false).meta({ description: 'as JSON' }),
    param: KeyValueList.meta({ value: 'k=v', description: 'repeatable' }),
  }),
  positionals: [{ name: 'pack', description: 'a pack file', schema: z.string().endsWith('.yaml', 'give a .yaml file') }],
};

test('flags are parsed and typed from the schema alone', () => {
  const { flags, positionals } = parseCommand(spec, ['p.yaml', '--tenant', 'acme', '--json', '--param', 'a=1', '--param', 'b=x=y']);
  assert.deepEqual(flags, { tenant: 'acme', count: 3, json: true, param: { a: '1', b: 'x=y' } });
  assert.deepEqual(positionals, ['p.yaml']);
});

test('bad flags name the flag and the fix', () => {
  const cases: Array<[string[], RegExp]> = [
    [['p.yaml', '--tenat', 'acme'], /paperclip example: unknown flag --tenat; did you mean --tenant\?/],
    [['p.yaml', '--tenant'], /--tenant: it needs a value: --tenant <tenant>/],
    [['p.yaml', '--tenant', 'acme', '--json=yes'], /--json: it is a switch and takes no value/],
    [['p.yaml'], /--tenant: is required; give --tenant <tenant>: whose/],
    [['p.yaml', '--tenant', 'ACME'], /--tenant: tenant ids are lower-case/],
    [['p.yaml', '--tenant', 'acme', '--count', '0'], /--count: Too small/],
    [['p.json', '--tenant', 'acme'], /<pack>: give a \.yaml file/],
    [['--tenant', 'acme'], /expected <pack>, got none/],
    [['a.yaml', 'b.yaml', '--tenant', 'acme'], /expected <pack>, got "a\.yaml" "b\.yaml"/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(
      () => parseCommand(spec, argv),
      (error: unknown) => error instanceof UsageError && message.test(error.message) && /see paperclip example --help/.test(error.message),
      argv.join(' '),
    );
  }
});

test('usage text lists every declared flag with its placeholder, description and default', () => {
  const text = usageText(spec);
  assert.match(text, /^Usage: paperclip example <pack> --tenant <tenant> \[flags\]/);
  assert.match(text, /--count <n> +how many \(default 3\)/);
  assert.match(text, /--json +as JSON/);
  assert.match(text, /--param <k=v> \.\.\. +repeatable/);
  for (const name of Object.keys((RUN_SPEC.flags as z.ZodObject).shape)) assert.match(usageText(RUN_SPEC), new RegExp(`--${name}\\b`));
});

test('npx paperclip --help lists every command with one line; a bad flag exits 2', async () => {
  const help = await paperclip(['--help']);
  assert.equal(help.code, 0, help.stderr);
  for (const name of [
    'run',
    'sitepack check',
    'sitepack probe',
    'sitepack draft',
    'demo',
    'drill',
    'compensate',
    'takeover list',
    'takeover resolve',
    'audit verify',
    'evidence',
    'report',
    'plan',
  ])
    assert.match(help.stdout, new RegExp(`\\n {2}${name} +\\S`), name);
  const bad = await paperclip(['report', '--sinse', '1d']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /paperclip report: unknown flag --sinse; did you mean --since\?/);
});
