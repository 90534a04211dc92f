import { z } from 'zod';
import { backOfficeFlags, commaList, flag, runBackOfficeCli, serverOptions, wholeNumber } from '../kit/cli.js';
import { DEFAULT_TENANTS, settloUsersFor, startSettlo, TENANT_ID_PATTERN } from './server.js';

const tenantIds = z.array(z.string().regex(TENANT_ID_PATTERN, '--tenants takes lowercase letters only, e.g. acme,globex')).min(1).max(9);

void runBackOfficeCli({
  name: 'settlo',
  title: 'Settlo, a legacy settlement portal (the third in-repo vendor)',
  command: 'npm run sim:settlo',
  flags: {
    ...backOfficeFlags({
      port: 4300,
      seeded: 'bills',
      asyncDelay: 'how long a processed bill stays 处理中',
      pageSize: 10,
      pageOf: 'grid rows (paged view)',
    }),
    tenants: flag(commaList(tenantIds), 'acme,globex', 'comma-separated tenant ids, lowercase letters (default acme,globex)'),
    'undo-window': flag(
      wholeNumber('undo-window', 0, 120),
      '5',
      'seconds a 处理/撤回 can be undone before the page sends it; 0 = at once (default 5)',
    ),
    'rate-limit': flag(
      wholeNumber('rate-limit', 0, 100_000),
      '30',
      'JSON calls per user per 10 s before 429 + Retry-After; 0 = off (default 30)',
    ),
    'allow-top-level-work': flag(
      z.enum(['yes', 'no'], { error: '--allow-top-level-work is yes or no' }).transform((v) => v === 'yes'),
      'no',
      'whether the work area may be opened outside the portal frame (default no)',
    ),
  },
  start: (f) =>
    startSettlo({
      ...serverOptions(f),
      tenants: (f.tenants ?? DEFAULT_TENANTS).map((id) => ({ id })),
      undoWindowSeconds: f['undo-window'],
      rateLimit: f['rate-limit'] === undefined ? undefined : { max: f['rate-limit'], windowSeconds: 10 },
      allowTopLevelWork: f['allow-top-level-work'],
    }),
  banner: (f, url) => ({
    name: 'Settlo',
    signIn: `  sign in:      ${url}/login (password, then the TOTP code of the user's secret)`,
    users: [
      '  users (username / password / TOTP secret):',
      ...settloUsersFor(f.tenants ?? [...DEFAULT_TENANTS]).map(
        (u) => `    ${u.username.padEnd(14)} ${u.password.padEnd(22)} ${u.totpSecret}`,
      ),
    ],
  }),
});
