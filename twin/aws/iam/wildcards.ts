/**
 * IAM's wildcards: `*` matches any run of characters (also none), `?` exactly
 * one. Actions compare without regard to case; resources and string values
 * with it.
 */

/** Marks the next character as literal (see variables.ts). */
export const LITERAL = '\u0000';

const cache = new Map<string, RegExp>();

function compile(pattern: string, caseInsensitive: boolean): RegExp {
  const id = `${caseInsensitive ? 'i' : 's'}${pattern}`;
  let regex = cache.get(id);
  if (!regex) {
    let source = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      // \u0000 marks the next character as literal: a `${*}` escape or a filled-in variable's value.
      if (c === LITERAL && i + 1 < pattern.length) source += escapeRegex(pattern[++i]!);
      else if (c === '*') source += '.*';
      else if (c === '?') source += '.';
      else source += escapeRegex(c);
    }
    regex = new RegExp(`^${source}$`, caseInsensitive ? 'is' : 's');
    if (cache.size > 5000) cache.clear();
    cache.set(id, regex);
  }
  return regex;
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\]/.test(c) ? `\\${c}` : c;
}

/** The pattern as plain text (the `\u0000` literal markers removed), for exact comparisons. */
export function literal(pattern: string): string {
  return pattern.split(LITERAL).join('');
}

export function matchWildcard(pattern: string, value: string, caseInsensitive = false): boolean {
  if (pattern === '*') return true;
  return compile(pattern, caseInsensitive).test(value);
}

/**
 * An ARN pattern against an ARN, segment by segment: partition, service,
 * region and account each match on their own (a `*` there does not run into
 * the next segment), the resource part (everything after the fifth colon) as
 * a whole, so `table/*` matches `table/x/index/y`. `*` alone matches anything.
 */
export function matchArn(pattern: string, arn: string): boolean {
  if (pattern === '*') return true;
  const p = splitArn(pattern);
  const a = splitArn(arn);
  if (!p || !a) return matchWildcard(pattern, arn);
  for (let i = 0; i < 6; i++) {
    if (!matchWildcard(p[i]!, a[i]!)) return false;
  }
  return true;
}

function splitArn(value: string): string[] | undefined {
  const parts = value.split(':');
  if (parts.length < 6 || parts[0] !== 'arn') return undefined;
  return [...parts.slice(0, 5), parts.slice(5).join(':')];
}
