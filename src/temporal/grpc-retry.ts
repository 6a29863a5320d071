import { InterceptingCall, Metadata, RequesterBuilder, status as grpcStatus, type Interceptor, type InterceptingListener, type StatusObject } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, type GrpcRetryOptions } from '@temporalio/client';

/**
 * The Temporal client's retry of failed gRPC calls (same backoff and retryable codes as the SDK's
 * `makeGrpcRetryInterceptor`), with two differences that let a caller end a call for good:
 * - cancelling a call (an AbortSignal under `withAbortSignal`) while it waits between two attempts
 *   clears that wait and ends the call now; the SDK's interceptor cannot see the cancel there and
 *   starts the next attempt later anyway, on a connection that may have been closed meanwhile
 *   ("Channel has been shut down" thrown from a timer, which ended the process);
 * - no attempt is scheduled to begin after the call's deadline: the call ends at once with the
 *   status of its last attempt (the real reason, e.g. UNAVAILABLE) instead of a timer that fires
 *   later only to find the deadline gone.
 * Unary calls only, as the SDK's: the client's calls to Temporal's services are all unary.
 */
export function cancellableRetryInterceptor(retry: GrpcRetryOptions = defaultGrpcRetryOptions()): Interceptor {
  return (options, nextCall) => {
    let request: unknown;
    let response: unknown;
    let caller: InterceptingListener | undefined;
    let attempt = 1;
    let current: ReturnType<Parameters<Interceptor>[1]> | undefined;
    let backoff: NodeJS.Timeout | undefined;
    let ended = false;

    const end = (result: StatusObject) => {
      if (ended) return;
      ended = true;
      if (response !== undefined) caller!.onReceiveMessage(response);
      caller!.onReceiveStatus(result);
    };
    const deadlineMs = options.deadline === undefined ? Infinity : Number(options.deadline);

    const onStatus = (result: StatusObject, metadata: Metadata) => {
      if (ended) return;
      const delay = retry.delayFunction(attempt, result);
      if (retry.retryableDecider(attempt, result) && Date.now() + delay < deadlineMs) {
        backoff = setTimeout(() => {
          backoff = undefined;
          attempt++;
          response = undefined;
          current = nextCall(options);
          current.start(metadata, { onReceiveMessage: (message: unknown) => (response = message), onReceiveStatus: (s) => onStatus(s, metadata) });
          current.sendMessage(request);
          current.halfClose();
        }, delay);
      } else {
        end(result);
      }
    };

    const requester = new RequesterBuilder()
      .withStart((metadata, listener, next) => {
        caller = listener;
        next(metadata, {
          onReceiveMessage: (message: unknown) => (response = message),
          onReceiveStatus: (result: StatusObject) => onStatus(result, metadata),
        });
      })
      .withSendMessage((message, next) => {
        request = message;
        next(message);
      })
      .withCancel((next) => {
        if (backoff !== undefined) {
          clearTimeout(backoff);
          backoff = undefined;
          end({ code: grpcStatus.CANCELLED, details: 'Cancelled on client', metadata: new Metadata() });
        } else if (current) {
          // Its CANCELLED status is not retryable: onStatus ends the call.
          current.cancelWithStatus(grpcStatus.CANCELLED, 'Cancelled on client');
        } else {
          next();
        }
      })
      .build();
    return new InterceptingCall(nextCall(options), requester);
  };
}
