import { html, raw, type Html } from '../../../src/http/html.js';
import { PRODUCT_NAME, baseCss } from './layout.js';

const LOGIN_CSS = `
body.login { min-height: 100vh; background: #dfe6ee linear-gradient(#5a83b5, #dfe6ee 320px) no-repeat; }
.login-box { width: 380px; margin: 110px auto 0; background: #fff; border: 1px solid #8fa6c2; box-shadow: 0 2px 10px rgba(0,0,0,.25); }
.login-box h1 { margin: 0; padding: 10px 16px; font-size: 16px; color: #fff; background: linear-gradient(#3569a8, #1c4a82); border-bottom: 3px solid #f0a30a; }
.login-box h1 small { display: block; font-size: 11px; font-weight: normal; color: #c8d8ee; }
.login-box form { padding: 18px 24px 10px; }
.login-box .row { margin-bottom: 12px; }
.login-box label { display: inline-block; width: 56px; color: #444; }
.login-box input { width: 230px; height: 26px; padding: 2px 5px; border: 1px solid #a9b6c5; font: inherit; }
.login-box .actions { padding-left: 60px; }
.login-box .btn { padding: 3px 26px; font-size: 13px; }
.login-box .msg { margin: 0 0 12px; padding: 5px 8px; border: 1px solid #e2a2a2; background: #f8dcdc; color: #a22; }
.login-box .msg.info { border-color: #f0c36d; background: #fff9e3; color: #8a5b00; }
.login-box .tips { padding: 0 24px 14px; color: #999; font-size: 11px; }
.login-footer { text-align: center; color: #6d7b8c; margin-top: 18px; font-size: 11px; }
`;

export interface LoginPageOptions {
  next?: string;
  username?: string;
  failed?: boolean;
  expired?: boolean;
}

export function loginPage(options: LoginPageOptions): Html {
  const message = options.failed
    ? html`<div class="msg" role="alert">用户名或密码错误</div>`
    : options.expired
      ? html`<div class="msg info" role="alert">会话已过期，请重新登录</div>`
      : '';
  return html`<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta http-equiv="X-UA-Compatible" content="IE=edge">
<title>登录 - ${PRODUCT_NAME}</title>
<style>${baseCss()}${raw(LOGIN_CSS)}</style>
</head>
<body class="login">
<div class="login-box">
  <h1>${PRODUCT_NAME}<small>Vendor Settlement Console v3.2.7</small></h1>
  <form method="post" action="/login" autocomplete="off">
    ${message}
    ${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : ''}
    <div class="row"><label for="username">用户名</label><input id="username" name="username" value="${options.username ?? ''}"></div>
    <div class="row"><label for="password">密码</label><input id="password" type="password" name="password"></div>
    <div class="actions"><button type="submit" class="btn btn-primary">登录</button></div>
  </form>
  <div class="tips">提示：请妥善保管账号密码，勿在公共电脑上保存登录状态。如需开通账号请联系渠道经理。</div>
</div>
<div class="login-footer">© 2013-2026 华信供应链科技有限公司 ｜ 建议使用 IE9 及以上版本浏览器</div>
</body>
</html>`;
}
