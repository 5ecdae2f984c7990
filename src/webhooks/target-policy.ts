import { lookup as dnsLookup } from 'node:dns/promises';
import { addressRefusal, judgeTargetUrl, type UrlRefusal } from '../domain/webhook-target.js';

/**
 * Where webhooks may point (the rules: domain/webhook-target.ts), with the DNS it takes: checked when an
 * endpoint is registered (the literal address or every DNS answer) and by the sender after resolving at each
 * attempt. WEBHOOK_ALLOW_PRIVATE_URLS lifts it.
 */

/** Every address of a host name; the default is the system resolver's, as the sender connects with it. */
export type Lookup = (hostname: string) => Promise<readonly { readonly address: string }[]>;
export const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A registration does not wait longer than this for DNS: a resolver that hangs answers 400, not never. */
const LOOKUP_TIMEOUT_MS = 5000;

/** What the sender needs to know: may it connect to private addresses, and how are names resolved. */
export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: any address, and http:// too. */
  readonly allowPrivate: boolean;
  readonly lookup: Lookup;
}

/** Checks a URL an endpoint is registered with; undefined when it may be used. */
export async function checkTargetUrl(text: string, policy: TargetPolicy): Promise<UrlRefusal | undefined> {
  const judged = judgeTargetUrl(text, policy.allowPrivate);
  return judged !== undefined && 'resolve' in judged ? checkAnswers(judged.resolve, policy.lookup) : judged;
}

async function checkAnswers(host: string, lookup: Lookup): Promise<UrlRefusal | undefined> {
  let timer: NodeJS.Timeout | undefined;
  // A string says why there is no answer.
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${LOOKUP_TIMEOUT_MS / 1000} s`), LOOKUP_TIMEOUT_MS);
  });
  const answers = await Promise.race([
    lookup(host).catch((error: unknown) => String((error as { code?: unknown }).code ?? 'no answer')),
    timedOut,
  ]);
  clearTimeout(timer);
  if (typeof answers === 'string') return { reason: 'unresolved', host, detail: answers };
  if (answers.length === 0) return { reason: 'unresolved', host, detail: 'no address' };
  return addressRefusal(
    host,
    answers.map(({ address }) => address),
  );
}
