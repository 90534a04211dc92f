import { z } from 'zod';
import { backOfficeFlags, commaList, flag, runBackOfficeCli, serverOptions } from '../kit/cli.js';
import { ledgerlyUsersFor } from './accounts.js';
import { DEFAULT_ORGS, ORG_SLUG_PATTERN, startLedgerly } from './server.js';

const orgSlugs = z.array(z.string().regex(ORG_SLUG_PATTERN, '--orgs takes lowercase letters only, e.g. acme,globex')).min(1).max(9);

void runBackOfficeCli({
  name: 'ledgerly',
  title: 'Ledgerly, a billing SaaS back office (the second in-repo vendor)',
  command: 'npm run sim:ledgerly',
  flags: {
    ...backOfficeFlags({
      port: 4200,
      seeded: 'discrepancies',
      asyncDelay: 'how long a resolve stays "Under review" (a refund "Refund pending")',
      pageSize: 5,
      pageOf: 'cards',
    }),
    orgs: flag(commaList(orgSlugs), 'acme,globex', 'comma-separated org slugs, lowercase letters (default acme,globex)'),
  },
  start: (f) => startLedgerly({ ...serverOptions(f), orgs: (f.orgs ?? DEFAULT_ORGS).map((id) => ({ id })) }),
  banner: (f, url) => ({
    name: 'Ledgerly',
    signIn: `  sign in:      ${url}/#/login`,
    users: [
      '  users (email / password / orgs):',
      ...ledgerlyUsersFor(f.orgs ?? [...DEFAULT_ORGS]).map(
        (u) => `    ${u.username.padEnd(22)} ${u.password.padEnd(22)} ${u.org ?? 'every org'}`,
      ),
    ],
  }),
});
