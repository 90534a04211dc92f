import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freeTextProblem, hasVisibleCharacter, visibleText } from '../../src/domain/visible-text.js';
import { checkParams, ActionParams } from '../../src/sitepack/params.js';
import { ResolveRequest } from '../../src/app/takeover/resolve.js';

/** "Never blank" means something a reader can see; bidirectional controls are refused in any free text. */
describe('visible free text', () => {
  const invisible = {
    'zero-width space': '\u200b',
    'zero-width joiner and BOM': '\u200d\ufeff',
    'lone combining mark': '\u0301',
    'combining marks after a space': ' \u0301\u0302',
    'Hangul filler (a letter that draws nothing)': '\u3164',
    'halfwidth Hangul filler': '\uffa0',
    'blank Braille pattern': '\u2800',
    'word joiner and soft hyphen': '\u2060\u00ad',
    'variation selector': '\ufe0f',
    'ideographic space': '\u3000',
    'private use character': '\ue000',
  };
  const visible = ['a', '退款', '1', '.', '€', '👍🏽', 'é', 'a\u0301', 'Straße', 'دفع', 'x\u200dy'];
  const bidi = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];

  test('text that shows nothing is blank; letters, digits, punctuation and symbols are not', () => {
    for (const [name, text] of Object.entries(invisible)) {
      assert.equal(hasVisibleCharacter(text), false, name);
      assert.match(freeTextProblem(text) ?? 'accepted', /must not be blank: it needs at least one visible/, name);
    }
    for (const text of visible) assert.equal(freeTextProblem(text), undefined, JSON.stringify(text));
  });

  test('every bidirectional control is refused, even inside visible text, naming the fix', () => {
    for (const ch of bidi) {
      assert.match(
        freeTextProblem(`paid ${ch}twice`) ?? 'accepted',
        /must not contain bidirectional control characters.*type the text without them/,
      );
    }
  });

  test('one line unless multi-line is allowed; other controls never', () => {
    assert.match(freeTextProblem('a\nb') ?? 'accepted', /single line without control characters \(found U\+000A\)/);
    assert.equal(freeTextProblem('a\nb', { multiline: true }), undefined);
    assert.match(freeTextProblem('a\u0007b', { multiline: true }) ?? 'accepted', /control characters \(found U\+0007\)/);
    assert.match(freeTextProblem('a\u2028b') ?? 'accepted', /single line/);
  });

  test('the zod refinement names the field, and every boundary uses it', () => {
    const note = visibleText('note', { max: 20 });
    assert.equal(note.parse('  fine  '), 'fine');
    assert.match(note.safeParse('\u200b').error?.issues[0]?.message ?? '', /^note must not be blank/);
    assert.match(note.safeParse('x'.repeat(21)).error?.issues[0]?.message ?? '', /^note is at most 20 characters/);

    // Site-pack parameters (routing).
    const specs = ActionParams.parse({ note: { type: 'text' }, reason: { type: 'text', required: false } });
    assert.match(checkParams('add_note', specs, { note: '\u200b' })?.message ?? '', /^note must not be blank/);
    assert.match(checkParams('add_note', specs, { note: 'ok', reason: '\u0301' })?.message ?? '', /^reason must not be blank/);
    assert.match(checkParams('add_note', specs, { note: 'ok\u200f' })?.message ?? '', /^note must not contain bidirectional/);
    assert.equal(checkParams('add_note', specs, { note: 'ok', reason: '' }), undefined, 'an optional parameter may be left empty');
    // Takeover notes.
    const resolve = (text: string) =>
      ResolveRequest.safeParse({ key: `k-acme_${'0'.repeat(32)}`, as: 'done', note: text, operator: 'ops@acme.example' });
    assert.match(resolve('\u200b\u200b').error?.issues[0]?.message ?? '', /^--note must not be blank/);
    assert.match(resolve('checked \u202ein the console').error?.issues[0]?.message ?? '', /^--note must not contain bidirectional/);
    assert.equal(resolve('checked\nin the console').success, true);
  });
});
