/**
 * The small inline scripts the pages ship, written as plain ES5-era browser
 * code the way such back offices were. They build dialogs and toasts with
 * textContent only, never innerHTML, so bill data cannot become markup.
 */

/** Shared by every logged-in page: logout link, confirm dialog, toasts, write requests. */
export const CLIENT_CORE_SCRIPT = `
(function () {
  var meta = function (name) { var m = document.querySelector('meta[name="' + name + '"]'); return m ? m.getAttribute('content') : ''; };
  var csrf = meta('csrf-token');
  var timeoutMs = parseInt(meta('request-timeout-ms'), 10) || 10000;
  var seq = 0;

  var logout = document.getElementById('logout-link');
  if (logout) logout.addEventListener('click', function (ev) {
    ev.preventDefault();
    document.getElementById('logout-form').submit();
  });

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function toast(kind, text) {
    var box = document.getElementById('toasts');
    while (box.firstChild) box.removeChild(box.firstChild);
    var t = el('div', 'toast ' + (kind === 'ok' ? 'ok' : 'err'), text);
    t.setAttribute('role', kind === 'ok' ? 'status' : 'alert');
    box.appendChild(t);
    setTimeout(function () { if (t.parentNode) t.parentNode.removeChild(t); }, 5000);
  }

  // opts: title, lines [[label, value]], question, okText, cancelText, onConfirm(close)
  function confirmDialog(opts) {
    seq += 1;
    var titleId = 'dlg-title-' + seq;
    var mask = el('div', 'mask');
    var dlg = el('div', 'dialog');
    dlg.setAttribute('role', 'dialog');
    dlg.setAttribute('aria-modal', 'true');
    dlg.setAttribute('aria-labelledby', titleId);
    var h = el('h2', null, opts.title);
    h.id = titleId;
    var body = el('div', 'dialog-body');
    if (opts.question) body.appendChild(el('p', null, opts.question));
    (opts.lines || []).forEach(function (line) {
      var p = el('div');
      p.appendChild(document.createTextNode(line[0] + '：'));
      p.appendChild(el('b', null, line[1]));
      body.appendChild(p);
    });
    var buttons = el('div', 'dialog-buttons');
    var ok = el('button', 'btn btn-primary', opts.okText);
    ok.type = 'button';
    var cancel = el('button', 'btn', opts.cancelText);
    cancel.type = 'button';
    buttons.appendChild(ok);
    buttons.appendChild(cancel);
    dlg.appendChild(h);
    dlg.appendChild(body);
    dlg.appendChild(buttons);
    mask.appendChild(dlg);
    document.body.appendChild(mask);
    var busy = false;
    function close() {
      document.removeEventListener('keydown', onKey);
      if (mask.parentNode) mask.parentNode.removeChild(mask);
    }
    function onKey(ev) { if (ev.key === 'Escape' && !busy) close(); }
    document.addEventListener('keydown', onKey);
    cancel.addEventListener('click', close);
    ok.addEventListener('click', function () {
      busy = true;
      ok.disabled = true;
      cancel.disabled = true;
      ok.textContent = '提交中…';
      opts.onConfirm(close);
    });
    ok.focus();
  }

  var ERROR_TEXT = {
    session_revoked: '权限已变更，请重新登录',
    session_expired: '会话已过期，请重新登录',
    unauthenticated: '请先登录'
  };

  // Calls done({ kind: 'ok' | 'timeout' | 'error', reason })
  function postWrite(url, done) {
    var ctrl = new AbortController();
    var timedOut = false;
    var timer = setTimeout(function () { timedOut = true; ctrl.abort(); }, timeoutMs);
    fetch(url, {
      method: 'POST',
      headers: { 'x-csrf-token': csrf, 'accept': 'application/json' },
      credentials: 'same-origin',
      signal: ctrl.signal
    }).then(function (res) {
      return res.text().then(function (text) {
        clearTimeout(timer);
        var body = null;
        try { body = JSON.parse(text); } catch (e) { body = null; }
        if (res.ok) return done({ kind: 'ok' });
        if (res.status === 504 || res.status === 408) return done({ kind: 'timeout' });
        var reason = (body && (body.message || ERROR_TEXT[body.error])) || ('系统繁忙（HTTP ' + res.status + '）');
        done({ kind: 'error', reason: reason });
      });
    }).catch(function () {
      clearTimeout(timer);
      done(timedOut ? { kind: 'timeout' } : { kind: 'error', reason: '网络错误' });
    });
  }

  window.VB = { toast: toast, confirmDialog: confirmDialog, postWrite: postWrite };
})();
`;

