import { createHash } from 'node:crypto';
import type { Frame, Page } from 'playwright-core';
import { dialogsSeen } from '../src/browser/executor.js';

/**
 * A compact, semantic description of the current page for the model: what a
 * screen-reader user would hear (roles, accessible names, labels, options,
 * link targets), never raw HTML. Built from Playwright's aria snapshot, then
 * compacted: table rows collapse to one line each and only the first few are
 * shown, per-row links lose their URLs, long texts are cut, and the whole is
 * held to a character budget so prompts stay small and predictable.
 */

export interface DescribeOptions {
  /** Characters of description at most. */
  budgetChars: number;
  /** Data rows shown per table before the rest are only counted. */
  tableRowsShown: number;
  /** The site pack's row-key attribute (e.g. data-bill), to report how many keyed rows the page has. */
  rowKeyAttribute?: string;
}

export interface PageDescription {
  /** Path and query of the page; the origin is configuration, not something the model chooses. */
  url: string;
  title: string;
  text: string;
  /** sha256 of `text`: what exactly the model saw, recorded in drafts. */
  hash: string;
  truncated: boolean;
  /** The structured DOM contract found on the page. */
  contract: { fields: string[]; testIds: string[]; keyedRows?: number };
}

interface Node {
  line: string;
  children: Node[];
}

const INTERACTIVE = /^(button|link|checkbox|radio|textbox|combobox|searchbox|spinbutton|switch|tab|menuitem|slider)\b/;
const WRAPPERS = /^(rowgroup|list|listitem|generic|group|paragraph|none|presentation)(\s*\[[^\]]*\])*:?$/;
const MAX_TEXT = 120;
const MAX_OPTIONS = 15;

/** Parses the YAML-like aria snapshot ("- role "name" [attr]:" lines indented by two spaces) into a tree. */
export function parseAriaSnapshot(snapshot: string): Node[] {
  const root: Node = { line: '', children: [] };
  const stack: Array<{ depth: number; node: Node }> = [{ depth: -1, node: root }];
  for (const raw of snapshot.split('\n')) {
    const match = /^(\s*)- (.*)$/.exec(raw);
    if (!match) continue;
    const depth = match[1]!.length / 2;
    const node: Node = { line: match[2]!, children: [] };
    while (stack.length > 1 && stack[stack.length - 1]!.depth >= depth) stack.pop();
    stack[stack.length - 1]!.node.children.push(node);
    stack.push({ depth, node });
  }
  return root.children;
}

function cut(text: string, max = MAX_TEXT): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function roleOf(node: Node): string {
  return /^([a-z/]+)/.exec(node.line)?.[1] ?? '';
}

function head(node: Node): string {
  // "link "下载对账文件":" -> "link "下载对账文件""
  return node.line.replace(/:$/, '');
}

function urlOf(node: Node): string | undefined {
  const prop = node.children.find((c) => c.line.startsWith('/url:'));
  if (!prop) return undefined;
  return prop.line
    .slice('/url:'.length)
    .trim()
    .replace(/^"(.*)"$/, '$1');
}

function interactiveDescendants(node: Node, out: Node[] = []): Node[] {
  for (const child of node.children) {
    if (INTERACTIVE.test(child.line)) out.push(child);
    else interactiveDescendants(child, out);
  }
  return out;
}

function isHeaderRow(node: Node): boolean {
  return node.children.some((c) => roleOf(c) === 'columnheader');
}

interface RenderOptions {
  tableRowsShown: number;
}

function renderNodes(nodes: Node[], depth: number, options: RenderOptions, out: string[]): void {
  for (const node of nodes) renderNode(node, depth, options, out);
}

function renderNode(node: Node, depth: number, options: RenderOptions, out: string[]): void {
  const pad = '  '.repeat(depth);
  const role = roleOf(node);
  if (node.line.startsWith('/url:')) return;
  if (WRAPPERS.test(node.line) || (role === 'listitem' && node.children.length > 0 && !node.line.includes('"'))) {
    renderNodes(node.children, depth, options, out);
    return;
  }
  if (role === 'listitem' && node.line.startsWith('listitem: ')) {
    out.push(`${pad}- ${cut(node.line.slice('listitem: '.length))}`);
    return;
  }
  if (role === 'table' || role === 'grid' || role === 'treegrid') {
    out.push(`${pad}- ${cut(head(node))}:`);
    const rows: Node[] = [];
    const collectRows = (n: Node) => {
      for (const c of n.children) roleOf(c) === 'row' ? rows.push(c) : collectRows(c);
    };
    collectRows(node);
    const headers = rows.filter(isHeaderRow);
    const data = rows.filter((r) => !isHeaderRow(r));
    for (const h of headers) {
      const names = h.children.map((c) => /"(.*)"/.exec(c.line)?.[1] ?? '').filter(Boolean);
      out.push(`${pad}  - columns: ${cut(names.join(' | '), 200)}`);
    }
    for (const row of data.slice(0, options.tableRowsShown)) renderRow(row, depth + 1, out);
    if (data.length > options.tableRowsShown) {
      out.push(`${pad}  - … ${data.length - options.tableRowsShown} more rows (${data.length} shown on the page)`);
    }
    return;
  }
  if (role === 'row') {
    renderRow(node, depth, out);
    return;
  }
  if (role === 'combobox' || role === 'listbox') {
    const options = node.children.filter((c) => roleOf(c) === 'option');
    if (options.length > 0) {
      const names = options.slice(0, MAX_OPTIONS).map((o) => {
        const name = /"(.*)"/.exec(o.line)?.[1] ?? o.line;
        return o.line.includes('[selected]') ? `${name} (selected)` : name;
      });
      const more = options.length > MAX_OPTIONS ? `, … ${options.length - MAX_OPTIONS} more` : '';
      out.push(`${pad}- ${cut(head(node))} options: ${names.join(', ')}${more}`);
      return;
    }
  }
  if (role === 'link') {
    const url = urlOf(node);
    out.push(`${pad}- ${cut(head(node))}${url ? ` -> ${cut(url, 100)}` : ''}`);
    renderNodes(
      node.children.filter((c) => !c.line.startsWith('/url:')),
      depth + 1,
      options,
      out,
    );
    return;
  }
  out.push(`${pad}- ${cut(head(node))}${node.children.length > 0 ? ':' : ''}`);
  renderNodes(node.children, depth + 1, options, out);
}

