export { deliverMessage } from './deliver-message';
export { syncAudience } from './sync-audience';
export { syncComputedTrait } from './sync-computed-trait';
