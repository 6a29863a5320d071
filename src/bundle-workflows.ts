import { writeWorkflowBundle } from './temporal/workflow-bundle';

/** Build step (`npm run build`, after tsc): the workflow bundle the compiled worker loads instead of bundling at start. */
writeWorkflowBundle().then(
  (file) => console.log(`workflow bundle written to ${file}`),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
