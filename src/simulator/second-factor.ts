/** The pending-login store and code check are shared by every back office that asks a TOTP code. */
export { codeAccepted, PENDING_COOKIE, PendingSecondFactors } from '../back-office-kit/second-factor.js';
