/**
 * The SQL expression of an advisory lock's key. Keys are per schema, so separate deployments (and test
 * schemas) never contend.
 */
export const lockKey = (name: string) => `hashtext(coalesce(current_schema(), '') || '.petstore.${name}')`;