/** A row becomes one line (its accessible name) plus the controls in it, without per-row URLs. */
function renderRow(row: Node, depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  out.push(`${pad}- ${cut(head(row), 160)}`);
  const seen = new Set<string>();
  for (const control of interactiveDescendants(row)) {
    const line = head(control);
    if (seen.has(line)) continue;
    seen.add(line);
    out.push(`${pad}  - ${cut(line)}`);
  }
}

/** Compacts an aria snapshot into description lines. */
export function compactAriaSnapshot(snapshot: string, tableRowsShown: number): string[] {
  const out: string[] = [];
  renderNodes(parseAriaSnapshot(snapshot), 0, { tableRowsShown }, out);
  return out;
}

async function frameTitle(frame: Frame): Promise<string | undefined> {
  const element = await frame.frameElement().catch(() => undefined);
  const title = await element?.getAttribute('title').catch(() => null);
  return title ?? undefined;
}

async function structuredContract(page: Page, rowKeyAttribute: string | undefined): Promise<PageDescription['contract']> {
  // No named functions inside evaluate: the TypeScript loader wraps those in a helper the page does not have.
  return page
    .evaluate((rowKey) => {
      const found: Record<string, string[]> = { 'data-field': [], 'data-testid': [] };
      for (const attr of Object.keys(found)) {
        const values = Array.from(document.querySelectorAll(`[${attr}]`)).map((el) => el.getAttribute(attr) ?? '');
        found[attr] = [...new Set(values)].filter(Boolean).slice(0, 30);
      }
      return {
        fields: found['data-field'] ?? [],
        testIds: found['data-testid'] ?? [],
        keyedRows: rowKey ? document.querySelectorAll(`[${rowKey}]`).length : undefined,
      };
    }, rowKeyAttribute)
    .catch(() => ({ fields: [], testIds: [] }));
}

function relativeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

export async function describePage(page: Page, options: DescribeOptions): Promise<PageDescription> {
  const url = relativeUrl(page.url());
  const title = await page.title().catch(() => '');
  const snapshot = await page
    .locator('body')
    .ariaSnapshot({ timeout: 5000 })
    .catch(() => '');
  const frames: Array<{ title: string; snapshot: string }> = [];
  for (const frame of page.mainFrame().childFrames()) {
    const titleOfFrame = (await frameTitle(frame)) ?? '(untitled)';
    const frameSnapshot = await frame
      .locator('body')
      .ariaSnapshot({ timeout: 2000 })
      .catch(() => '');
    frames.push({ title: titleOfFrame, snapshot: frameSnapshot });
  }
  const contract = await structuredContract(page, options.rowKeyAttribute);
  const dialogs = dialogsSeen(page);
  const lastDialog = dialogs.at(-1);

  const render = (rowsShown: number): string[] => {
    const lines = [`URL: ${url}`, `Title: ${cut(title)}`];
    const contractParts = [
      contract.fields.length ? `data-field: ${contract.fields.join(', ')}` : 'no data-field attributes',
      contract.testIds.length ? `test ids: ${contract.testIds.join(', ')}` : undefined,
      contract.keyedRows !== undefined ? `rows keyed by ${options.rowKeyAttribute}: ${contract.keyedRows}` : undefined,
    ].filter(Boolean);
    lines.push(`Structured contract: ${contractParts.join('; ')}`);
    if (lastDialog) {
      lines.push(
        `Last native dialog: ${lastDialog.type} "${cut(lastDialog.message, 100)}" (${lastDialog.accepted ? 'accepted' : 'dismissed'})`,
      );
    }
    lines.push('Page:');
    lines.push(...compactAriaSnapshot(snapshot, rowsShown));
    for (const frame of frames) {
      lines.push(`iframe "${cut(frame.title, 60)}" (use within: {"frameTitle": "${cut(frame.title, 60)}"}):`);
      lines.push(...compactAriaSnapshot(frame.snapshot, rowsShown).map((l) => `  ${l}`));
    }
    return lines;
  };

  // Shrink tables first (rows are the bulk of most back-office pages), then cut the tail.
  let lines = render(options.tableRowsShown);
  let truncated = false;
  for (let rows = options.tableRowsShown - 1; rows >= 0 && lines.join('\n').length > options.budgetChars; rows--) {
    lines = render(rows);
    truncated = true;
  }
  let text = lines.join('\n');
  if (text.length > options.budgetChars) {
    truncated = true;
    const kept: string[] = [];
    let size = 0;
    const marker = (n: number) => `… (${n} more lines cut to fit the budget)`;
    for (const [index, line] of lines.entries()) {
      if (size + line.length + 1 + marker(lines.length - index).length + 1 > options.budgetChars) {
        kept.push(marker(lines.length - index));
        break;
      }
      kept.push(line);
      size += line.length + 1;
    }
    text = kept.join('\n');
  }
  return {
    url,
    title,
    text,
    hash: createHash('sha256').update(text).digest('hex'),
    truncated,
    contract,
  };
}
