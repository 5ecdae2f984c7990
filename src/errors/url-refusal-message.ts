import type { UrlRefusal } from '../domain/webhook-target.js';

/** The way out is the operator's, on a trusted network: the message names the setting. */
const ALLOW_PRIVATE = 'WEBHOOK_ALLOW_PRIVATE_URLS=true, set by the operator of this service';
const PUBLIC_ONLY = `webhooks may only point to public addresses; on a trusted network, ${ALLOW_PRIVATE} allows the others`;

/** Why a webhook URL is refused (domain/webhook-target.ts), in words. */
export function urlRefusal(refusal: UrlRefusal): string {
  switch (refusal.reason) {
    case 'malformed':
      return 'body.url must be an absolute URL without spaces or control characters';
    case 'scheme': {
      const schemes = refusal.allowed.map((scheme) => `${scheme}://`).join(' or ');
      return refusal.allowed.includes('http')
        ? `body.url must be an ${schemes} URL`
        : `body.url must be an ${schemes} URL (http:// too with ${ALLOW_PRIVATE})`;
    }
    case 'credentials':
      return 'body.url must not contain a user name or password';
    case 'fragment':
      return 'body.url must not contain a fragment ("#")';
    case 'local-name':
      return `body.url host "${refusal.host}" is not a public host name; ${PUBLIC_ONLY}`;
    case 'not-public': {
      const points = refusal.host === undefined ? 'points to' : `host "${refusal.host}" resolves to`;
      return `body.url ${points} ${refusal.address}, which is not a public address (${refusal.range}); ${PUBLIC_ONLY}`;
    }
    case 'unresolved':
      return `body.url host "${refusal.host}" does not resolve (${refusal.detail})`;
  }
}
