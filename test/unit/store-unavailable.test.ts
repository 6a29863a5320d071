import { isStoreUnavailable } from '../../src/store/unavailable';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isStoreUnavailable: a database away for now (503), not a bug (500)', () => {
  it.each([
    ['crash shutdown (pg_ctl -m immediate)', coded('57P02'), true],
    ['admin shutdown (pg_ctl -m fast, terminated backend)', coded('57P01'), true],
    ['starting up: not yet accepting connections', coded('57P03', 'the database system is not yet accepting connections'), true],
    ['a connection_exception of class 08', coded('08006'), true],
    ['too many connections', coded('53300'), true],
    ['serialization failure', coded('40001'), true],
    ['connection refused', coded('ECONNREFUSED'), true],
    ['connection reset', coded('ECONNRESET'), true],
    ['SQLite write lock held past busy_timeout', coded('SQLITE_BUSY'), true],
    ['node-postgres: connection ended under a query', new Error('Connection terminated unexpectedly'), true],
    ['node-postgres: pool connect timeout', new Error('timeout exceeded when trying to connect'), true],
    ['node-postgres: a client that lost its connection', new Error('Client has encountered a connection error and is not queryable'), true],
    ['every address of the host refused', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), true],
    ['wrapped in a cause', new Error('query failed', { cause: coded('57P03') }), true],
    ['a syntax error', coded('42601'), false],
    ['a unique violation', coded('23505'), false],
    ['an undefined table', coded('42P01'), false],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')"), false],
    ['a class-08 look-alike that is not a SQLSTATE', coded('08abc'), false],
    ['one address refused, the other a bug', new AggregateError([coded('ECONNREFUSED'), new Error('bug')]), false],
    ['not an Error', { code: '57P01' }, false],
  ])('%s → %s', (_name, err, expected) => {
    expect(isStoreUnavailable(err)).toBe(expected);
  });
});
