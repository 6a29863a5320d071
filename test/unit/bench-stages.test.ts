import { stageDurations, stagePercentiles } from '../../bench/stages';

const call = { sentAt: 1_000, startedAt: 1_030, firstTaskAt: 1_031, ackAt: 1_040, receiptAt: 1_055 };

it('splits a single call into stages by its own clocks', () => {
  expect(stageDurations(call)).toEqual({ requestToStart: 30, startToAck: 10, startToTask: 1, taskToReceipt: 24, endToEnd: 55 });
});

it('the stages on the delivery path add up to the end-to-end time', () => {
  const d = stageDurations(call);
  expect(d.requestToStart + d.startToTask + d.taskToReceipt).toBe(d.endToEnd);
});

it('gives each stage its own percentiles over the sample', () => {
  const sample = Array.from({ length: 100 }, (_, i) => ({ ...call, receiptAt: call.receiptAt + i }));
  const p = stagePercentiles(sample);
  expect(p.taskToReceipt).toMatchObject({ p50: 73, p99: 122, max: 123 });
  expect(p.requestToStart).toMatchObject({ p50: 30, p99: 30 });
});
