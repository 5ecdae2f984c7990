/** What every webhook operation shares: its tag, its scope, and the errors of a body. */
export const TAGS = ['webhooks'];
/**
 * Every operation needs `webhooks` (or `admin`), reads too: an endpoint's URL, log and secret are its owner's
 * business, and a key of a partner that only reads pets need not be able to write them to register one.
 */
export const SCOPE = { scope: 'webhooks' } as const;
/** The scope in the document, since it is not the one a GET needs elsewhere (bearer scopes: OpenAPI 3.1 roles). */
export const SECURITY = [{ bearerAuth: ['webhooks'] }];
export const WITH_BODY = ['payload_too_large', 'unsupported_media_type'] as const;
