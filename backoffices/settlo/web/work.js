// Settlo's work page (inside the portal's frame): the bill grid (AG Grid, virtualised rows), the 处理 and 退款
// dialogs (Shoelace web components), optimistic writes held in an undo window, and toasts.
// Plain browser JavaScript, no build step: the libraries are served by the portal from its own packages.
import { setBasePath } from '/static/shoelace/utilities/base-path.js';
import '/static/shoelace/components/button/button.js';
import '/static/shoelace/components/dialog/dialog.js';
import '/static/shoelace/components/input/input.js';
import '/static/shoelace/components/textarea/textarea.js';

const boot = window.__SETTLO__;
setBasePath(boot.shoelaceBase);

const STATUS_TEXT = { PENDING: '待处理', PROCESSING: '处理中', PROCESSED: '已处理', REFUNDED: '已退款' };
const redesigned = boot.layout === 2;

/* ---------- calls ---------- */

async function call(method, path, body) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), boot.clientTimeoutMs);
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
      credentials: 'same-origin',
    });
  } catch {
    return { ok: false, status: 0, message: '请求超时，请稍后刷新查看处理结果' };
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 401) {
    // The session is gone: the whole portal goes back to the login page, not just the frame.
    window.top.location.href = '/login?expired=1';
    return { ok: false, status: 401, message: '会话已过期，请重新登录' };
  }
  let json = {};
  try {
    json = await response.json();
  } catch {
    json = {};
  }
  if (response.status === 429) {
    const wait = response.headers.get('retry-after') ?? '1';
    return { ok: false, status: 429, message: `请求过于频繁，请 ${wait} 秒后再试` };
  }
  if (!response.ok) return { ok: false, status: response.status, message: json.message ?? `请求失败（${response.status}）` };
  return { ok: true, status: response.status, data: json };
}

/* ---------- toasts ---------- */

const toasts = document.getElementById('toast');

function toast(text, options = {}) {
  const item = document.createElement('div');
  item.setAttribute('role', options.error ? 'alert' : 'status');
  if (options.error) item.className = 'error';
  const span = document.createElement('span');
  span.textContent = text;
  item.append(span);
  toasts.append(item);
  if (options.ms !== 0) setTimeout(() => item.remove(), options.ms ?? 6000);
  return { item, span };
}

/* ---------- grid ---------- */

const columnDefs = [
  { field: 'billNo', headerName: redesigned ? '结算单号' : '单号', width: 120 },
  { field: 'counterparty', headerName: '对方单位', flex: 1, minWidth: 200 },
  { field: 'kindText', headerName: '类型', width: 100 },
  { field: 'amount', headerName: redesigned ? '结算金额' : '金额', width: 120, type: 'rightAligned', valueFormatter: (p) => formatAmount(p.value) },
  { field: 'statusText', headerName: redesigned ? '处理状态' : '状态', width: 100 },
  { field: 'updatedAt', headerName: '更新时间', width: 170, valueFormatter: (p) => beijingTime(p.value) },
  { headerName: '操作', width: 110, sortable: false, cellRenderer: actionCell },
];

function formatAmount(value) {
  const [whole, cents] = String(value).split('.');
  return `${Number(whole).toLocaleString('en-US')}.${cents ?? '00'}`;
}

function beijingTime(iso) {
  return new Date(Date.parse(iso) + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}

function actionCell(params) {
  const bill = params.data;
  const wrap = document.createElement('span');
  const add = (label, onClick) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = label;
    button.addEventListener('click', () => onClick(bill));
    wrap.append(button);
  };
  if (bill.kind === 'mismatch' && bill.status === 'PENDING') add('处理', openSettle);
  if (bill.kind === 'overcharge' && bill.status === 'PENDING') add('退款', openRefund);
  if (bill.kind === 'mismatch' && (bill.status === 'PROCESSING' || bill.status === 'PROCESSED')) add('撤回', reopen);
  return wrap;
}

const paged = boot.view === 'paged';
const grid = window.agGrid.createGrid(document.getElementById('grid'), {
  columnDefs,
  rowData: [],
  getRowId: (p) => p.data.billNo,
  rowHeight: 34,
  // Rows are drawn only around what is visible (the grid's row virtualisation); columns all drawn.
  rowBuffer: 4,
  suppressColumnVirtualisation: true,
  ensureDomOrder: true,
  pagination: paged,
  paginationPageSize: boot.pageSize,
  paginationPageSizeSelector: false,
  domLayout: paged ? 'autoHeight' : 'normal',
  overlayNoRowsTemplate: '<span>暂无数据</span>',
  localeText: {
    page: '第',
    more: '更多',
    to: '至',
    of: '共',
    next: '下一页',
    last: '末页',
    first: '首页',
    previous: '上一页',
    nextPage: '下一页',
    lastPage: '末页',
    firstPage: '首页',
    previousPage: '上一页',
    noRowsToShow: '暂无数据',
    loadingOoo: '加载中…',
    ariaRowSelect: '选择行',
  },
});

