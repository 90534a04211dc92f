import type { ContextValues } from './policy.js';
import { substituteVariables } from './variables.js';
import { literal, matchArn, matchWildcard } from './wildcards.js';

/**
 * IAM condition operators ("IAM JSON policy elements: Condition operators"):
 * String*, Numeric*, Date*, Bool, IpAddress/NotIpAddress, Arn*, Null, each
 * with the `…IfExists` suffix and the `ForAllValues:`/`ForAnyValue:` set
 * qualifiers. An operator this module does not know fails the condition with
 * an error naming it, rather than guessing.
 *
 * Missing keys, as documented: a positive operator is false, a negated one
 * (StringNotEquals, ArnNotLike, NotIpAddress, …) is true; `…IfExists` is true;
 * `ForAllValues` is true (an empty set), `ForAnyValue` false.
 * A multivalued key without a qualifier behaves like ForAnyValue for positive
 * operators and requires every value to pass for negated ones.
 */

type Test = (value: string, expected: string) => boolean;

interface Operator {
  test: Test;
  negated: boolean;
  /** Policy variables are filled in only for string and ARN operators. */
  variables: boolean;
}

function numeric(compare: (a: number, b: number) => boolean): Test {
  return (value, expected) => {
    const a = Number(value);
    const b = Number(expected);
    return !Number.isNaN(a) && !Number.isNaN(b) && compare(a, b);
  };
}

function date(compare: (a: number, b: number) => boolean): Test {
  const parse = (v: string) => (/^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v));
  return (value, expected) => {
    const a = parse(value);
    const b = parse(expected);
    return !Number.isNaN(a) && !Number.isNaN(b) && compare(a, b);
  };
}

function ipv4(value: string): number | undefined {
  const parts = value.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    n = n * 256 + Number(part);
  }
  return n;
}

/** IPv4 CIDR only: nothing local calls from an IPv6 address. */
function inCidr(value: string, cidr: string): boolean {
  const [base, bits = '32'] = cidr.split('/');
  const address = ipv4(value);
  const network = ipv4(base ?? '');
  const length = Number(bits);
  if (address === undefined || network === undefined || !(length >= 0 && length <= 32)) return false;
  const size = 2 ** (32 - length);
  return Math.floor(address / size) === Math.floor(network / size);
}

const equals: Test = (value, expected) => value === literal(expected);
const equalsIgnoreCase: Test = (value, expected) => value.toLowerCase() === literal(expected).toLowerCase();
const like: Test = (value, expected) => matchWildcard(expected, value);
const arnLike: Test = (value, expected) => matchArn(expected, value);

const OPERATORS: Record<string, Operator> = {
  StringEquals: { test: equals, negated: false, variables: true },
  StringNotEquals: { test: equals, negated: true, variables: true },
  StringEqualsIgnoreCase: { test: equalsIgnoreCase, negated: false, variables: true },
  StringNotEqualsIgnoreCase: { test: equalsIgnoreCase, negated: true, variables: true },
  StringLike: { test: like, negated: false, variables: true },
  StringNotLike: { test: like, negated: true, variables: true },
  NumericEquals: { test: numeric((a, b) => a === b), negated: false, variables: false },
  NumericNotEquals: { test: numeric((a, b) => a === b), negated: true, variables: false },
  NumericLessThan: { test: numeric((a, b) => a < b), negated: false, variables: false },
  NumericLessThanEquals: { test: numeric((a, b) => a <= b), negated: false, variables: false },
  NumericGreaterThan: { test: numeric((a, b) => a > b), negated: false, variables: false },
  NumericGreaterThanEquals: { test: numeric((a, b) => a >= b), negated: false, variables: false },
  DateEquals: { test: date((a, b) => a === b), negated: false, variables: false },
  DateNotEquals: { test: date((a, b) => a === b), negated: true, variables: false },
  DateLessThan: { test: date((a, b) => a < b), negated: false, variables: false },
  DateLessThanEquals: { test: date((a, b) => a <= b), negated: false, variables: false },
  DateGreaterThan: { test: date((a, b) => a > b), negated: false, variables: false },
  DateGreaterThanEquals: { test: date((a, b) => a >= b), negated: false, variables: false },
  Bool: { test: equalsIgnoreCase, negated: false, variables: false },
  IpAddress: { test: inCidr, negated: false, variables: false },
  NotIpAddress: { test: inCidr, negated: true, variables: false },
  // ArnEquals compares like ArnLike: IAM documents both as segment-wise matches with wildcards.
  ArnEquals: { test: arnLike, negated: false, variables: true },
  ArnLike: { test: arnLike, negated: false, variables: true },
  ArnNotEquals: { test: arnLike, negated: true, variables: true },
  ArnNotLike: { test: arnLike, negated: true, variables: true },
};

export class UnsupportedConditionError extends Error {
  override readonly name = 'UnsupportedCondition';
}

interface ParsedOperator {
  qualifier: 'ForAllValues' | 'ForAnyValue' | undefined;
  base: string;
  ifExists: boolean;
}

function parse(operator: string): ParsedOperator {
  let rest = operator;
  let qualifier: ParsedOperator['qualifier'];
  const colon = rest.indexOf(':');
  if (colon >= 0) {
    const prefix = rest.slice(0, colon);
    if (prefix !== 'ForAllValues' && prefix !== 'ForAnyValue') throw new UnsupportedConditionError(`unknown set qualifier in ${operator}`);
    qualifier = prefix;
    rest = rest.slice(colon + 1);
  }
  const ifExists = rest.endsWith('IfExists');
  return { qualifier, base: ifExists ? rest.slice(0, -'IfExists'.length) : rest, ifExists };
}

/**
 * One key of one operator block: `values` from the policy, `actual` the
 * request's values for the key (undefined when the request lacks it).
 */
export function conditionHolds(operator: string, values: string[], actual: readonly string[] | undefined, context: ContextValues): boolean {
  const { qualifier, base, ifExists } = parse(operator);
  if (base === 'Null') {
    if (qualifier) throw new UnsupportedConditionError(`${operator} is not an operator IAM evaluates`);
    const absent = actual === undefined || actual.length === 0;
    return values.some((v) => (v.toLowerCase() === 'true' ? absent : !absent));
  }
  const op = OPERATORS[base];
  if (!op) throw new UnsupportedConditionError(`the local IAM evaluator does not know the condition operator ${operator}`);
  const expected = op.variables ? values.map((v) => substituteVariables(v, context)).filter((v): v is string => v !== undefined) : values;
  const present = actual !== undefined && actual.length > 0;
  if (!present) {
    if (qualifier === 'ForAllValues') return true;
    if (qualifier === 'ForAnyValue') return false;
    return ifExists || op.negated;
  }
  const matchesSome = (value: string) => expected.some((e) => op.test(value, e));
  // A negated operator passes for a value that matches none of the policy's values.
  const passes = (value: string) => (op.negated ? !matchesSome(value) : matchesSome(value));
  if (qualifier === 'ForAllValues') return actual.every(passes);
  if (qualifier === 'ForAnyValue') return actual.some(passes);
  return op.negated ? actual.every(passes) : actual.some(passes);
}
