/** What every webhook operation shares: its tag, its scope, and the errors of a body. */
export const TAGS = ['webhooks'];
/** Registering an endpoint decides where the service sends data: every operation needs `write`, reads too. */
export const SCOPE = { scope: 'write' } as const;
/** The scope in the document, since it is not the one a GET needs elsewhere (bearer scopes: OpenAPI 3.1 roles). */
export const SECURITY = [{ bearerAuth: ['write'] }];
export const WITH_BODY = ['payload_too_large', 'unsupported_media_type'] as const;
