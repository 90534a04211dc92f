/**
 * HTML for pages and mails: `html` escapes every interpolated value unless it
 * is already Html, so markup is built without a manual escape call anywhere.
 */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** Tagged template that escapes every interpolation unless it is already Html. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type HtmlValue = Html | string | number | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value as string | number);
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Inserts trusted markup (inline scripts, styles) unescaped. */
export function raw(value: string): Html {
  return new Html(value);
}

/** JSON for embedding in an inline <script>: cannot close the script element. */
export function scriptJson(value: unknown): Html {
  return raw(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/\u2028|\u2029/g, ''),
  );
}

/** The items, each escaped unless already Html, with `separator` between them (a `join` for markup). */
export function joinHtml(items: readonly HtmlValue[], separator: Html): Html {
  return html`${items.map((item, i) => (i === 0 ? html`${item}` : html`${separator}${item}`))}`;
}
