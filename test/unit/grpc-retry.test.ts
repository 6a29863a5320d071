import { InterceptingCall, Metadata, status, type InterceptorOptions, type NextCall, type StatusObject } from '@grpc/grpc-js';
import { cancellableRetryInterceptor } from '../../src/temporal/grpc-retry';

/**
 * The retry interceptor driven by hand: each attempt is a fake call whose answer the test gives, so
 * the rule is checked without a server: a cancel between attempts ends the call and no attempt
 * follows; no attempt is scheduled past the deadline.
 */

type Attempt = { answer(result: { message?: unknown; code: status }): void; cancelled?: string };

function harness(deadline?: number) {
  const attempts: Attempt[] = [];
  const nextCall = (() => {
    let listener: { onReceiveMessage(message: unknown): void; onReceiveStatus(status: StatusObject): void } | undefined;
    const attempt: Attempt = {
      answer({ message, code }) {
        // As grpc-js's unary calls do: a message (null when there is none) before the status.
        listener!.onReceiveMessage(message ?? null);
        listener!.onReceiveStatus({ code, details: status[code], metadata: new Metadata() });
      },
    };
    attempts.push(attempt);
    return new InterceptingCall({
      start: (_metadata, l) => (listener = l as typeof listener),
      sendMessageWithContext: () => undefined,
      sendMessage: () => undefined,
      startRead: () => undefined,
      halfClose: () => undefined,
      getPeer: () => 'fake',
      getAuthContext: () => null,
      cancelWithStatus: (code, details) => {
        attempt.cancelled = details;
        attempt.answer({ code });
      },
    });
  }) as unknown as NextCall;
  const call = cancellableRetryInterceptor()({ deadline: deadline ?? Infinity } as InterceptorOptions, nextCall);
  const heard: { messages: unknown[]; status?: StatusObject } = { messages: [] };
  call.start(new Metadata(), { onReceiveMessage: (m: unknown) => heard.messages.push(m), onReceiveStatus: (s: StatusObject) => (heard.status = s) });
  call.sendMessage('request');
  call.halfClose();
  return { attempts, call, heard };
}

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

it('retries an UNAVAILABLE call after a backoff and hands on the answer of the attempt that succeeded', () => {
  const { attempts, heard } = harness();
  attempts[0].answer({ code: status.UNAVAILABLE });
  expect(attempts).toHaveLength(1);
  jest.advanceTimersByTime(1_000);
  expect(attempts).toHaveLength(2);
  attempts[1].answer({ message: 'response', code: status.OK });
  expect(heard.messages.at(-1)).toBe('response');
  expect(heard.status?.code).toBe(status.OK);
});

it('ends a call cancelled between two attempts at once, and starts no further attempt', () => {
  const { attempts, call, heard } = harness();
  attempts[0].answer({ code: status.UNAVAILABLE });
  call.cancelWithStatus(status.CANCELLED, 'Cancelled on client');
  expect(heard.status?.code).toBe(status.CANCELLED);
  jest.advanceTimersByTime(60_000);
  expect(attempts).toHaveLength(1);
  expect(jest.getTimerCount()).toBe(0);
});

it('cancels the attempt under way, and does not retry it', () => {
  const { attempts, call, heard } = harness();
  attempts[0].answer({ code: status.UNAVAILABLE });
  jest.advanceTimersByTime(1_000);
  call.cancelWithStatus(status.CANCELLED, 'Cancelled on client');
  expect(attempts[1].cancelled).toBe('Cancelled on client');
  expect(heard.status?.code).toBe(status.CANCELLED);
  jest.advanceTimersByTime(60_000);
  expect(attempts).toHaveLength(2);
});

it('schedules no attempt past the deadline: the call ends with its last attempt\'s status', () => {
  const { attempts, heard } = harness(Date.now() + 50);
  attempts[0].answer({ code: status.UNAVAILABLE });
  expect(heard.status?.code).toBe(status.UNAVAILABLE);
  expect(jest.getTimerCount()).toBe(0);
  expect(attempts).toHaveLength(1);
});

it('does not retry a status that is not retryable', () => {
  const { attempts, heard } = harness();
  attempts[0].answer({ code: status.NOT_FOUND });
  expect(heard.status?.code).toBe(status.NOT_FOUND);
  expect(jest.getTimerCount()).toBe(0);
});
