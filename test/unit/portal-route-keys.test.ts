import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROUTE_ACCESS } from '../../src/api/access/route-access';

/**
 * The portal asks route-access.ts which scope each button's route needs. A route it names
 * that the table lacks would read as "needs a scope no token has" and disable the button for
 * everyone; so every route the portal names must be in the table.
 */
const WEB = path.join(__dirname, '..', '..', 'src', 'portal', 'web');
const ROUTE = /['`]((?:GET|POST|PATCH|DELETE) \/(?:admin|portal|codec)[^'`]*)['`]/g;

function namedRoutes(): string[] {
  const routes: string[] = [];
  for (const file of readdirSync(WEB).filter((f) => f.endsWith('.ts'))) {
    for (const match of readFileSync(path.join(WEB, file), 'utf8').matchAll(ROUTE)) {
      // `${kind.segment}` in personas.ts stands for both kinds of computation.
      const route = match[1];
      if (route.includes('${kind.segment}')) routes.push(route.replace('${kind.segment}', 'audiences'), route.replace('${kind.segment}', 'computed-traits'));
      else if (!route.includes('${')) routes.push(route);
    }
  }
  return routes;
}

it('finds the routes the portal guards its buttons and pages with', () => {
  expect(namedRoutes()).toEqual(expect.arrayContaining(['PATCH /admin/destinations/:id', 'GET /admin/audit', 'POST /admin/replays']));
});

it.each(namedRoutes().map((route) => [route]))('%s is in route-access.ts', (route) => {
  expect(ROUTE_ACCESS[route]).toBeDefined();
});