/** List page, v1 layout: rows carry data-bill / data-status, buttons data-op. */
export const LIST_V1_SCRIPT = `
(function () {
  var table = document.getElementById('diff');
  if (!table) return;
  var TITLES = { mark: '确认标记处理', unmark: '确认撤销处理' };
  table.addEventListener('click', function (ev) {
    var btn = ev.target.closest ? ev.target.closest('button[data-op]') : null;
    if (!btn) return;
    var row = btn.closest('tr');
    var billNo = row.getAttribute('data-bill');
    var op = btn.getAttribute('data-op');
    if (op === 'refund') { window.location.href = '/diff/' + encodeURIComponent(billNo) + '/refund'; return; }
    var amount = row.querySelector('[data-field="amount"]').textContent;
    VB.confirmDialog({
      title: TITLES[op],
      question: op === 'mark' ? '确定将以下差异单标记为已处理吗？' : '确定撤销以下差异单的处理吗？',
      lines: [['单号', billNo], ['金额', amount]],
      okText: '确认',
      cancelText: '取消',
      onConfirm: function (close) {
        VB.postWrite('/diff/' + encodeURIComponent(billNo) + '/' + op, function (result) {
          close();
          if (result.kind === 'ok') {
            var cell = row.querySelector('[data-field="status"]');
            cell.innerHTML = '';
            var tag = document.createElement('span');
            tag.className = 'st st-PROCESSING';
            tag.textContent = '处理中';
            cell.appendChild(tag);
            row.setAttribute('data-status', 'PROCESSING');
            VB.toast('ok', '操作成功');
          } else if (result.kind === 'timeout') {
            VB.toast('err', '请求超时，请稍后查看结果');
          } else {
            VB.toast('err', '操作失败：' + result.reason);
          }
        });
      }
    });
  });
})();
`;

/** List page, v2 layout: no data-* hooks; rows are found by index into an embedded array. */
export const LIST_V2_SCRIPT = `
(function () {
  var grid = document.querySelector('.vx-grid');
  var dataNode = document.getElementById('vx-rows');
  if (!grid || !dataNode) return;
  var rows = JSON.parse(dataNode.textContent);
  grid.addEventListener('click', function (ev) {
    var btn = ev.target.closest ? ev.target.closest('button.vx-op') : null;
    if (!btn) return;
    var idx = parseInt(btn.value, 10);
    var item = rows[idx];
    var op = btn.name;
    if (op === 'refund') { window.location.href = '/diff/' + encodeURIComponent(item.no) + '/refund'; return; }
    VB.confirmDialog({
      title: '提示',
      question: op === 'mark' ? '是否将该差异单标为已处理？' : '是否撤回该差异单的处理结果？',
      lines: [['差异单', item.no], ['差异金额', item.amount]],
      okText: '确定',
      cancelText: '取消',
      onConfirm: function (close) {
        VB.postWrite('/diff/' + encodeURIComponent(item.no) + '/' + op, function (result) {
          close();
          if (result.kind === 'ok') {
            var tag = grid.querySelectorAll('.vx-row')[idx].querySelector('.vx-tag');
            tag.className = 'vx-tag vx-tag-PROCESSING';
            tag.textContent = '处理中';
            VB.toast('ok', '提交成功');
          } else if (result.kind === 'timeout') {
            VB.toast('err', '请求超时，请稍后查看结果');
          } else {
            VB.toast('err', '提交失败：' + result.reason);
          }
        });
      }
    });
  });
})();
`;

/** Inside the refund iframe: the native confirm guards the irreversible submit. */
export const REFUND_FORM_SCRIPT = String.raw`
(function () {
  var form = document.getElementById('refund-form');
  if (!form) return;
  form.addEventListener('submit', function (ev) {
    var billNo = form.getAttribute('data-bill-no');
    var amount = document.getElementById('amount').value.replace(/^\s+|\s+$/g, '');
    if (!window.confirm('确认向 ' + billNo + ' 退款 ¥' + amount + '？此操作不可撤销')) {
      ev.preventDefault();
      return;
    }
    var submit = form.querySelector('button[type="submit"]');
    setTimeout(function () { submit.disabled = true; submit.textContent = '提交中…'; }, 0);
  });
})();
`;
