import { z } from 'zod';

/**
 * The one rule for free text the product accepts (parameters such as a note or
 * a refund reason, approval notes, takeover notes, compensation reasons):
 * "never blank" means at least one character a reader can see, and nothing may
 * reorder how the text is displayed. A note of zero-width spaces, of a lone
 * combining mark or of a Hangul filler passes `trim()` yet shows nothing: a
 * write "done" with it, or an audit entry saying it, would record text nobody
 * can read. A bidirectional control makes the same bytes read differently in
 * a mail, a page and a log.
 */

// Letters, digits, punctuation and symbols are what a reader sees; a combining
// mark only changes the character before it, a format control nothing at all.
const SEEN = /[\p{L}\p{N}\p{P}\p{S}]/u;
// Code points the standard says to render as nothing, even when categorised as
// letters (U+115F, U+1160, U+3164 and U+FFA0, the Hangul fillers) or symbols;
// plus the blank Braille pattern, a symbol that draws no dots.
const UNSEEN = /[\p{Default_Ignorable_Code_Point}\u2800]/u;

/** Embeddings, overrides, isolates and marks that change the display order of text. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** Controls (line breaks, tabs, escapes) and the line and paragraph separators. */
const LINE_BREAKING = /[\p{Cc}\u2028\u2029]/u;

/** Whether the text shows at least one letter, digit, punctuation mark or symbol. */
export function hasVisibleCharacter(text: string): boolean {
  for (const ch of text) if (SEEN.test(ch) && !UNSEEN.test(ch)) return true;
  return false;
}

/** Whether the text holds a bidirectional control. */
export function hasBidiControl(text: string): boolean {
  return BIDI_CONTROL.test(text);
}

/** Whether the text is one line: no controls, no line or paragraph separators, no bidirectional controls. */
export function isOneLine(text: string): boolean {
  return !LINE_BREAKING.test(text) && !BIDI_CONTROL.test(text);
}

export interface FreeTextRules {
  /** Line breaks and tabs are allowed (a multi-line note); other controls never are. */
  multiline?: boolean;
}

/**
 * What is wrong with a piece of free text, phrased to follow the field's name
 * ("note " + problem), with the fix; undefined when it is acceptable. Blank
 * includes text that shows nothing.
 */
export function freeTextProblem(text: string, rules: FreeTextRules = {}): string | undefined {
  if (hasBidiControl(text)) {
    return 'must not contain bidirectional control characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C); type the text without them';
  }
  const bad = [...text].find((ch) => LINE_BREAKING.test(ch) && !(rules.multiline && /[\n\r\t]/.test(ch)));
  if (bad !== undefined) {
    const shown = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return rules.multiline
      ? `must not contain control characters (found ${shown}); only line breaks and tabs are allowed`
      : `must be a single line without control characters (found ${shown})`;
  }
  if (!hasVisibleCharacter(text)) {
    return (
      'must not be blank: it needs at least one visible letter, digit, punctuation mark or symbol ' +
      '(spaces, zero-width and format characters, and combining marks alone do not count)'
    );
  }
  return undefined;
}

/**
 * The zod refinement every boundary that takes free text uses: the string,
 * trimmed, must pass `freeTextProblem`. The issue's message names the field
 * (`field`) and the fix.
 */
export function visibleText(field: string, options: FreeTextRules & { max: number; min?: number; required?: string }) {
  return z
    .string(options.required ? { error: (issue) => (issue.input === undefined ? options.required : undefined) } : undefined)
    .trim()
    .max(options.max, `${field} is at most ${options.max} characters`)
    .superRefine((text, ctx) => {
      const problem = freeTextProblem(text, options);
      if (problem) ctx.addIssue({ code: 'custom', message: `${field} ${problem}` });
      else if (options.min !== undefined && text.length < options.min)
        ctx.addIssue({ code: 'custom', message: `${field} is at least ${options.min} characters` });
    });
}
