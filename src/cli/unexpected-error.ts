/**
 * An error no command expected, said in one line with what to do when it is a condition of the machine
 * (no credentials, nothing listening) rather than a bug. The stack only with PAPERCLIP_DEBUG=1.
 */
export function unexpectedErrorLine(command: string, error: unknown): string {
  const e = error instanceof Error ? error : new Error(String(error));
  const code = (e as NodeJS.ErrnoException).code ?? (e.cause as NodeJS.ErrnoException | undefined)?.code;
  const first = e.message.split('\n')[0] ?? '';
  if (e.name === 'CredentialsProviderError')
    return `paperclip ${command}: no AWS credentials (${first}); pass --data-dir to work on a local data folder, or set AWS credentials to reach AWS`;
  // Playwright names its timeouts TimeoutError too: a browser action that waited its whole budget is the page not
  // showing or accepting what the pack expected, not a store that did not answer.
  if (e.name === 'TimeoutError' && /^(locator|page|frame|elementHandle|browserContext)\.\w+:/.test(first))
    return (
      `paperclip ${command}: a browser action timed out (${first}): the vendor's page did not show or accept what the ` +
      'site pack expected; PAPERCLIP_DEBUG=1 prints the browser call log, then fix the step and rerun this'
    );
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || e.name === 'TimeoutError')
    return (
      `paperclip ${command}: a store or service did not answer (${e.name}: ${first}); ` +
      'if a Paperclip process held the data folder, start it again or stop it and rerun this'
    );
  return `paperclip ${command}: unexpected ${e.name}: ${first} (PAPERCLIP_DEBUG=1 prints the stack trace)`;
}
