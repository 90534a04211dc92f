import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readZip, writeZip } from '../../src/lib/zip.js';
import { REDACTED, redactTrace } from '../../src/browser/trace-redaction.js';

/**
 * Page secrets named by the site pack leave no value anywhere in a trace: DOM
 * snapshots, recorded request bodies (inline or stored as resources), stored
 * pages and any other text that copied them. A synthetic trace with the shapes
 * Playwright writes; the stored trace of a real refund is checked in
 * test/approvals/sign-in.test.ts.
 */
const FORM_TOKEN = 'form-token-Zx81kQ';
const META_TOKEN = 'meta-token-Pq72mW';
const HEADER_TOKEN = 'header-token-Lm55';

function trace(): Buffer {
  const snapshot = {
    type: 'frame-snapshot',
    snapshot: {
      html: [
        'HTML',
        {},
        ['HEAD', {}, ['META', { name: 'csrf-token', content: META_TOKEN }]],
        [
          'BODY',
          {},
          ['FORM', {}, ['INPUT', { type: 'hidden', name: '_csrf', value: FORM_TOKEN }], ['INPUT', { name: 'amount', value: '1280.00' }]],
        ],
      ],
    },
  };
  const post = {
    type: 'resource-snapshot',
    snapshot: {
      request: {
        method: 'POST',
        headers: [{ name: 'x-csrf-token', value: HEADER_TOKEN }],
        postData: { mimeType: 'application/x-www-form-urlencoded', text: `amount=1280.00&_csrf=${FORM_TOKEN}` },
      },
    },
  };
  const stored = { type: 'resource-snapshot', snapshot: { request: { method: 'POST', postData: { _sha1: 'body1.dat' } } } };
  return writeZip(
    new Map([
      ['trace.trace', Buffer.from(`${JSON.stringify(snapshot)}\n`)],
      ['trace.network', Buffer.from(`${JSON.stringify(post)}\n${JSON.stringify(stored)}\n`)],
      ['resources/body1.dat', Buffer.from(JSON.stringify({ csrf_token: 'json-token-Tt66', _csrf: FORM_TOKEN, note: 'kept' }))],
      [
        'resources/page.html',
        Buffer.from(`<meta name="csrf-token" content="${META_TOKEN}"><script>window.t="${HEADER_TOKEN}"</script><p>退款原因</p>`),
      ],
      ['resources/shot.jpeg', Buffer.from([0xff, 0xd8, 0x00, 0x01])],
    ]),
  );
}

describe('trace redaction of page secrets', () => {
  test('every value of a named field is gone from snapshots, bodies and pages; the rest of the trace stays', () => {
    const redacted = readZip(redactTrace(trace(), ['_csrf', 'csrf-token']));
    const text = [...redacted.values()].map((b) => b.toString('utf8')).join('\n');
    for (const secret of [FORM_TOKEN, META_TOKEN, HEADER_TOKEN]) assert.ok(!text.includes(secret), `${secret} is gone`);
    assert.ok(text.includes(REDACTED));
    for (const kept of ['1280.00', '退款原因', 'kept', 'json-token-Tt66']) assert.ok(text.includes(kept), `${kept} stays (not named)`);
    assert.deepEqual([...redacted.get('resources/shot.jpeg')!], [0xff, 0xd8, 0x00, 0x01], 'binary entries are untouched');
  });

  test('without page secrets only headers and cookies are redacted, as before', () => {
    const redacted = readZip(redactTrace(trace()));
    const text = [...redacted.values()].map((b) => b.toString('utf8')).join('\n');
    assert.ok(!text.includes(HEADER_TOKEN), 'the CSRF header value is gone wherever it was copied');
    assert.ok(text.includes(FORM_TOKEN), 'an unnamed form field is not guessed at');
  });
});
