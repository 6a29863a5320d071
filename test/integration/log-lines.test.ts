import { execFileSync } from 'node:child_process';
import { ROOT } from '../helpers/processes';

/** The logger in a real child process (LOG_FORMAT's decision itself is a unit table: test/unit/log-format.test.ts). */
describe('log lines of a process', () => {
  /** createLogger in a child process whose stdout is a pipe, as under a container runtime or a log shipper. */
  function logLine(env: Record<string, string>): string {
    const script = `require('./src/logger').createLogger('info', 'switchyard-worker', require('./src/config').loadConfig().logFormat).info({ messageId: 'm-1', sharedSecret: 's3cret' }, 'delivered')`;
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    if (!('LOG_FORMAT' in env)) delete childEnv.LOG_FORMAT;
    return execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, env: childEnv, encoding: 'utf8' });
  }

  it('writes the same JSON lines as before when stdout is not a terminal, and pretty lines when asked', () => {
    const json = JSON.parse(logLine({}));
    expect(json).toMatchObject({ level: 30, name: 'switchyard-worker', msg: 'delivered', messageId: 'm-1', sharedSecret: '[redacted]' });
    expect(Object.keys(json).sort()).toEqual(['hostname', 'level', 'messageId', 'msg', 'name', 'pid', 'sharedSecret', 'time']);

    const pretty = logLine({ LOG_FORMAT: 'pretty' });
    expect(pretty).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(switchyard-worker\): delivered\n {4}messageId: "m-1"\n/);
    expect(pretty).not.toContain('s3cret');
    expect(pretty).not.toMatch(/\x1b\[/);
  });
});
