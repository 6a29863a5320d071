export { deliverMessage } from './deliver-message';