async function load() {
  const params = new URLSearchParams();
  if (boot.q) params.set('q', boot.q);
  if (boot.status) params.set('status', boot.status);
  const answer = await call('GET', `/portal/api/bills?${params}`);
  if (!answer.ok) {
    document.getElementById('count').textContent = answer.message;
    toast(answer.message, { error: true });
    return;
  }
  grid.setGridOption('rowData', answer.data.rows);
  document.getElementById('count').textContent = `共 ${answer.data.total} 条`;
}

function showRow(bill) {
  grid.applyTransaction({ update: [{ ...bill, statusText: STATUS_TEXT[bill.status] ?? bill.status }] });
}

/* ---------- optimistic writes with an undo window ---------- */

// The page shows the write as done at once and keeps it for boot.undoWindowSeconds; 撤销 takes it back.
// Only when the window has passed, with the page still open, is it sent. Leaving the page sends nothing.
async function holdThenSend(bill, held, doneText) {
  let left = held.undoSeconds;
  const { item, span } = toast(`已提交：${bill.billNo}，${left} 秒内可撤销`, { ms: 0 });
  const undoButton = document.createElement('button');
  undoButton.type = 'button';
  undoButton.textContent = '撤销';
  item.append(undoButton);
  let undone = false;
  undoButton.addEventListener('click', async () => {
    undone = true;
    const answer = await call('POST', `/portal/api/writes/${held.writeId}/undo`, {});
    item.remove();
    if (answer.ok) {
      showRow(bill);
      toast(`已撤销：${bill.billNo}`);
    } else toast(answer.message, { error: true });
  });
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      left -= 1;
      if (undone || left <= 0) {
        clearInterval(tick);
        resolve();
        return;
      }
      span.textContent = `已提交：${bill.billNo}，${left} 秒内可撤销`;
    }, 1000);
  });
  if (undone) return;
  item.remove();
  const answer = await call('POST', `/portal/api/writes/${held.writeId}/send`, {});
  if (answer.ok) {
    showRow(answer.data.bill);
    toast(`${doneText}：${bill.billNo}`);
  } else {
    showRow(bill);
    toast(answer.message, { error: !answer.message.startsWith('请求超时') });
  }
}

async function write(bill, path, body, optimistic, doneText) {
  const answer = await call('POST', path, body);
  if (!answer.ok) {
    toast(answer.message, { error: !answer.message.startsWith('请求超时') });
    return false;
  }
  if (answer.status === 202) {
    showRow({ ...bill, status: optimistic });
    void holdThenSend(bill, answer.data, doneText);
  } else {
    showRow(answer.data.bill);
    toast(`${doneText}：${bill.billNo}`);
  }
  return true;
}

/* ---------- dialogs ---------- */

/**
 * One of the work area's confirm dialogs: NAME-dialog with its NAME-summary, NAME-error and NAME-cancel, and the
 * field it asks for. Opened on a bill with the field emptied and no error showing; the bill stays until the next open.
 */
function confirmDialog(name, field) {
  const dialog = document.getElementById(`${name}-dialog`);
  const error = document.getElementById(`${name}-error`);
  document.getElementById(`${name}-cancel`).addEventListener('click', () => dialog.hide());
  return {
    dialog,
    bill: undefined,
    open(bill, label, summary) {
      this.bill = bill;
      dialog.label = label;
      document.getElementById(`${name}-summary`).textContent = summary;
      field.value = '';
      error.hidden = true;
      dialog.show();
    },
    fail(message) {
      error.textContent = message;
      error.hidden = false;
    },
  };
}

const settleNote = document.getElementById('settle-note');
const settleDialog = confirmDialog('settle', settleNote);

function openSettle(bill) {
  settleDialog.open(
    bill,
    `处理差异单 ${bill.billNo}`,
    `单号：${bill.billNo}　对方单位：${bill.counterparty}　金额：${formatAmount(bill.amount)}`,
  );
}

document.getElementById('settle-confirm').addEventListener('click', async () => {
  const note = String(settleNote.value ?? '').trim();
  if (!note) {
    settleDialog.fail('请填写处理说明');
    return;
  }
  const bill = settleDialog.bill;
  await settleDialog.dialog.hide();
  await write(bill, `/portal/api/bills/${bill.billNo}/settle`, { note }, 'PROCESSING', '处理已生效');
});

async function reopen(bill) {
  await write(bill, `/portal/api/bills/${bill.billNo}/reopen`, {}, 'PENDING', '撤回已生效');
}

const refundAmount = document.getElementById('refund-amount');
const refundDialog = confirmDialog('refund', refundAmount);

function openRefund(bill) {
  refundDialog.open(bill, `退款确认 ${bill.billNo}`, `退款不可撤回。请输入退款金额 ${bill.amount} 以确认。`);
}

document.getElementById('refund-confirm').addEventListener('click', async () => {
  const bill = refundDialog.bill;
  const answer = await call('POST', `/portal/api/bills/${bill.billNo}/refund`, { confirmAmount: String(refundAmount.value ?? '') });
  if (!answer.ok) {
    refundDialog.fail(answer.message);
    return;
  }
  await refundDialog.dialog.hide();
  showRow(answer.data.bill);
  toast(`退款已提交：${bill.billNo}`);
});

void load();
