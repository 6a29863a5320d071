import { loadConfig } from './config';
import { runMain } from './lifecycle';
import { openStore } from './store';

/**
 * Entry point (`npm run migrate`): brings the store named by DATABASE_URL (or DATABASE_PATH) up to
 * date and exits, for a deploy step when the processes run with DATABASE_MIGRATE=off. Needs no
 * Temporal and no payload keys: migrations only touch the schema.
 */
runMain(async () => {
  const config = loadConfig();
  const store = await openStore({ ...config, databaseMigrate: true });
  await store.close();
  console.log('store schema is up to date');
});
