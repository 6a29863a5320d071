import { DefaultFailureConverter, type PayloadConverter, type ProtoFailure } from '@temporalio/common';

/** The name of ../privacy/payload-codec's PayloadDecryptionError (not imported: this module also runs in the workflow sandbox). */
const PAYLOAD_DECRYPTION_ERROR = 'PayloadDecryptionError';

/**
 * Failure messages and stack traces go into history as an encoded payload (so through the payload
 * codec) instead of plaintext fields: an attempt's error can quote the event it was sending.
 * One exception: a payload that cannot be decrypted fails its workflow task with a message that
 * names only a key id, and that message must be readable without the key it misses (in the Web UI
 * and the worker's logs), or a removed key would fail silently behind "Encoded failure".
 */
class SwitchyardFailureConverter extends DefaultFailureConverter {
  private readonly plain = new DefaultFailureConverter();

  override errorToFailure(err: unknown, payloadConverter: PayloadConverter, context?: Parameters<DefaultFailureConverter['errorToFailure']>[2]): ProtoFailure {
    if (err instanceof Error && err.name === PAYLOAD_DECRYPTION_ERROR) return this.plain.errorToFailure(err, payloadConverter, context);
    return super.errorToFailure(err, payloadConverter, context);
  }
}

/** Loaded by path (`failureConverterPath`) by the workflow sandbox, the worker and every client. */
export const failureConverter = new SwitchyardFailureConverter({ encodeCommonAttributes: true });
