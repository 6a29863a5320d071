import type { Logger } from 'pino';
import type { Metrics } from './metrics';

/**
 * The process-level safety net of an API process: a rejected promise nobody awaited, or an
 * exception thrown outside any request, is logged and counted, and the process keeps serving.
 * Node would otherwise exit, taking ingestion of every source (and an embedded worker and Temporal)
 * down with it. This is the net, not the fix: each known cause is closed where it arises (user
 * programs pass src/programs, whose checks never throw or return a promise), and a count above zero
 * on `switchyard_stray_errors_total` is a defect to find. The message is logged, never a value of a
 * call: the error's name and message come from code, and its stack from Switchyard's own files.
 */
export function keepServingOnStrayErrors(logger: Logger, metrics: Pick<Metrics, 'strayErrors'>): () => void {
  const onRejection = (reason: unknown) => {
    metrics.strayErrors.inc({ kind: 'unhandled_rejection' });
    logger.error({ err: reason }, 'a promise was rejected and nothing awaited it; the process keeps serving (a defect: please report it)');
  };
  const onException = (err: Error) => {
    metrics.strayErrors.inc({ kind: 'uncaught_exception' });
    logger.error({ err }, 'an exception was thrown outside any request; the process keeps serving (a defect: please report it)');
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
