import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/domain/audit-chain.js';

/**
 * canonicalJson is RFC 8785 (JSON Canonicalization Scheme, JCS): these are the examples and number samples the
 * standard itself gives, so an auditor can recompute an evidence hash with any JCS implementation.
 */
const canonical = (jsonText: string) => canonicalJson(JSON.parse(jsonText));

test('RFC 8785 section 3.2.2: whitespace, literals, numbers and string escaping', () => {
  const input = String.raw`{
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
    "literals": [null, true, false]
  }`;
  const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
  assert.equal(canonical(input), expected);
});

test('RFC 8785 section 3.2.3: properties sorted by UTF-16 code units, recursively', () => {
  const input = String.raw`{
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis"
  }`;
  const expected =
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
    '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
  assert.equal(canonical(input), expected);
  assert.equal(canonical('{"b":{"d":1,"c":[{"f":2,"e":3}]},"a":null}'), '{"a":null,"b":{"c":[{"e":3,"f":2}],"d":1}}');
});

test('RFC 8785 appendix B: number serialization samples (IEEE 754 bits to text)', () => {
  const samples: Array<[string, string]> = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  for (const [bits, text] of samples) assert.equal(canonicalJson(Buffer.from(bits, 'hex').readDoubleBE(0)), text, bits);
});

test('RFC 8785 appendix B: NaN and Infinity have no JSON form and are refused', () => {
  for (const bits of ['7fffffffffffffff', '7ff0000000000000']) {
    assert.throws(() => canonicalJson({ data: [Buffer.from(bits, 'hex').readDoubleBE(0)] }), /not a finite number/);
  }
});
