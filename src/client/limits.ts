/** Seed, "Limits": sizes the ingestion API accepts (1 KB = 1024 bytes, as the API counts them). */
export const MAX_MESSAGE_BYTES = 32 * 1024;
export const MAX_BATCH_BYTES = 500 * 1024;

/**
 * Lengths the ingestion API's schema allows (src/api/ingest-schema.ts). Checked here too because
 * the API refuses a whole batch for one bad message, which would take its neighbours down with it.
 */
export const MAX_ID_LENGTH = 256;
export const MAX_MESSAGE_ID_LENGTH = 200;
export const MAX_NAME_LENGTH = 1024;
