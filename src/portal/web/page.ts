import type { PortalSettings } from './api';

/** What each page is rendered with. */
export interface Page {
  main: HTMLElement;
  settings: PortalSettings;
  query: URLSearchParams;
  /** True once the user has left the page: pollers stop. */
  left: () => boolean;
}
