import { html, raw } from '../http/html.js';
/**
 * Building blocks of the evidence pages. The pages are opened by auditors from
 * a synced folder on machines that may have no network, so everything is in
 * the file: inline CSS, system fonts only (with CJK fallbacks, because tenant
 * names, statuses and reasons are Chinese), no scripts.
 */

/** An href/src for an object name relative to the page: each path segment URL-encoded. */
export function relativeHref(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment === '..' || segment === '.' ? segment : encodeURIComponent(segment)))
    .join('/');
}

export const FONT_STACK =
  'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Noto Sans SC", "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", sans-serif';

export const MONO_STACK =
  'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", "Noto Sans Mono", "Noto Sans SC", "Noto Sans CJK SC", monospace';

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font-family: ${FONT_STACK}; margin: 0; color: #1d2430; background: #f6f7f9; line-height: 1.5; font-size: 14px; }
main { max-width: 1180px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; border-bottom: 1px solid #d8dde5; padding-bottom: 4px; }
.sub { color: #5a6575; margin: 0 0 16px; }
code, .mono { font-family: ${MONO_STACK}; font-size: 12.5px; word-break: break-all; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; vertical-align: top; padding: 6px 10px; border-bottom: 1px solid #e5e8ee; }
th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
table.fields th { width: 210px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #e5e8ee; color: #1d2430; }
.ok { background: #dcf3e3; color: #135c2c; }
.warn { background: #fff1d6; color: #7a4b00; }
.bad { background: #fde0e0; color: #8a1c1c; }
.info { background: #e1ecfb; color: #173f7a; }
.timeline { list-style: none; margin: 0; padding: 0; }
.timeline > li { background: #fff; border-left: 4px solid #9aa6b8; margin: 0 0 10px; padding: 10px 14px; }
.timeline > li.phase-claim { border-color: #6b7c93; }
.timeline > li.phase-approval { border-color: #8a5cd0; }
.timeline > li.phase-before { border-color: #2f7dd1; }
.timeline > li.phase-action { border-color: #d17a22; }
.timeline > li.phase-after { border-color: #d1a322; }
.timeline > li.phase-readback { border-color: #1f9d55; }
.timeline > li.phase-outcome { border-color: #1d2430; }
.timeline > li.phase-compensation { border-color: #c53030; }
.when { color: #5a6575; font-size: 12px; }
.details { margin: 6px 0 0; font-size: 13px; }
.details dt { font-weight: 600; float: left; clear: left; margin-right: 6px; }
.details dd { margin: 0 0 2px; }
figure { margin: 10px 0 0; }
pre.cmd { font-family: ${MONO_STACK}; background: #1d2430; color: #f6f7f9; padding: 10px 14px; font-size: 13px; overflow-x: auto; }
td.nowrap, .nowrap { white-space: nowrap; }
figure img { max-width: min(100%, 960px); border: 1px solid #cfd6e0; background: #fff; display: block; }
figcaption { font-size: 12px; color: #5a6575; margin-top: 4px; }
.note { background: #fff; border: 1px solid #d8dde5; padding: 10px 14px; }
a { color: #1a5fb4; }
footer { margin-top: 32px; color: #5a6575; font-size: 12px; }
`;

export function page(title: string, body: string): string {
  return html`<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<main>
${raw(body)}
</main>
</body>
</html>
`.value;
}

export function badge(text: string, tone: 'ok' | 'warn' | 'bad' | 'info' | '' = ''): string {
  return html`<span class="badge ${tone}">${text}</span>`.value;
}

/** Tone of an outcome or claim status, for badges. */
export function outcomeTone(outcome: string | undefined): 'ok' | 'warn' | 'bad' | 'info' | '' {
  switch ((outcome ?? '').toLowerCase()) {
    case 'done':
    case 'compensated':
    case 'confirmed':
      return 'ok';
    case 'takeover':
    case 'failed':
    case 'error':
    case 'not_applied':
    case 'compensation_failed':
      return 'bad';
    case 'stale':
    case 'skipped':
    case 'rejected':
    case 'expired':
    case 'blocked':
    case 'unknown':
      return 'warn';
    case 'awaiting_approval':
    case 'claimed':
    case 'writing':
      return 'info';
    default:
      return '';
  }
}

export function fieldsTable(rows: Array<[string, string]>): string {
  return `<table class="fields">${rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join('')}</table>`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
}
