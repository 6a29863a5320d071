import type { DataConverter } from '@temporalio/common';
import type { Keyring } from '../privacy/keyring';
import { EncryptionCodec } from '../privacy/payload-codec';

/** The module the workflow sandbox, the worker and every client load the failure converter from. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * The data converter of every Client and Worker Switchyard makes (API, worker, activities' client,
 * eager starter, admin reads, bench, scripts, tests): payloads through the encryption codec, failure
 * messages and stack traces into encoded (so encrypted) attributes. A worker's workflow bundle is
 * built with the same FAILURE_CONVERTER_PATH. No keyring: PAYLOAD_ENCRYPTION=off, on purpose.
 */
export function switchyardDataConverter(keyring: Keyring | undefined): DataConverter {
  return { payloadCodecs: keyring ? [new EncryptionCodec(keyring)] : [], failureConverterPath: FAILURE_CONVERTER_PATH };
}
