import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failure messages and stack traces go into history as an encoded payload (so through the payload
 * codec) instead of plaintext fields: an attempt's error can quote the event it was sending. The
 * workflow sandbox loads this module by path (`failureConverterPath`), so it exports an instance
 * and imports nothing but the SDK.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
