import { parseOptions } from '../../bench/options';
import { parseStat, treeUsage, type ProcReading } from '../../bench/proc';

/** A /proc reading in clock ticks (100 per second). */
const proc = (pid: number, ppid: number, utime: number, stime: number, cutime = 0, cstime = 0, rssKb = 1024): ProcReading => ({ pid, ppid, utime, stime, cutime, cstime, rssKb });

describe('bench options: server, shards, workers and APIs', () => {
  it('defaults to the dev server with one worker and one API', () => {
    expect(parseOptions([], 32)).toMatchObject({ server: 'dev', shards: 4, workers: 1, apis: 1, combined: false });
  });

  it.each([
    [['--server', 'real'], { server: 'real', shards: 4, workers: 1, apis: 1 }],
    [['--server', 'real', '--shards', '16'], { server: 'real', shards: 16 }],
    [['--server', 'real', '--workers', '2', '--apis', '3'], { workers: 2, apis: 3 }],
    [['--workers', '2'], { server: 'dev', workers: 2, apis: 1 }],
    [['--combined'], { combined: true, workers: 1, apis: 1 }],
    [['--noisy'], { noisyBacklog: 2_000, messages: [1_200], rate: 20, single: true, systems: ['switchyard'] }],
    [['--noisy', '--backlog', '5000', '--rate', '50'], { noisyBacklog: 5_000, rate: 50 }],
    [['--noisy', '--quick'], { noisyBacklog: 200, messages: [100] }],
    [['--replay', '500'], { replayMessages: 500, rate: 20, single: true, systems: ['switchyard'] }],
    // `--single R` is a rate given: the scenarios' 20/s default does not replace it.
    [['--replay', '500', '--single', '50'], { replayMessages: 500, rate: 50, single: true }],
    [['--noisy', '--single', '40'], { rate: 40, single: true }],
    [['--quick'], { quick: true, messages: [1_000], warmup: 200, single: false, systems: ['raw', 'bare', 'floor', 'design-floor', 'switchyard'] }],
    [['--retention'], { retentionConcurrency: 16 }],
    [[], { retentionConcurrency: 0 }],
    [['--systems', 'floor,switchyard,limited'], { systems: ['floor', 'switchyard', 'limited'] }],
    [['--systems', 'switchyard,planned'], { systems: ['switchyard', 'planned'] }],
  ])('reads %j', (argv, expected) => {
    expect(parseOptions(argv, 32)).toMatchObject(expected);
  });

  it.each([
    [['--server', 'prod'], /--server: "prod" is not dev or real/],
    [['--shards', '4'], /--shards is for the real server/],
    [['--server', 'real', '--shards', '0'], /--shards: "0" is not a positive whole number/],
    [['--workers', '0'], /--workers: "0" is not a positive whole number/],
    [['--combined', '--workers', '2'], /not with --combined/],
    [['--apis', '2', '--combined'], /not with --combined/],
    [['--server', 'real', '--temporal-flags', '--sqlite-pragma synchronous=normal'], /dev server flags/],
    [['--backlog', '100'], /--backlog is for --noisy/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseOptions(argv, 32)).toThrow(message);
  });
});

describe('parseStat', () => {
  it('reads pid, ppid and the four CPU fields, even with spaces and parentheses in the command name', () => {
    // Fields 14-17 of proc(5): utime stime cutime cstime.
    const line = '4242 (postgres: temporal temporal 127.0.0.1(5) idle) S 4000 4000 4000 0 -1 4194560 100 0 0 0 17 5 30 12 20 0 1 0 12345 123456 789 18446744073709551615';
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 4000, utime: 17, stime: 5, cutime: 30, cstime: 12 });
  });
});

describe('treeUsage: CPU of a process tree', () => {
  const unrelated = [proc(1, 0, 500, 500), proc(99, 1, 700, 300)];

  it.each<[string, ProcReading[], number, { cpuSeconds: number; rssMb: number } | undefined]>([
    ['one process: its own user + system time', [...unrelated, proc(10, 1, 150, 50)], 10, { cpuSeconds: 2, rssMb: 1 }],
    ['a postmaster and two live backends: summed', [...unrelated, proc(10, 1, 100, 0), proc(11, 10, 40, 10), proc(12, 10, 30, 20)], 10, { cpuSeconds: 2, rssMb: 3 }],
    ['a backend that exited counts in its parent\'s cutime/cstime', [...unrelated, proc(10, 1, 100, 0, 80, 20), proc(12, 10, 30, 20)], 10, { cpuSeconds: 2.5, rssMb: 2 }],
    ['grandchildren count (a worker of a backend)', [...unrelated, proc(10, 1, 100, 0), proc(11, 10, 0, 0), proc(13, 11, 50, 50)], 10, { cpuSeconds: 2, rssMb: 3 }],
    ['the tree\'s parent and siblings do not count', [proc(1, 0, 1000, 0), proc(10, 1, 100, 0), proc(20, 1, 999, 0)], 10, { cpuSeconds: 1, rssMb: 1 }],
    ['a root that is gone: undefined', unrelated, 10, undefined],
  ])('%s', (_rule, readings, root, expected) => {
    expect(treeUsage(root, readings)).toEqual(expected);
  });

  it('stays continuous when a backend exits between two readings (its time moves to the parent)', () => {
    const before = treeUsage(10, [proc(10, 1, 100, 0), proc(11, 10, 40, 10)])!;
    // Backend 11 used 10 more ticks, exited and was reaped: 50 + 10 ticks now in the postmaster's cutime/cstime.
    const after = treeUsage(10, [proc(10, 1, 100, 0, 50, 10)])!;
    expect(after.cpuSeconds - before.cpuSeconds).toBeCloseTo(0.1);
  });
});
