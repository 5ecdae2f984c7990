/** The service's notion of now; injected so tests can move time (e.g. past a sunset date). */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
