import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensurePromtool } from '../helpers/promtool';

/**
 * The shipped alert rules pass `promtool check rules`, and `promtool test rules` runs
 * each alert where it must fire and where it must stay quiet (deploy/prometheus/switchyard-rules.test.yml).
 * Integration project: it may install Debian's prometheus package first (minutes, network).
 */

const DEPLOY = path.join(__dirname, '../../deploy/prometheus');
let promtool: string;

beforeAll(() => {
  promtool = ensurePromtool();
}, 600_000);

const run = (...args: string[]) => spawnSync(promtool, args, { cwd: DEPLOY, encoding: 'utf8', timeout: 300_000 });

it('passes promtool check rules', () => {
  const result = run('check', 'rules', 'switchyard-rules.yml');
  expect(`${result.stdout}${result.stderr}`).toContain('SUCCESS');
  expect(result.status).toBe(0);
});

it('passes promtool test rules: every alert fires where it must and stays quiet elsewhere', () => {
  const result = run('test', 'rules', 'switchyard-rules.test.yml');
  expect({ status: result.status, output: `${result.stdout}${result.stderr}` }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
}, 300_000);
