import type { LoadedDataConverter } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError, decodeOptionalSingle } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { AttemptRequest, AttemptResult, DeliveryInput, DeliveryReport } from '../delivery/types';
import type { HistoryItem } from './delivery-history';

type History = temporal.api.history.v1.IHistory;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;
type Failure = temporal.api.failure.v1.IFailure | null | undefined;
type Timestamp = { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;

/** The core SDK's marker for a local activity's result (its data payload: seq, complete_time…). */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** The first payload, through the client's codecs (decryption) and then its payload converter. */
const first = async <T>(payloads: Payloads, converter: LoadedDataConverter): Promise<T | undefined> => {
  const decoded = await decodeOptionalSingle(converter.payloadCodecs, payloads?.payloads?.[0]);
  return decoded ? converter.payloadConverter.fromPayload<T>(decoded) : undefined;
};

/** A failure's message: encoded (so encrypted) in history by the failure converter, decoded here. */
const failureMessage = async (failure: Failure, converter: LoadedDataConverter, fallback: string): Promise<string> =>
  (await decodeOptionalFailureToOptionalError(converter, failure ?? undefined))?.message || fallback;

const seconds = (value: Timestamp) => {
  const s = value?.seconds;
  return typeof s === 'number' ? s : (s?.toNumber() ?? 0);
};
const isoTime = (value: Timestamp) => new Date(seconds(value) * 1000 + Math.floor((value?.nanos ?? 0) / 1e6)).toISOString();

/** The workflow's input, from its first event. */
export async function startedInput(history: History, converter: LoadedDataConverter): Promise<DeliveryInput | undefined> {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return started ? first<DeliveryInput>(started.input, converter) : undefined;
}

/** The events deliveryAttempts reads, payloads and failures decoded with the client's data converter (codec included). */
export async function historyItems(history: History, converter: LoadedDataConverter): Promise<HistoryItem[]> {
  const items: HistoryItem[] = [];
  for (const event of history.events ?? []) {
    const at = isoTime(event.eventTime);
    const id = (value: { toString(): string } | null | undefined) => value?.toString() ?? '';
    if (event.activityTaskScheduledEventAttributes) {
      // A failing delivery also raises operational events (raiseOperationalEvent): not attempts.
      if (event.activityTaskScheduledEventAttributes.activityType?.name === 'raiseOperationalEvent') continue;
      const request = await first<AttemptRequest>(event.activityTaskScheduledEventAttributes.input, converter);
      if (request) items.push({ kind: 'scheduled', eventId: id(event.eventId), request });
    } else if (event.activityTaskStartedEventAttributes) {
      items.push({ kind: 'activity-started', scheduledEventId: id(event.activityTaskStartedEventAttributes.scheduledEventId), at });
    } else if (event.activityTaskCompletedEventAttributes) {
      const result = await first<AttemptResult>(event.activityTaskCompletedEventAttributes.result, converter);
      if (result) items.push({ kind: 'activity-completed', scheduledEventId: id(event.activityTaskCompletedEventAttributes.scheduledEventId), at, result });
    } else if (event.activityTaskFailedEventAttributes) {
      const attrs = event.activityTaskFailedEventAttributes;
      items.push({ kind: 'activity-failed', scheduledEventId: id(attrs.scheduledEventId), at, message: await failureMessage(attrs.failure, converter, 'activity failed') });
    } else if (event.activityTaskTimedOutEventAttributes) {
      const attrs = event.activityTaskTimedOutEventAttributes;
      items.push({ kind: 'activity-failed', scheduledEventId: id(attrs.scheduledEventId), at, message: await failureMessage(attrs.failure, converter, 'activity timed out') });
    } else if (event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER) {
      const attrs = event.markerRecordedEventAttributes;
      const data = await first<{ seq?: number; complete_time?: { seconds?: number; nanos?: number } }>(attrs.details?.data, converter);
      if (data?.seq === undefined) continue;
      const result = await first<AttemptResult>(attrs.details?.result, converter);
      const completed = data.complete_time ? isoTime(data.complete_time) : at;
      items.push({ kind: 'local', seq: data.seq, at: completed, ...(result ? { result } : { failure: await failureMessage(attrs.failure, converter, 'local activity failed') }) });
    } else if (event.workflowExecutionCompletedEventAttributes) {
      items.push({ kind: 'closed', report: await first<DeliveryReport>(event.workflowExecutionCompletedEventAttributes.result, converter) });
    } else if (event.workflowExecutionFailedEventAttributes) {
      const details = event.workflowExecutionFailedEventAttributes.failure?.applicationFailureInfo?.details;
      items.push({ kind: 'closed', report: await first<DeliveryReport>(details, converter) });
    }
  }
  return items;
}
