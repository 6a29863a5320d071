import path from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

/**
 * Workflow history <-> the JSON of `temporal workflow show --output json`, what
 * historyToJSON/historyFromJSON from @temporalio/common do. Those fail here with "type must be a
 * Type": npm installs one copy of protobufjs 8 under @temporalio/common and another under
 * @temporalio/proto (the hoisted one is v7, for @grpc/proto-loader), and protobufjs's JSON codec
 * only accepts types of its own copy. So the codec is taken from the copy @temporalio/proto uses.
 */
type ProtoJson = {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
};
const protoDir = path.dirname(require.resolve('@temporalio/proto/package.json'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require(require.resolve('protobufjs/ext/protojson', { paths: [protoDir] })) as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');

export type History = proto.temporal.api.history.v1.IHistory;

export function historyToJSON(history: History): string {
  return JSON.stringify(protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)), null, 2);
}

export function historyFromJSON(json: unknown): History {
  // Tolerates fields a newer server adds, as the SDK's own reader does.
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}
