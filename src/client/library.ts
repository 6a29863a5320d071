import { version } from '../../package.json';

/** Sent as `context.library` in every message and in the User-Agent, so the server can tell clients apart. */
export const LIBRARY = { name: 'switchyard-client', version } as const;
