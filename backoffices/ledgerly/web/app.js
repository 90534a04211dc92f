/*
 * Ledgerly console: the whole UI, rendered in the browser from the JSON API.
 * Hand-written, no build step. Class names are generated (css-xxxxxx) the way
 * CSS-in-JS libraries do, and change with the layout.
 */
(() => {
  'use strict';

  const BOOT = window.__LEDGERLY_BOOT__ || { layout: 1, clientTimeoutMs: 10000 };
  const V2 = BOOT.layout === 2;

  /* ---------- generated class names and the stylesheet ---------- */

  function hash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 16777619) >>> 0;
    }
    return h.toString(36).slice(0, 6);
  }
  const salt = V2 ? 'emotion-v2:' : 'emotion-v1:';
  const cls = (name) => `css-${hash(salt + name)}`;

  const RULES = {
    page: 'font-family:Inter,system-ui,"Noto Sans SC",sans-serif;margin:0;background:#f6f7fb;color:#1d2433;min-height:100vh',
    bar: 'display:flex;align-items:center;gap:16px;padding:10px 24px;background:#1d2433;color:#fff',
    brand: 'font-weight:700;font-size:18px;margin-right:auto;letter-spacing:.5px',
    barText: 'font-size:13px;opacity:.85',
    main: 'max-width:960px;margin:0 auto;padding:24px',
    h1: 'font-size:22px;margin:0 0 16px',
    h2: 'font-size:18px;margin:0 0 12px',
    search: 'display:flex;gap:8px;margin-bottom:16px;align-items:center;flex-wrap:wrap',
    input: 'padding:7px 10px;border:1px solid #c6cbd6;border-radius:6px;font-size:14px;min-width:260px',
    select: 'padding:6px 8px;border:1px solid #c6cbd6;border-radius:6px;font-size:14px',
    btn: 'padding:7px 14px;border:1px solid #c6cbd6;background:#fff;border-radius:6px;cursor:pointer;font-size:14px',
    primary: 'padding:7px 14px;border:0;background:#4f46e5;color:#fff;border-radius:6px;cursor:pointer;font-size:14px',
    danger: 'padding:7px 14px;border:0;background:#dc2626;color:#fff;border-radius:6px;cursor:pointer;font-size:14px',
    list: 'display:grid;gap:10px',
    card: 'background:#fff;border:1px solid #e3e6ee;border-radius:10px;padding:12px 16px;cursor:pointer;display:grid;gap:4px',
    cardTop: 'display:flex;justify-content:space-between;align-items:center',
    ref: 'font-weight:600;color:#4f46e5;text-decoration:none',
    badge: 'font-size:12px;padding:2px 8px;border-radius:999px;background:#eef0f6',
    muted: 'color:#667085;font-size:13px',
    more: 'margin-top:16px;display:flex;gap:12px;align-items:center',
    grid: 'display:grid;background:#fff;border:1px solid #e3e6ee;border-radius:8px',
    gridRow: 'display:grid;grid-template-columns:110px 1fr 140px 110px 120px 160px;padding:8px 12px;border-top:1px solid #eef0f6;cursor:pointer',
    gridHead: 'display:grid;grid-template-columns:110px 1fr 140px 110px 120px 160px;padding:8px 12px;font-weight:600;font-size:13px',
    panel: 'background:#fff;border:1px solid #e3e6ee;border-radius:10px;padding:16px 20px;margin-bottom:16px',
    pair: 'display:grid;grid-template-columns:180px 1fr;padding:6px 0;border-bottom:1px solid #f0f1f5',
    pairLabel: 'color:#667085',
    actions: 'display:flex;gap:8px;position:relative;margin:12px 0 16px',
    cardEnd: 'display:flex;gap:8px;align-items:center',
    menuHost: 'position:relative',
    menu: 'position:absolute;top:100%;right:0;background:#fff;border:1px solid #d0d5dd;border-radius:8px;box-shadow:0 8px 24px #0002;min-width:180px;padding:4px;z-index:5',
    menuItem: 'display:block;width:100%;text-align:left;padding:8px 12px;border:0;background:none;cursor:pointer;font-size:14px;border-radius:4px',
    overlay: 'position:fixed;inset:0;background:#0007;display:flex;align-items:center;justify-content:center;z-index:10',
    modal: 'background:#fff;border-radius:12px;padding:20px 24px;width:440px;display:grid;gap:10px',
    textarea: 'min-height:90px;padding:8px;border:1px solid #c6cbd6;border-radius:6px;font:inherit',
    modalButtons: 'display:flex;gap:8px;justify-content:flex-end',
    error: 'color:#b42318;font-size:13px',
    toast: 'position:fixed;right:24px;bottom:24px;padding:12px 18px;border-radius:8px;background:#1d2433;color:#fff;z-index:20;max-width:380px',
    toastError: 'position:fixed;right:24px;bottom:24px;padding:12px 18px;border-radius:8px;background:#b42318;color:#fff;z-index:20;max-width:380px',
    login: 'max-width:360px;margin:80px auto;background:#fff;border:1px solid #e3e6ee;border-radius:12px;padding:28px;display:grid;gap:10px',
    notice: 'background:#fff4e5;border:1px solid #f5c16c;border-radius:6px;padding:8px 10px;font-size:13px',
    history: 'margin:0;padding-left:18px;font-size:13px;color:#475467',
  };
  const style = document.createElement('style');
  style.textContent = Object.entries(RULES)
    .map(([name, css]) => `.${cls(name)}{${css}}`)
    .concat('button:disabled{opacity:.5;cursor:not-allowed}')
    .join('\n');
  document.head.appendChild(style);

  /* ---------- words ---------- */

  const T = V2
    ? {
        list: 'Cases',
        searchLabel: 'Find cases',
        searchPlaceholder: 'Reference, client or invoice…',
        search: 'Find',
        statusFilter: 'State',
        allStates: 'Any state',
        loadMore: 'Show more',
        end: 'End of list',
        more: 'Actions',
        resolve: 'Mark resolved',
        edit: 'Edit case',
        reopen: 'Reopen case',
        refund: 'Issue refund',
        back: '‹ Cases',
        exportCsv: 'Download',
        signOut: 'Log out',
        org: 'Workspace',
        f: {
          status: 'Current state',
          org: 'Workspace',
          customer: 'Client',
          invoice: 'Invoice no.',
          type: 'Category',
          amount: 'Total',
          reason: 'Resolution note',
          updated: 'Modified',
        },
        cols: ['Reference', 'Client', 'Category', 'Total', 'State', 'Modified'],
      }
    : {
        list: 'Discrepancies',
        searchLabel: 'Search discrepancies',
        searchPlaceholder: 'Search by ID, customer or invoice',
        search: 'Search',
        statusFilter: 'Status',
        allStates: 'All statuses',
        loadMore: 'Load more',
        end: 'That’s everything.',
        more: 'More',
        resolve: 'Resolve',
        edit: 'Edit',
        reopen: 'Reopen',
        refund: 'Refund',
        back: '← All discrepancies',
        exportCsv: 'Export CSV',
        signOut: 'Sign out',
        org: 'Organization',
        f: {
          status: 'Status',
          org: 'Organization',
          customer: 'Customer',
          invoice: 'Invoice',
          type: 'Type',
          amount: 'Amount',
          reason: 'Resolution reason',
          updated: 'Last updated',
        },
        cols: [],
      };
  const STATE_TEXT = {
    open: 'Open',
    under_review: 'Under review',
    resolved: 'Resolved',
    refund_pending: 'Refund pending',
    refunded: 'Refunded',
  };
  const TYPE_TEXT = { billing_error: 'Billing error', duplicate_charge: 'Duplicate charge' };
  const SESSION_ENDED = 'Your session has ended. Please sign in again.';
  const TIMED_OUT = 'The request timed out. Check the discrepancy again in a moment.';

  /* ---------- DOM helpers ---------- */

  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = cls(value);
      else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
      else if (key === 'text') el.textContent = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  const root = document.getElementById('root');
  document.body.className = cls('page');

  function money(amount) {
    const [whole, cents] = amount.split('.');
    return `$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
  }
  function when(iso) {
    const d = new Date(iso);
    return d.toLocaleString('en-US', {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
      timeZone: 'UTC',
    });
  }

  let toastTimer;
  function toast(message, isError) {
    for (const old of document.querySelectorAll(`.${cls('toast')},.${cls('toastError')}`)) old.remove();
    clearTimeout(toastTimer);
    const el = h('div', { class: isError ? 'toastError' : 'toast' }, message);
    document.body.append(el);
    toastTimer = setTimeout(() => el.remove(), 6000);
  }

  /* ---------- API ---------- */

  class SessionEnded extends Error {}

  /** Back to the sign-in page; say why unless the visitor had simply not signed in yet. */
  function sessionEnded(code) {
    me = null;
    if (code !== 'unauthenticated') sessionStorage.setItem('ledgerly.notice', SESSION_ENDED);
    if (location.hash !== '#/login') sessionStorage.setItem('ledgerly.returnTo', location.hash);
    closeOverlays();
    location.hash = '#/login';
  }

  /** Every call goes through here: the session cookie authenticates it; a 401 ends the session in the UI. */
  async function api(method, path, body) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), BOOT.clientTimeoutMs);
    let response;
    try {
      response = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal,
      });
    } catch (error) {
      throw new Error(controller.signal.aborted ? TIMED_OUT : 'Network error. Check your connection.');
    } finally {
      clearTimeout(timer);
    }
    let json = null;
    try {
      json = await response.json();
    } catch {
      json = null;
    }
    if (response.status === 401 && path !== '/api/session') {
      sessionEnded(json && json.error ? json.error.code : undefined);
      throw new SessionEnded(SESSION_ENDED);
    }
    if (response.status === 504) throw new Error(TIMED_OUT);
    if (!response.ok) {
      const message = json && json.error && json.error.message ? json.error.message : `Request failed (${response.status}).`;
      const error = new Error(message);
      error.status = response.status;
      throw error;
    }
    return json;
  }

  function report(error) {
    if (error instanceof SessionEnded) return;
    toast(error.message, true);
  }

  /* ---------- shell ---------- */

  let me = null;

  async function loadMe() {
    if (me) return me;
    me = await api('GET', '/api/me');
    return me;
  }

  function topBar() {
    const select = h(
      'select',
      {
        id: 'org-switch',
        class: 'select',
        onchange: async (event) => {
          try {
            me = await api('PUT', '/api/me/organization', { organization: event.target.value });
            listState = freshList();
            if (location.hash === '#/discrepancies') route();
            else location.hash = '#/discrepancies';
          } catch (error) {
            report(error);
          }
        },
      },
      me.organizations.map((o) => h('option', { value: o.slug, selected: o.slug === me.organization.slug }, o.name)),
    );
    return h(
      'header',
      { class: 'bar' },
      h('div', { class: 'brand' }, 'Ledgerly'),
      h('label', { for: 'org-switch', class: 'barText' }, T.org),
      select,
      h('span', { class: 'barText' }, me.user.email),
      h(
        'button',
        {
          type: 'button',
          class: 'btn',
          onclick: async () => {
            await fetch('/api/session', { method: 'DELETE', credentials: 'same-origin' }).catch(() => undefined);
            me = null;
            location.hash = '#/login';
          },
        },
        T.signOut,
      ),
    );
  }

  function mount(...children) {
    closeOverlays();
    root.replaceChildren(...children);
  }

  function signedInPage(...content) {
    mount(topBar(), h('main', { class: 'main' }, ...content));
  }

  /* ---------- login ---------- */

  function renderLogin() {
    me = null;
    const notice = sessionStorage.getItem('ledgerly.notice');
    sessionStorage.removeItem('ledgerly.notice');
    const error = h('div', { class: 'error' });
    const email = h('input', { id: 'login-email', class: 'input', type: 'email', autocomplete: 'username' });
    const password = h('input', { id: 'login-password', class: 'input', type: 'password', autocomplete: 'current-password' });
    const form = h(
      'form',
      {
        class: 'login',
        onsubmit: async (event) => {
          event.preventDefault();
          error.textContent = '';
          try {
            me = await api('POST', '/api/session', { email: email.value, password: password.value });
            const back = sessionStorage.getItem('ledgerly.returnTo');
            sessionStorage.removeItem('ledgerly.returnTo');
            location.hash = back && back !== '#/login' ? back : '#/discrepancies';
          } catch (e) {
            error.textContent = e.message;
          }
        },
      },
      h('h1', { class: 'h1' }, 'Sign in to Ledgerly'),
      notice ? h('div', { class: 'notice' }, notice) : null,
      h('label', { for: 'login-email' }, 'Email'),
      email,
      h('label', { for: 'login-password' }, 'Password'),
      password,
      error,
      h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    );
    mount(form);
  }

  /* ---------- list ---------- */

  function freshList() {
    return { q: '', state: '', page: 0, items: [], total: 0, hasMore: false };
  }
  let listState = freshList();

  function listQuery(page) {
    const params = new URLSearchParams();
    if (listState.q) params.set('q', listState.q);
    if (listState.state) params.set('state', listState.state);
    if (page) params.set('page', String(page));
    return params.toString();
  }

  async function fetchPage(page) {
    const answer = await api('GET', `/api/discrepancies?${listQuery(page)}`);
    listState.items = page === 1 ? answer.data : listState.items.concat(answer.data);
    listState.page = page;
    listState.total = answer.meta.total;
    listState.hasMore = answer.meta.has_more;
  }

  function open(id) {
    location.hash = `#/discrepancies/${id}`;
  }

  function card(item) {
    return h(
      'div',
      { role: 'listitem', class: 'card', onclick: () => open(item.id) },
      h(
        'div',
        { class: 'cardTop' },
        h('a', { href: `#/discrepancies/${item.id}`, class: 'ref' }, item.id),
        h('span', { class: 'cardEnd' }, h('span', { class: 'badge' }, STATE_TEXT[item.state] || item.state), cardMenu(item)),
      ),
      h('div', {}, item.customer),
      h('div', { class: 'muted' }, `${TYPE_TEXT[item.type]} · ${money(item.amount)}`),
      h('div', { class: 'muted' }, `Updated ${when(item.updated_at)}`),
    );
  }

  /** The card's own "⋯" menu: details, and Reopen straight from the list. */
  function cardMenu(item) {
    const items = [['View details', () => open(item.id)]];
    if (item.state === 'under_review' || item.state === 'resolved') {
      items.push([
        'Reopen',
        async () => {
          try {
            const answer = await api('POST', `/api/discrepancies/${item.id}/reopen`);
            listState.items = listState.items.map((i) => (i.id === item.id ? answer.data : i));
            renderListPage();
            toast('Discrepancy reopened.');
          } catch (error) {
            report(error);
          }
        },
      ]);
    }
    return menuButton(items, '⋯', 'More actions');
  }

  function gridRow(item) {
    return h(
      'div',
      { role: 'row', class: 'gridRow', onclick: () => open(item.id) },
      h('span', { role: 'gridcell' }, h('a', { href: `#/discrepancies/${item.id}`, class: 'ref' }, item.id)),
      h('span', { role: 'gridcell' }, item.customer),
      h('span', { role: 'gridcell' }, TYPE_TEXT[item.type]),
      h('span', { role: 'gridcell' }, money(item.amount)),
      h('span', { role: 'gridcell' }, STATE_TEXT[item.state] || item.state),
      h('span', { role: 'gridcell' }, when(item.updated_at)),
    );
  }

  function results() {
    if (listState.items.length === 0) {
      return h('p', { class: 'muted' }, listState.q ? `No discrepancies match “${listState.q}”.` : 'No discrepancies yet.');
    }
    const items = V2
      ? h(
          'div',
          { role: 'grid', 'aria-label': T.list, class: 'grid' },
          h('div', { role: 'row', class: 'gridHead' }, T.cols.map((c) => h('span', { role: 'columnheader' }, c))),
          listState.items.map(gridRow),
        )
      : h('div', { role: 'list', 'aria-label': T.list, class: 'list' }, listState.items.map(card));
    const more = listState.hasMore
      ? h(
          'button',
          {
            type: 'button',
            class: 'btn',
            onclick: async (event) => {
              event.target.disabled = true;
              try {
                await fetchPage(listState.page + 1);
                renderListPage();
              } catch (error) {
                report(error);
                event.target.disabled = false;
              }
            },
          },
          T.loadMore,
        )
      : h('span', { class: 'muted' }, T.end);
    return [
      items,
      h('div', { class: 'more' }, h('span', { class: 'muted' }, `Showing ${listState.items.length} of ${listState.total}`), more),
    ];
  }

  function renderListPage() {
    const input = h('input', {
      type: 'search',
      class: 'input',
      'aria-label': T.searchLabel,
      placeholder: T.searchPlaceholder,
      value: listState.q,
    });
    const stateSelect = h(
      'select',
      { id: 'state-filter', class: 'select' },
      h('option', { value: '' }, T.allStates),
      Object.entries(STATE_TEXT).map(([value, text]) => h('option', { value, selected: value === listState.state }, text)),
    );
    const form = h(
      'form',
      {
        role: 'search',
        class: 'search',
        onsubmit: async (event) => {
          event.preventDefault();
          listState.q = input.value.trim();
          listState.state = stateSelect.value;
          try {
            await fetchPage(1);
            renderListPage();
          } catch (error) {
            report(error);
          }
        },
      },
      input,
      h('label', { for: 'state-filter', class: 'muted' }, T.statusFilter),
      stateSelect,
      h('button', { type: 'submit', class: 'primary' }, T.search),
      h('a', { href: `/api/exports/discrepancies.csv?${listQuery(0)}`, download: '', class: 'ref' }, T.exportCsv),
    );
    signedInPage(h('h1', { class: 'h1' }, T.list), form, results());
  }

  async function renderList() {
    signedInPage(h('p', { class: 'muted' }, 'Loading…'));
    await fetchPage(1);
    renderListPage();
  }

  /* ---------- detail ---------- */

  function pair(label, value) {
    if (V2) return h('p', {}, h('span', { class: 'pairLabel' }, `${label}: `), h('strong', {}, value));
    return h('div', { class: 'pair' }, h('div', { class: 'pairLabel' }, label), h('div', {}, value));
  }

  const HISTORY_TEXT = { edit: 'Edited', resolve: 'Resolved', reopen: 'Reopened', refund: 'Refunded' };

  function renderRecord(record) {
    const actions = h('div', { class: 'actions' });
    if (record.type === 'billing_error' && record.state === 'open') {
      actions.append(h('button', { type: 'button', class: 'primary', onclick: () => resolve(record) }, T.resolve));
    }
    const items = [];
    if (record.state !== 'refunded' && record.state !== 'refund_pending') items.push([T.edit, () => openEditModal(record)]);
    if (record.state === 'under_review' || record.state === 'resolved') items.push([T.reopen, () => reopen(record)]);
    if (record.type === 'duplicate_charge' && record.state === 'open') items.push([T.refund, () => openRefundDialog(record)]);
    if (items.length > 0) actions.append(menuButton(items));
    signedInPage(
      h('a', { href: '#/discrepancies', class: 'ref' }, T.back),
      h('h1', { class: 'h1' }, `${record.id} · ${record.customer}`),
      actions,
      h(
        'section',
        { class: 'panel' },
        pair(T.f.status, STATE_TEXT[record.state] || record.state),
        pair(T.f.org, record.organization.name),
        pair(T.f.customer, record.customer),
        pair(T.f.invoice, record.invoice),
        pair(T.f.type, TYPE_TEXT[record.type]),
        pair(T.f.amount, money(record.amount)),
        pair(T.f.reason, record.resolution_reason || '—'),
        pair(T.f.updated, when(record.updated_at)),
      ),
      h(
        'section',
        { class: 'panel' },
        h('h2', { class: 'h2' }, 'Activity'),
        (record.history || []).length === 0
          ? h('p', { class: 'muted' }, 'No activity yet.')
          : h(
              'ul',
              { class: 'history' },
              record.history.map((e) => h('li', {}, `${HISTORY_TEXT[e.action] || e.action} by ${e.actor} · ${when(e.at)}`)),
            ),
      ),
    );
  }

  async function renderDetail(id) {
    signedInPage(h('p', { class: 'muted' }, 'Loading…'));
    try {
      const answer = await api('GET', `/api/discrepancies/${encodeURIComponent(id)}`);
      renderRecord(answer.data);
    } catch (error) {
      if (error instanceof SessionEnded) return;
      if (error.status === 404) {
        signedInPage(
          h('a', { href: '#/discrepancies', class: 'ref' }, T.back),
          h('h1', { class: 'h1' }, 'Discrepancy not found'),
          h('p', { class: 'muted' }, `We couldn’t find ${id} in this organization.`),
        );
        return;
      }
      throw error;
    }
  }

  /** A button that opens a menu of actions; `name` is its accessible name, `text` what it shows. */
  function menuButton(items, text = T.more, name = undefined) {
    const wrapper = h('div', { class: 'menuHost', onclick: (event) => event.stopPropagation() });
    const button = h('button', { type: 'button', class: 'btn', 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'aria-label': name }, text);
    let menu = null;
    const close = () => {
      if (menu) menu.remove();
      menu = null;
      button.setAttribute('aria-expanded', 'false');
      document.removeEventListener('click', outside, true);
    };
    const outside = (event) => {
      if (menu && !menu.contains(event.target) && event.target !== button) close();
    };
    button.addEventListener('click', () => {
      if (menu) return close();
      menu = h(
        'div',
        { role: 'menu', class: 'menu', 'aria-label': name || text },
        items.map(([label, action]) =>
          h(
            'button',
            {
              type: 'button',
              role: 'menuitem',
              class: 'menuItem',
              onclick: () => {
                close();
                action();
              },
            },
            label,
          ),
        ),
      );
      wrapper.append(menu);
      button.setAttribute('aria-expanded', 'true');
      document.addEventListener('click', outside, true);
      menu.querySelector('button').focus();
    });
    wrapper.append(button);
    return wrapper;
  }

  function closeOverlays() {
    for (const el of document.querySelectorAll(`.${cls('overlay')}`)) el.remove();
  }

  /** A one-click action (resolve, reopen): no form, the record as the API answers it, then the toast. */
  async function act(record, verb, done) {
    try {
      const answer = await api('POST', `/api/discrepancies/${record.id}/${verb}`);
      renderRecord(answer.data);
      toast(done);
    } catch (error) {
      report(error);
    }
  }

  function resolve(record) {
    return act(record, 'resolve', 'Discrepancy resolved. It is under review now.');
  }

  function reopen(record) {
    return act(record, 'reopen', 'Discrepancy reopened.');
  }

  /** A plain overlay, as many admin UIs draw it: no dialog role, just a heading and a form. */
  function openEditModal(record) {
    closeOverlays();
    const error = h('div', { class: 'error' });
    const reason = h('textarea', { id: 'edit-reason', class: 'textarea' });
    reason.value = record.resolution_reason || '';
    const save = h('button', { type: 'submit', class: 'primary' }, 'Save');
    const overlay = h(
      'div',
      { class: 'overlay' },
      h(
        'form',
        {
          class: 'modal',
          onsubmit: async (event) => {
            event.preventDefault();
            error.textContent = '';
            save.disabled = true;
            try {
              const answer = await api('PATCH', `/api/discrepancies/${record.id}`, { resolution_reason: reason.value });
              overlay.remove();
              renderRecord(answer.data);
              toast('Changes saved.');
            } catch (e) {
              if (e instanceof SessionEnded) return;
              error.textContent = e.message;
              save.disabled = false;
            }
          },
        },
        h('h2', { class: 'h2' }, `Edit ${record.id}`),
        h('label', { for: 'edit-reason' }, T.f.reason),
        reason,
        error,
        h('div', { class: 'modalButtons' }, h('button', { type: 'button', class: 'btn', onclick: () => overlay.remove() }, 'Cancel'), save),
      ),
    );
    document.body.append(overlay);
    reason.focus();
  }

  /** The irreversible refund: an alertdialog that asks for the amount, typed exactly. */
  function openRefundDialog(record) {
    closeOverlays();
    const shown = money(record.amount);
    const typed = h('input', { id: 'refund-confirm', class: 'input', inputmode: 'decimal', autocomplete: 'off' });
    const error = h('div', { class: 'error' });
    const confirm = h('button', { type: 'submit', class: 'danger', disabled: true }, 'Confirm refund');
    typed.addEventListener('input', () => {
      confirm.disabled = typed.value.trim() !== record.amount;
    });
    const overlay = h(
      'div',
      { class: 'overlay' },
      h(
        'form',
        {
          role: 'alertdialog',
          'aria-modal': 'true',
          'aria-labelledby': 'refund-title',
          'aria-describedby': 'refund-text',
          class: 'modal',
          onsubmit: async (event) => {
            event.preventDefault();
            if (confirm.disabled) return;
            confirm.disabled = true;
            error.textContent = '';
            try {
              const answer = await api('POST', `/api/discrepancies/${record.id}/refund`, { confirm_amount: typed.value.trim() });
              overlay.remove();
              renderRecord(answer.data);
              toast('Refund submitted.');
            } catch (e) {
              if (e instanceof SessionEnded) return;
              overlay.remove();
              report(e);
            }
          },
        },
        h('h2', { id: 'refund-title', class: 'h2' }, `Refund ${record.id}?`),
        h('p', { id: 'refund-text' }, `This refunds ${shown} to ${record.customer}. Refunds can’t be undone.`),
        h('label', { for: 'refund-confirm' }, `Type ${record.amount} to confirm`),
        typed,
        error,
        h(
          'div',
          { class: 'modalButtons' },
          h('button', { type: 'button', class: 'btn', onclick: () => overlay.remove() }, 'Cancel'),
          confirm,
        ),
      ),
    );
    document.body.append(overlay);
    typed.focus();
  }

  /* ---------- router ---------- */

  async function route() {
    const hash = location.hash || '#/discrepancies';
    try {
      if (hash === '#/login') return renderLogin();
      await loadMe();
      if (hash === '#/discrepancies') return await renderList();
      const match = /^#\/discrepancies\/([^/]+)$/.exec(hash);
      if (match) return await renderDetail(decodeURIComponent(match[1]));
      location.hash = '#/discrepancies';
    } catch (error) {
      if (error instanceof SessionEnded) return;
      signedInPageOrLogin(error);
    }
  }

  function signedInPageOrLogin(error) {
    if (!me) return;
    signedInPage(h('h1', { class: 'h1' }, 'Something went wrong'), h('p', { class: 'muted' }, error.message));
  }

  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeOverlays();
  });
  window.addEventListener('hashchange', route);
  route();
})();
