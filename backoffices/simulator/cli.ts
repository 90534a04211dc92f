import { z } from 'zod';
import { backOfficeFlags, commaList, flag, runBackOfficeCli, serverOptions } from '../kit/cli.js';
import { accountsFor } from './accounts.js';
import { TENANT_ID_PATTERN } from './schemas.js';
import { startSimulator } from './server.js';

const tenantIds = z
  .array(z.string().regex(TENANT_ID_PATTERN, '--tenants takes lowercase letters only, e.g. acme,globex'))
  .min(1, '--tenants needs at least one tenant');

void runBackOfficeCli({
  name: 'sim',
  title: 'Vendor back-office simulator',
  command: 'npm run sim',
  flags: {
    ...backOfficeFlags({
      port: 4100,
      seeded: 'bills',
      asyncDelay: 'how long writes stay 处理中 before settling',
      pageSize: 10,
      pageOf: 'list rows',
    }),
    tenants: flag(
      commaList(tenantIds),
      'acme,globex,initech',
      'comma-separated tenant ids, lowercase letters (default acme,globex,initech)',
    ),
  },
  start: (f) => startSimulator({ ...serverOptions(f), tenants: f.tenants?.map((id) => ({ id })) }),
  banner: (f, url) => ({
    name: '供应商对账后台 (simulator)',
    signIn: `  login page:   ${url}/login`,
    users: [
      '  accounts (username / password / API token / scope):',
      ...accountsFor(f.tenants ?? ['acme', 'globex', 'initech']).map(
        (a) => `    ${a.username.padEnd(20)} ${a.password.padEnd(16)} ${a.token.padEnd(14)} ${a.tenant ?? 'all tenants'}`,
      ),
    ],
  }),
});
