import { NamedError } from './errors.js';
/**
 * Who asked for a write and who decides it, in one comparable form. Both sides
 * of the self-approval rule and of every allow-list check go through here, so
 * " FINANCE.LEAD@ACME.EXAMPLE ", "Finance Lead <finance.lead@acme.example>" and
 * (by default) "finance.lead+refunds@acme.example" are the same person.
 */

/**
 * `same_mailbox` (the default): the `+tag` of an address's local part is
 * dropped before comparing, because most mail systems deliver a+tag@d to a@d;
 * `distinct`: a+tag@d is another address.
 */
export type PlusAddressing = 'same_mailbox' | 'distinct';

const ADDRESS = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/;
/** Non-mail principals: schedule, operator:alice, compensation, iam:arn… */
const NAME = /^[a-z][a-z0-9._:/@+-]{0,199}$/;

export class PrincipalError extends NamedError {
  override readonly name = 'PrincipalError';
}

/**
 * Parses a requester or approver into its canonical form: an email address
 * (display name and angle brackets dropped, lower case, plus-tag handled by the
 * policy) or a principal name (lower case). Anything else, including text with
 * line breaks or control characters, is refused.
 */
export function canonicalPrincipal(raw: string, plus: PlusAddressing = 'same_mailbox'): string {
  const text = raw.normalize('NFKC').trim();
  if (text.length === 0 || text.length > 254) throw new PrincipalError('must be 1-254 characters');
  if (/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(text))
    throw new PrincipalError('must be a single line without control characters');
  // "Display Name <addr>": only the address inside the brackets counts.
  const bracketed = /^(?:"[^"]*"|[^<>"]*)<([^<>\s]+)>$/.exec(text);
  const candidate = (bracketed ? bracketed[1]! : text).toLowerCase();
  if (candidate.includes('@') && ADDRESS.test(candidate)) {
    const [local, domain] = candidate.split('@') as [string, string];
    const mailbox = plus === 'same_mailbox' ? local.split('+')[0]! : local;
    if (mailbox.length === 0) throw new PrincipalError(`${JSON.stringify(raw)} is not an email address`);
    return `${mailbox}@${domain}`;
  }
  if (!bracketed && NAME.test(candidate) && !candidate.includes('@')) return candidate;
  throw new PrincipalError(
    `${JSON.stringify(raw.slice(0, 80))} is neither an email address nor a principal name such as schedule or operator:alice`,
  );
}
