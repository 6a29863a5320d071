import type { RouteKey } from './access';
import { auditPage } from './audit';
import { deliveriesPage, deliveryPage } from './deliveries';
import { destinationPage } from './destination';
import { livePage } from './fates';
import { destinationsPage } from './destinations';
import { functionPage, functionsPage } from './functions';
import type { Page } from './page';
import { operationalEndpointsPage } from './operational-endpoints';
import { personasPage } from './personas';
import { sourcesPage } from './sources';
import { tokensPage } from './tokens';
import { trackingPlansPage } from './tracking-plans';

/**
 * The portal's pages, in the navigation's order: one entry per page, so a new page (tracking plans,
 * …) is one line here. `path` is the hash's first segment; `reads` is the route a page cannot show
 * without (a token lacking its scope gets a page naming the scope, and no link to it when `hideWhenForbidden`).
 */
export interface Section {
  path: string;
  label: string;
  title: string;
  reads: RouteKey;
  /** Renders the page; `rest` is the hash path after the section's own segment (an id, …). */
  render: (page: Page, rest: string[]) => Promise<void>;
  hideWhenForbidden?: boolean;
}

export const SECTIONS: Section[] = [
  { path: 'sources', label: 'Sources', title: 'Sources', reads: 'GET /admin/sources', render: (page) => sourcesPage(page) },
  {
    path: 'destinations',
    label: 'Destinations',
    title: 'Destinations',
    reads: 'GET /admin/sources/:sourceId/destinations',
    render: (page, rest) => (rest.length === 1 ? destinationPage(page, rest[0]) : destinationsPage(page)),
  },
  {
    path: 'deliveries',
    label: 'Deliveries',
    title: 'Deliveries',
    reads: 'GET /admin/deliveries',
    // `live/<sourceId>`: a source's live view (a source id never reads `live`).
    render: (page, rest) => (rest.length === 2 ? (rest[0] === 'live' ? livePage(page, rest[1]) : deliveryPage(page, rest[0], rest[1])) : deliveriesPage(page)),
  },
  { path: 'personas', label: 'Audiences & traits', title: 'Audiences & computed traits', reads: 'GET /admin/sources/:sourceId/audiences', render: (page) => personasPage(page) },
  { path: 'tracking-plans', label: 'Tracking plans', title: 'Tracking plans', reads: 'GET /admin/tracking-plans', render: (page) => trackingPlansPage(page) },
  { path: 'functions', label: 'Functions', title: 'Functions', reads: 'GET /admin/functions', render: (page, rest) => (rest.length === 1 ? functionPage(page, rest[0]) : functionsPage(page)) },
  { path: 'operational-webhooks', label: 'Operational webhooks', title: 'Operational webhooks', reads: 'GET /admin/operational-endpoints', render: (page) => operationalEndpointsPage(page) },
  { path: 'tokens', label: 'Tokens', title: 'Tokens', reads: 'GET /admin/tokens', render: (page) => tokensPage(page), hideWhenForbidden: true },
  { path: 'audit', label: 'Audit log', title: 'Audit log', reads: 'GET /admin/audit', render: (page) => auditPage(page), hideWhenForbidden: true },
];

export const DEFAULT_SECTION = SECTIONS[0];
