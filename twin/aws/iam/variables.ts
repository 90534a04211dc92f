import type { ContextValues } from './policy.js';
import { LITERAL } from './wildcards.js';

/**
 * Policy variables: `${aws:PrincipalTag/tenant}`, `${aws:username}`, any
 * request key, with an optional default (`${aws:PrincipalTag/team, 'none'}`),
 * and the escapes `${*}`, `${?}` and `${$}` for the literal characters. A
 * variable whose key the request lacks and that has no default makes the
 * whole string undefined: IAM then treats the element as not matching. A
 * multivalued key cannot fill a variable either.
 */
export function substituteVariables(text: string, context: ContextValues): string | undefined {
  if (!text.includes('${')) return text;
  let missing = false;
  const filled = text.replace(/\$\{([^}]*)\}/g, (_whole, inner: string) => {
    if (inner === '*' || inner === '?' || inner === '$') return `${LITERAL}${inner}`;
    const [name, fallback] = splitDefault(inner);
    const values = context.get(name.toLowerCase());
    if (values && values.length === 1) return escapeWildcards(values[0]!);
    if (fallback !== undefined) return escapeWildcards(fallback);
    missing = true;
    return '';
  });
  if (missing) return undefined;
  return filled;
}

function splitDefault(inner: string): [string, string | undefined] {
  const comma = inner.indexOf(',');
  if (comma < 0) return [inner.trim(), undefined];
  const fallback = inner
    .slice(comma + 1)
    .trim()
    .replace(/^'(.*)'$/s, '$1');
  return [inner.slice(0, comma).trim(), fallback];
}

/**
 * A tag value holding `*` or `?` must match itself only, not act as a
 * wildcard: it is marked like the `${*}` escapes, and literal() turns both
 * back into characters after the wildcard match compiled them as literals.
 */
function escapeWildcards(value: string): string {
  return value.replace(/[*?$]/g, (c) => `${LITERAL}${c}`);
}
