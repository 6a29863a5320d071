/**
 * What saving a function's code may cost: its length, and QuickJS's parser under a deadline and a
 * memory limit (functions/check-code.ts). The boundary's table of bounds shows them
 * (programs/bounds.ts FUNCTION_BOUNDS); kept here, importing nothing, so that table loads no engine.
 */
export const MAX_CODE_LENGTH = 512 * 1024;
export const COMPILE_LIMIT_MS = 2_000;
export const COMPILE_MEMORY_BYTES = 64 * 1024 * 1024;
