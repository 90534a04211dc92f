import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/**
 * Every error class in the product's code, the embedded runtime, the back-office kit and the planner extends NamedError
 * (src/domain/errors.ts), directly or through another one, so each names itself with a literal. The emulated AWS
 * services (twin/aws) and the test back offices raise the errors of what they emulate and are left out.
 */
const OUTSIDE = /^(twin\/aws|backoffices\/(simulator|ledgerly))\//;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `class X extends Error` (or TypeError, RangeError, …): a root that bypasses the base. */
export function errorClassesOffTheBase(text: string): string[] {
  return [...text.matchAll(/class (\w+) extends (?:Error|TypeError|RangeError|SyntaxError|AggregateError)\b/g)].map((match) => match[1]!);
}

test('every error class in the product extends NamedError', () => {
  const offending = ['src', 'twin', 'backoffices', 'planner']
    .flatMap(sources)
    .filter((file) => !OUTSIDE.test(file) && file !== 'src/domain/errors.ts')
    .flatMap((file) => errorClassesOffTheBase(readFileSync(file, 'utf8')).map((name) => `${file}: ${name}`));
  assert.deepEqual(offending, [], 'extend NamedError (src/domain/errors.ts) and set `override readonly name` to a literal');
});

test('the check sees a class rooted on Error itself', () => {
  assert.deepEqual(errorClassesOffTheBase('export class DrillError extends Error {}\nclass Ok extends NamedError {}'), ['DrillError']);
});
