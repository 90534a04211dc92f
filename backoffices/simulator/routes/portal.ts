import { html, type Html } from '../../../src/http/html.js';
import { redirect, sendHtml } from '../../kit/http-util.js';
import { PRODUCT_NAME } from '../pages/layout.js';
import type { Exchange } from './exchange.js';
import { gatePage } from './ui-pages.js';

/**
 * The portal layout (`layout: 'portal'`): the back office as a legacy portal shows it, a top bar and a menu with the
 * work area in an iframe. /portal/<path> is the portal around the page at /<path>; a work page opened at the top of
 * a tab (a document request, not a frame's) is sent to the portal around it, so a reader must find its frame.
 * The pages themselves are unchanged: the layout is a wrapper any page can be shown in.
 */

const PORTAL_PREFIX = '/portal';

/** The portal's answer, or false when the request is not the portal's to answer (a frame's, an API call, a write). */
export function portalDispatch(ex: Exchange): boolean {
  const path = ex.url.pathname;
  if (path === PORTAL_PREFIX || path.startsWith(`${PORTAL_PREFIX}/`)) {
    const inner = path.slice(PORTAL_PREFIX.length) || '/diff/list';
    const viewer = gatePage(ex, {});
    if (viewer) sendHtml(ex.res, 200, portalPage(viewer.account.username, `${inner}${ex.url.search}`));
    return true;
  }
  // Chromium names what a request loads: `document` at the top of a tab, `iframe` inside the portal's frame.
  const topLevel = ex.req.headers['sec-fetch-dest'] === 'document';
  if ((ex.req.method ?? 'GET') === 'GET' && topLevel && (path === '/diff' || path.startsWith('/diff/'))) {
    redirect(ex.res, `${PORTAL_PREFIX}${path}${ex.url.search}`);
    return true;
  }
  return false;
}

function portalPage(username: string, src: string): Html {
  return html`<!doctype html>
    <html lang="zh-CN">
      <head>
        <meta charset="utf-8" />
        <title>${PRODUCT_NAME} · 门户</title>
        <style>
          body { margin: 0; font: 12px/1.6 sans-serif; }
          header { display: flex; justify-content: space-between; padding: 6px 12px; background: #1c4a82; color: #fff; }
          nav { padding: 4px 12px; background: #f4f6f9; border-bottom: 1px solid #c9d3df; }
          iframe { border: 0; width: 100%; height: calc(100vh - 64px); }
        </style>
      </head>
      <body>
        <header>
          <span>${PRODUCT_NAME}</span><span data-testid="current-user">当前账号：${username}</span>
        </header>
        <nav aria-label="门户菜单"><a href="/diff/list" target="work">差异清单</a></nav>
        <iframe name="work" title="工作区" src="${src}"></iframe>
      </body>
    </html>`;
}
