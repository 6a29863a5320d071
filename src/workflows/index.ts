export { deliverMessage } from './deliver-message';
export { syncAudience, syncComputedTrait } from './personas-sync';
export { redeliverMatching } from './redeliver-matching';
export { replayArchive } from './replay-archive';
export { deliverOperationalEvent } from './operational-event';
export { forwardPlanCalls } from './forward-plan-calls';
export { runSourceFunctionRequest } from './source-function';
