/** Why a restore was refused, in a sentence for the operator; nothing was replaced. */
export class RestoreError extends Error {}
