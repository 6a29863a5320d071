/**
 * `switchyard/client`: a batching analytics client for Switchyard's ingestion API (Segment's
 * Tracking API). See docs/client.md.
 */
export { Analytics } from './analytics';
export type { CloseOptions, DeliveryCallback, EnqueueResult, FlushResult } from './analytics';
export { AnalyticsError } from './errors';
export type { AnalyticsErrorCode } from './errors';
export type { AnalyticsEvents } from './events';
export { isDestinationEnabled } from './integrations';
export { MAX_BATCH_BYTES, MAX_MESSAGE_BYTES } from './limits';
export type { Logger } from './logger';
export { DEFAULTS } from './options';
export type { AnalyticsOptions } from './options';
export type {
  AliasMessage,
  Attributes,
  BatchBody,
  Context,
  GroupMessage,
  IdentifyMessage,
  Identity,
  Integrations,
  Message,
  MessageType,
  PageMessage,
  PageProperties,
  ScreenMessage,
  TrackMessage,
} from './types';
