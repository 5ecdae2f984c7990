/** How a backend writes the n-th parameter of a statement, so statements alike on both are written once. */
export type Param = (n: number) => string;
export const sqliteParam: Param = () => '?';
export const postgresParam: Param = (n) => `$${n}`;
